// ipv6_sim_test.cc — issue 13: RoCEv2 over IPv6 GIDs through the soft switch, in virtual
// time. Four senders RDMA-WRITE 2 MB each to one receiver across two switches joined by two
// equal-cost links (25 Gbps, 1 us), every QP on GID index 2 (the hosts' configured
// fd00::/64 addresses, routed by the switches' IPv6 host routes). The switches' RED-ECN
// marks CE in the Traffic Class, the receiver answers with CNPs over IPv6, DCQCN cuts the
// senders' rates; every flow completes with its data intact, nothing is dropped, and ECMP
// over the IPv6 5-tuple spreads the flows over both links.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/scenarios/scenario_net.h"

namespace rocemu::scenario {
namespace {

constexpr uint64_t kRate = 25 * kBpsPerGbps;
constexpr uint32_t kSenders = 4;

ScenarioSpec ipv6_incast(uint8_t gid_index) {
  ScenarioSpec s;
  const uint32_t s0 = s.topo.add_node("s0", NodeKind::kSwitch);
  const uint32_t s1 = s.topo.add_node("s1", NodeKind::kSwitch);
  for (uint32_t i = 0; i < kSenders; ++i) s.topo.add_node("h" + std::to_string(i), NodeKind::kHost);
  const uint32_t rx = s.topo.add_node("r", NodeKind::kHost);
  for (uint32_t i = 0; i < kSenders; ++i) s.topo.add_link(2 + i, s0, kRate, kNsPerUs);
  s.topo.add_link(s0, s1, kRate, kNsPerUs);  // s0 ports kSenders and kSenders + 1: the ECMP pair
  s.topo.add_link(s0, s1, kRate, kNsPerUs);
  s.topo.add_link(rx, s1, kRate, kNsPerUs);
  for (uint32_t h : s.topo.hosts())
    s.topo.mutable_nodes()[h].ipv6 = {*parse_ipv6("fd00::" + std::to_string(h))};
  for (uint32_t i = 0; i < kSenders; ++i) s.flows.push_back(FlowSpec{2 + i, rx, 2ull << 20});
  s.watch.push_back(PortRef{s0, static_cast<uint16_t>(kSenders)});
  s.watch.push_back(PortRef{s0, static_cast<uint16_t>(kSenders + 1)});
  s.dcqcn = true;
  s.dcqcn_params = dcqcn_profile("paper");
  s.gid_index = gid_index;
  s.warmup_ns = 0;
  s.duration_ns = 50 * kNsPerMs;
  s.stop_when_complete = true;
  return s;
}

TEST(Ipv6Fabric, RcWritesOverIpv6GidsThroughSwitchesWithEcnAndDcqcn) {
  const ScenarioResult r = run_scenario(ipv6_incast(2));
  TimeNs last = 0;
  for (TimeNs f : r.finish_ns) last = std::max(last, f);
  std::printf(
      "IPv6 GID 2: complete %d, data ok %d, last flow %.2f ms, ecn marked %llu, cnps %llu/%llu, "
      "drops %llu/%llu/%llu, ECMP link utilisation %.2f / %.2f\n",
      r.all_complete, r.data_ok, last / 1e6, static_cast<unsigned long long>(r.ecn_marked),
      static_cast<unsigned long long>(r.cnps_sent),
      static_cast<unsigned long long>(r.cnps_received),
      static_cast<unsigned long long>(r.switch_drops),
      static_cast<unsigned long long>(r.wire_drops), static_cast<unsigned long long>(r.nic_drops),
      r.ports[0].utilisation, r.ports[1].utilisation);
  EXPECT_TRUE(r.all_complete);
  EXPECT_TRUE(r.data_ok);
  EXPECT_EQ(r.switch_drops + r.wire_drops + r.nic_drops, 0u);
  EXPECT_GT(r.ecn_marked, 0u) << "RED-ECN marks CE in the IPv6 Traffic Class";
  EXPECT_GT(r.ce_received, 0u);
  EXPECT_GT(r.cnps_sent, 0u);
  EXPECT_EQ(r.cnps_received, r.cnps_sent) << "CNPs routed back over IPv6";
  // Utilisation is over duration_ns (the run stops early): one flow's 2 MB is this much.
  const double one_flow = 2.0 * (1 << 20) * 8 / (static_cast<double>(kRate) * 0.05);
  EXPECT_GT(r.ports[0].utilisation, 0.9 * one_flow) << "ECMP: each link carries a flow";
  EXPECT_GT(r.ports[1].utilisation, 0.9 * one_flow);
}

TEST(Ipv6Fabric, LinkLocalGidsAreNotRoutedAcrossTheSwitch) {
  // GID index 0 is fe80::/64: link-scoped (RFC 4291 2.5.6), so a switch between the hosts
  // drops it as unknown_dst and the flows time out rather than being delivered.
  ScenarioSpec s = ipv6_incast(0);
  s.flows.resize(1);
  s.flows[0].bytes = 64 * 1024;
  s.duration_ns = 5 * kNsPerMs;
  const ScenarioResult r = run_scenario(s);
  EXPECT_FALSE(r.all_complete);
  EXPECT_GT(r.switch_drops, 0u);
}

}  // namespace
}  // namespace rocemu::scenario
