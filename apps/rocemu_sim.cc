// rocemu-sim — runs a configuration's job in deterministic virtual time
// (fabric/virtual_engine.h). Usage: rocemu-sim --help. Exit: 0 ok, 1 job failed, 2 usage.
#include <cstdio>
#include <exception>
#include <stdexcept>

#include "apps/engine_cli.h"
#include "common/log.h"
#include "fabric/eal.h"
#include "fabric/workload_job.h"
#include "fabric/write_job.h"

using namespace rocemu;

int main(int argc, char** argv) {
  apps::EngineCli cli;
  fabric::RunConfig cfg;
  if (const auto status = apps::prepare_run(apps::EngineKind::kSim, "rocemu-sim", argc, argv, cli, cfg))
    return *status;
  try {
    fabric::EalOptions eal;
    eal.program = "rocemu-sim";
    eal.user_args = {"--log-level", "lib.eal:error"};
    fabric::eal_start(eal);
    if (cfg.workload) {
      fabric::WorkloadRunOptions wo;
      wo.out_dir = cli.out_dir;
      return apps::finish_workload("rocemu-sim", fabric::run_workload_virtual(cfg, wo), cli.out_dir);
    }
    return apps::finish_write_job("rocemu-sim", fabric::run_write_job_virtual(cfg, cli.out_dir), cli.out_dir);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "rocemu-sim: %s\n", e.what());
    return kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "rocemu-sim: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rocemu-sim: %s\n", e.what());
    return 1;
  }
}
