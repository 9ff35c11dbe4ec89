// ipv6_test.cc — RoCEv2 over IPv6 GIDs between two back-to-back endpoints (virtual time):
// the GID table as rxe builds it, the IPv6 headers of every frame (IBTA annex A17.4.2 with
// rxe's field values), data verified, ECN CE in the Traffic Class answered by a CNP over
// IPv6, modify_qp's checks of the source GID, and the receive checks that drop IPv6 frames
// not for the QP (source, destination, UDP checksum) by reason.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "nic/packet.h"
#include "tests/nic/host_pair.h"

namespace rocemu::test {
namespace {

using nic::RxDrop;

uint64_t drops(const nic::RoceHost& h, RxDrop r) { return h.counters().drops[static_cast<int>(r)]; }

TEST(Ipv6Gids, TableIsLinkLocalThenIpv4MappedThenConfigured) {
  Topology t;
  t.add_node("h0", NodeKind::kHost);
  t.add_node("h1", NodeKind::kHost);
  t.add_link(0, 1, 25 * kBpsPerGbps, 1000);
  t.mutable_nodes()[0].ports[0].mac = {0x52, 0x54, 0x00, 0x77, 0x00, 0x11};
  t.mutable_nodes()[0].ipv6 = {*parse_ipv6("fd00::1"), *parse_ipv6("2001:db8::7")};
  nic::RoceHost h(nic::NicParams{}, t, 0, test_mempool(), 1);
  ASSERT_EQ(h.num_gids(), 4u);
  ibv_gid g{};
  ASSERT_TRUE(h.gid(0, g));
  // rxe's GID 0 of a netdev with this MAC, as the golden IPv6 capture shows it.
  EXPECT_EQ(ipv6_to_string(nic::ipv6_of(g)), "fe80::5054:ff:fe77:11");
  ASSERT_TRUE(h.gid(1, g));
  EXPECT_EQ(std::memcmp(g.raw, nic::ipv4_mapped_gid(t.node(0).ipv4).raw, 16), 0);
  ASSERT_TRUE(h.gid(2, g));
  EXPECT_EQ(ipv6_to_string(nic::ipv6_of(g)), "fd00::1");
  ASSERT_TRUE(h.gid(3, g));
  EXPECT_EQ(ipv6_to_string(nic::ipv6_of(g)), "2001:db8::7");
  EXPECT_FALSE(h.gid(4, g));
  EXPECT_TRUE(h.has_ipv6(*parse_ipv6("fe80::5054:ff:fe77:11")));
  EXPECT_FALSE(h.has_ipv6(ipv4_mapped_ipv6(t.node(0).ipv4))) << "index 1 is IPv4";
}

TEST(Ipv6Gids, LinkLocalAndSolicitedNodeAddressesFollowTheRfcs) {
  const MacAddr mac{0x00, 0x1b, 0x21, 0xab, 0xcd, 0xef};
  EXPECT_EQ(ipv6_to_string(link_local_ipv6(mac)), "fe80::21b:21ff:feab:cdef");  // U/L bit set
  const Ipv6Addr sn = solicited_node_ipv6(link_local_ipv6(mac));
  EXPECT_EQ(ipv6_to_string(sn), "ff02::1:ffab:cdef");
  EXPECT_EQ(mac_to_string(ipv6_multicast_mac(sn)), "33:33:ff:ab:cd:ef");
  uint32_t v4 = 0;
  EXPECT_TRUE(is_ipv4_mapped(*parse_ipv6("::ffff:10.0.0.2"), &v4));
  EXPECT_EQ(v4, 0x0a000002u);
  EXPECT_FALSE(is_ipv4_mapped(link_local_ipv6(mac)));
}

nic::ConnectOptions gid0() {
  nic::ConnectOptions o;
  o.sgid_index = 0;
  return o;
}

TEST(Ipv6Path, RcWriteSendAndReadOverLinkLocalGidsWithRxesHeaderFields) {
  nic::NicParams p;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 7, gid0());
  int frames = 0, bad = 0;
  hp.wire->set_inspector([&](int side, const uint8_t* f, uint32_t len) {
    ++frames;
    const auto* eth = reinterpret_cast<const wire::Ethernet*>(f);
    const auto* ip = reinterpret_cast<const wire::Ipv6*>(f + wire::kIpOff);
    const auto* udp = reinterpret_cast<const wire::Udp*>(f + wire::kUdp6Off);
    ibv_gid src{}, dst{};
    hp.host[side]->gid(0, src);
    hp.host[1 - side]->gid(0, dst);
    const bool ok = eth->ethertype() == wire::kEtherTypeIpv6 && ip->version() == 6 &&
                    ip->next_header == wire::kIpProtoUdp && ip->hop_limit == 64 &&
                    ip->flow_label() == 0 && std::memcmp(ip->src, src.raw, 16) == 0 &&
                    std::memcmp(ip->dst, dst.raw, 16) == 0 &&
                    udp->dst_port() == wire::kRoceV2Port && udp->checksum() == 0 &&
                    wire::kUdp6Off + ip->payload_length() == len && roce_icrc_valid(f, len);
    // Requests and READ responses at the data DSCP, ACKs at the control DSCP.
    const uint8_t op = f[wire::kBth6Off];
    const uint8_t want = op == wire::kRcAcknowledge ? p.control_dscp : p.data_dscp;
    bad += !ok || ip->dscp() != want;
  });
  const auto w = hp.write_once(200 * 1024, 3, 10 * kNsPerMs);
  EXPECT_EQ(w.status, IBV_WC_SUCCESS);
  EXPECT_TRUE(w.data_ok);

  // A READ back, and a SEND into a posted receive.
  auto a = pattern(50 * 1024, 4);
  std::vector<uint8_t> b(a.size()), c(a.size());
  const auto amr = hp.reg(1, a), bmr = hp.reg(0, b), cmr = hp.reg(1, c);
  ibv_sge rs{bmr.addr, static_cast<uint32_t>(b.size()), bmr.lkey};
  ibv_send_wr rd = make_wr(2, IBV_WR_RDMA_READ, &rs, 1, amr.addr, amr.rkey);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &rd, nullptr), 0);
  ibv_sge cs{cmr.addr, static_cast<uint32_t>(c.size()), cmr.lkey};
  ibv_recv_wr rwr{};
  rwr.sg_list = &cs;
  rwr.num_sge = 1;
  ASSERT_EQ(hp.host[1]->post_recv(hp.qpn[1], &rwr, nullptr), 0);
  ibv_sge ss{bmr.addr, static_cast<uint32_t>(b.size()), bmr.lkey};
  ibv_send_wr sd = make_wr(3, IBV_WR_SEND, &ss, 1);
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, 1, wcs, 10 * kNsPerMs));
  EXPECT_EQ(wcs[0].status, IBV_WC_SUCCESS);
  EXPECT_TRUE(a == b);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &sd, nullptr), 0);
  ASSERT_TRUE(hp.wait_wcs(0, 2, wcs, 10 * kNsPerMs));
  std::vector<ibv_wc> rwcs;
  ASSERT_TRUE(hp.wait_wcs(1, 1, rwcs, 10 * kNsPerMs));
  EXPECT_EQ(rwcs[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(rwcs[0].byte_len, c.size());
  EXPECT_TRUE(c == a);
  EXPECT_GT(frames, 200);
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(hp.host[0]->counters().drops_total(), 0u);
  EXPECT_EQ(hp.host[1]->counters().drops_total(), 0u);
}

class CountingNp final : public nic::CongestionHooks {
 public:
  bool on_ce_marked(uint32_t, TimeNs) noexcept override { return ++ce == 1 || ce % 8 == 0; }
  void on_cnp(uint32_t, TimeNs) noexcept override { ++cnps; }
  void on_data_sent(uint32_t, uint32_t, TimeNs) noexcept override {}
  int ce = 0, cnps = 0;
};

TEST(Ipv6Path, CeInTheTrafficClassIsAnsweredByCnpsOverIpv6) {
  nic::NicParams p;
  p.ecn_capable = true;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 7, gid0());
  CountingNp rp, np;
  hp.host[0]->set_congestion_hooks(&rp);
  hp.host[1]->set_congestion_hooks(&np);
  int ect0 = 0, data = 0, cnp_frames = 0;
  hp.wire->set_inspector([&](int side, const uint8_t* f, uint32_t) {
    const auto* ip = reinterpret_cast<const wire::Ipv6*>(f + wire::kIpOff);
    if (side == 0) {
      ++data;
      ect0 += ip->ecn() == wire::kEcnEct0;
    } else if (f[wire::kBth6Off] == wire::kCnp) {
      ++cnp_frames;
      EXPECT_EQ(reinterpret_cast<const wire::Ethernet*>(f)->ethertype(), wire::kEtherTypeIpv6);
      EXPECT_EQ(f[wire::kBth6Off + 4], 0x40) << "BECN";
      EXPECT_EQ(ip->dscp(), p.control_dscp);
    }
  });
  // A switch marks CE at dequeue (the Traffic Class is outside the ICRC).
  hp.wire->set_mutator([](int side, uint8_t* f, uint32_t) {
    if (side == 0) reinterpret_cast<wire::Ipv6*>(f + wire::kIpOff)->set_ecn(wire::kEcnCe);
  });
  const auto w = hp.write_once(64 * 1024, 5, 10 * kNsPerMs);
  EXPECT_EQ(w.status, IBV_WC_SUCCESS);
  EXPECT_TRUE(w.data_ok);
  EXPECT_EQ(ect0, data) << "ECT(0) in every data frame's Traffic Class";
  EXPECT_EQ(np.ce, data);
  EXPECT_EQ(hp.host[1]->counters().ce_received, static_cast<uint64_t>(data));
  const int want_cnps = 1 + data / 8;
  EXPECT_EQ(cnp_frames, want_cnps);
  EXPECT_EQ(rp.cnps, want_cnps);
  EXPECT_EQ(hp.host[0]->counters().cnps_received, static_cast<uint64_t>(want_cnps));
}

TEST(Ipv6Path, ModifyQpRefusesAnIpv6DestinationWithoutAnIpv6SourceGid) {
  nic::NicParams p;
  HostPair hp(p);  // connected over IPv4; a second QP to move by hand
  nic::QpInitAttr qa;
  qa.pd = hp.pd[0];
  qa.send_cq = qa.recv_cq = hp.cq[0];
  const uint32_t q = hp.host[0]->create_qp(qa);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  ASSERT_EQ(hp.host[0]->modify_qp(q, a, IBV_QP_STATE), 0);
  ibv_gid peer{};
  ASSERT_TRUE(hp.host[1]->gid(0, peer));
  const int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
  auto try_rtr = [&](const ibv_gid& dgid, uint8_t sgid) {
    ibv_qp_attr r{};
    r.qp_state = IBV_QPS_RTR;
    r.path_mtu = IBV_MTU_1024;
    r.dest_qp_num = hp.qpn[1];
    r.ah_attr.is_global = 1;
    r.ah_attr.grh.dgid = dgid;
    r.ah_attr.grh.sgid_index = sgid;
    return hp.host[0]->modify_qp(q, r, rtr);
  };
  EXPECT_EQ(try_rtr(peer, 1), EINVAL) << "index 1 is the IPv4-mapped GID";
  EXPECT_EQ(try_rtr(peer, 2), EINVAL) << "no configured IPv6 address";
  ibv_gid mc{};
  mc.raw[0] = 0xff;
  mc.raw[15] = 1;
  EXPECT_EQ(try_rtr(mc, 0), EINVAL) << "multicast";
  EXPECT_EQ(hp.host[0]->qp_state(q), IBV_QPS_INIT);
  EXPECT_EQ(try_rtr(peer, 0), 0);
  EXPECT_EQ(hp.host[0]->qp_state(q), IBV_QPS_RTR);
}

TEST(Ipv6Path, FramesNotForTheQpAreDroppedByReason) {
  nic::NicParams p;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 7, gid0());
  int which = 0;
  hp.wire->set_mutator([&](int side, uint8_t* f, uint32_t len) {
    if (side != 0 || len < wire::kRoce6HeadersBytes) return;
    auto* ip = reinterpret_cast<wire::Ipv6*>(f + wire::kIpOff);
    switch (which++) {  // the first three data frames
      case 0:
        ip->src[15] ^= 0x40;  // another sender: wrong source
        nic::seal_frame(f);
        break;
      case 1:
        ip->dst[15] ^= 0x40;  // not one of the host's GIDs
        nic::seal_frame(f);
        break;
      case 2:
        wire::detail::put16(f + wire::kUdp6Off + 6, 0x1234);  // a wrong UDP checksum
        break;
      default:
        break;  // delivered: go-back-N resends the three
    }
  });
  const auto w = hp.write_once(32 * 1024, 9, 200 * kNsPerMs);
  EXPECT_EQ(w.status, IBV_WC_SUCCESS) << "go-back-N recovers the dropped packets";
  EXPECT_TRUE(w.data_ok);
  const auto& h1 = *hp.host[1];
  EXPECT_EQ(drops(h1, RxDrop::kWrongSource), 1u);
  EXPECT_EQ(drops(h1, RxDrop::kNotForMe), 1u);
  EXPECT_EQ(drops(h1, RxDrop::kUdpChecksum), 1u);
  EXPECT_STREQ(nic::rx_drop_name(RxDrop::kUdpChecksum), "udp_checksum");
}

}  // namespace
}  // namespace rocemu::test
