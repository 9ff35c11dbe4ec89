// Topology generators: node/link/port counts and routes of star, dumbbell and the GraphCC
// paper's 2-layer Clos (24 hosts, 4 leaves, 2 spines, 25G/100G, 1 us per link).
#include "common/topology_generators.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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
