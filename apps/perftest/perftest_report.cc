// perftest_report.cc — perftest's tables and latency statistics (see the header).
#include "apps/perftest/perftest_report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>

namespace rocemu::perftest {

namespace {
// printf into a string of the length it needs: a row carries a peer's report, whose numbers
// can print wider than any fixed buffer (1e300 MiB/s is 304 characters); cut short, the row
// lost its newline and the table ran on.
template <class... Args>
std::string printed(const char* fmt, Args... args) {
  const int n = std::snprintf(nullptr, 0, fmt, args...);
  if (n <= 0) return "\n";
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), fmt, args...);
  out.resize(static_cast<size_t>(n));
  return out;
}
}  // namespace

LatencyStats latency_stats(std::vector<double> v) {
  // perftest 4.5's print_report_lat, rule for rule: sort; measure_cnt = n - LAT_MEASURE_TAIL (2)
  // drops the two largest samples from the median, mean and deviation; t_max, 99% and 99.9%
  // index the sorted array at measure_cnt, ceil(0.99 measure_cnt) and ceil(0.999
  // measure_cnt) (0-based, so t_max is the smaller of the two samples left out); the median
  // of an even count averages the two middle samples; each sample's deviation from the mean
  // is truncated to an int before squaring (`int temp_var = average - delta`).
  LatencyStats st;
  if (v.empty()) return st;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  constexpr size_t kTail = 2;
  const size_t cnt = n > kTail ? n - kTail : n;  // perftest needs >= 3; keep tiny runs sane
  const auto at = [&](size_t i) { return v[std::min(i, n - 1)]; };
  st.min_us = v.front();
  st.max_us = at(cnt);
  st.typical_us = (cnt - 1) % 2 ? (v[cnt / 2] + v[cnt / 2 - 1]) / 2 : v[cnt / 2];
  double sum = 0;
  for (size_t i = 0; i < cnt; ++i) sum += v[i];
  st.avg_us = sum / static_cast<double>(cnt);
  double sq = 0;
  for (size_t i = 0; i < cnt; ++i) {
    const int dev = static_cast<int>(st.avg_us - v[i]);
    sq += static_cast<double>(dev) * dev;
  }
  st.stdev_us = std::sqrt(sq / static_cast<double>(cnt));
  st.p99_us = at(static_cast<size_t>(std::ceil(static_cast<double>(cnt) * 0.99)));
  st.p999_us = at(static_cast<size_t>(std::ceil(static_cast<double>(cnt) * 0.999)));
  return st;
}

double bw_in_unit(double bytes_per_s, bool gbits) noexcept {
  return gbits ? bytes_per_s * 8.0 / 1e9 : bytes_per_s / (1024.0 * 1024.0);
}

std::string bw_header(bool gbits) {
  return std::string(gbits ? kBwHeaderGbits : kBwHeaderMiB) + "\n";
}

std::string bw_row(const BwRow& r, bool gbits) {
  // perftest's inc_accuracy: a Gb/s average under 0.1 is printed with six decimals,
  // REPORT_FMT_EXT " %-7lu    %lu           %-7.6lf            %-7.6lf            %-7.6lf".
  if (gbits && bw_in_unit(r.avg_bytes_per_s, gbits) < 0.1)
    return printed(" %-7" PRIu64 "    %" PRIu64
                   "           %-7.6lf            %-7.6lf            %-7.6lf\n",
                   r.size_bytes, r.iters, bw_in_unit(r.peak_bytes_per_s, gbits),
                   bw_in_unit(r.avg_bytes_per_s, gbits), r.msg_rate_pps / 1e6);
  // REPORT_FMT " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf"
  return printed(" %-7" PRIu64 "    %-10" PRIu64
                 "       %-7.2lf            %-7.2lf\t\t   %-7.6lf\n",
                 r.size_bytes, r.iters, bw_in_unit(r.peak_bytes_per_s, gbits),
                 bw_in_unit(r.avg_bytes_per_s, gbits), r.msg_rate_pps / 1e6);
}

std::string lat_header() { return std::string(kLatHeader) + "\n"; }

std::string lat_header(bool duration) {
  return std::string(duration ? kLatDurHeader : kLatHeader) + "\n";
}

std::string lat_duration_row(uint64_t size_bytes, uint64_t iters, double avg_us, double tps) {
  // REPORT_FMT_LAT_DUR " %-7lu       %lu            %-7.2f        %-7.2f"
  return printed(" %-7" PRIu64 "       %" PRIu64 "            %-7.2f        %-7.2f\n", size_bytes,
                 iters, avg_us, tps);
}

std::string test_info(const PerftestOptions& o, const TestInfo& info) {
  const bool bw = o.metric == Metric::kBandwidth;
  std::string s = kResultLine;
  // testsStr[verb], atomicTypesStr[atomicType], "Bidirectional " (-b), "BW " / "Latency ".
  static const char* const kVerb[] = {"RDMA_Write", "Send", "RDMA_Read", "Atomic"};
  s += "                    ";
  s += kVerb[static_cast<int>(o.verb)];
  s += " ";
  if (o.verb == Verb::kAtomic) s += std::string(atomic_op_name(o.atomic_op)) + " ";
  if (bw && o.bidirectional) s += "Bidirectional ";
  s += bw ? "BW Test\n" : "Latency Test\n";
  s += printed(" Dual-port       : OFF\t\tDevice         : %s\n", info.device.c_str());
  s += printed(" Number of qps   : %u\t\tTransport type : IB\n", o.num_qps);
  s += " Connection type : RC\t\tUsing SRQ      : OFF\n";
  // Debian's perftest is built with relaxed-ordering support (ON unless disabled); the
  // ibv_wr* API is OFF on a device perftest does not know (rxe, rocemu): ibv_post_send.
  // (ib_write_lat alone disables relaxed ordering: write_lat.c sets disable_pcir).
  s += o.verb == Verb::kWrite && !bw ? " PCIe relax order: OFF\n" : " PCIe relax order: ON\n";
  s += " ibv_wr* API     : OFF\n";
  if (!info.server || o.bidirectional) s += printed(" TX depth        : %u\n", o.tx_depth);
  if (o.verb == Verb::kSend && (info.server || o.bidirectional))
    s += printed(" RX depth        : %u\n", o.rx_depth);
  if (bw) s += printed(" CQ Moderation   : %u\n", o.cq_mod);
  s += printed(" Mtu             : %u[B]\n", o.mtu_bytes);
  s += " Link type       : Ethernet\n";
  if (o.gid_index >= 0) s += printed(" GID index       : %d\n", o.gid_index);
  if (reads_back(o.verb))
    s += printed(" Outstand reads  : %u\n", o.out_reads);
  else
    s += printed(" Max inline data : %u[B]\n", o.inline_bytes);
  s += printed(" rdma_cm QPs\t : %s\n", o.rdma_cm ? "ON" : "OFF");
  s += printed(" Data ex. method : %s", o.rdma_cm ? "rdma_cm" : "Ethernet");
  if (o.rdma_cm && o.tos >= 0) s += printed(" \tTOS    : %d", o.tos);
  s += "\n";
  // ctx_print_test_info: an rdma_cm server adds these lines, though by then its client is
  // connected (perftest prints the preamble after the rdma_cm connections).
  if (o.rdma_cm && info.server) {
    s += kResultLine;
    s += " Waiting for client rdma_cm QP to connect\n"
         " Please run the same command with the IB/RoCE interface IP\n";
  }
  s += kResultLine;
  return s;
}

std::string waiting_banner() {
  return "\n************************************\n"
         "* Waiting for client to connect... *\n"
         "************************************\n";
}

std::string address_lines(const PerftestOptions& o, bool remote, const AddressFields& a) {
  // BASIC_ADDR_FMT " %s address: LID %#04x QPN %#06x PSN %#06x", READ_FMT " OUT %#04x",
  // RDMA_FMT " RKey %#08x VAddr %#016llx" (perftest's switch on the verb falls through from
  // READ to WRITE; SEND and atomics print neither), PERF_GID_FMT " GID: %02d:...:%02d".
  std::string s = printed(" %s address: LID %#04x QPN %#06x PSN %#06x", remote ? "remote" : "local",
                          a.lid, a.qpn, a.psn);
  if (o.verb == Verb::kRead) s += printed(" OUT %#04x", a.out_reads);
  if (o.verb == Verb::kRead || o.verb == Verb::kWrite)
    s += printed(" RKey %#08x VAddr %#016llx", a.rkey, static_cast<unsigned long long>(a.vaddr));
  s += "\n";
  if (o.gid_index >= 0) {
    s += " GID: ";
    for (int i = 0; i < 16; ++i) s += printed(i ? ":%02d" : "%02d", a.gid[i]);
    s += "\n";
  }
  return s;
}

std::string lat_row(uint64_t size_bytes, uint64_t iters, const LatencyStats& s) {
  // REPORT_FMT_LAT " %-7lu %" PRIu64 "          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f
  //                 \t%-7.2f\t\t%-7.2f \t\t%-7.2f"
  return printed(
      " %-7" PRIu64 " %" PRIu64
      "          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f "
      "\t\t%-7.2f\n",
      size_bytes, iters, s.min_us, s.max_us, s.typical_us, s.avg_us, s.stdev_us, s.p99_us,
      s.p999_us);
}

}  // namespace rocemu::perftest
