// perftest_report_test.cc — perftest's result tables (perftest_parameters.h RESULT_FMT,
// RESULT_FMT_LAT, REPORT_FMT, REPORT_FMT_LAT) and latency statistics on hand-made data.
#include "apps/perftest/perftest_report.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rocemu::perftest {
namespace {

TEST(PerftestReport, HeadersAreExactlyPerftests) {
  EXPECT_EQ(bw_header(false),
            " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   "
            "MsgRate[Mpps]\n");
  EXPECT_EQ(bw_header(true),
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n");
  EXPECT_EQ(lat_header(),
            " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
            "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n");
  EXPECT_EQ(std::string(kResultLine), std::string(87, '-') + "\n");
}

TEST(PerftestReport, BandwidthRowHasPerftestColumnWidths) {
  BwRow r;
  r.size_bytes = 65536;
  r.iters = 200;
  r.peak_bytes_per_s = 1254.64 * 1048576.0;
  r.avg_bytes_per_s = 669.5 * 1048576.0;
  r.msg_rate_pps = 10712.0;
  // " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf"
  EXPECT_EQ(bw_row(r, false),
            " 65536      200              1254.64            669.50 \t\t   0.010712\n");
  // Gb/s: bytes x 8 / 1e9.
  r.avg_bytes_per_s = 1.25e9;
  r.peak_bytes_per_s = 2.5e9;
  EXPECT_EQ(bw_row(r, true),
            " 65536      200              20.00              10.00  \t\t   0.010712\n");
}

TEST(PerftestReport, BandwidthRowOfAnAbsurdPeerReportIsStillOneWholeLine) {
  // Found by fuzz_perftest_msg: a peer's report of 1e300 MiB/s printed past the old 256-byte
  // buffer, and the row lost its newline.
  BwRow r;
  r.size_bytes = 0xb7a1a07fffc74400;
  r.iters = 0xffffffffffffffff;
  r.peak_bytes_per_s = 1e300 * 1048576.0;
  r.avg_bytes_per_s = 1e300 * 1048576.0;
  r.msg_rate_pps = 1e306;
  const std::string row = bw_row(r, false);
  EXPECT_GT(row.size(), 600u);
  EXPECT_EQ(row.find('\n'), row.size() - 1);
  EXPECT_EQ(row.substr(0, 21), " 13232033651803767808");
}

TEST(PerftestReport, LatencyRowHasPerftestColumnWidths) {
  LatencyStats s{1.5, 20.25, 2.0, 3.125, 0.5, 10.0, 20.0};
  EXPECT_EQ(
      lat_row(2, 1000, s),
      " 2       1000          1.50           20.25        2.00     \t     3.12        \t0.50   "
      "\t\t10.00   \t\t20.00  \n");  // %-7.2f then " \t\t"
}

TEST(PerftestReport, MedianAveragesTheTwoMiddleSamplesOfAnEvenCount) {
  EXPECT_DOUBLE_EQ(median_sorted({1, 2, 3, 4}), 2.5);
  EXPECT_DOUBLE_EQ(median_sorted({1, 2, 9}), 2.0);
  EXPECT_DOUBLE_EQ(median_sorted({}), 0.0);
}

TEST(PerftestReport, PercentilesAreNearestRank) {
  std::vector<double> v;
  for (int i = 1; i <= 1000; ++i) v.push_back(i);        // sorted 1..1000
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.99), 990.0);   // ceil(990) -> 990th sample
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.999), 999.0);  // ceil(999) -> 999th
  std::vector<double> ten = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_DOUBLE_EQ(percentile_sorted(ten, 0.99), 10.0);  // ceil(9.9) = 10
  EXPECT_DOUBLE_EQ(percentile_sorted(ten, 0.5), 5.0);
}

TEST(PerftestReport, StatisticsOfHandData) {
  // 8 samples, unordered: min 1, max 9, median (3+4)/2, mean 4.5, population stdev.
  const LatencyStats s = latency_stats({9, 1, 4, 3, 2, 8, 5, 4});
  EXPECT_DOUBLE_EQ(s.min_us, 1);
  EXPECT_DOUBLE_EQ(s.max_us, 9);
  EXPECT_DOUBLE_EQ(s.typical_us, 4);  // sorted 1 2 3 4 4 5 8 9 -> (4+4)/2
  EXPECT_DOUBLE_EQ(s.avg_us, 4.5);
  const double var = (12.25 + 6.25 + 2.25 + 0.25 + 0.25 + 0.25 + 12.25 + 20.25) / 8;
  EXPECT_NEAR(s.stdev_us, std::sqrt(var), 1e-12);
  EXPECT_DOUBLE_EQ(s.p99_us, 9);  // ceil(7.92) = 8th
  EXPECT_DOUBLE_EQ(s.p999_us, 9);
  const LatencyStats e = latency_stats({});
  EXPECT_EQ(e.max_us, 0);
}

TEST(PerftestReport, BandwidthUnitsAreMiBAndGbits) {
  EXPECT_DOUBLE_EQ(bw_in_unit(1048576.0, false), 1.0);
  EXPECT_DOUBLE_EQ(bw_in_unit(125e6, true), 1.0);
}

}  // namespace
}  // namespace rocemu::perftest
