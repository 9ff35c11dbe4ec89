// perftest_main.cc — rocemu_{write,send,read}_{bw,lat}: perftest's tools over rocemu's RoCEv2
// endpoint (docs/perftest.md). The tool is fixed at build time (ROCEMU_PERFTEST_TOOL), or
// taken from argv[0]'s basename when that names one of the six tools.
//
// Exit: 0 success, 1 a test failed (error completion, no progress), 2 usage, 3 setup (EAL).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/perftest/loopback_bench.h"
#include "apps/perftest/perftest_options.h"
#include "apps/perftest/perftest_report.h"

using namespace rocemu;
using namespace rocemu::perftest;

namespace {
std::atomic<bool> g_interrupted{false};

const char* verb_title(Verb v) {
  return v == Verb::kWrite ? "RDMA_Write" : v == Verb::kRead ? "RDMA_Read" : "Send";
}

void print_banner(const PerftestOptions& o) {
  std::printf("%s", kResultLine);
  std::printf("                    %s %s Test\n", verb_title(o.verb),
              o.metric == Metric::kBandwidth ? "BW" : "Latency");
  std::printf(" Dual-port       : OFF\t\tDevice         : rocemu (loopback, net_ring)\n");
  std::printf(" Number of qps   : %u\t\tTransport type : IB\n", o.num_qps);
  std::printf(" Connection type : RC\t\tUsing SRQ      : OFF\n");
  std::printf(" TX depth        : %u\n", o.tx_depth);
  if (o.verb == Verb::kSend) std::printf(" RX depth        : %u\n", o.rx_depth);
  std::printf(" Mtu             : %u[B]\n", o.mtu_bytes);
  std::printf(" Link type       : Ethernet\n");
  std::printf(" Wire            : net_ring, %.1f Gb/s emulated\n", o.link_gbps);
  std::printf("%s", kResultLine);
}

struct JsonRow {
  std::string text;
};

std::string bw_json(const BwRow& r) {
  char b[256];
  std::snprintf(b, sizeof b,
                "{\"bytes\": %llu, \"iterations\": %llu, \"bw_peak_mib_s\": %.3f, "
                "\"bw_avg_mib_s\": %.3f, \"bw_avg_gbps\": %.4f, \"msg_rate_mpps\": %.6f}",
                (unsigned long long)r.size_bytes, (unsigned long long)r.iters,
                bw_in_unit(r.peak_bytes_per_s, false), bw_in_unit(r.avg_bytes_per_s, false),
                bw_in_unit(r.avg_bytes_per_s, true), r.msg_rate_pps / 1e6);
  return b;
}

std::string lat_json(uint64_t size, uint64_t iters, const LatencyStats& s) {
  char b[320];
  std::snprintf(b, sizeof b,
                "{\"bytes\": %llu, \"iterations\": %llu, \"t_min_us\": %.3f, \"t_max_us\": %.3f, "
                "\"t_typical_us\": %.3f, \"t_avg_us\": %.3f, \"t_stdev_us\": %.3f, "
                "\"p99_us\": %.3f, \"p999_us\": %.3f}",
                (unsigned long long)size, (unsigned long long)iters, s.min_us, s.max_us,
                s.typical_us, s.avg_us, s.stdev_us, s.p99_us, s.p999_us);
  return b;
}

std::string tool_name(const char* argv0) {
#ifdef ROCEMU_PERFTEST_TOOL
  std::string fixed = ROCEMU_PERFTEST_TOOL;
#else
  std::string fixed;
#endif
  std::string base = argv0 ? argv0 : "";
  if (auto slash = base.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
  Verb v;
  Metric m;
  return tool_from_name(base, v, m) || fixed.empty() ? base : fixed;
}

int run_loopback(const PerftestOptions& o) {
  const std::vector<uint32_t> sizes = run_sizes(o);
  std::unique_ptr<LoopbackBench> bench;
  try {
    bench = std::make_unique<LoopbackBench>(o, sizes.back());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: setup failed: %s\n", o.tool.c_str(), e.what());
    return 3;
  }
  print_banner(o);
  const bool bw = o.metric == Metric::kBandwidth;
  std::printf("%s", bw ? bw_header(o.report_gbits).c_str() : lat_header().c_str());
  std::fflush(stdout);
  std::vector<std::string> json;
  int rc = 0;
  const TimeNs duration_ns = static_cast<TimeNs>(o.duration_s) * kNsPerSec;
  do {
    for (uint32_t size : sizes) {
      if (bw) {
        const BwResult r = bench->run_bw(size, duration_ns);
        if (!r.ok) {
          std::fprintf(stderr, "%s: %u-byte test failed: %s\n", o.tool.c_str(), size,
                       r.error.c_str());
          rc = 1;
          break;
        }
        std::printf("%s", bw_row(r.row, o.report_gbits).c_str());
        json.push_back(bw_json(r.row));
      } else {
        const LatResult r = bench->run_lat(size, duration_ns);
        if (!r.ok) {
          std::fprintf(stderr, "%s: %u-byte test failed: %s\n", o.tool.c_str(), size,
                       r.error.c_str());
          rc = 1;
          break;
        }
        std::printf("%s", lat_row(size, r.iters, r.stats).c_str());
        json.push_back(lat_json(size, r.iters, r.stats));
      }
      std::fflush(stdout);
    }
  } while (rc == 0 && o.run_infinitely && !g_interrupted.load());
  std::printf("%s", kResultLine);
  if (!o.out_json.empty()) {
    std::ofstream f(o.out_json);
    f << "{\"tool\": \"" << o.tool << "\", \"results\": [";
    for (size_t i = 0; i < json.size(); ++i) f << (i ? ", " : "") << json[i];
    f << "]}\n";
    if (!f) {
      std::fprintf(stderr, "%s: cannot write %s\n", o.tool.c_str(), o.out_json.c_str());
      rc = rc ? rc : 1;
    }
  }
  const nic::NicCounters& c0 = bench->host(0).counters();
  const nic::NicCounters& c1 = bench->host(1).counters();
  if (c0.retransmitted_packets + c1.retransmitted_packets + c0.drops_total() + c1.drops_total())
    std::fprintf(stderr, "%s: note: %llu retransmitted packets, %llu dropped on receive\n",
                 o.tool.c_str(),
                 (unsigned long long)(c0.retransmitted_packets + c1.retransmitted_packets),
                 (unsigned long long)(c0.drops_total() + c1.drops_total()));
  return rc;
}
}  // namespace

int main(int argc, char** argv) {
  const std::string tool = tool_name(argv[0]);
  const ParseOutcome p = parse_perftest_args(tool, std::vector<std::string>(argv + 1, argv + argc));
  if (p.exit_code >= 0) {
    std::fprintf(p.exit_code == 0 ? stdout : stderr, "%s", p.message.c_str());
    return p.exit_code;
  }
  std::signal(SIGINT, [](int) { g_interrupted.store(true); });
  if (!p.opt.loopback) {
    std::fprintf(stderr,
                 "%s: server/client mode over a kernel interface is not available yet; "
                 "run with --loopback (docs/perftest.md)\n%s",
                 tool.c_str(), perftest_usage(tool).c_str());
    return 2;
  }
  return run_loopback(p.opt);
}
