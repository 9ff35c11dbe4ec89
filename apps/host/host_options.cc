// host_options.cc — rocemu-host's flags and --help (see host_options.h).
#include "apps/host/host_options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "apps/cli_args.h"
#include "apps/cli_numbers.h"
#include "common/file_read.h"

namespace rocemu::apps {

HostOptions parse_host_options(int argc, char** argv) {
  HostOptions o;
  bool merge_seen = false;
  ArgCursor args(argc, argv, o.errors);
  while (args.next()) {
    const std::string& a = args.flag();
    std::string value;
    auto need = [&](const std::string&) -> bool { return args.value(value); };
    auto ms = [&](const std::string& name, int64_t lo, int64_t hi, int64_t& out) {
      int64_t v = 0;
      if (!need(name)) return;
      if (parse_i64(value, v) && v >= lo && v <= hi)
        out = v * 1'000'000;
      else
        o.errors.push_back(name + "=" + value + ": expected an integer in [" + std::to_string(lo) +
                           ", " + std::to_string(hi) + "] (milliseconds)");
    };
    if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "--host") {
      if (need(a)) o.host = value;
    } else if (a == "-d" || a == "--ib-dev" || a == "--iface") {
      if (need(a)) o.iface = value;
    } else if (a == "--start-at") {
      int64_t v = 0;
      if (need(a)) {
        if (parse_i64(value, v) && v > 0)
          o.start_at_ns = v;
        else
          o.errors.push_back("--start-at=" + value +
                             ": expected nanoseconds since the epoch (date +%s%N)");
      }
    } else if (a == "--start-file") {
      if (need(a)) {
        if (value.empty())
          o.errors.push_back("--start-file: expected a file name");
        else
          o.start_file = value;
      }
    } else if (a == "--out") {
      if (need(a)) o.out_dir = value;
    } else if (a == "--grace-ms") {
      ms(a, 0, 3'600'000, o.grace_ns);
    } else if (a == "--idle-sleep-us") {
      int64_t v = 0;
      if (need(a)) {
        if (parse_i64(value, v) && v >= 0 && v <= 10000)
          o.idle_sleep_ns = v * 1000;
        else
          o.errors.push_back("--idle-sleep-us=" + value + ": expected an integer in [0, 10000]");
      }
    } else if (a == "--max-start-lag-ms") {
      ms(a, 0, 3'600'000, o.max_start_lag_ns);
    } else if (a == "--time-limit-s") {
      double v = 0;
      if (need(a)) {
        if (parse_double(value, v) && v >= 0.001 && v <= 3600)
          o.time_limit_ns = static_cast<int64_t>(v * 1e9);
        else
          o.errors.push_back("--time-limit-s=" + value + ": expected a number in [0.001, 3600]");
      }
    } else if (a == "--seed") {
      int64_t v = 0;
      if (need(a)) {
        if (parse_i64(value, v) && v >= 0)
          o.seed = static_cast<uint64_t>(v);
        else
          o.errors.push_back("--seed=" + value + ": expected a non-negative integer");
      }
    } else if (a == "--log-level") {
      if (need(a)) o.log_level = value;
    } else if (a == "--list-hosts") {
      o.list_hosts = true;
    } else if (a == "--merge") {
      merge_seen = true;
      if (need(a)) o.merge_out = value;
    } else if (!a.empty() && a[0] == '-') {
      o.errors.push_back(a + ": unknown option (see --help)");
    } else if (o.config_path.empty()) {
      o.config_path = a;
    } else if (merge_seen) {
      o.merge_dirs.push_back(a);
    } else {
      o.errors.push_back(a + ": only one configuration file may be given");
    }
  }
  o.eal_args = args.rest();
  if (o.help) return o;
  if (o.config_path.empty()) o.errors.push_back("missing the configuration file (see --help)");
  if (o.list_hosts) return o;
  if (merge_seen) {
    if (o.merge_dirs.empty())
      o.errors.push_back("--merge OUT: needs at least one per-host result directory");
    if (!o.host.empty() || !o.iface.empty())
      o.errors.push_back("--merge: takes no --host or -d (it only reads result directories)");
  } else {
    if (o.host.empty()) o.errors.push_back("missing --host NAME (a host of the run's topology)");
    if (o.iface.empty())
      o.errors.push_back("missing -d IFACE (the kernel interface of the host's port)");
    if (o.out_dir.empty() && !o.host.empty()) o.out_dir = "out/host-" + o.host;
    if (o.start_at_ns && !o.start_file.empty())
      o.errors.push_back("--start-at and --start-file exclude each other (one start instant)");
  }
  return o;
}

std::optional<int64_t> parse_start_instant(const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.back() == '\n') t.pop_back();
  int64_t v = 0;
  if (!parse_i64(t, v) || v <= 0) return std::nullopt;
  return v;
}

std::optional<int64_t> read_start_file(const std::string& path) {
  std::string text;
  const std::string why = read_regular_file(path, 64, &text);
  if (why == std::strerror(ENOENT)) return std::nullopt;  // not written yet
  if (!why.empty()) throw std::runtime_error("--start-file " + path + ": " + why);
  if (auto at = parse_start_instant(text)) return at;
  throw std::runtime_error("--start-file " + path + ": '" + text +
                           "' is not a start instant (nanoseconds since the epoch)");
}

std::string host_help(const std::string& p) {
  return "usage: " + p +
         " CONFIG.toml --host NAME -d IFACE [--start-at EPOCH_NS | --start-file F]\n"
         "         [--out DIR]\n"
         "         [--grace-ms MS] [--time-limit-s S] [--max-start-lag-ms MS] [--seed N]\n"
         "         [--idle-sleep-us N]\n"
         "         [--log-level LEVEL] [-- EAL-ARGS...]\n"
         "       " +
         p +
         " CONFIG.toml --merge OUT DIR...\n"
         "       " +
         p +
         " CONFIG.toml --list-hosts\n\n"
         "Runs ONE host of a workload run (CONFIG.toml's [topology], [nic], [dcqcn], [workload])\n"
         "as its own process, on a DPDK af_packet port on IFACE, normally the host end of a veth\n"
         "in the host's network namespace (scripts/testbed/workload.sh). Every process builds the\n"
         "same QP plan from the configuration (no connection exchange), generates the same flows\n"
         "from the seed and starts those whose source is NAME; frames go to the topology MAC of\n"
         "the switch port facing the host. docs/workload_runs.md, \"Host processes in "
         "namespaces\".\n\n"
         "arguments:\n"
         "  CONFIG.toml            the run (docs/config.md); needs a [workload] table\n"
         "  --host NAME            the topology host this process runs\n"
         "  -d IFACE               kernel interface for the af_packet port; it must have an IPv4\n"
         "                         address equal to the topology's address of NAME\n"
         "  --start-at EPOCH_NS    workload time 0 as CLOCK_REALTIME ns (`date +%s%N`); give\n"
         "                         every process the same instant a few seconds ahead\n"
         "                         (default: now)\n"
         "  --start-file F         readiness handshake: once its port and QPs are up, print\n"
         "                         `rocemu-host: NAME ready` and wait (up to 60 s) for F to hold\n"
         "                         the start instant in EPOCH_NS (workload.sh writes it once\n"
         "                         every host is ready)\n"
         "  --out DIR              per-host flows.csv, bins.csv, metrics.csv, failures.csv (default "
         "out/host-NAME)\n"
         "  --grace-ms MS          keep serving peers' flows this long after the workload's last\n"
         "                         flow start, once this host's own flows are over (default 1000)\n"
         "  --time-limit-s S       give up after S s of workload time (default "
         "[testbed].time_limit_s)\n"
         "  --idle-sleep-us N      idle backoff: after 256 idle loop iterations sleep until the\n"
         "                         next timer, at most N us (default [testbed] idle_sleep_us;\n"
         "                         0 = busy poll; workload.sh passes 20)\n"
         "  --max-start-lag-ms MS  refuse a --start-at more than MS in the past (default 1000)\n"
         "  --seed N               run seed (overrides [run].seed; must be equal in every "
         "process)\n"
         "  --log-level LEVEL      trace|debug|info|warn|error|critical|off\n"
         "  -- EAL-ARGS...         appended to EAL's arguments (e.g. -l 1 to poll another core)\n"
         "  --merge OUT DIR...     combine per-host result directories into OUT/flows.csv,\n"
         "                         bins.csv, metrics.csv (the in-process job's formats)\n"
         "  --list-hosts           print `NAME IPV4 MAC` of every host (the testbed scripts use "
         "it)\n"
         "  -h, --help             this text\n\n"
         "exit status (the same rule as rocemu-sim): 0 no flow of this host failed and at least\n"
         "one finished (or it had none; flows unfinished at the time limit are reported on\n"
         "stderr); 1 a flow failed, none finished, or a setup failure (EAL, port); 2 usage or\n"
         "configuration error (unknown host, interface\n"
         "without IPv4/MAC or with another address, start time too far in the past)\n";
}

}  // namespace rocemu::apps
