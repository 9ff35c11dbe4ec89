// perftest_options.h — the command line of rocemu's perftest-style tools (rocemu_write_bw,
// rocemu_write_lat, rocemu_send_bw, rocemu_send_lat, rocemu_read_bw, rocemu_read_lat,
// rocemu_atomic_bw, rocemu_atomic_lat).
//
// Flags follow perftest 4.5 (linux-rdma/perftest, src/perftest_parameters.c): -s size, -n
// iterations, -D duration, -a all sizes (2^1..2^23), -q QPs, -m MTU, -t tx depth, -r rx depth,
// -p TCP port (18515), -u ACK timeout exponent, -b bidirectional, -F (ignore CPU frequency
// warnings), -x GID index, --report_gbits, --run_infinitely, --out_json[=FILE], -A atomic
// type (the atomic tools); rocemu adds --loopback (server and
// client endpoints in one process over a net_ring wire), --link_gbps, -d <iface> (the kernel
// interface a server or client runs its af_packet port on), --roce_ip (the RoCE address when
// the interface has none of its own), --connect_timeout, --server_wait, --pci=A,B (the
// loopback pair on two cabled PCI ports instead of a net_ring wire). EAL arguments follow
// `--`. Defaults as perftest: -s 65536 for bandwidth, 2 for latency; -n 5000 for WRITE
// bandwidth, 1000 for the others; -t 128 (bw) / 1 (lat); -r 512; with -n, tx depth (and a
// SEND test's rx depth) at most -n, as perftest's force_dependecies. The atomic tools take -A
// CMP_AND_SWAP | FETCH_AND_ADD (default FETCH_AND_ADD); their size is 8 bytes and cannot be changed
// (-s other than 8 and -a are refused, as perftest). Pure: no EAL, no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rocemu::perftest {

enum class Verb : uint8_t { kWrite, kSend, kRead, kAtomic };
/// perftest's -A (its atomicTypesStr spells them CMP_AND_SWAP, FETCH_AND_ADD).
enum class AtomicOp : uint8_t { kFetchAdd, kCmpSwap };
/// READ and the atomics: the requester's operation brings data back and the server's side
/// is passive (its responder answers), so they share perftest's READ flow.
constexpr bool reads_back(Verb v) noexcept { return v == Verb::kRead || v == Verb::kAtomic; }
/// "FETCH_AND_ADD" or "CMP_AND_SWAP".
const char* atomic_op_name(AtomicOp op) noexcept;
enum class Metric : uint8_t { kBandwidth, kLatency };

struct PerftestOptions {
  Verb verb = Verb::kWrite;
  Metric metric = Metric::kBandwidth;
  AtomicOp atomic_op = AtomicOp::kFetchAdd;  // -A (atomic tools)
  std::string tool = "rocemu_write_bw";
  uint32_t size_bytes = 65536;
  uint64_t iters = 5000;
  uint32_t duration_s = 0;  // -D: run for this long instead of -n iterations (0 = off)
  bool all_sizes = false;
  uint32_t num_qps = 1;
  uint32_t mtu_bytes = 1024;
  uint32_t tx_depth = 128;
  uint32_t rx_depth = 512;
  uint16_t tcp_port = 18515;
  int qp_timeout = -1;  // -u: local ACK timeout exponent (4.096 us x 2^t); -1: the NIC's (14)
  bool bidirectional = false;
  bool ignore_cpu_freq = false;  // -F: accepted (rocemu reads the TSC, never CPU frequency)
  int gid_index = -1;
  bool report_gbits = false;
  bool run_infinitely = false;
  std::string out_json;  // empty: no JSON; else the file written
  bool loopback = false;
  double link_gbps = 100.0;  // --link_gbps: the emulated wire of the loopback pair
  bool link_gbps_set = false;    // given: with --pci, emulate it instead of the ports' speed
  std::vector<std::string> pci;  // --pci=A,B: loopback on these two PCI ports (client on A)
  std::string server_name;   // client mode when set
  std::string iface;         // -d: kernel interface of the DPDK af_packet port (network mode)
  std::string roce_ip;  // --roce_ip: our RoCE address (default: the -d interface's IPv4)
  uint32_t connect_timeout_s = 10;  // --connect_timeout: client's wait for the server
  uint32_t server_wait_s = 3600;    // --server_wait: server's wait for a client
  uint32_t idle_sleep_us = 0;       // --idle_sleep_us: poll-loop idle backoff (0 = busy poll)
  bool check_data = false;  // --check_data: the moved bytes are a pattern, checked (data_check.h)
  // perftest's derived parameters, as its preamble shows them (force_dependecies):
  uint32_t cq_mod = 100;      // CQ moderation: 100, 1 above 8 KiB (not -a), at most tx_depth
  uint32_t out_reads = 1;     // outstanding READs/atomics advertised: 128 for READ/atomic
  uint32_t inline_bytes = 0;  // max inline data: 0 (perftest's value for a device it does not know)
  bool rdma_cm = false;       // the connection goes through rdma_cm (perftest -R)
  int tos = -1;  // -T: the rdma_cm QPs' IP traffic class (0..255), -1 unset (perftest DEF_TOS)
  std::vector<std::string> eal_args;
};

/// What parse_perftest_args decided: run (exit_code < 0) or exit with `exit_code` after
/// printing `message` (usage on stderr for 2, help on stdout for 0).
struct ParseOutcome {
  PerftestOptions opt;
  int exit_code = -1;
  std::string message;
};

/// Verb and metric of a tool name (the basename of argv[0], e.g. "rocemu_read_lat");
/// false if the name is not one of the eight tools.
bool tool_from_name(const std::string& name, Verb& verb, Metric& metric);

/// The usage text of `tool`.
std::string perftest_usage(const std::string& tool);

/// Parses argv[1..] of `tool` (args exclude argv[0]). Unknown flags, missing or out-of-range
/// values give exit_code 2 with the reason and the usage; -h/--help gives 0.
ParseOutcome parse_perftest_args(const std::string& tool, const std::vector<std::string>& args);

/// The message sizes of one run: {size} or, with -a, 2^1..2^23 (perftest's -a).
std::vector<uint32_t> run_sizes(const PerftestOptions& opt);

}  // namespace rocemu::perftest
