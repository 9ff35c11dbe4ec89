// perftest_options.cc — perftest's flags parsed into PerftestOptions (see the header).
#include "apps/perftest/perftest_options.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace rocemu::perftest {

namespace {
const std::map<std::string, std::pair<Verb, Metric>>& tools() {
  static const std::map<std::string, std::pair<Verb, Metric>> t = {
      {"rocemu_write_bw", {Verb::kWrite, Metric::kBandwidth}},
      {"rocemu_write_lat", {Verb::kWrite, Metric::kLatency}},
      {"rocemu_send_bw", {Verb::kSend, Metric::kBandwidth}},
      {"rocemu_send_lat", {Verb::kSend, Metric::kLatency}},
      {"rocemu_read_bw", {Verb::kRead, Metric::kBandwidth}},
      {"rocemu_read_lat", {Verb::kRead, Metric::kLatency}},
      {"rocemu_atomic_bw", {Verb::kAtomic, Metric::kBandwidth}},
      {"rocemu_atomic_lat", {Verb::kAtomic, Metric::kLatency}}};
  return t;
}

constexpr uint32_t kAtomicSizeBytes = 8;  // perftest's DEF_SIZE_ATOMIC

/// Unsigned integer in [lo, hi] (decimal or 0x hex, as perftest's strtol(…, 0)).
bool parse_uint(const std::string& s, uint64_t lo, uint64_t hi, uint64_t& out) {
  if (s.empty() || s[0] == '-') return false;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (end == s.c_str() || *end != '\0' || v < lo || v > hi) return false;
  out = v;
  return true;
}
}  // namespace

const char* atomic_op_name(AtomicOp op) noexcept {
  return op == AtomicOp::kCmpSwap ? "CMP_AND_SWAP" : "FETCH_AND_ADD";
}

bool tool_from_name(const std::string& name, Verb& verb, Metric& metric) {
  const auto it = tools().find(name);
  if (it == tools().end()) return false;
  verb = it->second.first;
  metric = it->second.second;
  return true;
}

std::string perftest_usage(const std::string& tool) {
  Verb verb = Verb::kWrite;
  Metric metric = Metric::kBandwidth;
  const bool atomic = tool_from_name(tool, verb, metric) && verb == Verb::kAtomic;
  const std::string size_line =
      atomic ? "  -s, --size=<size>          message size: 8, the only size of atomics\n"
             : "  -s, --size=<size>          message size (default 65536 bw, 2 lat)\n"
               "  -a, --all                  all sizes 2^1..2^23\n";
  const std::string atomic_line =
      atomic
          ? "  -A, --atomic_type=<type>   CMP_AND_SWAP or FETCH_AND_ADD (default FETCH_AND_ADD)\n"
          : "";
  return "Usage:\n"
         "  " +
         tool +
         " [options] --loopback [-- EAL args]   server and client in one process\n"
         "  " +
         tool +
         " [options] [-- EAL args]              start a server\n"
         "  " +
         tool +
         " [options] <host> [-- EAL args]       connect to a server at <host>\n"
         "Options:\n" +
         atomic_line + size_line +
         "  -n, --iters=<iters>        iterations (default 5000 bw, 1000 lat)\n"
         "  -D, --duration=<sec>       run for <sec> seconds instead of -n\n"
         "  -q, --qp=<num>             number of QPs (1..16)\n"
         "  -m, --mtu=<mtu>            IB MTU 256|512|1024|2048|4096 (default 1024)\n"
         "  -t, --tx-depth=<dep>       send queue depth (default 128 bw, 1 lat)\n"
         "  -r, --rx-depth=<dep>       receive queue depth (default 512)\n"
         "  -p, --port=<port>          TCP port of the side channel, or with -R the rdma_cm port\n"
         "                             (default 18515)\n"
         "  -R, --rdma_cm              network mode: connect through rdma_cm, keys exchanged as\n"
         "                             SENDs on a first rdma_cm connection (no TCP)\n"
         "  -T, --tos=<tos>            with -R: the rdma_cm QPs' traffic class 0..255; its DSCP\n"
         "                             (tos >> 2) marks their packets both ways, ECN stays the\n"
         "                             NIC's (default and 0: the host's data DSCP)\n"
         "  -u, --qp-timeout=<t>       ACK timeout 4.096 us * 2^t (default 14)\n"
         "  -b, --bidirectional        both sides send (bandwidth tests)\n"
         "  -F, --CPU-freq             do not warn about CPU frequency (accepted, no effect)\n"
         "  -x, --gid-index=<index>    GID index: 1 the IPv4-mapped GID (default), 0 the IPv6\n"
         "                             link-local GID of the port's MAC (network mode)\n"
         "      --report_gbits         bandwidth in Gb/sec instead of MiB/sec\n"
         "      --run_infinitely       repeat -D periods until interrupted (default -D 5)\n"
         "      --out_json[=<file>]    also write the results as JSON (default perftest_out.json)\n"
         "      --loopback             server and client endpoints in one process (net_ring)\n"
         "      --link_gbps=<rate>     rate of the emulated loopback wire (default 100)\n"
         "      --pci=<A>,<B>          loopback on two cabled PCI ports (client on A, server on\n"
         "                             B; rate: the ports' speed unless --link_gbps; "
         "docs/hardware.md)\n"
         "  -d, --ib-dev=<iface>       network mode: kernel interface of the af_packet port\n"
         "      --connect_timeout=<s>  client: wait this long for the server (default 10)\n"
         "      --server_wait=<s>      server: wait this long for a client (default 3600)\n"
         "      --roce_ip=<a.b.c.d>    network mode: our RoCE address (default: the interface's)\n"
         "      --idle_sleep_us=<us>   network mode: sleep up to <us> when the poll loop is idle\n"
         "                             (lets several pollers share cores; default 0 = busy poll)\n"
         "      --check_data           network mode, bandwidth without -b, on both sides: the\n"
         "                             sender's bytes are a pattern the receiving side checks\n"
         "  -h, --help                 this text\n";
}

ParseOutcome parse_perftest_args(const std::string& tool, const std::vector<std::string>& args) {
  ParseOutcome out;
  PerftestOptions& o = out.opt;
  o.tool = tool;
  if (!tool_from_name(tool, o.verb, o.metric)) {
    out.exit_code = 2;
    out.message =
        tool + ": not a rocemu perftest tool name (rocemu_{write,send,read,atomic}_{bw,lat})\n";
    return out;
  }
  const bool lat = o.metric == Metric::kLatency;
  const bool atomic = o.verb == Verb::kAtomic;
  o.size_bytes = atomic ? kAtomicSizeBytes : lat ? 2 : 65536;
  o.iters = !lat && o.verb == Verb::kWrite ? 5000 : 1000;  // DEF_ITERS_WB, DEF_ITERS
  o.tx_depth = lat ? 1 : 128;
  bool size_set = false, iters_set = false, duration_set = false;
  auto bad = [&](const std::string& why) {
    out.exit_code = 2;
    out.message = tool + ": " + why + "\n" + perftest_usage(tool);
    return out;
  };
  // Short and long spellings of the flags that take a value, and of the switches.
  static const std::map<std::string, char> valued = {{"-s", 's'},
                                                     {"--size", 's'},
                                                     {"-n", 'n'},
                                                     {"--iters", 'n'},
                                                     {"-D", 'D'},
                                                     {"--duration", 'D'},
                                                     {"-q", 'q'},
                                                     {"--qp", 'q'},
                                                     {"-m", 'm'},
                                                     {"--mtu", 'm'},
                                                     {"-t", 't'},
                                                     {"--tx-depth", 't'},
                                                     {"-r", 'r'},
                                                     {"--rx-depth", 'r'},
                                                     {"-p", 'p'},
                                                     {"--port", 'p'},
                                                     {"-x", 'x'},
                                                     {"--gid-index", 'x'},
                                                     {"--link_gbps", 'L'},
                                                     {"-d", 'd'},
                                                     {"--ib-dev", 'd'},
                                                     {"--connect_timeout", 'c'},
                                                     {"--server_wait", 'w'},
                                                     {"--roce_ip", 'R'},
                                                     {"--idle_sleep_us", 'I'},
                                                     {"--pci", 'P'},
                                                     {"-u", 'u'},
                                                     {"--qp-timeout", 'u'},
                                                     {"-A", 'A'},
                                                     {"--atomic_type", 'A'},
                                                     {"-T", 'T'},
                                                     {"--tos", 'T'}};
  static const std::map<std::string, char> switches = {{"-a", 'a'},
                                                       {"--all", 'a'},
                                                       {"-b", 'b'},
                                                       {"--bidirectional", 'b'},
                                                       {"-F", 'F'},
                                                       {"--CPU-freq", 'F'},
                                                       {"--report_gbits", 'g'},
                                                       {"--run_infinitely", 'i'},
                                                       {"--loopback", 'l'},
                                                       {"-h", 'h'},
                                                       {"--help", 'h'},
                                                       {"--out_json", 'j'},
                                                       {"--check_data", 'C'},
                                                       {"-R", 'M'},
                                                       {"--rdma_cm", 'M'}};
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "--") {
      o.eal_args.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    std::string value;
    bool has_value = false;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      has_value = true;
    }
    if (a.rfind("--out_json", 0) == 0 && a == "--out_json") {
      o.out_json = has_value ? value : "perftest_out.json";
      if (o.out_json.empty()) return bad("--out_json= needs a file name");
      continue;
    }
    if (auto s = switches.find(a); s != switches.end()) {
      if (has_value) return bad("option '" + a + "' takes no value");
      switch (s->second) {
        case 'a':
          o.all_sizes = true;
          break;
        case 'b':
          o.bidirectional = true;
          break;
        case 'F':
          o.ignore_cpu_freq = true;
          break;
        case 'M':
          o.rdma_cm = true;
          break;
        case 'g':
          o.report_gbits = true;
          break;
        case 'i':
          o.run_infinitely = true;
          break;
        case 'l':
          o.loopback = true;
          break;
        case 'C':
          o.check_data = true;
          break;
        case 'h':
          out.exit_code = 0;
          out.message = perftest_usage(tool);
          return out;
        default:
          break;
      }
      continue;
    }
    if (auto v = valued.find(a); v != valued.end()) {
      if (!has_value) {
        if (i + 1 >= args.size()) return bad("option '" + a + "' needs a value");
        value = args[++i];
      }
      uint64_t n = 0;
      switch (v->second) {
        case 's':
          if (!parse_uint(value, 1, 1u << 23, n)) return bad("-s=" + value + ": 1..8388608");
          o.size_bytes = static_cast<uint32_t>(n);
          size_set = true;
          break;
        case 'n':
          if (!parse_uint(value, 5, 100'000'000, n)) return bad("-n=" + value + ": 5..1e8");
          o.iters = n;
          iters_set = true;
          break;
        case 'D':
          if (!parse_uint(value, 1, 86400, n)) return bad("-D=" + value + ": 1..86400 s");
          o.duration_s = static_cast<uint32_t>(n);
          duration_set = true;
          break;
        case 'q':
          if (!parse_uint(value, 1, 16, n)) return bad("-q=" + value + ": 1..16");
          o.num_qps = static_cast<uint32_t>(n);
          break;
        case 'm':
          if (!parse_uint(value, 256, 4096, n) || (n & (n - 1)) != 0)
            return bad("-m=" + value + ": 256, 512, 1024, 2048 or 4096");
          o.mtu_bytes = static_cast<uint32_t>(n);
          break;
        case 't':
          if (!parse_uint(value, 1, 1024, n)) return bad("-t=" + value + ": 1..1024");
          o.tx_depth = static_cast<uint32_t>(n);
          break;
        case 'r':
          if (!parse_uint(value, 1, 4096, n)) return bad("-r=" + value + ": 1..4096");
          o.rx_depth = static_cast<uint32_t>(n);
          break;
        case 'p':
          if (!parse_uint(value, 1, 65535, n)) return bad("-p=" + value + ": 1..65535");
          o.tcp_port = static_cast<uint16_t>(n);
          break;
        case 'x':
          if (!parse_uint(value, 0, 1, n))
            return bad("-x=" + value + ": 0 (IPv6 link-local) or 1 (IPv4-mapped)");
          o.gid_index = static_cast<int>(n);
          break;
        case 'd':
          if (value.empty() || value.size() > 15) return bad("-d=" + value + ": an interface name");
          o.iface = value;
          break;
        case 'c':
          if (!parse_uint(value, 1, 3600, n))
            return bad("--connect_timeout=" + value + ": 1..3600 s");
          o.connect_timeout_s = static_cast<uint32_t>(n);
          break;
        case 'w':
          if (!parse_uint(value, 1, 86400, n))
            return bad("--server_wait=" + value + ": 1..86400 s");
          o.server_wait_s = static_cast<uint32_t>(n);
          break;
        case 'I':
          if (!parse_uint(value, 0, 10000, n)) return bad("--idle_sleep_us=" + value + ": 0..10000");
          o.idle_sleep_us = static_cast<uint32_t>(n);
          break;
        case 'A':
          if (!atomic)
            return bad("-A is for the atomic tests (rocemu_atomic_bw, rocemu_atomic_lat)");
          if (value == "CMP_AND_SWAP") {
            o.atomic_op = AtomicOp::kCmpSwap;
          } else if (value == "FETCH_AND_ADD") {
            o.atomic_op = AtomicOp::kFetchAdd;
          } else {
            return bad("-A=" + value + ": CMP_AND_SWAP or FETCH_AND_ADD");
          }
          break;
        case 'T':
          if (!parse_uint(value, 0, 255, n)) return bad("-T=" + value + ": 0..255");
          o.tos = static_cast<int>(n);
          break;
        case 'u':
          if (!parse_uint(value, 0, 31, n)) return bad("-u=" + value + ": 0..31");
          o.qp_timeout = static_cast<int>(n);
          break;
        case 'R': {
          unsigned a[4];
          char tail = 0;
          if (std::sscanf(value.c_str(), "%u.%u.%u.%u%c", &a[0], &a[1], &a[2], &a[3], &tail) != 4 ||
              a[0] > 255 || a[1] > 255 || a[2] > 255 || a[3] > 255)
            return bad("--roce_ip=" + value + ": an IPv4 address");
          o.roce_ip = value;
          break;
        }
        case 'L': {
          char* end = nullptr;
          const double g = std::strtod(value.c_str(), &end);
          if (value.empty() || *end != '\0' || !(g > 0.0 && g <= 400.0))
            return bad("--link_gbps=" + value + ": (0, 400]");
          o.link_gbps = g;
          o.link_gbps_set = true;
          break;
        }
        case 'P': {
          const auto comma = value.find(',');
          if (comma == std::string::npos || comma == 0 || comma + 1 == value.size() ||
              value.find(',', comma + 1) != std::string::npos)
            return bad("--pci=" + value + ": two PCI addresses, A,B");
          o.pci = {value.substr(0, comma), value.substr(comma + 1)};
          if (o.pci[0] == o.pci[1]) return bad("--pci=" + value + ": two different ports");
          break;
        }
        default:
          break;
      }
      continue;
    }
    if (a.empty() || a[0] == '-') return bad("unknown option '" + args[i] + "'");
    if (!o.server_name.empty()) return bad("more than one server name ('" + a + "')");
    o.server_name = a;
  }
  if (size_set && o.all_sizes) return bad("-s and -a exclude each other");
  if (atomic && (o.all_sizes || o.size_bytes != kAtomicSizeBytes))
    return bad("the message size of atomic tests is 8 bytes and cannot be changed");
  if (duration_set && iters_set) return bad("-D and -n exclude each other");
  if (o.run_infinitely && !duration_set) o.duration_s = 5;
  if (o.bidirectional && lat) return bad("-b is for bandwidth tests");
  if (!o.pci.empty() && !o.loopback) return bad("--pci is for --loopback");
  if (o.loopback && !o.server_name.empty()) return bad("--loopback takes no server name");
  if (!o.loopback && o.iface.empty())
    return bad("give --loopback, or -d <interface> for a server or client on a DPDK port");
  if (o.loopback && !o.roce_ip.empty()) return bad("--roce_ip is for network mode (-d)");
  if (o.loopback && o.rdma_cm) return bad("-R is for network mode (-d)");
  // perftest: "TOS only valid for rdma_cm based QP and RawEth QP".
  if (o.tos >= 0 && !o.rdma_cm) return bad("-T (TOS) is for rdma_cm QPs: give -R too");
  if (o.rdma_cm && o.gid_index == 0)
    return bad(
        "-R with -x 0: rocemu's rdma_cm speaks IPv4 only (its CM header and GIDs); use -x 1");
  if (o.loopback && o.idle_sleep_us > 0) return bad("--idle_sleep_us is for network mode (-d)");
  if (o.check_data && (o.loopback || lat || o.bidirectional || atomic))
    return bad("--check_data is for network-mode (-d) WRITE/READ/SEND bandwidth tests without -b");
  if (lat && o.tx_depth != 1) o.tx_depth = 1;  // ping-pong: one message in flight
  // perftest's force_dependecies: a run of -n iterations never has more WRs (or SEND
  // receives) outstanding than iterations; CQ moderation is 100, disabled (1) above 8 KiB
  // unless -a, and at most the tx depth; READ and atomics advertise the device's 128
  // outstanding requests (rxe's and rocemu's max_qp_rd_atom), the others 1.
  if (o.duration_s == 0) {
    o.tx_depth = static_cast<uint32_t>(std::min<uint64_t>(o.tx_depth, o.iters));
    if (o.verb == Verb::kSend)
      o.rx_depth = static_cast<uint32_t>(std::min<uint64_t>(o.rx_depth, o.iters));
  }
  // perftest's "WA for a bug when rx_depth is odd in SEND" (not with -a or --run_infinitely).
  if (o.verb == Verb::kSend && o.rx_depth % 2 == 1 && !o.all_sizes && !o.run_infinitely)
    ++o.rx_depth;
  o.cq_mod = o.size_bytes > 8192 && !o.all_sizes ? 1 : 100;
  o.cq_mod = std::min(o.cq_mod, o.tx_depth);
  o.out_reads = reads_back(o.verb) ? 128 : 1;
  return out;
}

std::vector<uint32_t> run_sizes(const PerftestOptions& opt) {
  if (!opt.all_sizes) return {opt.size_bytes};
  std::vector<uint32_t> s;
  for (uint32_t b = 2; b <= (1u << 23); b <<= 1) s.push_back(b);
  return s;
}

}  // namespace rocemu::perftest
