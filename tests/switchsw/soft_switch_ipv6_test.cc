// soft_switch_ipv6_test.cc — the switch node forwarding RoCEv2 over IPv6 (issue 13), one
// packet at a time: host routes for configured IPv6 addresses (link-local never routed),
// hop limit and MAC rewrite, DSCP-to-priority from the Traffic Class, ECMP over the IPv6
// 5-tuple, RED-ECN setting CE in the Traffic Class, CNPs to the control queue, malformed
// IPv6 frames dropped by reason, and PFC on an IPv6 queue as on an IPv4 one.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <map>
#include <set>

#include "common/rng.h"
#include "switchsw/soft_switch.h"
#include "tests/support/eal_env.h"
#include "tests/switchsw/frames.h"

namespace rocemu::sw {
namespace {

using test::FrameSpec;
using test::make_frame;

constexpr uint64_t k10G = 10 * kBpsPerGbps;

Ipv6Addr addr(int host) { return *parse_ipv6("fd00::" + std::to_string(host + 1)); }

struct Star6 {
  Topology topo;
  uint32_t sw = 0;
  std::vector<uint32_t> hosts;
  explicit Star6(int n_hosts) {
    sw = topo.add_node("s0", NodeKind::kSwitch);
    for (int i = 0; i < n_hosts; ++i) {
      const uint32_t h = topo.add_node("h" + std::to_string(i), NodeKind::kHost);
      topo.add_link(h, sw, k10G, 1000);
      topo.mutable_nodes()[h].ipv6 = {addr(i), link_local_ipv6(topo.node(h).ports[0].mac)};
      hosts.push_back(h);
    }
  }
  FrameSpec spec(int a, int b) const {
    FrameSpec s;
    s.ipv6 = true;
    s.src_mac = topo.node(hosts[a]).ports[0].mac;
    s.dst_mac = topo.node(sw).ports[a].mac;
    s.src_ip6 = addr(a);
    s.dst_ip6 = addr(b);
    return s;
  }
};

class SoftSwitchIpv6Test : public ::testing::Test {
 protected:
  rte_mempool* pool_ = test::test_mempool();
  void rx1(SoftSwitch& s, uint16_t port, rte_mbuf* m, TimeNs now = 0) {
    ASSERT_NE(m, nullptr);
    s.rx(port, &m, 1, now);
  }
};

TEST_F(SoftSwitchIpv6Test, ForwardsByConfiguredAddressRewritingMacsAndHopLimit) {
  Star6 star(3);
  SoftSwitch s(SwitchParams{}, star.topo, star.sw, pool_, 1);
  EXPECT_EQ(s.routes().size6(), 3u) << "the link-local addresses are not routed";
  FrameSpec f = star.spec(0, 2);
  f.dscp = 48;  // classified by the DSCP of the Traffic Class, as IPv4's TOS
  f.flow_label = 0xabcde;
  rx1(s, 0, make_frame(pool_, f));
  const uint8_t prio = s.priority_of_dscp(48);
  ASSERT_NE(prio, s.priority_of_dscp(26)) << "the test needs DSCPs of distinct classes";
  EXPECT_EQ(s.queue_bytes(2, prio), 1024u);
  EXPECT_EQ(s.tx(1, 0), nullptr);
  rte_mbuf* m = s.tx(2, 0);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(
      0, std::memcmp(test::eth_of(m)->dst, star.topo.node(star.hosts[2]).ports[0].mac.data(), 6));
  EXPECT_EQ(0, std::memcmp(test::eth_of(m)->src, star.topo.node(star.sw).ports[2].mac.data(), 6));
  const wire::Ipv6* ip = test::ipv6_of(m);
  EXPECT_EQ(ip->hop_limit, 63);
  EXPECT_EQ(ip->dscp(), 48);
  EXPECT_EQ(ip->ecn(), wire::kEcnEct0);
  EXPECT_EQ(ip->flow_label(), 0xabcdeu);
  EXPECT_EQ(0, std::memcmp(ip->dst, addr(2).data(), 16));
  rte_pktmbuf_free(m);
}

TEST_F(SoftSwitchIpv6Test, EcmpKeepsEachFlowOnOnePathAndSpreadsFlows) {
  Topology t;
  const uint32_t h0 = t.add_node("h0", NodeKind::kHost);
  const uint32_t h1 = t.add_node("h1", NodeKind::kHost);
  const uint32_t s0 = t.add_node("s0", NodeKind::kSwitch);
  const uint32_t s1 = t.add_node("s1", NodeKind::kSwitch);
  const uint32_t s2 = t.add_node("s2", NodeKind::kSwitch);
  const uint32_t s3 = t.add_node("s3", NodeKind::kSwitch);
  t.add_link(h0, s0, k10G, 1000);
  t.add_link(s0, s1, k10G, 1000);
  t.add_link(s0, s2, k10G, 1000);
  t.add_link(s1, s3, k10G, 1000);
  t.add_link(s2, s3, k10G, 1000);
  t.add_link(s3, h1, k10G, 1000);
  t.mutable_nodes()[h0].ipv6 = {addr(0)};
  t.mutable_nodes()[h1].ipv6 = {addr(1)};
  SoftSwitch s(SwitchParams{}, t, s0, pool_, 7);
  std::map<int, int> per_port;
  for (uint16_t flow = 0; flow < 400; ++flow) {
    FrameSpec f;
    f.ipv6 = true;
    f.src_ip6 = addr(0);
    f.dst_ip6 = addr(1);
    f.udp_sport = static_cast<uint16_t>(0xC000 + flow);  // RoCE's per-QP entropy
    std::set<int> ports;
    for (int rep = 0; rep < 3; ++rep) {
      rx1(s, 0, make_frame(pool_, f));
      for (uint16_t p : {1, 2})
        if (rte_mbuf* m = s.tx(p, 0)) {
          ports.insert(p);
          rte_pktmbuf_free(m);
        }
    }
    ASSERT_EQ(ports.size(), 1u) << "flow " << flow << " split across paths";
    ++per_port[*ports.begin()];
    const uint32_t h =
        ecmp_hash(fold_ipv6(f.src_ip6.data(), f.flow_label), fold_ipv6(f.dst_ip6.data()),
                  wire::kIpProtoUdp, f.udp_sport, f.udp_dport, s.routes().salt());
    EXPECT_EQ(s.routes().select(*s.routes().find6(f.dst_ip6.data()), h), *ports.begin());
  }
  EXPECT_NEAR(per_port[1], 200, 50);  // 400 flows over 2 paths: 200 +- 5 sigma
  EXPECT_NEAR(per_port[2], 200, 50);
}

TEST_F(SoftSwitchIpv6Test, RedEcnSetsCeInTheTrafficClassAndCnpsGoToTheControlQueue) {
  Star6 star(2);
  SoftSwitch s(SwitchParams{}, star.topo, star.sw, pool_, 1);
  ASSERT_EQ(s.set_ecn(1, EcnSetting{0, 0, 1.0}), "");
  FrameSpec data = star.spec(0, 1);
  data.flow_label = 0x12345;
  FrameSpec not_ect = data;
  not_ect.ecn = wire::kEcnNotEct;
  FrameSpec cnp = data;
  cnp.opcode = wire::kCnp;
  cnp.dscp = 0;
  cnp.frame_bytes = 86;
  rx1(s, 0, make_frame(pool_, data));
  rx1(s, 0, make_frame(pool_, not_ect));
  rx1(s, 0, make_frame(pool_, data));
  rx1(s, 0, make_frame(pool_, cnp));
  EXPECT_EQ(s.queue_bytes(1, 6), 86u);
  EXPECT_EQ(s.queue_bytes(1, 3), 3 * 1024u);
  rte_mbuf* m = s.tx(1, 0);
  EXPECT_EQ(rte_pktmbuf_pkt_len(m), 86u);  // the CNP first, never marked
  EXPECT_EQ(test::ipv6_of(m)->ecn(), wire::kEcnEct0);
  rte_pktmbuf_free(m);
  const uint8_t expect[] = {wire::kEcnCe, wire::kEcnNotEct, wire::kEcnEct0};
  for (uint8_t e : expect) {
    m = s.tx(1, 0);
    ASSERT_NE(m, nullptr);
    const wire::Ipv6* ip = test::ipv6_of(m);
    EXPECT_EQ(ip->ecn(), e);
    EXPECT_EQ(ip->dscp(), 26) << "marking leaves the DSCP";
    EXPECT_EQ(ip->flow_label(), 0x12345u) << "and the flow label";
    EXPECT_EQ(ip->version(), 6);
    rte_pktmbuf_free(m);
  }
  EXPECT_EQ(s.snapshot(0).ports[1].ecn_marked_packets, 1u);
}

TEST_F(SoftSwitchIpv6Test, MalformedIpv6FramesAreDroppedAndCountedByReason) {
  Star6 star(2);
  SoftSwitch s(SwitchParams{}, star.topo, star.sw, pool_, 1);
  const unsigned before = rte_mempool_avail_count(pool_);
  auto frame = [&](auto&& mutate) {
    rte_mbuf* m = make_frame(pool_, star.spec(0, 1));
    mutate(m);
    rx1(s, 0, m);
  };
  frame([](rte_mbuf* m) { rte_pktmbuf_trim(m, 1024 - 40); });              // short
  frame([](rte_mbuf* m) { test::ipv6_of(m)->vtcfl_be[0] = 0x46; });        // version 4
  frame([](rte_mbuf* m) { test::ipv6_of(m)->set_payload_length(2000); });  // too long
  frame([&](rte_mbuf* m) {                                                 // link-local dst
    const Ipv6Addr ll = link_local_ipv6(star.topo.node(star.hosts[1]).ports[0].mac);
    std::memcpy(test::ipv6_of(m)->dst, ll.data(), 16);
  });
  frame([](rte_mbuf* m) { test::ipv6_of(m)->hop_limit = 1; });  // expires
  EXPECT_EQ(s.drops(0, RxDrop::kShort), 1u);
  EXPECT_EQ(s.drops(0, RxDrop::kNotIpv4), 1u);
  EXPECT_EQ(s.drops(0, RxDrop::kBadLength), 1u);
  EXPECT_EQ(s.drops(0, RxDrop::kUnknownDst), 1u);
  EXPECT_EQ(s.drops(0, RxDrop::kTtlExpired), 1u);
  EXPECT_EQ(s.tx(1, 0), nullptr);
  EXPECT_EQ(rte_mempool_avail_count(pool_), before);
}

TEST_F(SoftSwitchIpv6Test, AReceivedPfcPausesAnIpv6QueueAsAnIpv4One) {
  Star6 star(2);
  SoftSwitch s(SwitchParams{}, star.topo, star.sw, pool_, 1);
  rx1(s, 0, make_frame(pool_, star.spec(0, 1)));  // priority 3
  // PFC from h1 on port 1: pause priority 3 for 0xffff quanta.
  rte_mbuf* pfc = rte_pktmbuf_alloc(pool_);
  auto* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(pfc, 60));
  std::memset(d, 0, 60);
  auto* eth = reinterpret_cast<wire::Ethernet*>(d);
  std::memcpy(eth->dst, wire::kPfcDstMac.data(), 6);
  eth->set_ethertype(wire::kEtherTypeMacControl);
  auto* f = reinterpret_cast<wire::PfcFrame*>(d + sizeof(wire::Ethernet));
  f->set_opcode(wire::kPfcOpcode);
  f->set_class_enable(1u << 3);
  f->set_quanta(3, 0xffff);
  rx1(s, 1, pfc);
  EXPECT_EQ(s.tx(1, 0), nullptr) << "paused";
  rte_mbuf* m = s.tx(1, 10 * kNsPerMs);  // 65535 x 512 bit times at 10G = 3.4 ms
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::ipv6_of(m)->hop_limit, 63);
  rte_pktmbuf_free(m);
}

TEST_F(SoftSwitchIpv6Test, MutatedIpv6FramesAreForwardedOrDroppedAndNoMbufLeaks) {
  Star6 star(3);
  SoftSwitch s(SwitchParams{}, star.topo, star.sw, pool_, 1);
  const unsigned before = rte_mempool_avail_count(pool_);
  Rng r(5);
  uint64_t out = 0;
  for (int i = 0; i < 5000; ++i) {
    FrameSpec f = star.spec(static_cast<int>(r.next() % 3), static_cast<int>(r.next() % 3));
    f.frame_bytes = 60 + static_cast<uint32_t>(r.next() % 1000);
    rte_mbuf* m = make_frame(pool_, f);
    ASSERT_NE(m, nullptr);
    uint8_t* d = rte_pktmbuf_mtod(m, uint8_t*);
    for (int k = 0; k < 3; ++k) d[r.next() % 60] = static_cast<uint8_t>(r.next());  // headers
    if (r.next() % 4 == 0)
      rte_pktmbuf_trim(m, static_cast<uint16_t>(r.next() % (f.frame_bytes - 1)));
    rx1(s, 0, m);
    for (uint16_t p = 0; p < 3; ++p)
      while (rte_mbuf* o = s.tx(p, 0)) {
        ++out;
        rte_pktmbuf_free(o);
      }
  }
  EXPECT_GT(out, 100u);
  EXPECT_EQ(rte_mempool_avail_count(pool_), before) << "every frame forwarded or freed";
}

}  // namespace
}  // namespace rocemu::sw
