// Topology generators: node/link/port counts and routes of star, dumbbell, the k-ary fat tree
// (ECMP path counts by hand for k = 4) and the GraphCC paper's 2-layer Clos (24 hosts, 4
// leaves, 2 spines, 25G/100G, 1 us per link).
#include "common/topology_generators.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "common/topology_paths.h"

namespace rocemu {

TEST(ClosGenerator, PaperFabricHas30NodesAnd32Links) {
  const Topology t = make_clos(ClosParams{});
  EXPECT_EQ(t.nodes().size(), 30u);
  EXPECT_EQ(t.hosts().size(), 24u);
  EXPECT_EQ(t.switches().size(), 6u);
  EXPECT_EQ(t.links().size(), 24u + 4u * 2u);
  for (uint32_t h : t.hosts()) {
    ASSERT_EQ(t.node(h).ports.size(), 1u);
    EXPECT_EQ(t.link_of(PortRef{h, 0}).rate_bps, 25 * kBpsPerGbps);
  }
  for (uint32_t l = 0; l < 4; ++l) {
    const auto& leaf = t.node(t.find("leaf" + std::to_string(l)));
    EXPECT_EQ(leaf.ports.size(), 6u + 2u) << leaf.name;
  }
  for (uint32_t s = 0; s < 2; ++s) {
    const auto idx = static_cast<uint32_t>(t.find("spine" + std::to_string(s)));
    ASSERT_EQ(t.node(idx).ports.size(), 4u);
    EXPECT_EQ(t.link_of(PortRef{idx, 0}).rate_bps, 100 * kBpsPerGbps);
  }
  for (const auto& l : t.links()) EXPECT_EQ(l.delay_ns, 1000);
  EXPECT_TRUE(t.unreachable_host_pairs().empty());
}

TEST(ClosGenerator, CrossLeafPathHasFourHopsAndTwoEqualCostUplinks) {
  const Topology t = make_clos(ClosParams{});
  const auto info = t.path_info(0, 23);  // h0 under leaf0, h23 under leaf3
  EXPECT_EQ(info.hops, 4);
  EXPECT_EQ(info.delay_ns, 4000);
  EXPECT_EQ(info.bottleneck_bps, 25 * kBpsPerGbps);
  const auto sp = t.shortest_path_ports();
  const auto leaf0 = static_cast<uint32_t>(t.find("leaf0"));
  EXPECT_EQ(sp[leaf0][23].size(), 2u);  // one uplink per spine
  EXPECT_EQ(sp[leaf0][1].size(), 1u);   // same leaf: straight down
  EXPECT_EQ(t.path_info(0, 1).hops, 2);
}

TEST(ClosGenerator, RejectsHostsNotAMultipleOfLeaves) {
  ClosParams p;
  p.hosts = 10;
  EXPECT_FALSE(validate(p).empty());
  EXPECT_THROW(make_clos(p), std::invalid_argument);
}

TEST(ClosFailures, NamedLinksGoDownAndRoutesAvoidThem) {
  const ClosParams p;
  Topology t = make_clos(p);
  const auto down = fail_clos_links(t, p, ClosFailures{{"leaf0-spine1"}, 0, 1});
  ASSERT_EQ(down, std::vector<std::string>{"leaf0-spine1"});
  EXPECT_FALSE(t.links()[24 + 0 * 2 + 1].up);
  const auto sp = t.shortest_path_ports();
  const auto leaf0 = static_cast<uint32_t>(t.find("leaf0"));
  const auto leaf1 = static_cast<uint32_t>(t.find("leaf1"));
  EXPECT_EQ(sp[leaf0][23].size(), 1u);  // only the uplink to spine0 is left
  EXPECT_EQ(sp[leaf1][23].size(), 2u);  // other leaves keep both
  EXPECT_EQ(t.path_info(0, 23).hops, 4);
  EXPECT_TRUE(t.unreachable_host_pairs().empty());
}

TEST(ClosFailures, RandomFailuresAreSeededAndNeverCutHostsOff) {
  const ClosParams p;
  std::vector<std::string> first;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    Topology t = make_clos(p);
    const auto down = fail_clos_links(t, p, ClosFailures{{}, 3, seed});
    ASSERT_EQ(down.size(), 3u);
    EXPECT_TRUE(t.unreachable_host_pairs().empty()) << seed;
    Topology again = make_clos(p);
    EXPECT_EQ(fail_clos_links(again, p, ClosFailures{{}, 3, seed}), down);
    if (seed == 1) first = down;
  }
  Topology t = make_clos(p);
  EXPECT_NE(fail_clos_links(t, p, ClosFailures{{}, 3, 2}), first);
  // 8 leaf-spine links under 4 leaves: 5 failures leave some leaf without an uplink.
  Topology too_many = make_clos(p);
  EXPECT_THROW(fail_clos_links(too_many, p, ClosFailures{{}, 5, 1}), std::invalid_argument);
}

TEST(ClosFailures, BadNamesAndCutsAreRefused) {
  const ClosParams p;
  Topology t = make_clos(p);
  EXPECT_THROW(fail_clos_links(t, p, ClosFailures{{"leaf9-spine0"}, 0, 1}), std::invalid_argument);
  Topology twice = make_clos(p);
  EXPECT_THROW(fail_clos_links(twice, p, ClosFailures{{"leaf0-spine0", "leaf0-spine0"}, 0, 1}),
               std::invalid_argument);
  Topology cut = make_clos(p);
  EXPECT_THROW(fail_clos_links(cut, p, ClosFailures{{"leaf0-spine0", "leaf0-spine1"}, 0, 1}),
               std::invalid_argument);
}

TEST(StarGenerator, OneSwitchWithAPortPerHost) {
  const Topology t = make_star(StarParams{5, 10 * kBpsPerGbps, 1000});
  EXPECT_EQ(t.nodes().size(), 6u);
  EXPECT_EQ(t.links().size(), 5u);
  EXPECT_EQ(t.node(5).ports.size(), 5u);
  EXPECT_EQ(t.path_info(0, 4).hops, 2);
}

TEST(DumbbellGenerator, BottleneckIsTheSwitchToSwitchLink) {
  DumbbellParams p;
  p.left_hosts = 3;
  p.right_hosts = 2;
  p.bottleneck_rate_bps = 5 * kBpsPerGbps;
  const Topology t = make_dumbbell(p);
  EXPECT_EQ(t.nodes().size(), 7u);
  EXPECT_EQ(t.links().size(), 6u);
  EXPECT_EQ(t.path_info(0, 4).bottleneck_bps, 5 * kBpsPerGbps);
  EXPECT_EQ(t.path_info(0, 4).hops, 3);
  EXPECT_EQ(t.path_info(0, 1).bottleneck_bps, 10 * kBpsPerGbps);
}

}  // namespace rocemu

namespace rocemu {

namespace {
// Counts the distinct shortest paths from node `at` to host `dst` by following every
// equal-cost port (Topology::shortest_path_ports).
uint64_t count_paths(const Topology& t, const std::vector<std::vector<std::vector<uint16_t>>>& nh,
                     uint32_t at, uint32_t dst) {
  if (at == dst) return 1;
  uint64_t n = 0;
  for (uint16_t p : nh[at][dst]) n += count_paths(t, nh, t.node(at).ports[p].peer.node, dst);
  return n;
}
}  // namespace

TEST(FatTreeGenerator, K4HasSixteenHostsTwentySwitchesAndFortyEightLinks) {
  const Topology t = make_fattree(FatTreeParams{});
  EXPECT_EQ(t.hosts().size(), 16u);     // k^3 / 4
  EXPECT_EQ(t.switches().size(), 20u);  // 8 edge, 8 aggregation, 4 core
  EXPECT_EQ(t.links().size(), 16u + 16u + 16u);
  for (uint32_t h = 0; h < 16; ++h) {
    ASSERT_EQ(t.node(h).ports.size(), 1u);
    // Host i is under edge (i / 2): pod i / 4, edge (i / 2) % 2.
    const std::string edge = "edge" + std::to_string(h / 4) + "_" + std::to_string((h / 2) % 2);
    EXPECT_EQ(t.node(t.node(h).ports[0].peer.node).name, edge) << h;
  }
  for (uint32_t pod = 0; pod < 4; ++pod)
    for (uint32_t i = 0; i < 2; ++i) {
      const auto& e = t.node(t.find("edge" + std::to_string(pod) + "_" + std::to_string(i)));
      ASSERT_EQ(e.ports.size(), 4u);  // 2 hosts, then 2 aggregations
      EXPECT_EQ(t.node(e.ports[2].peer.node).name, "agg" + std::to_string(pod) + "_0");
      EXPECT_EQ(t.node(e.ports[3].peer.node).name, "agg" + std::to_string(pod) + "_1");
      const auto& a = t.node(t.find("agg" + std::to_string(pod) + "_" + std::to_string(i)));
      ASSERT_EQ(a.ports.size(), 4u);  // 2 edges, then 2 cores: agg j to cores 2j, 2j + 1
      EXPECT_EQ(t.node(a.ports[2].peer.node).name, "core" + std::to_string(2 * i));
      EXPECT_EQ(t.node(a.ports[3].peer.node).name, "core" + std::to_string(2 * i + 1));
    }
  for (uint32_t c = 0; c < 4; ++c) {
    const auto idx = static_cast<uint32_t>(t.find("core" + std::to_string(c)));
    ASSERT_EQ(t.node(idx).ports.size(), 4u);
    for (uint16_t p = 0; p < 4; ++p)  // core port p faces pod p
      EXPECT_EQ(t.node(t.node(idx).ports[p].peer.node).name,
                "agg" + std::to_string(p) + "_" + std::to_string(c / 2));
  }
  EXPECT_TRUE(t.unreachable_host_pairs().empty());
}

// ECMP by hand for k = 4: under one edge 1 path (2 hops); across edges of a pod 2 paths (one
// per aggregation, 4 hops); across pods (k/2)^2 = 4 paths (6 hops); equal-cost choices: 2
// uplinks at the edge, 2 at the aggregation, 1 way down.
TEST(FatTreeGenerator, K4PathsAndEqualCostChoicesMatchTheHandCount) {
  const Topology t = make_fattree(FatTreeParams{});
  const auto nh = t.shortest_path_ports();
  EXPECT_EQ(t.path_info(0, 1).hops, 2);
  EXPECT_EQ(count_paths(t, nh, 0, 1), 1u);
  EXPECT_EQ(t.path_info(0, 2).hops, 4);
  EXPECT_EQ(count_paths(t, nh, 0, 2), 2u);
  EXPECT_EQ(t.path_info(0, 15).hops, 6);
  EXPECT_EQ(t.path_info(0, 15).delay_ns, 6000);
  EXPECT_EQ(count_paths(t, nh, 0, 15), 4u);
  const uint32_t edge0 = t.node(0).ports[0].peer.node;
  EXPECT_EQ(nh[edge0][15].size(), 2u);
  const uint32_t agg = t.node(edge0).ports[2].peer.node;
  EXPECT_EQ(nh[agg][15].size(), 2u);
  const uint32_t core = t.node(agg).ports[2].peer.node;
  EXPECT_EQ(nh[core][15].size(), 1u);
}

TEST(FatTreeGenerator, RatesDelaysOversubscriptionAndBadShapes) {
  FatTreeParams p;
  p.k = 8;
  p.oversubscription = 2;
  p.host_rate_bps = 25 * kBpsPerGbps;
  p.edge_rate_bps = 50 * kBpsPerGbps;
  p.core_rate_bps = 100 * kBpsPerGbps;
  p.core_delay_ns = 2000;
  const Topology t = make_fattree(p);
  EXPECT_EQ(t.hosts().size(), 256u);    // 8^3 / 4 x 2
  EXPECT_EQ(t.switches().size(), 80u);  // 32 edge, 32 aggregation, 16 core
  EXPECT_EQ(t.node(t.find("edge0_0")).ports.size(), 8u + 4u);
  const auto info = t.path_info(0, 255);
  EXPECT_EQ(info.hops, 6);
  EXPECT_EQ(info.delay_ns, 1000 + 1000 + 2000 + 2000 + 1000 + 1000);
  EXPECT_EQ(info.bottleneck_bps, 25 * kBpsPerGbps);
  p.k = 5;
  EXPECT_NE(validate(p), "");
  EXPECT_THROW(make_fattree(p), std::invalid_argument);
  p.k = 0;
  EXPECT_NE(validate(p), "");
  p.k = 4;
  p.oversubscription = 0;
  EXPECT_NE(validate(p), "");
}

// Topology::shortest_path_ports computes a node's routes from one search rooted at the node
// (each node's set of first ports on its shortest paths, in search order); checked here
// against the definition, one search per destination: port p of n is a next hop to dst iff its peer
// is dst or a switch one hop closer to dst, hop counts over up links with no host in the middle of
// a path.
std::vector<std::vector<std::vector<uint16_t>>> reference_next_hops(const Topology& t) {
  const size_t n_nodes = t.nodes().size();
  std::vector<std::vector<std::vector<uint16_t>>> r(n_nodes,
                                                    std::vector<std::vector<uint16_t>>(n_nodes));
  for (uint32_t dst : t.hosts()) {
    std::vector<int> d(n_nodes, -1);
    std::vector<uint32_t> frontier{dst};
    d[dst] = 0;
    for (size_t i = 0; i < frontier.size(); ++i) {
      const uint32_t u = frontier[i];
      if (u != dst && t.node(u).kind == NodeKind::kHost) continue;
      for (const auto& p : t.node(u).ports)
        if (t.links()[p.link].up && d[p.peer.node] < 0) {
          d[p.peer.node] = d[u] + 1;
          frontier.push_back(p.peer.node);
        }
    }
    for (uint32_t n = 0; n < n_nodes; ++n) {
      if (n == dst || d[n] < 0) continue;
      for (uint16_t p = 0; p < t.node(n).ports.size(); ++p) {
        const auto& port = t.node(n).ports[p];
        const uint32_t v = port.peer.node;
        if (t.links()[port.link].up && d[v] == d[n] - 1 &&
            (v == dst || t.node(v).kind == NodeKind::kSwitch))
          r[n][dst].push_back(p);
      }
    }
  }
  return r;
}

TEST(ShortestPaths, PerNodeSearchesEqualThePerDestinationDefinition) {
  std::vector<Topology> ts;
  ts.push_back(make_fattree(FatTreeParams{}));
  FatTreeParams over;
  over.k = 6;
  over.oversubscription = 2;
  ts.push_back(make_fattree(over));
  ts.push_back(make_clos(ClosParams{}));
  // Failed links: unequal path counts, and a host whose only link is down (unreachable).
  Topology cut = make_fattree(FatTreeParams{});
  for (uint32_t l : {3u, 17u, 20u, 33u, 40u}) cut.mutable_links().at(l).up = false;
  ts.push_back(cut);
  Topology parallel = make_dumbbell(DumbbellParams{});  // plus a second bottleneck link
  parallel.add_link(static_cast<uint32_t>(parallel.find("s0")),
                    static_cast<uint32_t>(parallel.find("s1")), kBpsPerGbps, kNsPerUs);
  ts.push_back(parallel);
  // A dual-homed host: a path through it (a -> h -> b) is as short as the switches' (a -> c
  // -> b) but hosts do not forward, so it is no next hop.
  Topology dual;
  {
    const uint32_t a = dual.add_node("a", NodeKind::kSwitch),
                   b = dual.add_node("b", NodeKind::kSwitch);
    const uint32_t c = dual.add_node("c", NodeKind::kSwitch);
    const uint32_t x = dual.add_node("x", NodeKind::kHost), y = dual.add_node("y", NodeKind::kHost);
    const uint32_t h = dual.add_node("h", NodeKind::kHost);
    dual.add_link(a, h, kBpsPerGbps, kNsPerUs);
    dual.add_link(a, c, kBpsPerGbps, kNsPerUs);
    dual.add_link(c, b, kBpsPerGbps, kNsPerUs);
    dual.add_link(h, b, kBpsPerGbps, kNsPerUs);
    dual.add_link(x, a, kBpsPerGbps, kNsPerUs);
    dual.add_link(y, b, kBpsPerGbps, kNsPerUs);
  }
  ts.push_back(dual);
  // Tiers of different rates and delays, so the path sums and bottlenecks tell paths apart.
  FatTreeParams tiers;
  tiers.oversubscription = 2;
  tiers.host_rate_bps = 25 * kBpsPerGbps;
  tiers.edge_rate_bps = 40 * kBpsPerGbps;
  tiers.core_rate_bps = 10 * kBpsPerGbps;
  tiers.host_delay_ns = 300;
  tiers.edge_delay_ns = 700;
  tiers.core_delay_ns = 1900;
  ts.push_back(make_fattree(tiers));
  Topology tiers_cut = make_fattree(tiers);
  for (uint32_t l : {0u, 32u, 47u, 63u}) tiers_cut.mutable_links().at(l).up = false;
  ts.push_back(tiers_cut);
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto want = reference_next_hops(ts[i]);
    EXPECT_EQ(ts[i].shortest_path_ports(), want) << "topology " << i;
    size_t routes = 0;
    for (uint32_t n = 0; n < ts[i].nodes().size(); ++n) {
      EXPECT_EQ(ts[i].shortest_path_ports(n), want[n]) << "topology " << i << " node " << n;
      for (const auto& v : want[n]) routes += v.size();
    }
    EXPECT_GT(routes, 0u);
    for (uint32_t b : ts[i].hosts()) {  // one search per destination, as one per pair
      const auto to_b = path_infos_to(ts[i], b);
      ASSERT_EQ(to_b.size(), ts[i].nodes().size());
      for (uint32_t a = 0; a < ts[i].nodes().size(); ++a) {  // switches' paths too
        const Topology::PathInfo one = ts[i].path_info(a, b);
        EXPECT_EQ(to_b[a].bottleneck_bps, one.bottleneck_bps) << i << ": " << a << "->" << b;
        EXPECT_EQ(to_b[a].delay_ns, one.delay_ns) << i << ": " << a << "->" << b;
        EXPECT_EQ(to_b[a].hops, one.hops) << i << ": " << a << "->" << b;
      }
    }
  }
}

}  // namespace rocemu
