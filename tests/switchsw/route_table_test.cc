// route_table_test.cc — RouteTable: the direct index over dense host addresses and the hash
// table for any others give the same routes, and unrouted addresses find nothing.
#include "switchsw/forwarding.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/topology_generators.h"

namespace rocemu::sw {
namespace {

std::vector<uint16_t> hops_of(const RouteTable& r, const RouteTable::Entry& e) {
  std::vector<uint16_t> v;
  // select() maps hash h to next_hops[first + h * count / 2^32]: one hash per list slot.
  for (uint32_t i = 0; i < e.count; ++i)
    v.push_back(r.select(e, static_cast<uint32_t>((uint64_t{i} << 32) / e.count + 1)));
  return v;
}

Topology spread_addresses(Topology t) {
  // 4,096 addresses apart: far beyond four per route, so the hash table is used.
  for (uint32_t h : t.hosts()) t.mutable_nodes()[h].ipv4 = (10u << 24) | (h << 12) | 7;
  return t;
}

TEST(RouteTable, DirectIndexAndHashTableGiveTheSameRoutesOnAFatTree) {
  FatTreeParams p;
  p.k = 8;  // 128 hosts, 80 switches
  const Topology dense = make_fattree(p);
  const Topology sparse = spread_addresses(dense);
  size_t compared = 0;
  for (uint32_t sw = 0; sw < dense.nodes().size(); ++sw) {
    if (dense.node(sw).kind != NodeKind::kSwitch) continue;
    const RouteTable a(dense, sw, 5), b(sparse, sw, 5);
    ASSERT_TRUE(a.direct_indexed());
    ASSERT_FALSE(b.direct_indexed());
    EXPECT_EQ(a.size(), dense.hosts().size());
    EXPECT_EQ(a.size(), b.size());
    const auto paths = dense.shortest_path_ports(sw);
    for (uint32_t h : dense.hosts()) {
      const RouteTable::Entry* ea = a.find(dense.node(h).ipv4);
      const RouteTable::Entry* eb = b.find(sparse.node(h).ipv4);
      ASSERT_NE(ea, nullptr);
      ASSERT_NE(eb, nullptr);
      EXPECT_EQ(hops_of(a, *ea), paths[h]) << "switch " << sw << " host " << h;
      EXPECT_EQ(hops_of(b, *eb), paths[h]) << "switch " << sw << " host " << h;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 80u * 128u);
}

TEST(RouteTable, UnroutedAddressesFindNothingInEitherTable) {
  FatTreeParams p;
  p.k = 16;  // 1,024 hosts: 10.0.0.1 .. 10.0.4.24, with unassigned .0 and .251-.255
  const Topology dense = make_fattree(p);
  const Topology sparse = spread_addresses(dense);
  const uint32_t edge = static_cast<uint32_t>(dense.find("edge0_0"));
  const RouteTable a(dense, edge, 1), b(sparse, edge, 1);
  ASSERT_TRUE(a.direct_indexed());
  const uint32_t net = 10u << 24;
  for (uint32_t ip : {net, net | 251, net | 255, net | (1 << 8), net | (4 << 8) | 25,
                      net | (5 << 8) | 1, 0u, 0xffffffffu, net - 1, (11u << 24) | 1})
    EXPECT_EQ(a.find(ip), nullptr) << std::hex << ip;
  EXPECT_NE(a.find(net | 1), nullptr);
  EXPECT_NE(a.find(net | (4 << 8) | 24), nullptr);
  for (uint32_t ip : {net | 1, net | (1 << 12), net | (1 << 12) | 8, 0u, 0xffffffffu})
    EXPECT_EQ(b.find(ip), nullptr) << std::hex << ip;
  EXPECT_NE(b.find(net | (1 << 12) | 7), nullptr);
}

}  // namespace
}  // namespace rocemu::sw
