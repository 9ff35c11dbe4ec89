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
  auto cli = apps::parse_engine_cli(apps::EngineKind::kSim, argc, argv);
  if (cli.help) {
    std::fputs(apps::engine_help(apps::EngineKind::kSim, "rocemu-sim").c_str(), stdout);
    return 0;
  }
  if (!setup_logging(cli.log_level)) cli.errors.push_back("--log-level=" + cli.log_level + ": unknown level");
  if (!cli.errors.empty()) {
    for (const auto& e : cli.errors) std::fprintf(stderr, "rocemu-sim: %s\n", e.c_str());
    return kExitUsage;
  }
  fabric::RunConfig cfg;
  try {
    cfg = fabric::load_run_config(cli.config_path);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "%s", e.what());
    if (std::string(e.what()).back() != '\n') std::fputc('\n', stderr);
    return kExitUsage;
  }
  apps::apply_overrides(cli, cfg);
  try {
    fabric::EalOptions eal;
    eal.program = "rocemu-sim";
    eal.user_args = {"--log-level", "lib.eal:error"};
    fabric::eal_start(eal);
    if (cfg.workload)
      return apps::finish_workload("rocemu-sim", fabric::run_workload_virtual(cfg), cli.out_dir);
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
