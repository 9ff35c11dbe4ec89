// host_options.h — the command line of rocemu-host (docs/workload_runs.md "Host processes in
// namespaces"): run one host of a workload run on a DPDK af_packet port, or merge the
// per-host result directories. Usage errors are collected and reported together (exit 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rocemu::apps {

struct HostOptions {
  std::string config_path;
  // run mode
  std::string host;                          // --host NAME (a host of the run's topology)
  std::string iface;                         // -d IFACE (the host end of a veth)
  std::optional<int64_t> start_at_ns;        // --start-at EPOCH_NS (CLOCK_REALTIME); none: now
  std::string start_file;                    // --start-file PATH: the instant, once written there
  std::string out_dir;                       // --out DIR (default out/host-NAME)
  int64_t grace_ns = 1'000'000'000;          // --grace-ms: serve peers after the last flow start
  std::optional<int64_t> idle_sleep_ns;       // --idle-sleep-us (default [testbed] idle_sleep_us)
  std::optional<int64_t> time_limit_ns;      // --time-limit-s (default [testbed].time_limit_s)
  int64_t max_start_lag_ns = 1'000'000'000;  // --max-start-lag-ms: refuse a start this late
  std::optional<uint64_t> seed;              // --seed
  std::string log_level;                     // --log-level
  std::vector<std::string> eal_args;         // after `--`
  // merge mode
  std::string merge_out;  // --merge OUT DIR...
  std::vector<std::string> merge_dirs;
  bool list_hosts = false;  // --list-hosts: print NAME IPV4 MAC per host
  bool help = false;
  std::vector<std::string> errors;
  bool merging() const noexcept { return !merge_out.empty(); }
};

/// Parses argv (argv[0] skipped). Never throws; problems go to `errors`.
HostOptions parse_host_options(int argc, char** argv);
/// The --help text.
std::string host_help(const std::string& program);
/// The start instant in a --start-file's text: one positive integer, nanoseconds since the
/// epoch (`date +%s%N`), optionally followed by a newline; nothing if the text is not that.
std::optional<int64_t> parse_start_instant(const std::string& text);
/// One look at --start-file `path`: nothing while no such file exists yet, its start instant
/// once it holds one. Throws std::runtime_error naming the path when it exists but is not a
/// regular file of at most 64 bytes holding a start instant (a FIFO or /dev/zero is not read).
std::optional<int64_t> read_start_file(const std::string& path);

}  // namespace rocemu::apps
