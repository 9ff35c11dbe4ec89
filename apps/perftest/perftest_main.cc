// perftest_main.cc — rocemu_{write,send,read,atomic}_{bw,lat}: perftest's tools over rocemu's
// RoCEv2 endpoint (docs/perftest.md). The tool is fixed at build time (ROCEMU_PERFTEST_TOOL),
// or taken from argv[0]'s basename when that names one of the eight tools.
//
// Exit: 0 success, 1 a test failed (error completion, no progress), 2 usage, 3 setup (EAL).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/perftest/loopback_bench.h"
#include "apps/perftest/network_mode.h"
#include "apps/perftest/perftest_options.h"
#include "apps/perftest/perftest_report.h"
#include "common/log.h"

using namespace rocemu;
using namespace rocemu::perftest;

namespace {
std::atomic<bool> g_interrupted{false};

/// The loopback pair's preamble: perftest's (as its client prints it) with rocemu's device
/// and, before the closing rule, the wire the pair runs over.
void print_loopback_banner(const PerftestOptions& o) {
  std::string device = "rocemu (loopback, net_ring)";
  if (!o.pci.empty()) device = "rocemu (loopback, PCI " + o.pci[0] + " <-> " + o.pci[1] + ")";
  std::string info = test_info(o, TestInfo{false, device});
  info.resize(info.size() - std::strlen(kResultLine));
  char wire[128];
  if (!o.pci.empty() && !o.link_gbps_set)
    std::snprintf(wire, sizeof wire, " Wire            : PCI ports, at the speed they report\n");
  else if (!o.pci.empty())
    std::snprintf(wire, sizeof wire, " Wire            : PCI ports, %.1f Gb/s emulated\n",
                  o.link_gbps);
  else
    std::snprintf(wire, sizeof wire, " Wire            : net_ring, %.1f Gb/s emulated\n",
                  o.link_gbps);
  std::printf("%s%s%s", info.c_str(), wire, kResultLine);
}

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

/// Prints the table (header before the first row) and collects the JSON rows.
struct Report {
  explicit Report(const PerftestOptions& opt) : o(opt) {}
  const PerftestOptions& o;
  std::vector<std::string> json;
  bool header_printed = false;
  int rc = 0;

  void header() {
    if (header_printed) return;
    header_printed = true;
    const bool bw = o.metric == Metric::kBandwidth;
    std::printf("%s",
                bw ? bw_header(o.report_gbits).c_str() : lat_header(o.duration_s > 0).c_str());
  }
  void add(uint32_t size, const BwResult* b, const LatResult* l) {
    header();
    const bool ok = b ? b->ok : l->ok;
    if (!ok) {
      std::fprintf(stderr, "%s: %u-byte test failed: %s\n", o.tool.c_str(), size,
                   (b ? b->error : l->error).c_str());
      rc = 1;
      return;
    }
    if (b) {
      std::printf("%s", bw_row(b->row, o.report_gbits).c_str());
      json.push_back(bw_json(b->row));
    } else if (o.duration_s > 0) {
      // perftest's -D row: the mean and the exchanges per second (a WRITE/SEND sample is
      // half a round trip, a READ/atomic one a whole one).
      const double rtt_us = l->stats.avg_us * (reads_back(o.verb) ? 1 : 2);
      std::printf(
          "%s",
          lat_duration_row(size, l->iters, l->stats.avg_us, rtt_us > 0 ? 1e6 / rtt_us : 0).c_str());
      json.push_back(lat_json(size, l->iters, l->stats));
    } else {
      std::printf("%s", lat_row(size, l->iters, l->stats).c_str());
      json.push_back(lat_json(size, l->iters, l->stats));
    }
    std::fflush(stdout);
  }
  int finish() {
    if (header_printed) std::printf("%s", kResultLine);
    if (!o.out_json.empty() && header_printed) {
      std::ofstream f(o.out_json);
      f << "{\"tool\": \"" << o.tool << "\", \"results\": [";
      for (size_t i = 0; i < json.size(); ++i) f << (i ? ", " : "") << json[i];
      f << "]}\n";
      if (!f) {
        std::fprintf(stderr, "%s: cannot write %s\n", o.tool.c_str(), o.out_json.c_str());
        rc = rc ? rc : 1;
      }
    }
    return rc;
  }
};

int run_loopback(const PerftestOptions& o) {
  const std::vector<uint32_t> sizes = run_sizes(o);
  std::unique_ptr<LoopbackBench> bench;
  try {
    bench = std::make_unique<LoopbackBench>(o, sizes.back());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: setup failed: %s\n", o.tool.c_str(), e.what());
    return 3;
  }
  print_loopback_banner(o);
  Report rep(o);
  rep.header();
  std::fflush(stdout);
  const TimeNs duration_ns = static_cast<TimeNs>(o.duration_s) * kNsPerSec;
  do {
    for (uint32_t size : sizes) {
      if (o.metric == Metric::kBandwidth) {
        const BwResult r = bench->run_bw(size, duration_ns);
        rep.add(size, &r, nullptr);
      } else {
        const LatResult r = bench->run_lat(size, duration_ns);
        rep.add(size, nullptr, &r);
      }
      if (rep.rc != 0) break;
    }
  } while (rep.rc == 0 && o.run_infinitely && !g_interrupted.load());
  const int rc = rep.finish();
  const nic::NicCounters& c0 = bench->host(0).counters();
  const nic::NicCounters& c1 = bench->host(1).counters();
  if (c0.retransmitted_packets + c1.retransmitted_packets + c0.drops_total() + c1.drops_total())
    std::fprintf(stderr, "%s: note: %llu retransmitted packets, %llu dropped on receive\n",
                 o.tool.c_str(),
                 (unsigned long long)(c0.retransmitted_packets + c1.retransmitted_packets),
                 (unsigned long long)(c0.drops_total() + c1.drops_total()));
  for (int i = 0; i < 2; ++i) {
    const nic::NicCounters& c = bench->host(i).counters();
    uint64_t pfc = c.tx_alloc_failures;
    for (auto v : c.pfc_frames_received) pfc += v;
    if (pfc > 0)
      std::fprintf(stderr, "%s: note: host %d %s\n", o.tool.c_str(), i,
                   nic::pfc_and_pool_text(c, bench->host(i).paused_ns_total(kNever)).c_str());
  }
  return rc;
}

int run_over_network(const PerftestOptions& o) {
  Report rep(o);  // network mode prints perftest's preamble itself, once connected
  const int rc = run_network(
      o, [&](uint32_t size, const BwResult* b, const LatResult* l) { rep.add(size, b, l); });
  const int rc2 = rep.finish();
  return rc ? rc : rc2;
}
}  // namespace

int main(int argc, char** argv) {
  const std::string tool = tool_name(argv[0]);
  const ParseOutcome p = parse_perftest_args(tool, std::vector<std::string>(argv + 1, argv + argc));
  if (p.exit_code >= 0) {
    std::fprintf(p.exit_code == 0 ? stdout : stderr, "%s", p.message.c_str());
    return p.exit_code;
  }
  // rocemu's own log lines (EAL set-up, warnings) go to stderr, never into perftest's table
  // on stdout; level from $ROCEMU_LOG, else info.
  setup_logging("");
  std::signal(SIGINT, [](int) { g_interrupted.store(true); });
  return p.opt.loopback ? run_loopback(p.opt) : run_over_network(p.opt);
}
