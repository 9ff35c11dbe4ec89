// soft_switch_test.cc — the switch node through its public interface, one packet at a time:
// forwarding (routes, ECMP, TTL and MAC rewrite), malformed frames counted per reason,
// classification and strict priority, RED-ECN threshold updates, PFC sent and obeyed.
#include "switchsw/soft_switch.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "tests/support/eal_env.h"
#include "tests/switchsw/frames.h"

namespace rocemu::sw {
namespace {

using test::FrameSpec;
using test::make_frame;

constexpr uint64_t k10G = 10 * kBpsPerGbps;

struct Star {
  Topology topo;
  uint32_t sw = 0;
  std::vector<uint32_t> hosts;
  explicit Star(int n_hosts) {
    sw = topo.add_node("s0", NodeKind::kSwitch);
    for (int i = 0; i < n_hosts; ++i) {
      const uint32_t h = topo.add_node("h" + std::to_string(i), NodeKind::kHost);
      topo.add_link(h, sw, k10G, 1000);
      hosts.push_back(h);
    }
  }
  // Frame from host a to host b as a's NIC would send it (to the switch port's MAC).
  FrameSpec spec(int a, int b) const {
    FrameSpec s;
    s.src_mac = topo.node(hosts[a]).ports[0].mac;
    s.dst_mac = topo.node(sw).ports[a].mac;
    s.src_ip = topo.node(hosts[a]).ipv4;
    s.dst_ip = topo.node(hosts[b]).ipv4;
    return s;
  }
};

class SoftSwitchTest : public ::testing::Test {
 protected:
  rte_mempool* pool_ = test::test_mempool();
  void rx1(SoftSwitch& s, uint16_t port, rte_mbuf* m, TimeNs now = 0) {
    ASSERT_NE(m, nullptr);
    s.rx(port, &m, 1, now);
  }
  // Drains every packet of a port (frees them); returns how many.
  int drain(SoftSwitch& s, uint16_t port, TimeNs now = 0) {
    int n = 0;
    while (rte_mbuf* m = s.tx(port, now)) {
      rte_pktmbuf_free(m);
      ++n;
    }
    return n;
  }
};

TEST_F(SoftSwitchTest, ForwardsToTheRoutedPortRewritingMacsAndTtl) {
  Star star(3);
  SoftSwitch s(SwitchParams{}, star.topo, star.sw, pool_, 1);
  rx1(s, 0, make_frame(pool_, star.spec(0, 2)));
  EXPECT_EQ(s.tx(1, 0), nullptr);
  rte_mbuf* m = s.tx(2, 0);
  ASSERT_NE(m, nullptr);
  const auto* eth = test::eth_of(m);
  EXPECT_EQ(0, std::memcmp(eth->dst, star.topo.node(star.hosts[2]).ports[0].mac.data(), 6));
  EXPECT_EQ(0, std::memcmp(eth->src, star.topo.node(star.sw).ports[2].mac.data(), 6));
  const wire::Ipv4* ip = test::ipv4_of(m);
  EXPECT_EQ(ip->ttl, 63);
  EXPECT_EQ(ip->checksum(), ip->compute_checksum());
  EXPECT_EQ(ip->dst(), star.topo.node(star.hosts[2]).ipv4);
  EXPECT_EQ(ip->ecn(), wire::kEcnEct0);  // queue empty: below Kmin, not marked
  const auto snap = s.snapshot(0);
  EXPECT_EQ(snap.ports[0].rx_packets, 1u);
  EXPECT_EQ(snap.ports[2].tx_packets, 1u);
  EXPECT_EQ(snap.ports[2].tx_bytes, 1024u);
  rte_pktmbuf_free(m);
}

TEST_F(SoftSwitchTest, EcmpKeepsEachFlowOnOnePathAndSpreadsFlows) {
  // s0 reaches h1 through s1 or s2 (two equal-cost next hops: ports 1 and 2).
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
  SoftSwitch s(SwitchParams{}, t, s0, pool_, 7);
  std::map<int, int> per_port;
  for (uint16_t flow = 0; flow < 400; ++flow) {
    FrameSpec f;
    f.src_ip = t.node(h0).ipv4;
    f.dst_ip = t.node(h1).ipv4;
    f.udp_sport = static_cast<uint16_t>(1000 + flow);
    std::set<int> ports;
    for (int rep = 0; rep < 3; ++rep) {
      rx1(s, 0, make_frame(pool_, f));
      for (uint16_t p : {1, 2}) {
        if (rte_mbuf* m = s.tx(p, 0)) {
          ports.insert(p);
          // The next hop's MAC is the peer port's.
          EXPECT_EQ(0, std::memcmp(test::eth_of(m)->dst,
                                   t.node(t.node(s0).ports[p].peer.node)
                                       .ports[t.node(s0).ports[p].peer.port].mac.data(), 6));
          rte_pktmbuf_free(m);
        }
      }
    }
    ASSERT_EQ(ports.size(), 1u) << "flow " << flow << " split across paths";
    ++per_port[*ports.begin()];
    const uint32_t h = ecmp_hash(f.src_ip, f.dst_ip, wire::kIpProtoUdp, f.udp_sport, f.udp_dport,
                                 s.routes().salt());
    EXPECT_EQ(s.routes().select(*s.routes().find(f.dst_ip), h), *ports.begin());
  }
  // 400 flows over 2 paths: each gets 200 +- 5 sigma (sigma = 10).
  EXPECT_NEAR(per_port[1], 200, 50);
  EXPECT_NEAR(per_port[2], 200, 50);
}

TEST_F(SoftSwitchTest, MalformedFramesAreDroppedAndCountedByReason) {
  Star star(2);
  SoftSwitch s(SwitchParams{}, star.topo, star.sw, pool_, 1);
  const unsigned before = rte_mempool_avail_count(pool_);
  auto frame = [&](auto&& mutate) {
    rte_mbuf* m = make_frame(pool_, star.spec(0, 1));
    mutate(m);
    rx1(s, 0, m);
  };
  frame([](rte_mbuf* m) { rte_pktmbuf_trim(m, 1024 - 10); });                       // short
  frame([](rte_mbuf* m) { test::eth_of(m)->set_ethertype(wire::kEtherTypeArp); });  // not IPv4
  frame([](rte_mbuf* m) { test::ipv4_of(m)->ver_ihl = 0x65; });                     // version 6
  frame([](rte_mbuf* m) { test::ipv4_of(m)->ver_ihl = 0x43; });                     // IHL 3
  frame([](rte_mbuf* m) { test::ipv4_of(m)->set_total_length(2000); });             // too long
  frame([](rte_mbuf* m) { test::ipv4_of(m)->set_dst(0x0b000001); });                // 11.0.0.1
  frame([](rte_mbuf* m) { test::ipv4_of(m)->ttl = 1; });                            // expires
  frame([](rte_mbuf* m) {                                                           // 802.3x PAUSE
    rte_pktmbuf_trim(m, 1024 - 60);
    test::eth_of(m)->set_ethertype(wire::kEtherTypeMacControl);
    rte_pktmbuf_mtod_offset(m, uint8_t*, 15)[0] = 0x01;  // opcode 0x0001
  });
  EXPECT_EQ(s.drops(0, RxDrop::kShort), 1u);
  EXPECT_EQ(s.drops(0, RxDrop::kNotIpv4), 2u);
  EXPECT_EQ(s.drops(0, RxDrop::kBadIhl), 1u);
  EXPECT_EQ(s.drops(0, RxDrop::kBadLength), 1u);
  EXPECT_EQ(s.drops(0, RxDrop::kUnknownDst), 1u);
  EXPECT_EQ(s.drops(0, RxDrop::kTtlExpired), 1u);
  EXPECT_EQ(s.drops(0, RxDrop::kBadControl), 1u);
  const auto snap = s.snapshot(0);
  EXPECT_EQ(snap.ports[0].drops[static_cast<int>(DropReason::kMalformed)], 6u);
  EXPECT_EQ(snap.ports[0].drops[static_cast<int>(DropReason::kNoRoute)], 1u);
  EXPECT_EQ(snap.ports[0].drops[static_cast<int>(DropReason::kTtlExpired)], 1u);
  EXPECT_EQ(s.tx(1, 0), nullptr);
  EXPECT_EQ(rte_mempool_avail_count(pool_), before);  // every dropped mbuf freed
}

TEST_F(SoftSwitchTest, ThresholdUpdateTakesEffectOnTheNextDequeue) {
  Star star(2);
  SoftSwitch s(SwitchParams{}, star.topo, star.sw, pool_, 1);
  for (int i = 0; i < 4; ++i) rx1(s, 0, make_frame(pool_, star.spec(0, 1)));
  rte_mbuf* m = s.tx(1, 0);  // leaves 3 KB < Kmin = 5 KB
  EXPECT_EQ(test::ipv4_of(m)->ecn(), wire::kEcnEct0);
  rte_pktmbuf_free(m);
  EXPECT_NE(s.set_ecn(1, EcnSetting{2048, 1024, 0.5}), "");  // kmin > kmax
  EXPECT_EQ(s.set_ecn(1, EcnSetting{0, 1024, 0.0}), "pmax=0 not in (0, 1]");
  EXPECT_NE(s.set_ecn(9, EcnSetting{0, 0, 1.0}), "");        // no such port
  EXPECT_EQ(s.set_ecn(1, EcnSetting{0, 0, 1.0}), "");
  m = s.tx(1, 0);  // leaves 2 KB > Kmax = 0: always marked
  EXPECT_EQ(test::ipv4_of(m)->ecn(), wire::kEcnCe);
  EXPECT_EQ(test::ipv4_of(m)->checksum(), test::ipv4_of(m)->compute_checksum());
  rte_pktmbuf_free(m);
  EXPECT_EQ(s.ecn(1), (EcnSetting{0, 0, 1.0}));
  EXPECT_EQ(s.snapshot(0).ecn[1], (EcnSetting{0, 0, 1.0}));
  EXPECT_EQ(s.snapshot(0).ports[1].ecn_marked_packets, 1u);
  drain(s, 1);
}

TEST_F(SoftSwitchTest, SetEcnFromAnotherThreadIsAppliedWholeBetweenPackets) {
  Star star(2);
  SoftSwitch s(SwitchParams{}, star.topo, star.sw, pool_, 1);
  // The control thread alternates between two settings; the data path must only ever see
  // one of them (or the initial one) whole, never a mix, and end with the last one written.
  const EcnSetting a{1000, 2000, 0.5}, b{3000, 9000, 0.25};
  std::atomic<bool> done{false};
  std::thread control([&] {
    for (int i = 0; i < 20000; ++i) EXPECT_EQ(s.set_ecn(1, i % 2 ? b : a), "");
    done = true;
  });
  const EcnSetting initial = s.ecn(1);
  int torn = 0;
  while (!done) {
    rx1(s, 0, make_frame(pool_, star.spec(0, 1)));
    rte_pktmbuf_free(s.tx(1, 0));
    const EcnSetting now = s.ecn(1);
    torn += !(now == a || now == b || now == initial);
  }
  control.join();
  rx1(s, 0, make_frame(pool_, star.spec(0, 1)));
  rte_pktmbuf_free(s.tx(1, 0));
  EXPECT_EQ(torn, 0);
  EXPECT_EQ(s.ecn(1), b);
}

TEST_F(SoftSwitchTest, CnpsGoAheadOfDataAndNotEctOrControlPacketsAreNeverMarked) {
  Star star(2);
  SoftSwitch s(SwitchParams{}, star.topo, star.sw, pool_, 1);
  ASSERT_EQ(s.set_ecn(1, EcnSetting{0, 0, 1.0}), "");
  FrameSpec data = star.spec(0, 1);
  FrameSpec not_ect = data;
  not_ect.ecn = wire::kEcnNotEct;
  FrameSpec cnp = data;
  cnp.opcode = wire::kCnp;
  cnp.dscp = 0;  // classified by opcode, whatever its DSCP
  cnp.frame_bytes = 66;
  rx1(s, 0, make_frame(pool_, data));
  rx1(s, 0, make_frame(pool_, not_ect));
  rx1(s, 0, make_frame(pool_, data));
  rx1(s, 0, make_frame(pool_, cnp));
  EXPECT_EQ(s.queue_bytes(1, 6), 66u);
  EXPECT_EQ(s.queue_bytes(1, 3), 3 * 1024u);
  rte_mbuf* m = s.tx(1, 0);
  EXPECT_EQ(rte_pktmbuf_pkt_len(m), 66u);                // the CNP first
  EXPECT_EQ(test::ipv4_of(m)->ecn(), wire::kEcnEct0);  // control queue: never marked
  rte_pktmbuf_free(m);
  // Marking looks at the bytes each packet leaves behind: 2 KB, 1 KB (Not-ECT), then 0 B,
  // which is not above Kmin = 0.
  const uint8_t expect[] = {wire::kEcnCe, wire::kEcnNotEct, wire::kEcnEct0};
  for (uint8_t e : expect) {
    m = s.tx(1, 0);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(test::ipv4_of(m)->ecn(), e);
    rte_pktmbuf_free(m);
  }
}

TEST_F(SoftSwitchTest, DwrrSharesTheLinkAmongDataClassesByWeight) {
  Star star(2);
  SwitchParams p;
  p.classes = {ClassParams{"rdma", 3, {26}, true, false, 3}, ClassParams{"bulk", 1, {10}, false, false, 1},
               ClassParams{"control", 6, {48}, false, true, 1}};
  SoftSwitch s(p, star.topo, star.sw, pool_, 1);
  FrameSpec rdma = star.spec(0, 1);
  FrameSpec bulk = rdma;
  bulk.dscp = 10;
  for (int i = 0; i < 200; ++i) {
    rx1(s, 0, make_frame(pool_, rdma));
    rx1(s, 0, make_frame(pool_, bulk));
  }
  int n_rdma = 0, n_bulk = 0;
  for (int i = 0; i < 160; ++i) {
    rte_mbuf* m = s.tx(1, 0);
    ASSERT_NE(m, nullptr);
    (test::ipv4_of(m)->dscp() == 26 ? n_rdma : n_bulk) += 1;
    rte_pktmbuf_free(m);
  }
  // Weights 3:1 with 9 KB quanta of 1 KB frames: 120:40, up to one quantum (9 frames) apart.
  EXPECT_NEAR(n_rdma, 120, 9);
  EXPECT_NEAR(n_bulk, 40, 9);
  // Once one class is empty the other takes the whole link.
  drain(s, 1);
  EXPECT_EQ(s.queue_bytes(1, 3) + s.queue_bytes(1, 1), 0u);
}

TEST_F(SoftSwitchTest, RoundRobinAlternatesPacketsAmongDataClasses) {
  Star star(2);
  SwitchParams p;
  p.scheduler = "rr";
  p.classes = {ClassParams{"rdma", 3, {26}, true, false, 1}, ClassParams{"bulk", 1, {10}, false, false, 1},
               ClassParams{"control", 6, {48}, false, true, 1}};
  SoftSwitch s(p, star.topo, star.sw, pool_, 1);
  FrameSpec rdma = star.spec(0, 1);
  FrameSpec bulk = rdma;
  bulk.dscp = 10;
  for (int i = 0; i < 10; ++i) {
    rx1(s, 0, make_frame(pool_, rdma));
    rx1(s, 0, make_frame(pool_, bulk));
  }
  int prev = -1;
  for (int i = 0; i < 20; ++i) {
    rte_mbuf* m = s.tx(1, 0);
    ASSERT_NE(m, nullptr);
    const int d = test::ipv4_of(m)->dscp();
    EXPECT_NE(d, prev) << i;
    prev = d;
    rte_pktmbuf_free(m);
  }
}

TEST_F(SoftSwitchTest, ReceivedPfcPausesTheEgressQueueUntilExpiryOrXon) {
  Star star(2);
  SoftSwitch s(SwitchParams{}, star.topo, star.sw, pool_, 1);
  for (int i = 0; i < 3; ++i) rx1(s, 0, make_frame(pool_, star.spec(0, 1)));
  auto pfc = [&](uint16_t quanta, TimeNs now) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    auto* buf = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kPfcFrameBytes));
    std::array<uint16_t, kNumPriorities> q{};
    q[3] = quanta;
    write_pfc_frame(buf, star.topo.node(star.hosts[1]).ports[0].mac.data(), 1u << 3, q);
    rx1(s, 1, m, now);
  };
  pfc(1000, 100);  // 1000 x 512 bits at 10 Gbps = 51.2 us
  EXPECT_EQ(s.tx(1, 200), nullptr);
  EXPECT_EQ(s.next_deadline(), 100 + 51'200);
  EXPECT_EQ(s.tx(1, 100 + 51'199), nullptr);
  rte_mbuf* m = s.tx(1, 100 + 51'200);
  ASSERT_NE(m, nullptr);
  rte_pktmbuf_free(m);
  pfc(0xffff, 60'000);
  EXPECT_EQ(s.tx(1, 61'000), nullptr);
  // Control traffic is on another priority: not paused.
  FrameSpec cnp = star.spec(0, 1);
  cnp.opcode = wire::kCnp;
  rx1(s, 0, make_frame(pool_, cnp), 61'000);
  m = s.tx(1, 61'000);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(rte_pktmbuf_mtod_offset(m, uint8_t*, wire::kBthOff)[0], wire::kCnp);
  rte_pktmbuf_free(m);
  pfc(0, 70'000);  // XON
  EXPECT_NE(s.tx(1, 70'000), nullptr);
  const auto snap = s.snapshot(80'000);
  EXPECT_EQ(snap.ports[1].pfc_pauses_received[3], 2u);
  EXPECT_EQ(snap.ports[1].paused_ns[3], 51'200u + 10'000u);
  drain(s, 1, 80'000);
}

TEST_F(SoftSwitchTest, CrossingTheIngressThresholdSendsXoffUpstreamThenRefreshAndXon) {
  Star star(2);
  SwitchParams p;
  p.buffer_bytes = 1 << 20;
  SoftSwitch s(p, star.topo, star.sw, pool_, 1);
  auto read_pfc = [&](rte_mbuf* m, uint16_t* cev, uint16_t* q3) {
    ASSERT_NE(m, nullptr);
    const wire::PfcFrame* f = parse_pfc_frame(rte_pktmbuf_mtod(m, uint8_t*), rte_pktmbuf_data_len(m));
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(0, std::memcmp(test::eth_of(m)->src, star.topo.node(star.sw).ports[0].mac.data(), 6));
    *cev = f->class_enable();
    *q3 = f->quanta(3);
    rte_pktmbuf_free(m);
  };
  int sent = 0;
  while (!s.mmu().should_pause(0, 3)) {
    rx1(s, 0, make_frame(pool_, star.spec(0, 1)));
    ASSERT_LT(++sent, 2000);
  }
  EXPECT_EQ(s.drops(1, RxDrop::kHeadroomFull) + s.drops(1, RxDrop::kBufferFull), 0u);
  uint16_t cev = 0, q3 = 0;
  read_pfc(s.tx(0, 0), &cev, &q3);  // XOFF out of the ingress port, ahead of anything else
  EXPECT_EQ(cev, 1u << 3);
  EXPECT_EQ(q3, 0xffff);
  EXPECT_EQ(s.tx(0, 0), nullptr);
  EXPECT_EQ(s.snapshot(0).ports[0].pfc_pauses_sent[3], 1u);
  // Refresh at half the pause time (65535 x 512 bits at 10 Gbps = 3355.392 us) while congested.
  const TimeNs half = pfc_quanta_ns(0xffff, k10G) / 2;
  EXPECT_EQ(s.next_deadline(), half);
  s.on_timer(half);
  read_pfc(s.tx(0, half), &cev, &q3);
  EXPECT_EQ(q3, 0xffff);
  EXPECT_EQ(s.snapshot(half).ports[0].pfc_pauses_sent[3], 2u);
  // Drain the egress: once below the resume offset an XON (quanta 0) goes upstream.
  int out = 0;
  bool xon = false;
  while (rte_mbuf* m = s.tx(1, half)) {
    rte_pktmbuf_free(m);
    ++out;
    if (rte_mbuf* f = s.tx(0, half)) {
      read_pfc(f, &cev, &q3);
      EXPECT_EQ(cev, 1u << 3);
      EXPECT_EQ(q3, 0);
      EXPECT_TRUE(s.mmu().should_resume(0, 3));
      xon = true;
      break;
    }
  }
  EXPECT_TRUE(xon);
  EXPECT_LT(out, sent);
  EXPECT_EQ(s.next_deadline(), kNever);
  drain(s, 1, half);
}

}  // namespace
}  // namespace rocemu::sw
