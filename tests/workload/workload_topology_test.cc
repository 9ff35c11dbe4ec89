// workload_topology_test.cc — hosts, the node -> host index and ideal-FCT parameters taken
// from a topology, and the FctRecorder that pairs flow starts with completions.
#include "fabric/workload/workload_topology.h"

#include <gtest/gtest.h>

#include <vector>

namespace rocemu::workload {
namespace {

// h0 (25G, 1 us) - s0 - (100G, 2 us) - s1 - (10G, 3 us) h1; h2 (25G, 1 us) on s0.
Topology two_switches() {
  Topology t;
  const auto h0 = t.add_node("h0", NodeKind::kHost);
  const auto h1 = t.add_node("h1", NodeKind::kHost);
  const auto h2 = t.add_node("h2", NodeKind::kHost);
  const auto s0 = t.add_node("s0", NodeKind::kSwitch);
  const auto s1 = t.add_node("s1", NodeKind::kSwitch);
  t.add_link(h0, s0, 25 * kBpsPerGbps, 1000);
  t.add_link(s0, s1, 100 * kBpsPerGbps, 2000);
  t.add_link(s1, h1, 10 * kBpsPerGbps, 3000);
  t.add_link(h2, s0, 25 * kBpsPerGbps, 1000);
  return t;
}

TEST(WorkloadTopology, HostsCarryNodeIndexAndAccessLinkRate) {
  const auto hosts = hosts_from_topology(two_switches());
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].id, 0u);
  EXPECT_EQ(hosts[0].link_rate_bps, 25 * kBpsPerGbps);
  EXPECT_EQ(hosts[1].id, 1u);
  EXPECT_EQ(hosts[1].link_rate_bps, 10 * kBpsPerGbps);
  EXPECT_EQ(hosts[2].id, 2u);
}

TEST(WorkloadTopology, IdealParamsUseTwicePathDelayAndTheSlowestLink) {
  const auto t = two_switches();
  const IdealFctParams p = ideal_fct_params(t, 0, 1, 1024);
  EXPECT_EQ(p.base_rtt_ns, 2 * (1000 + 2000 + 3000));
  EXPECT_EQ(p.bottleneck_bps, 10 * kBpsPerGbps);
  EXPECT_EQ(p.mtu_bytes, 1024u);
  // 1000 B WRITE: 1074 wire bytes at 10 Gbps = 859.2 -> 860 ns, + 12 us.
  EXPECT_EQ(ideal_fct_ns(1000, FlowOp::kWrite, p), 12'860);
  const IdealFctParams q = ideal_fct_params(t, 0, 2, 4096, true);
  EXPECT_EQ(q.base_rtt_ns, 4000);
  EXPECT_EQ(q.bottleneck_bps, 25 * kBpsPerGbps);
  EXPECT_TRUE(q.count_fcs);
  const IdealFctParams none = ideal_fct_params(t, 0, 0, 1024);
  EXPECT_EQ(ideal_fct_ns(1000, FlowOp::kWrite, none), 0) << "no path: no ideal, slowdown 1";
}

TEST(WorkloadTopology, HostIndexByNodeMapsEveryHostAndNothingElse) {
  EXPECT_EQ(host_index_by_node(hosts_from_topology(two_switches()), 5),
            (std::vector<int32_t>{0, 1, 2, -1, -1}));
  // Ids in any order, with gaps.
  const std::vector<HostSpec> hosts{{7, 1}, {2, 1}, {4, 1}};
  EXPECT_EQ(host_index_by_node(hosts, 8), (std::vector<int32_t>{-1, -1, 1, -1, 2, -1, -1, 0}));
}

TEST(WorkloadTopology, IdealTableHoldsEveryOrderedPairAtSourceTimesHostsPlusDestination) {
  const auto t = two_switches();
  const auto hosts = hosts_from_topology(t);
  const auto table = ideal_fct_table(t, hosts, 4096);
  ASSERT_EQ(table.size(), 9u);
  for (uint32_t a = 0; a < 3; ++a) {
    for (uint32_t b = 0; b < 3; ++b) {
      const IdealFctParams want =
          a == b ? IdealFctParams{} : ideal_fct_params(t, hosts[a].id, hosts[b].id, 4096);
      const IdealFctParams& got = table[a * 3 + b];
      EXPECT_EQ(got.base_rtt_ns, want.base_rtt_ns) << a << "->" << b;
      EXPECT_EQ(got.bottleneck_bps, want.bottleneck_bps) << a << "->" << b;
      EXPECT_EQ(got.mtu_bytes, want.mtu_bytes) << a << "->" << b;
    }
  }
  EXPECT_EQ(table[0 * 3 + 1].base_rtt_ns, 12'000);  // h0 -> h1: 2 x (1 + 2 + 3) us
  EXPECT_EQ(table[1 * 3 + 2].bottleneck_bps, 10 * kBpsPerGbps);
}

TEST(FctRecorder, PairsStartsWithFinishesAndCountsTheRest) {
  FctRecorder rec(SizeBins::fixed({1000}));
  FlowSpec a{.id = 0, .src = 0, .dst = 1, .size_bytes = 500, .start_ns = 100};
  FlowSpec b{.id = 1, .src = 1, .dst = 0, .size_bytes = 5000, .start_ns = 200};
  FlowSpec c{.id = 2, .src = 0, .dst = 2, .size_bytes = 700, .start_ns = 300};
  rec.on_start(a, 1000);
  rec.on_start(b, 2000);
  rec.on_start(c, 1000);
  EXPECT_EQ(rec.in_flight(), 3u);
  EXPECT_TRUE(rec.on_finish(1, 200 + 6000));
  EXPECT_TRUE(rec.on_finish(0, 100 + 2000));
  EXPECT_FALSE(rec.on_finish(0, 5000)) << "a flow finishes once";
  EXPECT_FALSE(rec.on_finish(99, 5000));
  EXPECT_EQ(rec.unknown_finishes(), 2u);
  ASSERT_EQ(rec.stats().records().size(), 2u);
  EXPECT_EQ(rec.stats().records()[0].flow, b);
  EXPECT_EQ(rec.stats().records()[0].fct_ns(), 6000);
  EXPECT_DOUBLE_EQ(rec.stats().records()[0].slowdown(), 3.0);
  const FctSummary s = rec.summarize();
  EXPECT_EQ(s.flows_finished, 2u);
  EXPECT_EQ(s.flows_unfinished, 1u);
  EXPECT_DOUBLE_EQ(s.overall.median, 2.5);
  rec.on_start(c, 1000);
  EXPECT_EQ(rec.duplicate_starts(), 1u);
}

}  // namespace
}  // namespace rocemu::workload
