// fct_test.cc — ideal FCT on hand examples, slowdown, percentiles and per-bin summaries
// against hand-computed values, CSV output.
#include "fabric/workload/fct.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <vector>

namespace rocemu::workload {
namespace {

using ::testing::HasSubstr;

TEST(IdealFct, WriteOfOnePacketCountsHeadersAndReth) {
  // 1000 B WRITE, MTU 1024: one packet, 1000 + 58 (Eth 14 IPv4 20 UDP 8 BTH 12 ICRC 4)
  // + RETH 16 = 1074 B = 8592 bits; at 100 Gbps 85.92 ns -> 86 ns; + base RTT 2 us.
  EXPECT_EQ(wire_bytes(1000, FlowOp::kWrite, 1024, false), 1074u);
  const IdealFctParams p{
      .base_rtt_ns = 2000, .bottleneck_bps = 100 * kBpsPerGbps, .mtu_bytes = 1024};
  EXPECT_EQ(ideal_fct_ns(1000, FlowOp::kWrite, p), 2086);
}

TEST(IdealFct, SendOfFourPacketsWithAndWithoutFcs) {
  // 4096 B SEND, MTU 1024: 4 packets, 4096 + 4 * 58 = 4328 B; at 25 Gbps 1384.96 -> 1385 ns.
  // With FCS: 4096 + 4 * 62 = 4344 B -> 1390.08 -> 1391 ns.
  EXPECT_EQ(packets_for(4096, 1024), 4u);
  EXPECT_EQ(packets_for(4097, 1024), 5u);
  EXPECT_EQ(packets_for(0, 1024), 1u);
  const IdealFctParams p{.base_rtt_ns = 0, .bottleneck_bps = 25 * kBpsPerGbps, .mtu_bytes = 1024};
  EXPECT_EQ(ideal_fct_ns(4096, FlowOp::kSend, p), 1385);
  IdealFctParams fcs = p;
  fcs.count_fcs = true;
  EXPECT_EQ(ideal_fct_ns(4096, FlowOp::kSend, fcs), 1391);
  // 1 MB WRITE at MTU 4096: 256 packets, 1,048,576 + 256 * 58 + 16 = 1,063,440 B at 10 Gbps
  // = 850,752 ns; + 10 us base RTT.
  const IdealFctParams big{
      .base_rtt_ns = 10'000, .bottleneck_bps = 10 * kBpsPerGbps, .mtu_bytes = 4096};
  EXPECT_EQ(ideal_fct_ns(1 << 20, FlowOp::kWrite, big), 860'752);
}

TEST(Slowdown, IsFctOverIdealButNeverBelowOne) {
  EXPECT_DOUBLE_EQ(slowdown(3000, 1000), 3.0);
  EXPECT_DOUBLE_EQ(slowdown(900, 1000), 1.0);
  EXPECT_DOUBLE_EQ(slowdown(900, 0), 1.0);
}

TEST(Percentile, LinearInterpolationLikeNumpy) {
  const std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 50), 5.5);   // h = 4.5
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 95), 9.55);  // h = 8.55
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 99), 9.91);  // h = 8.91
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 100), 10);
  EXPECT_DOUBLE_EQ(percentile_sorted({7}, 99), 7);
  EXPECT_TRUE(std::isnan(percentile_sorted({}, 50)));
}

TEST(SizeBins, FixedEdgesAreUpperInclusiveWithAnOpenLastBin) {
  const auto b = SizeBins::fixed({10'000, 1'000, 1'000, 100'000});
  ASSERT_EQ(b.edges(), (std::vector<uint64_t>{1'000, 10'000, 100'000}));
  EXPECT_EQ(b.size(), 4u);
  EXPECT_EQ(b.bin_of(1), 0u);
  EXPECT_EQ(b.bin_of(1'000), 0u);
  EXPECT_EQ(b.bin_of(1'001), 1u);
  EXPECT_EQ(b.bin_of(100'000), 2u);
  EXPECT_EQ(b.bin_of(100'001), 3u);
  EXPECT_EQ(b.lower_bytes(1), 1'000u);
  EXPECT_EQ(b.upper_bytes(3), UINT64_MAX);
}

TEST(SizeBins, QuantileEdgesFollowTheSizeDistribution) {
  // Uniform on [0, 1000]: deciles at 100, 200, ..., 1000.
  const auto cdf = FlowSizeCdf::parse("0 0\n1000 100\n", "u");
  const auto b = SizeBins::from_quantiles(cdf);
  EXPECT_EQ(b.edges(), (std::vector<uint64_t>{100, 200, 300, 400, 500, 600, 700, 800, 900, 1000}));
  // A point mass (30% at 10 B) collapses the first three deciles into one edge.
  const auto atom = FlowSizeCdf::parse("10 30\n80 100\n", "a");
  EXPECT_EQ(SizeBins::from_quantiles(atom).edges(),
            (std::vector<uint64_t>{10, 20, 30, 40, 50, 60, 70, 80}));
}

FlowRecord rec(uint64_t id, uint64_t size, TimeNs start, TimeNs fct, TimeNs ideal) {
  FlowRecord r;
  r.flow.id = id;
  r.flow.src = 1;
  r.flow.dst = 2;
  r.flow.size_bytes = size;
  r.flow.start_ns = start;
  r.finish_ns = start + fct;
  r.ideal_ns = ideal;
  return r;
}

TEST(FctStats, EmptyQueueSamplesCountedNotStoredGiveTheSameMeanAndP99) {
  // Zeros are only counted (most samples of a large fabric); the summary must equal the one
  // over every sample kept: the mean summed in sorted order, the p99 interpolated.
  for (const double zero_share : {0.0, 0.5, 0.98, 0.995, 1.0}) {
    std::mt19937_64 rng(7);
    std::bernoulli_distribution is_zero(zero_share);
    std::uniform_int_distribution<uint64_t> bytes(1, 3'000'000);
    FctStats st(SizeBins::fixed({1000}));
    std::vector<double> all;
    for (int i = 0; i < 20'000; ++i) {
      const uint64_t b = is_zero(rng) ? 0 : bytes(rng);
      st.add_queue_sample(b);
      all.push_back(static_cast<double>(b));
    }
    std::sort(all.begin(), all.end());
    double sum = 0;
    for (double x : all) sum += x;
    const FctSummary s = st.summarize();
    EXPECT_EQ(s.queue_samples, all.size());
    EXPECT_EQ(s.mean_queue_bytes, sum / static_cast<double>(all.size())) << zero_share;
    EXPECT_EQ(s.p99_queue_bytes, percentile_sorted(all, 99)) << zero_share;
  }
  const FctSummary none = FctStats(SizeBins::fixed({1000})).summarize();
  EXPECT_EQ(none.queue_samples, 0u);
  EXPECT_TRUE(std::isnan(none.mean_queue_bytes));
  EXPECT_TRUE(std::isnan(none.p99_queue_bytes));
}

TEST(FctStats, SummaryMatchesHandComputedPercentilesPerBinAndOverall) {
  FctStats st(SizeBins::fixed({1000, 100'000}));
  // Small bin (<= 1000 B): slowdowns 1 (clamped from 0.5), 2, 3, 4.
  st.add(rec(0, 100, 0, 500, 1000));
  st.add(rec(1, 200, 100, 2000, 1000));
  st.add(rec(2, 1000, 200, 3000, 1000));
  st.add(rec(3, 1000, 300, 4000, 1000));
  // Large bin (1000, 100000]: slowdowns 10, 20.
  st.add(rec(4, 50'000, 0, 100'000, 10'000));
  st.add(rec(5, 100'000, 1000, 200'000, 10'000));
  st.add_queue_sample(0);
  st.add_queue_sample(1000);
  st.add_queue_sample(2000);
  st.add_queue_sample(3000);
  st.add_pfc_pauses(3);
  st.add_pfc_pauses(4);
  st.add_cnps(11);
  st.add_unfinished(2);
  const FctSummary s = st.summarize();
  EXPECT_EQ(s.flows_finished, 6u);
  EXPECT_EQ(s.flows_unfinished, 2u);
  // Overall sorted {1, 2, 3, 4, 10, 20}: median h = 2.5 -> 3.5; p95 h = 4.75 -> 17.5;
  // p99 h = 4.95 -> 19.5; mean 40 / 6.
  EXPECT_DOUBLE_EQ(s.overall.median, 3.5);
  EXPECT_DOUBLE_EQ(s.overall.p95, 17.5);
  EXPECT_DOUBLE_EQ(s.overall.p99, 19.5);
  EXPECT_DOUBLE_EQ(s.overall.mean, 40.0 / 6);
  ASSERT_EQ(s.bins.size(), 2u) << "the empty open bin is left out";
  EXPECT_EQ(s.bins[0].upper_bytes, 1000u);
  EXPECT_EQ(s.bins[0].slowdown.flows, 4u);
  EXPECT_DOUBLE_EQ(s.bins[0].slowdown.median, 2.5);  // h = 1.5
  EXPECT_DOUBLE_EQ(s.bins[0].slowdown.p95, 3.85);    // h = 2.85
  EXPECT_DOUBLE_EQ(s.bins[0].slowdown.p99, 3.97);    // h = 2.97
  EXPECT_EQ(s.bins[1].lower_bytes, 1000u);
  EXPECT_DOUBLE_EQ(s.bins[1].slowdown.median, 15);
  EXPECT_DOUBLE_EQ(s.bins[1].slowdown.p99, 19.9);
  // Goodput: 152,300 B from t = 0 to the last finish at 201,000 ns.
  EXPECT_DOUBLE_EQ(s.goodput_bps, 8e9 * 152'300 / 201'000);
  const double rate = 8e9 *
                      (100.0 / 500 + 200.0 / 2000 + 1000.0 / 3000 + 1000.0 / 4000 +
                       50'000.0 / 100'000 + 100'000.0 / 200'000) /
                      6;
  EXPECT_NEAR(s.mean_flow_rate_bps, rate, 1e-6 * rate);
  EXPECT_EQ(s.queue_samples, 4u);
  EXPECT_DOUBLE_EQ(s.mean_queue_bytes, 1500);
  EXPECT_DOUBLE_EQ(s.p99_queue_bytes, 2970);  // h = 2.97
  EXPECT_EQ(s.pfc_pauses, 7u);
  EXPECT_EQ(s.cnps, 11u);
}

TEST(FctStats, EmptyBinsHaveNoStatisticsButKeepTheirPlace) {
  FctStats st(SizeBins::fixed({10, 20, 30}));
  st.add(rec(0, 25, 0, 10, 10));
  const FctSummary s = st.summarize();
  ASSERT_EQ(s.bins.size(), 3u);
  EXPECT_EQ(s.bins[0].slowdown.flows, 0u);
  EXPECT_TRUE(std::isnan(s.bins[0].slowdown.median));
  EXPECT_DOUBLE_EQ(s.bins[2].slowdown.median, 1.0);
  EXPECT_TRUE(std::isnan(FctStats(SizeBins::fixed({})).summarize().mean_queue_bytes));
}

TEST(FctCsv, FlowsBinsAndMetricsHaveStableColumns) {
  FctStats st(SizeBins::fixed({1000}));
  FlowRecord a = rec(7, 1000, 50, 3000, 1000);
  a.flow.incast = 2;
  a.flow.op = FlowOp::kSend;
  st.add(a);
  st.add(rec(8, 5000, 0, 1000, 2000));
  std::ostringstream flows, bins, metrics;
  write_flows_csv(flows, st.records());
  EXPECT_EQ(flows.str(),
            "id,src,dst,size_bytes,op,incast,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown\n"
            "7,1,2,1000,send,2,50,3050,3000,1000,3.000000\n"
            "8,1,2,5000,write,-1,0,1000,1000,2000,1.000000\n");
  const FctSummary s = st.summarize();
  write_bins_csv(bins, s);
  EXPECT_EQ(bins.str(),
            "scope,lower_bytes,upper_bytes,flows,mean,median,p95,p99\n"
            "all,0,,2,2,2,2.9,2.98\n"
            "bin,0,1000,1,3,3,3,3\n"
            "bin,1000,,1,1,1,1,1\n");
  write_metrics_csv(metrics, s);
  EXPECT_THAT(metrics.str(), HasSubstr("metric,value\nflows_finished,2\nflows_unfinished,0\n"));
  EXPECT_THAT(metrics.str(), HasSubstr("\npfc_pauses,0\ncnps,0\n"));
  EXPECT_THAT(format_summary(s), HasSubstr("(0B, 1KB]"));
}

}  // namespace
}  // namespace rocemu::workload
