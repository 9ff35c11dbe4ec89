// port_graph_test.cc — agents and neighbourhoods of the paper's Clos, checked by hand.
#include "agent/port_graph.h"

#include <gtest/gtest.h>

#include "common/topology_generators.h"
#include "tests/agent/clos.h"

namespace rocemu::agent {
namespace {

using test::kLeaf0;
using test::kSpine0;

TEST(PortGraph, PaperClosHasOneAgentPerSwitchEgressPort) {
  const PortGraph g(test::paper_clos());
  // 4 leaves x (6 host ports + 2 spine ports) + 2 spines x 4 leaf ports.
  EXPECT_EQ(g.num_agents(), 40);
  // Edges into: 24 host-facing leaf ports x 2 spines + 8 spine-facing leaf ports x 2 spines
  // + 8 spine ports x 4 leaves.
  EXPECT_EQ(g.num_edges(), 24 * 2 + 8 * 2 + 8 * 4);
  EXPECT_EQ(g.switches(), (std::vector<uint32_t>{24, 25, 26, 27, 28, 29}));
  for (int h = 0; h < test::kClosHosts; ++h) EXPECT_EQ(g.agent_of(h, 0), -1) << "host " << h;
}

TEST(PortGraph, AgentsAreNumberedBySwitchThenPort) {
  const PortGraph g(test::paper_clos());
  EXPECT_EQ(g.agent_of(kLeaf0, 0), 0);
  EXPECT_EQ(g.agent_of(kLeaf0 + 1, 6), 14);
  EXPECT_EQ(g.agent_of(kSpine0, 0), 32);
  EXPECT_EQ(g.agent_of(kSpine0 + 1, 3), 39);
  EXPECT_EQ(g.agents()[0].peer_node, 0u);
  EXPECT_EQ(g.agents()[0].rate_bps, 25 * kBpsPerGbps);
  EXPECT_EQ(g.agents()[6].peer_node, kSpine0);
  EXPECT_EQ(g.agents()[6].rate_bps, 100 * kBpsPerGbps);
  for (const AgentPort& a : g.agents()) EXPECT_EQ(g.switches().at(a.switch_index), a.node);
}

TEST(PortGraph, FatTreeHasEveryPortOfItsSwitchesAsAgentAndKToTheFourEdges) {
  // k = 16: 5k^2/4 = 320 switches of k ports. Ingress per agent: an edge switch's k/2
  // aggregation ports towards it, an aggregation's k/2 edge and k/2 core ports, a core's k
  // aggregation ports: k^2/2 x k x k/2 + k^2/2 x k x k + k^2/4 x k x k = k^4 edges.
  FatTreeParams p;
  p.k = 16;
  const PortGraph g(make_fattree(p));
  EXPECT_EQ(g.switches().size(), 320u);
  EXPECT_EQ(g.num_agents(), 5120);
  EXPECT_EQ(g.num_edges(), 65536);
  for (const AgentPort& a : g.agents()) EXPECT_EQ(g.switches().at(a.switch_index), a.node);
}

TEST(PortGraph, HostFacingLeafPortHearsFromBothSpinesAndFeedsNoAgent) {
  const PortGraph g(test::paper_clos());
  EXPECT_EQ(g.ingress(0), (std::vector<int>{32, 36}));  // spine0->leaf0, spine1->leaf0
  EXPECT_TRUE(g.egress(0).empty());                     // leads to a host
}

TEST(PortGraph, UplinkHearsFromSpinesAndFeedsTheSpinesPorts) {
  const PortGraph g(test::paper_clos());
  EXPECT_EQ(g.ingress(6), (std::vector<int>{32, 36}));
  EXPECT_EQ(g.egress(6), (std::vector<int>{32, 33, 34, 35}));
  EXPECT_EQ(g.egress(15), (std::vector<int>{36, 37, 38, 39}));  // leaf1 -> spine1
}

TEST(PortGraph, SpinePortHearsFromEveryLeafUplinkToThatSpine) {
  const PortGraph g(test::paper_clos());
  EXPECT_EQ(g.ingress(32), (std::vector<int>{6, 14, 22, 30}));
  EXPECT_EQ(g.egress(32), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(g.ingress(39), (std::vector<int>{7, 15, 23, 31}));
}

TEST(PortGraph, EdgesAreSortedByReceiverWithCsrOffsets) {
  const PortGraph g(test::paper_clos());
  ASSERT_EQ(g.in_offset().size(), 41u);
  EXPECT_EQ(g.in_offset().back(), g.num_edges());
  for (int e = 1; e < g.num_edges(); ++e) EXPECT_LE(g.edge_dst()[e - 1], g.edge_dst()[e]);
  for (int v = 0; v < g.num_agents(); ++v)
    for (int e = g.in_offset()[v]; e < g.in_offset()[v + 1]; ++e) EXPECT_EQ(g.edge_dst()[e], v);
}

TEST(PortGraph, DownLinkRemovesBothPortsFromGraphAndNeighbourhoods) {
  auto t = test::paper_clos();
  // leaf0 <-> spine0 is link 24 (24 host links come first).
  ASSERT_EQ(t.links()[24].a, (PortRef{kLeaf0, 6}));
  t.mutable_links()[24].up = false;
  const PortGraph g(t);
  EXPECT_EQ(g.num_agents(), 38);
  EXPECT_EQ(g.agent_of(kLeaf0, 6), -1);
  EXPECT_EQ(g.agent_of(kSpine0, 0), -1);
  // leaf0 host ports: 6 x 1; other host ports 18 x 2; leaf0 uplink to spine1: 1; other
  // uplinks 6 x 2; spine0's 3 remaining ports x 3 leaves; spine1's 4 ports x 4 leaves.
  EXPECT_EQ(g.num_edges(), 6 + 36 + 1 + 12 + 9 + 16);
  const int s1_to_leaf0 = g.agent_of(kSpine0 + 1, 0);
  EXPECT_EQ(g.ingress(g.agent_of(kLeaf0, 0)), (std::vector<int>{s1_to_leaf0}));
  const int spine0_to_leaf1 = g.agent_of(kSpine0, 1);
  EXPECT_EQ(g.ingress(spine0_to_leaf1),
            (std::vector<int>{g.agent_of(kLeaf0 + 1, 6), g.agent_of(kLeaf0 + 2, 6),
                              g.agent_of(kLeaf0 + 3, 6)}));
}

TEST(PortGraph, SwitchWithOnlyHostsHasAgentsWithoutNeighbours) {
  Topology t;
  const auto h0 = t.add_node("h0", NodeKind::kHost);
  const auto h1 = t.add_node("h1", NodeKind::kHost);
  const auto s = t.add_node("s", NodeKind::kSwitch);
  t.add_link(h0, s, 10 * kBpsPerGbps, 0);
  t.add_link(s, h1, 10 * kBpsPerGbps, 0);
  const PortGraph g(t);
  EXPECT_EQ(g.num_agents(), 2);
  EXPECT_EQ(g.num_edges(), 0);
  EXPECT_EQ(g.agent_of(s, 0), 0);
  EXPECT_TRUE(g.ingress(0).empty());
}

}  // namespace
}  // namespace rocemu::agent
