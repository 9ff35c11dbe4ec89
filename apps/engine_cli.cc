// engine_cli.cc — argument parsing and help of the engine apps.
#include "apps/engine_cli.h"

#include "apps/cli_args.h"
#include "apps/cli_numbers.h"
#include "common/log.h"
#include "fabric/eal.h"

#include <cstdio>
#include <cstdlib>

namespace rocemu::apps {

bool is_agent_flag(const std::string& flag) noexcept {
  return flag == "--policy" || flag == "--agent-model" || flag == "--agent-profile" ||
         flag == "--agent-interval-us";
}

bool parse_agent_flag(const std::string& flag, const std::string& value, AgentFlags& f,
                      std::vector<std::string>& errors) {
  if (flag == "--policy") {
    f.policy = value;
  } else if (flag == "--agent-model") {
    f.model = value;
  } else if (flag == "--agent-profile") {
    f.profile = value;
  } else if (flag == "--agent-interval-us") {
    int64_t v = 0;
    if (parse_i64(value, v) && v >= 1 && v <= 60'000'000)
      f.interval_us = v;
    else
      errors.push_back("--agent-interval-us=" + value + ": expected an integer in [1, 60000000]");
  } else {
    return false;
  }
  return true;
}

void apply_agent_flags(fabric::RunConfig& cfg, const AgentFlags& f) {
  fabric::apply_agent_flags(cfg, f.policy, f.model, f.interval_us, f.profile);
}

EngineCli parse_engine_cli(EngineKind kind, int argc, char** argv) {
  EngineCli c;
  const bool sim = kind == EngineKind::kSim;
  ArgCursor args(argc, argv, c.errors);
  while (args.next()) {
    const std::string& a = args.flag();
    std::string value;
    auto need = [&](const char*) -> bool { return args.value(value); };
    if (a == "-h" || a == "--help") {
      c.help = true;
    } else if (a == "--seed") {
      int64_t v = 0;
      if (need("--seed")) {
        if (parse_i64(value, v) && v >= 0) c.seed = static_cast<uint64_t>(v);
        else c.errors.push_back("--seed=" + value + ": expected a non-negative integer");
      }
    } else if (a == "--out") {
      if (need("--out")) c.out_dir = value;
    } else if (a == "--log-level") {
      if (need("--log-level")) c.log_level = value;
    } else if (sim && a == "--until-us") {
      int64_t v = 0;
      if (need("--until-us")) {
        if (parse_i64(value, v) && v >= 1 && v <= 3'600'000'000) c.until_us = v;
        else c.errors.push_back("--until-us=" + value + ": expected an integer in [1, 3600000000]");
      }
    } else if (!sim && a == "--ports") {
      fabric::PortBackend b{};
      if (need("--ports")) {
        if (fabric::parse_backend(value, b)) c.ports = value;
        else c.errors.push_back("--ports=" + value + ": expected one of ring, af_packet, af_xdp, tap, memif, pci");
      }
    } else if (!sim && a == "--time-limit-s") {
      double v = 0;
      if (need("--time-limit-s")) {
        if (parse_double(value, v) && v >= 0.001 && v <= 3600) c.time_limit_s = v;
        else c.errors.push_back("--time-limit-s=" + value + ": expected a number in [0.001, 3600]");
      }
    } else if (is_agent_flag(a)) {
      if (need(a.c_str())) parse_agent_flag(a, value, c.agent, c.errors);
    } else if (!a.empty() && a[0] == '-') {
      c.errors.push_back(a + ": unknown option (see --help)");
    } else if (c.config_path.empty()) {
      c.config_path = a;
    } else {
      c.errors.push_back(a + ": only one configuration file may be given");
    }
  }
  if (args.at_separator()) {
    if (sim)
      c.errors.push_back("`--` (EAL arguments) is for rocemu-testbed; rocemu-sim takes none");
    else
      c.eal_args = args.rest();
  }
  if (!c.help && c.config_path.empty()) c.errors.push_back("missing the configuration file (see --help)");
  return c;
}

std::string engine_help(EngineKind kind, const std::string& p) {
  const bool sim = kind == EngineKind::kSim;
  std::string s;
  if (sim) {
    s += "usage: " + p + " CONFIG.toml [--seed N] [--out DIR] [--log-level LEVEL] [--until-us N]\n"
         "       [--policy static|graphcc|acc|alternate] [--agent-model FILE] [--agent-profile FILE]\n"
         "       [--agent-interval-us N]\n\n";
    s += "Runs the job of CONFIG.toml in deterministic virtual time: links serialise at their\n"
         "rate and add their delay; the same seed gives byte-identical result files.\n\n";
  } else {
    s += "usage: " + p + " CONFIG.toml [--seed N] [--out DIR] [--log-level LEVEL]\n"
         "       [--ports ring|af_packet|af_xdp|tap|memif|pci] [--time-limit-s S] [-- EAL-ARGS...]\n\n";
    s += "Runs the job of CONFIG.toml in real time on DPDK ports, one lcore polling every node\n"
         "(port rate emulated per port so queues build in the switch).\n\n";
  }
  s += "arguments:\n"
       "  CONFIG.toml          the run: [run] [topology] [switch] [nic] [job] [sim] [testbed]\n"
       "                       [capture] (docs/config.md); with [workload] it runs flows from a\n"
       "                       size CDF instead of [job] and writes flows.csv, bins.csv and\n"
       "                       metrics.csv (docs/workload_runs.md)\n"
       "  --seed N             run seed (overrides [run].seed; default 1): seeds switches, NICs,\n"
       "                       link impairments and the job's data pattern\n"
       "  --out DIR            directory for summary.json, summary.csv and captures (default out)\n"
       "  --log-level LEVEL    trace|debug|info|warn|error|critical|off (default $ROCEMU_LOG or info)\n";
  s += "  --policy P           who sets every switch port's ECN thresholds each interval: static\n"
       "                       ([agent] profile or [switch.ecn]), graphcc or acc (need a model),\n"
       "                       test policies alternate, stall, throw; overrides [agent] policy\n"
       "                       (docs/agent.md)\n"
       "  --agent-model FILE   the model of graphcc/acc (rocemu-train's output; refused with the\n"
       "                       reason if missing, corrupt or made for another topology)\n"
       "  --agent-profile FILE the static policy's ECN profile (configs/ecn/*.toml; overrides\n"
       "                       [agent] profile)\n"
       "  --agent-interval-us N  control interval (overrides [agent] interval_us; default 100)\n";
  if (!sim)
    s += "                       (real time: the agent runs on its own thread; switches publish\n"
         "                       their counters every interval from their lcores)\n";
  if (sim) {
    s += "  --until-us N         stop virtual time at N us even if the job is not done\n"
         "                       (overrides [sim].until_us; default 1000000)\n";
  } else {
    s += "  --ports BACKEND      port type for every link end (overrides [testbed].ports; default\n"
         "                       ring = rte_eth_from_rings wires inside this process; af_packet,\n"
         "                       af_xdp and tap open kernel interfaces named by the links' a_dev/b_dev\n"
         "                       (default re<link>a / re<link>b); memif connects both ends in this\n"
         "                       process; pci uses the PCI addresses in a_dev/b_dev)\n"
         "  --time-limit-s S     give up after S seconds of real time (default [testbed].time_limit_s = 30)\n"
         "  -- EAL-ARGS...       passed to rte_eal_init after the defaults (-l 0 --no-pci --in-memory\n"
         "                       --no-telemetry, or --no-huge -m 512 --file-prefix rocemu-<pid> where\n"
         "                       hugepages are missing); giving -l/-c/--lcores or a memory option\n"
         "                       replaces ours\n";
  }
  s += "  -h, --help           this text\n\n"
       "exit status: 0 job completed and data verified; 1 job failed, data mismatch or a\n"
       "setup failure (EAL, ports); 2 usage or configuration error (every problem listed,\n"
       "nothing started)\n";
  return s;
}

void apply_overrides(const EngineCli& cli, fabric::RunConfig& cfg) {
  if (cli.seed) cfg.seed = *cli.seed;
  if (cli.until_us) cfg.sim.until_ns = *cli.until_us * kNsPerUs;
  if (cli.ports) fabric::parse_backend(*cli.ports, cfg.testbed.backend);
  if (cli.time_limit_s)
    cfg.testbed.time_limit_ns = static_cast<TimeNs>(*cli.time_limit_s * static_cast<double>(kNsPerSec));
}

std::optional<int> prepare_run(EngineKind kind, const char* program, int argc, char** argv,
                               EngineCli& cli, fabric::RunConfig& cfg) {
  cli = parse_engine_cli(kind, argc, argv);
  if (cli.help) {
    std::fputs(engine_help(kind, program).c_str(), stdout);
    return 0;
  }
  if (!setup_logging(cli.log_level))
    cli.errors.push_back("--log-level=" + cli.log_level + ": unknown level");
  if (!cli.errors.empty()) {
    for (const auto& e : cli.errors) std::fprintf(stderr, "%s: %s\n", program, e.c_str());
    return kExitUsage;
  }
  try {
    cfg = fabric::load_run_config(cli.config_path);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "%s", e.what());
    if (std::string(e.what()).back() != '\n') std::fputc('\n', stderr);
    return kExitUsage;
  }
  apply_overrides(cli, cfg);
  if (const std::string why = fabric::check_rate_from_port(cfg, kind != EngineKind::kSim);
      !why.empty()) {
    std::fprintf(stderr, "%s: %s\n", program, why.c_str());
    return kExitUsage;
  }
  if (!cfg.topology.links_down.empty()) {
    std::string names;
    for (const auto& n : cfg.topology.links_down) names += (names.empty() ? "" : ", ") + n;
    std::printf("links down from the start: %s\n", names.c_str());
  }
  try {
    apply_agent_flags(cfg, cli.agent);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "%s: %s", program, e.what());
    if (std::string(e.what()).back() != '\n') std::fputc('\n', stderr);
    return kExitUsage;
  }
  return std::nullopt;
}

int finish_workload(const char* program, const fabric::WorkloadResult& w, const std::string& out_dir) {
  std::fputs(fabric::workload_text(w).c_str(), stdout);
  fabric::write_workload_files(w, out_dir);
  std::fputs(fabric::workload_files_line(w, out_dir).c_str(), stdout);
  if (!w.all_finished)
    std::fprintf(stderr, "%s: %llu flows unfinished at the end of the run, %llu failed\n", program,
                 static_cast<unsigned long long>(w.summary.flows_unfinished),
                 static_cast<unsigned long long>(w.flows_failed));
  fabric::eal_stop();
  return fabric::workload_exit_status(w);
}

int finish_write_job(const char* program, const fabric::JobResult& r, const std::string& out_dir) {
  std::fputs(fabric::to_text(r).c_str(), stdout);
  fabric::write_result_files(r, out_dir);
  std::printf("results: %s/summary.json, %s/summary.csv\n", out_dir.c_str(), out_dir.c_str());
  if (!r.completed) std::fprintf(stderr, "%s: the job did not complete\n", program);
  if (!r.verified)
    std::fprintf(stderr, "%s: data at the destination does not match the source\n", program);
  fabric::eal_stop();
  return r.completed && r.verified ? 0 : 1;
}

}  // namespace rocemu::apps
