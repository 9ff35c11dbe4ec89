#include "common/topology.h"

#include <gtest/gtest.h>

namespace rocemu {

namespace {
// h0 - s0 - h1, plus s0 = s1 (two parallel links) - h2
Topology small() {
  Topology t;
  const auto h0 = t.add_node("h0", NodeKind::kHost);
  const auto h1 = t.add_node("h1", NodeKind::kHost);
  const auto h2 = t.add_node("h2", NodeKind::kHost);
  const auto s0 = t.add_node("s0", NodeKind::kSwitch);
  const auto s1 = t.add_node("s1", NodeKind::kSwitch);
  t.add_link(h0, s0, 25 * kBpsPerGbps, 1000);
  t.add_link(h1, s0, 25 * kBpsPerGbps, 1000);
  t.add_link(s0, s1, 100 * kBpsPerGbps, 1000);
  t.add_link(s0, s1, 100 * kBpsPerGbps, 1000);
  t.add_link(s1, h2, 10 * kBpsPerGbps, 2000);
  return t;
}
}  // namespace

TEST(Topology, PortsAreNumberedInLinkOrderAndPeersPointBack) {
  const auto t = small();
  const auto& s0 = t.node(3);
  ASSERT_EQ(s0.ports.size(), 4u);
  EXPECT_EQ(s0.ports[0].peer, (PortRef{0, 0}));
  EXPECT_EQ(s0.ports[2].peer, (PortRef{4, 0}));
  EXPECT_EQ(t.node(4).ports[1].peer, (PortRef{3, 3}));
  EXPECT_NE(s0.ports[0].mac, s0.ports[1].mac);
}

// A cable between two ports of one switch (a loopback): each end is its own port, and each
// names the other as its peer (it named the first port twice).
TEST(Topology, ALinkFromANodeToItselfJoinsTwoOfItsPorts) {
  Topology t;
  t.add_node("h", NodeKind::kHost);
  const uint32_t s = t.add_node("s", NodeKind::kSwitch);
  t.add_link(0, s, 10 * kBpsPerGbps, 1000);
  const uint32_t l = t.add_link(s, s, 10 * kBpsPerGbps, 1000);
  ASSERT_EQ(t.node(s).ports.size(), 3u);
  EXPECT_EQ(t.links()[l].a, (PortRef{s, 1}));
  EXPECT_EQ(t.links()[l].b, (PortRef{s, 2}));
  EXPECT_EQ(t.node(s).ports[1].peer, (PortRef{s, 2}));
  EXPECT_EQ(t.node(s).ports[2].peer, (PortRef{s, 1}));
  EXPECT_NE(t.node(s).ports[1].mac, t.node(s).ports[2].mac);
}

TEST(Topology, HostsGetDistinctAddresses) {
  const auto t = small();
  EXPECT_EQ(ipv4_to_string(t.node(0).ipv4), "10.0.0.1");
  EXPECT_EQ(ipv4_to_string(t.node(2).ipv4), "10.0.0.3");
  EXPECT_EQ(t.find_host_by_ip(t.node(1).ipv4), 1);
  EXPECT_EQ(t.node(3).ipv4, 0u);
}

TEST(Topology, ShortestPathsIncludeEveryEqualCostPort) {
  const auto t = small();
  const auto r = t.shortest_path_ports();
  EXPECT_EQ(r[3][2], (std::vector<uint16_t>{2, 3}));  // s0 -> h2 over both parallel links
  EXPECT_EQ(r[3][0], (std::vector<uint16_t>{0}));
  EXPECT_EQ(r[4][0], (std::vector<uint16_t>{0, 1}));
  EXPECT_EQ(r[0][2], (std::vector<uint16_t>{0}));
  EXPECT_TRUE(r[0][0].empty());
}

TEST(Topology, HostsDoNotForward) {
  Topology t;
  const auto a = t.add_node("a", NodeKind::kHost);
  const auto b = t.add_node("b", NodeKind::kHost);
  const auto c = t.add_node("c", NodeKind::kHost);
  t.add_link(a, b, 1, 0);
  t.add_link(b, c, 1, 0);
  const auto bad = t.unreachable_host_pairs();
  EXPECT_EQ(bad, (std::vector<std::string>{"c->a", "a->c"}));
}

TEST(Topology, LinksThatAreDownAreNotRouted) {
  auto t = small();
  t.mutable_links()[2].up = false;
  EXPECT_EQ(t.shortest_path_ports()[3][2], (std::vector<uint16_t>{3}));
  t.mutable_links()[3].up = false;
  EXPECT_FALSE(t.unreachable_host_pairs().empty());
}

TEST(Topology, PathInfoGivesBottleneckAndDelay) {
  const auto t = small();
  const auto p = t.path_info(0, 2);
  EXPECT_EQ(p.bottleneck_bps, 10 * kBpsPerGbps);
  EXPECT_EQ(p.delay_ns, 4000);
  EXPECT_EQ(p.hops, 3);
}

}  // namespace rocemu

namespace rocemu {
namespace {

TEST(AddressText, Ipv4ParsesDottedDecimalOnly) {
  EXPECT_EQ(parse_ipv4("10.0.0.1"), std::optional<uint32_t>(0x0a000001));
  EXPECT_EQ(parse_ipv4("255.255.255.255"), std::optional<uint32_t>(0xffffffff));
  EXPECT_EQ(parse_ipv4("0.0.0.0"), std::optional<uint32_t>(0));
  for (const char* bad : {"", "10.0.0", "10.0.0.1.2", "10.0.0.256", "10.0.0.1 ", " 10.0.0.1",
                          "10.0.0.-1", "0x0a.0.0.1", "010.0.0.1", "a.b.c.d", "10..0.1"})
    EXPECT_EQ(parse_ipv4(bad), std::nullopt) << "'" << bad << "'";
  EXPECT_EQ(ipv4_to_string(*parse_ipv4("192.168.7.42")), "192.168.7.42");
}

TEST(AddressText, MacRoundTripsAndRefusesMalformed) {
  const MacAddr m{0x02, 0x52, 0x00, 0xab, 0xCD, 0x0f};
  EXPECT_EQ(mac_to_string(m), "02:52:00:ab:cd:0f");
  EXPECT_EQ(parse_mac("02:52:00:ab:cd:0f"), std::optional<MacAddr>(m));
  EXPECT_EQ(parse_mac("2:52:0:AB:Cd:f"), std::optional<MacAddr>(m));  // 1 or 2 digits, any case
  for (const char* bad : {"", "02:52:00:ab:cd", "02:52:00:ab:cd:0f:11", "02:52:00:ab:cd:0f:",
                          "02:52:00:ab:cd:100", "02-52-00-ab-cd-0f", "02:52::ab:cd:0f",
                          "02:52:00:ab:cd:0g", " 02:52:00:ab:cd:0f", "02:52:00:ab:cd:0f\n"})
    EXPECT_EQ(parse_mac(bad), std::nullopt) << "'" << bad << "'";
}

}  // namespace
}  // namespace rocemu
