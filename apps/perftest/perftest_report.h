// perftest_report.h — perftest's result tables and latency statistics.
//
// Headers and row formats are perftest 4.5's (src/perftest_parameters.h: RESULT_LINE,
// RESULT_FMT / RESULT_FMT_G, REPORT_FMT, RESULT_FMT_LAT, REPORT_FMT_LAT) with MiB/sec as
// newer perftest prints. Units: bandwidth in MiB/s (2^20 bytes/s) or Gb/s (10^9 bit/s),
// message rate in Mpps (10^6 messages/s), latencies in microseconds. Latency statistics
// follow perftest's print_report_lat: t_typical is the median (mean of the two middle
// samples for an even count), percentiles are nearest-rank (the sample at ceil(p*n) - 1 of
// the sorted list), t_stdev is the population standard deviation. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rocemu::perftest {

inline constexpr const char* kResultLine =
    "---------------------------------------------------------------------------------------\n";
inline constexpr const char* kBwHeaderMiB =
    " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]";
inline constexpr const char* kBwHeaderGbits =
    " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]";
inline constexpr const char* kLatHeader =
    " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
    "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ";

struct LatencyStats {
  double min_us = 0, max_us = 0, typical_us = 0, avg_us = 0, stdev_us = 0;
  double p99_us = 0, p999_us = 0;
};

/// Statistics of `samples_us` (any order; copied and sorted). All zero when empty.
LatencyStats latency_stats(std::vector<double> samples_us);

/// The nearest-rank percentile `p` (0 < p <= 1) of ascending `sorted` (0 when empty).
double percentile_sorted(const std::vector<double>& sorted, double p);

/// Median of ascending `sorted` (0 when empty).
double median_sorted(const std::vector<double>& sorted);

struct BwRow {
  uint64_t size_bytes = 0;
  uint64_t iters = 0;
  double peak_bytes_per_s = 0;
  double avg_bytes_per_s = 0;
  double msg_rate_pps = 0;
};

/// Bytes per second in the table's unit: MiB/s, or Gb/s with `gbits`.
double bw_in_unit(double bytes_per_s, bool gbits) noexcept;

/// The bandwidth header line (with its newline).
std::string bw_header(bool gbits);
/// One bandwidth row as perftest's REPORT_FMT prints it (with its newline).
std::string bw_row(const BwRow& r, bool gbits);
/// The latency header line (with its newline).
std::string lat_header();
/// One latency row as perftest's REPORT_FMT_LAT prints it (with its newline).
std::string lat_row(uint64_t size_bytes, uint64_t iters, const LatencyStats& s);

}  // namespace rocemu::perftest
