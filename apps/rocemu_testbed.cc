// rocemu-testbed — runs a configuration's job in real time over DPDK ports
// (fabric/realtime_engine.h). Usage: rocemu-testbed --help. Exit: 0 ok, 1 failed, 2 usage.
#include <cstdio>
#include <exception>
#include <set>
#include <stdexcept>

#include "apps/engine_cli.h"
#include "common/log.h"
#include "fabric/eal.h"
#include "fabric/realtime_engine.h"
#include "fabric/workload_job.h"
#include "fabric/write_job.h"

using namespace rocemu;

int main(int argc, char** argv) {
  apps::EngineCli cli;
  fabric::RunConfig cfg;
  if (const auto status = apps::prepare_run(apps::EngineKind::kTestbed, "rocemu-testbed", argc, argv, cli, cfg))
    return *status;
  {
    // Before EAL starts: the port budget is known from the topology alone.
    fabric::RealtimeOptions probe;
    probe.backend = cfg.testbed.backend;
    if (const std::string why = fabric::check_port_count(cfg.topology.topology, probe);
        !why.empty()) {
      std::fprintf(stderr, "rocemu-testbed: %s\n", why.c_str());
      return kExitUsage;
    }
  }
  try {
    fabric::EalOptions eal;
    eal.program = "rocemu-testbed";
    // EAL's own start-up chatter only with --log-level debug, unless the user sets it.
    if (spdlog::get_level() > spdlog::level::debug) eal.user_args = {"--log-level", "lib.eal:warning"};
    eal.user_args.insert(eal.user_args.end(), cfg.testbed.eal_args.begin(), cfg.testbed.eal_args.end());
    eal.user_args.insert(eal.user_args.end(), cli.eal_args.begin(), cli.eal_args.end());
    std::set<uint32_t> lcores{0};
    for (const auto& [node, lc] : cfg.testbed.placement) lcores.insert(lc);
    eal.lcores.clear();
    for (uint32_t lc : lcores) eal.lcores += (eal.lcores.empty() ? "" : ",") + std::to_string(lc);
    if (cfg.testbed.backend == fabric::PortBackend::kPci)
      for (const auto& l : cfg.topology.links)
        for (const auto* d : {&l.a_dev, &l.b_dev})
          if (!d->empty()) eal.pci_devices.push_back(*d);
    fabric::eal_start(eal);
    if (cfg.workload)
      return apps::finish_workload("rocemu-testbed", fabric::run_workload_realtime(cfg), cli.out_dir);
    return apps::finish_write_job("rocemu-testbed", fabric::run_write_job_realtime(cfg, cli.out_dir), cli.out_dir);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "rocemu-testbed: %s\n", e.what());
    return kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "rocemu-testbed: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rocemu-testbed: %s\n", e.what());
    return 1;
  }
}
