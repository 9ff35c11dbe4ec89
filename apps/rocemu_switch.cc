// rocemu-switch — the switch process of the veth testbed (docs/testbed.md): every switch of
// a run's topology as a SoftSwitch on DPDK ports (af_packet by default) facing hosts that
// other processes run in network namespaces (fabric/switch_job.h). Runs until SIGINT/SIGTERM
// or --duration, then prints a per-port summary and writes it to --out/switch_summary.csv.
// `--plan` prints the hosts' addressing (TSV) for scripts, without starting EAL.
// Usage: rocemu-switch --help. Exit: 0 ok, 1 setup failure, 2 usage or configuration error.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/cli_args.h"
#include "apps/cli_numbers.h"
#include "apps/engine_cli.h"
#include "common/log.h"
#include "fabric/eal.h"
#include "fabric/switch_job.h"

using namespace rocemu;

namespace {

constexpr const char* kProgram = "rocemu-switch";

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

struct SwitchCli {
  std::string config_path;
  bool plan = false;
  bool switch_links = false;
  bool help = false;
  std::string out_dir = "out";
  std::string log_level;
  std::optional<std::string> ports;
  std::optional<uint64_t> seed;
  double duration_s = 0;
  std::optional<uint32_t> idle_sleep_us;
  std::vector<std::string> eal_args;
  apps::AgentFlags agent;  // --policy, --agent-model, --agent-profile, --agent-interval-us
  std::vector<std::string> errors;
};

const char* kHelp =
    "usage: rocemu-switch CONFIG.toml [--plan | --switch-links] [--out DIR] [--duration S]\n"
    "       [--ports af_packet|af_xdp|tap|pci] [--idle-sleep-us N] [--seed N] [--log-level LEVEL]\n"
    "       [--policy P] [--agent-model FILE] [--agent-profile FILE] [--agent-interval-us N]\n"
    "       [-- EAL-ARGS...]\n\n"
    "The switch process of the veth testbed (docs/testbed.md): every switch node of CONFIG's\n"
    "[topology] runs a SoftSwitch ([switch] parameters) on DPDK ports; every host node is\n"
    "external: another process (a perftest tool, a workload generator) in its own network\n"
    "namespace, at the far end of the link's kernel interface. Each switch port opens the\n"
    "device of its link end (a_dev/b_dev, default re<link>a / re<link>b). Prints\n"
    "\"rocemu-switch: ready\" once every port is up, runs until SIGINT/SIGTERM or --duration,\n"
    "then prints a per-port summary (packets, bytes, peak queue, ECN marks, PFC pauses, drops\n"
    "per reason) and writes it to DIR/switch_summary.csv.\n\n"
    "arguments:\n"
    "  CONFIG.toml          the run's TOML: [topology] [switch] [testbed] [telemetry] [capture]\n"
    "                       (docs/config.md; [job] and [nic] are read and checked, not used)\n"
    "  --plan               print one TSV line per host (header first): host, ipv4, host_mac\n"
    "                       (the MAC the host's interface must carry), gateway_mac (the switch\n"
    "                       port facing it), switch_dev, host_dev, rate_bps; no EAL, exit 0\n"
    "  --switch-links       print one TSV line per switch-to-switch link (header first): link,\n"
    "                       a_node, b_node, a_dev, b_dev, rate_bps (the testbed makes a veth\n"
    "                       pair for each inside the switch's namespace); no EAL, exit 0\n"
    "  --out DIR            directory for switch_summary.csv, captures, queue series\n"
    "                       (default out)\n"
    "  --duration S         stop after S seconds of real time (default 0 = until signalled)\n"
    "  --ports BACKEND      af_packet (default when [testbed].ports is the default ring), af_xdp\n"
    "                       (needs hugepages), tap, pci; ring and memif cannot face other\n"
    "                       processes and are refused\n"
    "  --idle-sleep-us N    idle backoff: sleep up to N us when idle (overrides [testbed]\n"
    "                       idle_sleep_us; 0 = busy poll; the testbed scripts pass 20)\n"
    "  --seed N             run seed (overrides [run].seed; seeds ECMP, RED-ECN)\n"
    "  --policy P           the agent that sets every switch port's ECN thresholds each interval\n"
    "                       from live counters, on its own thread (static, graphcc, acc; test\n"
    "                       policies alternate, stall, throw); overrides [agent] (docs/agent.md)\n"
    "  --agent-model FILE   graphcc/acc model (refused with the reason if it does not load)\n"
    "  --agent-profile FILE static policy: its ECN profile (configs/ecn/*.toml)\n"
    "  --agent-interval-us N  control interval (default [agent] interval_us or 100)\n"
    "  --log-level LEVEL    trace|debug|info|warn|error|critical|off\n"
    "                       (default $ROCEMU_LOG or info)\n"
    "  -- EAL-ARGS...       passed to rte_eal_init after the defaults (-l 0 --no-pci --in-memory\n"
    "                       --no-telemetry, or --no-huge -m 512 --file-prefix rocemu-<pid>);\n"
    "                       e.g. `-- -l 1` to poll on core 1\n"
    "  -h, --help           this text\n\n"
    "exit status: 0 ran and stopped; 1 setup failure (EAL, a device); 2 usage or configuration\n"
    "error (every problem listed as path=value: reason (line N), nothing started)\n";

SwitchCli parse(int argc, char** argv) {
  SwitchCli c;
  apps::ArgCursor args(argc, argv, c.errors);
  while (args.next()) {
    const std::string& a = args.flag();
    std::string value;
    auto need = [&](const char*) -> bool { return args.value(value); };
    if (a == "-h" || a == "--help") {
      c.help = true;
    } else if (a == "--plan") {
      c.plan = true;
    } else if (a == "--switch-links") {
      c.switch_links = true;
    } else if (a == "--out") {
      if (need("--out")) c.out_dir = value;
    } else if (a == "--log-level") {
      if (need("--log-level")) c.log_level = value;
    } else if (a == "--ports") {
      fabric::PortBackend b{};
      if (need("--ports")) {
        if (fabric::parse_backend(value, b))
          c.ports = value;
        else
          c.errors.push_back("--ports=" + value + ": expected one of af_packet, af_xdp, tap, pci");
      }
    } else if (a == "--duration") {
      if (need("--duration")) {
        double v = 0;
        if (apps::parse_double(value, v) && v >= 0 && v <= 86400)
          c.duration_s = v;
        else
          c.errors.push_back("--duration=" + value +
                             ": expected seconds in [0, 86400] (0 = until signalled)");
      }
    } else if (a == "--idle-sleep-us") {
      if (need("--idle-sleep-us")) {
        uint64_t v = 0;
        if (apps::parse_u64(value, v) && v <= 10000)
          c.idle_sleep_us = static_cast<uint32_t>(v);
        else
          c.errors.push_back("--idle-sleep-us=" + value + ": expected microseconds in [0, 10000]");
      }
    } else if (a == "--seed") {
      if (need("--seed")) {
        uint64_t v = 0;
        if (apps::parse_u64(value, v))
          c.seed = v;
        else
          c.errors.push_back("--seed=" + value + ": expected a non-negative integer");
      }
    } else if (apps::is_agent_flag(a)) {
      if (need(a.c_str())) apps::parse_agent_flag(a, value, c.agent, c.errors);
    } else if (!a.empty() && a[0] == '-') {
      c.errors.push_back(a + ": unknown option (see --help)");
    } else if (c.config_path.empty()) {
      c.config_path = a;
    } else {
      c.errors.push_back(a + ": only one configuration file may be given");
    }
  }
  c.eal_args = args.rest();
  if (!c.help && c.config_path.empty())
    c.errors.push_back("missing the configuration file (see --help)");
  return c;
}

int usage_errors(const std::vector<std::string>& errors) {
  for (const auto& e : errors) std::fprintf(stderr, "%s: %s\n", kProgram, e.c_str());
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  SwitchCli cli = parse(argc, argv);
  if (cli.help) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (!setup_logging(cli.log_level))
    cli.errors.push_back("--log-level=" + cli.log_level + ": unknown level");
  if (!cli.errors.empty()) return usage_errors(cli.errors);
  fabric::RunConfig cfg;
  std::vector<fabric::HostPlanRow> plan;
  try {
    cfg = fabric::load_run_config(cli.config_path);
    apps::apply_agent_flags(cfg, cli.agent);
    plan = fabric::host_plan(cfg);
  } catch (const ConfigError& e) {
    std::string msg = e.what();
    if (!msg.empty() && msg.back() != '\n') msg += '\n';
    std::fputs(msg.c_str(), stderr);
    return kExitUsage;
  }
  if (cli.seed) cfg.seed = *cli.seed;
  if (cli.ports)
    fabric::parse_backend(*cli.ports, cfg.testbed.backend);
  else if (cfg.testbed.backend == fabric::PortBackend::kRing)
    cfg.testbed.backend = fabric::PortBackend::kAfPacket;
  if (cli.plan) {
    std::fputs(fabric::plan_tsv(plan).c_str(), stdout);
    return 0;
  }
  if (cli.switch_links) {
    std::fputs(fabric::switch_links_tsv(fabric::switch_links(cfg)).c_str(), stdout);
    return 0;
  }
  {
    fabric::RealtimeOptions probe;
    probe.backend = cfg.testbed.backend;
    const Topology& t = cfg.topology.topology;
    probe.external_nodes.assign(t.nodes().size(), false);
    for (uint32_t h : t.hosts()) probe.external_nodes[h] = true;
    if (const std::string why = fabric::check_external_nodes(t, probe); !why.empty())
      return usage_errors(
          {"--ports=" + std::string(fabric::backend_name(cfg.testbed.backend)) + ": " + why});
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  try {
    fabric::EalOptions eal;
    eal.program = kProgram;
    if (spdlog::get_level() > spdlog::level::debug)
      eal.user_args = {"--log-level", "lib.eal:warning"};
    eal.user_args.insert(eal.user_args.end(), cfg.testbed.eal_args.begin(),
                         cfg.testbed.eal_args.end());
    eal.user_args.insert(eal.user_args.end(), cli.eal_args.begin(), cli.eal_args.end());
    std::set<uint32_t> lcores{0};
    for (const auto& [node, lc] : cfg.testbed.placement) lcores.insert(lc);
    eal.lcores.clear();
    for (uint32_t lc : lcores) eal.lcores += (eal.lcores.empty() ? "" : ",") + std::to_string(lc);
    if (cfg.testbed.backend == fabric::PortBackend::kPci)
      for (const auto& row : plan) eal.pci_devices.push_back(row.switch_dev);
    fabric::eal_start(eal);
    fabric::SwitchRunOptions opt;
    opt.duration_ns = static_cast<TimeNs>(cli.duration_s * static_cast<double>(kNsPerSec));
    opt.stop = &g_stop;
    if (cli.idle_sleep_us) opt.idle_sleep_ns = *cli.idle_sleep_us * kNsPerUs;
    opt.out_dir = cli.out_dir;
    opt.on_ready = [] {
      std::fputs("rocemu-switch: ready\n", stdout);
      std::fflush(stdout);
    };
    const fabric::SwitchRunResult r = fabric::run_switches_realtime(cfg, opt);
    std::fputs(fabric::switch_summary_text(r).c_str(), stdout);
    std::filesystem::create_directories(cli.out_dir);
    const auto path = std::filesystem::path(cli.out_dir) / "switch_summary.csv";
    std::ofstream(path) << fabric::switch_summary_csv(r);
    std::printf("results: %s\n", path.c_str());
    std::fflush(stdout);
    fabric::eal_stop();
    return 0;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return 1;
  }
}
