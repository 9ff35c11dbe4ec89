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

double median_sorted(const std::vector<double>& s) {
  if (s.empty()) return 0;
  const size_t n = s.size();
  return n % 2 == 0 ? (s[n / 2 - 1] + s[n / 2]) / 2 : s[n / 2];
}

double percentile_sorted(const std::vector<double>& s, double p) {
  if (s.empty()) return 0;
  auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(s.size())));
  rank = std::clamp<size_t>(rank, 1, s.size());
  return s[rank - 1];
}

LatencyStats latency_stats(std::vector<double> v) {
  LatencyStats st;
  if (v.empty()) return st;
  std::sort(v.begin(), v.end());
  st.min_us = v.front();
  st.max_us = v.back();
  st.typical_us = median_sorted(v);
  double sum = 0;
  for (double x : v) sum += x;
  st.avg_us = sum / static_cast<double>(v.size());
  double sq = 0;
  for (double x : v) sq += (x - st.avg_us) * (x - st.avg_us);
  st.stdev_us = std::sqrt(sq / static_cast<double>(v.size()));
  st.p99_us = percentile_sorted(v, 0.99);
  st.p999_us = percentile_sorted(v, 0.999);
  return st;
}

double bw_in_unit(double bytes_per_s, bool gbits) noexcept {
  return gbits ? bytes_per_s * 8.0 / 1e9 : bytes_per_s / (1024.0 * 1024.0);
}

std::string bw_header(bool gbits) {
  return std::string(gbits ? kBwHeaderGbits : kBwHeaderMiB) + "\n";
}

std::string bw_row(const BwRow& r, bool gbits) {
  // REPORT_FMT " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf"
  return printed(" %-7" PRIu64 "    %-10" PRIu64
                 "       %-7.2lf            %-7.2lf\t\t   %-7.6lf\n",
                 r.size_bytes, r.iters, bw_in_unit(r.peak_bytes_per_s, gbits),
                 bw_in_unit(r.avg_bytes_per_s, gbits), r.msg_rate_pps / 1e6);
}

std::string lat_header() { return std::string(kLatHeader) + "\n"; }

std::string lat_row(uint64_t size_bytes, uint64_t iters, const LatencyStats& s) {
  // REPORT_FMT_LAT " %-7lu %" PRIu64 "          %-7.2f        %-7.2f      %-7.2f  \t     %-7.2f
  //                 \t%-7.2f\t\t%-7.2f \t\t%-7.2f"
  return printed(" %-7" PRIu64 " %" PRIu64
                 "          %-7.2f        %-7.2f      %-7.2f  \t     %-7.2f     \t%-7.2f\t\t%-7.2f "
                 "\t\t%-7.2f\n",
                 size_bytes, iters, s.min_us, s.max_us, s.typical_us, s.avg_us, s.stdev_us,
                 s.p99_us, s.p999_us);
}

}  // namespace rocemu::perftest
