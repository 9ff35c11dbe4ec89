// unreliable_test.cc — the UD and UC transports back to back (IBTA Vol. 1 9.8, rxe's
// behaviour): UD datagrams with their GRH space, Q_Key checks, silent drops without a
// receive WQE, the one-MTU limit at post time; UC SEND/WRITE across packets, and under loss
// (a broken message is dropped, the next ones arrive, nothing hangs, no timer stays armed);
// a packet of a transport the QP does not speak is counted as such.
#include <gtest/gtest.h>

#include <cstring>

#include "common/wire.h"
#include "nic/opcode_table.h"
#include "nic/packet.h"
#include "tests/nic/host_pair.h"

namespace rocemu::test {
namespace {

using nic::RxDrop;

constexpr uint32_t kQkey = 0x11111111;
constexpr uint32_t kGrh = 40;
constexpr TimeNs kLimitNs = 50 * kNsPerMs;

uint64_t drops(const nic::RoceHost& h, RxDrop why) {
  return h.counters().drops[static_cast<int>(why)];
}

/// A HostPair (whose RC QPs stay idle) with one more QP of `type` on each side, connected
/// (UC) or in RTS with Q_Key kQkey and an address handle towards the other side (UD).
struct Pair : HostPair {
  uint32_t q[2]{};
  ibv_ah* ah[2]{};
  Pair(ibv_qp_type type, uint64_t seed = 1)
      : HostPair(nic::NicParams{}, 100 * kBpsPerGbps, 1000, seed) {
    for (int i = 0; i < 2; ++i) {
      nic::QpInitAttr a;
      a.qp_type = type;
      a.pd = pd[i];
      a.send_cq = a.recv_cq = cq[i];
      a.max_send_wr = a.max_recv_wr = 512;
      a.max_send_sge = a.max_recv_sge = 4;
      q[i] = host[i]->create_qp(a);
      EXPECT_NE(q[i], 0u);
    }
    for (int i = 0; i < 2; ++i) {
      if (type == IBV_QPT_UC) {
        nic::ConnectOptions opt;
        opt.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
        EXPECT_EQ(nic::connect_rc(*host[i], q[i], host[1 - i]->local_info(q[1 - i]), opt), 0);
        continue;
      }
      ibv_qp_attr at{};
      at.qp_state = IBV_QPS_INIT;
      at.qkey = kQkey;
      EXPECT_EQ(host[i]->modify_qp(q[i], at, IBV_QP_STATE | IBV_QP_QKEY), 0);
      at = {};
      at.qp_state = IBV_QPS_RTR;
      EXPECT_EQ(host[i]->modify_qp(q[i], at, IBV_QP_STATE), 0);  // UD: no peer to name
      at = {};
      at.qp_state = IBV_QPS_RTS;
      at.sq_psn = 77;
      EXPECT_EQ(host[i]->modify_qp(q[i], at, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
      ibv_ah_attr aa{};
      aa.is_global = 1;
      aa.grh.dgid = nic::ipv4_mapped_gid(host[1 - i]->ipv4());
      ah[i] = host[i]->create_ah(pd[i], aa);
      EXPECT_NE(ah[i], nullptr);
    }
  }

  int post_recv(int side, const nic::MrInfo& mr, uint32_t len, uint64_t wr_id, uint64_t off = 0) {
    ibv_sge sge{mr.addr + off, len, mr.lkey};
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    return host[side]->post_recv(q[side], &wr, nullptr);
  }

  int post_ud(int side, const nic::MrInfo& mr, uint32_t len, uint64_t wr_id, uint32_t qkey,
              bool imm = false) {
    ibv_sge sge{mr.addr, len, mr.lkey};
    ibv_send_wr wr = make_wr(wr_id, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, &sge, 1);
    wr.imm_data = 0x12345678;
    wr.wr.ud.ah = ah[side];
    wr.wr.ud.remote_qpn = q[1 - side];
    wr.wr.ud.remote_qkey = qkey;
    const ibv_send_wr* bad = nullptr;
    return host[side]->post_send(q[side], &wr, &bad);
  }

  /// Runs until nothing is left to happen (no frame to send or in flight, no timer) and
  /// says whether that came before `limit_ns`.
  bool run_idle(TimeNs limit_ns) {
    const TimeNs start = wire->now();
    wire->run_until([] { return false; }, limit_ns);
    return wire->now() - start < limit_ns && host[0]->next_deadline() == kNever &&
           host[1]->next_deadline() == kNever;
  }
};

TEST(Ud, SendArrivesWithGrhSourceQpAndImmediate) {
  Pair hp(IBV_QPT_UD);
  const uint32_t n = 700;
  auto src = pattern(n, 3);
  std::vector<uint8_t> dst(2 * (kGrh + n), 0xee);
  const auto smr = hp.reg(0, src), dmr = hp.reg(1, dst);
  ASSERT_EQ(hp.post_recv(1, dmr, kGrh + n, 10), 0);
  ASSERT_EQ(hp.post_recv(1, dmr, kGrh + n, 11, kGrh + n), 0);
  ASSERT_EQ(hp.post_ud(0, smr, n, 1, kQkey), 0);
  ASSERT_EQ(hp.post_ud(0, smr, n, 2, 0x80000000u, true), 0);  // bit 31: the QP's own Q_Key

  std::vector<ibv_wc> swc, rwc;
  ASSERT_TRUE(hp.wait_wcs(0, 2, swc, kLimitNs));
  ASSERT_TRUE(hp.wait_wcs(1, 2, rwc, kLimitNs));
  for (const auto& w : swc) {
    EXPECT_EQ(w.status, IBV_WC_SUCCESS);
    EXPECT_EQ(w.opcode, IBV_WC_SEND);
  }
  for (int k = 0; k < 2; ++k) {
    const ibv_wc& w = rwc[k];
    EXPECT_EQ(w.status, IBV_WC_SUCCESS) << nic::wc_status_name(w.status);
    EXPECT_EQ(w.wr_id, 10u + k);
    EXPECT_EQ(w.opcode, IBV_WC_RECV);
    EXPECT_EQ(w.byte_len, kGrh + n);
    EXPECT_EQ(w.src_qp, hp.q[0]);
    EXPECT_EQ(w.qp_num, hp.q[1]);
    EXPECT_TRUE(w.wc_flags & IBV_WC_GRH);
    EXPECT_EQ(!!(w.wc_flags & IBV_WC_WITH_IMM), k == 1);
    if (k == 1) {
      EXPECT_EQ(w.imm_data, 0x12345678u);
    }
    const uint8_t* b = dst.data() + k * (kGrh + n);
    // rxe's RoCEv2/IPv4 GRH: 20 zero bytes, then the packet's IPv4 header.
    for (uint32_t i = 0; i < 20; ++i) EXPECT_EQ(b[i], 0) << i;
    const auto* ip = reinterpret_cast<const wire::Ipv4*>(b + 20);
    EXPECT_EQ(b[20], 0x45);
    EXPECT_EQ(b[29], 17);  // UDP
    EXPECT_EQ(ip->src(), hp.host[0]->ipv4());
    EXPECT_EQ(ip->dst(), hp.host[1]->ipv4());
    EXPECT_EQ(ip->checksum(), ip->compute_checksum());
    EXPECT_EQ(std::memcmp(b + kGrh, src.data(), n), 0);
  }
  EXPECT_TRUE(hp.run_idle(kLimitNs));
  EXPECT_EQ(hp.host[0]->counters().acks_sent + hp.host[1]->counters().acks_sent, 0u);
  EXPECT_EQ(hp.host[1]->counters().drops_total(), 0u);
}

TEST(Ud, FramesCarryDethAndNoAckRequest) {
  Pair hp(IBV_QPT_UD);
  auto src = pattern(64, 1);
  const auto smr = hp.reg(0, src);
  int seen = 0;
  hp.wire->set_inspector([&](int side, const uint8_t* f, uint32_t len) {
    if (side != 0) return;
    ++seen;
    nic::RocePacket p;
    std::vector<uint8_t> copy(f, f + len);
    ASSERT_EQ(nic::parse_roce(copy.data(), len, p), RxDrop::kNone);
    EXPECT_TRUE(nic::icrc_ok(p));
    EXPECT_EQ(p.opcode, nic::kUdSendOnly);
    EXPECT_EQ(p.qkey, kQkey);
    EXPECT_EQ(p.src_qpn, hp.q[0]);
    EXPECT_EQ(p.dqpn, hp.q[1]);
    EXPECT_EQ(p.psn, 77u);
    EXPECT_FALSE(p.ack_req);
    EXPECT_EQ(p.payload_len, 64u);
  });
  ASSERT_EQ(hp.post_ud(0, smr, 64, 1, kQkey), 0);
  EXPECT_TRUE(hp.run_idle(kLimitNs));
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(drops(*hp.host[1], RxDrop::kNoRecvWqe), 1u);  // nothing was posted
}

TEST(Ud, QkeyMismatchIsDroppedSilentlyAndTheReceiveStaysPosted) {
  Pair hp(IBV_QPT_UD);
  auto src = pattern(100, 5);
  std::vector<uint8_t> dst(kGrh + 100, 0);
  const auto smr = hp.reg(0, src), dmr = hp.reg(1, dst);
  ASSERT_EQ(hp.post_recv(1, dmr, kGrh + 100, 10), 0);
  ASSERT_EQ(hp.post_ud(0, smr, 100, 1, kQkey + 1), 0);
  std::vector<ibv_wc> swc, rwc;
  ASSERT_TRUE(hp.wait_wcs(0, 1, swc, kLimitNs));
  EXPECT_EQ(swc[0].status, IBV_WC_SUCCESS);  // a datagram's sender never learns
  EXPECT_TRUE(hp.run_idle(kLimitNs));
  EXPECT_EQ(hp.host[1]->poll_cq(hp.cq[1], 1, rwc.data()), 0);
  EXPECT_EQ(drops(*hp.host[1], RxDrop::kQkeyMismatch), 1u);
  // The right Q_Key then lands in the receive that stayed posted.
  ASSERT_EQ(hp.post_ud(0, smr, 100, 2, kQkey), 0);
  ASSERT_TRUE(hp.wait_wcs(1, 1, rwc, kLimitNs));
  EXPECT_EQ(rwc[0].wr_id, 10u);
  EXPECT_EQ(rwc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(dst.data() + kGrh, src.data(), 100), 0);
}

TEST(Ud, NoReceivePostedDropsAndCountsThenTheNextIsReceived) {
  Pair hp(IBV_QPT_UD);
  auto src = pattern(32, 5);
  std::vector<uint8_t> dst(kGrh + 32, 0);
  const auto smr = hp.reg(0, src), dmr = hp.reg(1, dst);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(hp.post_ud(0, smr, 32, i, kQkey), 0);
  std::vector<ibv_wc> swc, rwc;
  ASSERT_TRUE(hp.wait_wcs(0, 3, swc, kLimitNs));
  EXPECT_TRUE(hp.run_idle(kLimitNs));
  EXPECT_EQ(drops(*hp.host[1], RxDrop::kNoRecvWqe), 3u);
  EXPECT_EQ(hp.host[1]->counters().rnr_naks_sent, 0u);
  ASSERT_EQ(hp.post_recv(1, dmr, kGrh + 32, 10), 0);
  ASSERT_EQ(hp.post_ud(0, smr, 32, 9, kQkey), 0);
  ASSERT_TRUE(hp.wait_wcs(1, 1, rwc, kLimitNs));
  EXPECT_EQ(rwc[0].status, IBV_WC_SUCCESS);
}

TEST(Ud, ReceiveTooSmallForGrhAndPayloadCompletesWithLengthError) {
  Pair hp(IBV_QPT_UD);
  auto src = pattern(100, 5);
  std::vector<uint8_t> dst(kGrh + 100, 0);
  const auto smr = hp.reg(0, src), dmr = hp.reg(1, dst);
  ASSERT_EQ(hp.post_recv(1, dmr, kGrh + 99, 10), 0);  // one byte short
  ASSERT_EQ(hp.post_ud(0, smr, 100, 1, kQkey), 0);
  std::vector<ibv_wc> rwc;
  ASSERT_TRUE(hp.wait_wcs(1, 1, rwc, kLimitNs));
  EXPECT_EQ(rwc[0].status, IBV_WC_LOC_LEN_ERR);
  EXPECT_EQ(hp.host[1]->qp_state(hp.q[1]), IBV_QPS_RTS);
}

TEST(Ud, PostSendRefusesOversizePayloadsOtherOpcodesAndBadHandles) {
  Pair hp(IBV_QPT_UD);
  const uint32_t mtu = hp.host[0]->params().mtu_bytes;
  auto src = pattern(mtu + 1, 5);
  const auto smr = hp.reg(0, src);
  EXPECT_EQ(hp.post_ud(0, smr, mtu + 1, 1, kQkey), EINVAL);
  EXPECT_EQ(hp.post_ud(0, smr, mtu, 2, kQkey), 0);  // exactly one MTU fits
  ibv_sge sge{smr.addr, 8, smr.lkey};
  ibv_send_wr wr = make_wr(3, IBV_WR_RDMA_WRITE, &sge, 1, smr.addr, smr.rkey);
  const ibv_send_wr* bad = nullptr;
  EXPECT_EQ(hp.host[0]->post_send(hp.q[0], &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);
  wr = make_wr(4, IBV_WR_SEND, &sge, 1);
  wr.wr.ud.ah = hp.ah[1];  // the other host's handle
  wr.wr.ud.remote_qpn = hp.q[1];
  EXPECT_EQ(hp.host[0]->post_send(hp.q[0], &wr, &bad), EINVAL);
  ibv_ah* ah = hp.ah[0];
  EXPECT_EQ(hp.host[0]->destroy_ah(ah), 0);
  EXPECT_EQ(hp.host[0]->destroy_ah(ah), EINVAL);
  EXPECT_EQ(hp.post_ud(0, smr, 8, 5, kQkey), EINVAL);  // destroyed handle
  ibv_ah_attr aa{};
  aa.is_global = 1;  // dgid :: is not IPv4-mapped
  EXPECT_EQ(hp.host[0]->create_ah(hp.pd[0], aa), nullptr);
  ibv_qp_attr at{};
  at.qkey = 1;
  EXPECT_EQ(hp.host[0]->modify_qp(hp.qpn[0], at, IBV_QP_QKEY), EINVAL);  // RC has no Q_Key
}

TEST(Transport, PacketsOfAnotherOrUnimplementedTransportAreCountedAsSuch) {
  Pair hp(IBV_QPT_UD);
  auto src = pattern(32, 5);
  const auto smr = hp.reg(0, src);
  EXPECT_STREQ(hp.host[1]->last_foreign_transport(), "none");
  // A UD SEND to host 1's RC QP.
  ibv_sge sge{smr.addr, 32, smr.lkey};
  ibv_send_wr wr = make_wr(1, IBV_WR_SEND, &sge, 1);
  wr.wr.ud.ah = hp.ah[0];
  wr.wr.ud.remote_qpn = hp.qpn[1];
  wr.wr.ud.remote_qkey = kQkey;
  ASSERT_EQ(hp.host[0]->post_send(hp.q[0], &wr, nullptr), 0);
  EXPECT_TRUE(hp.run_idle(kLimitNs));
  EXPECT_EQ(drops(*hp.host[1], RxDrop::kWrongTransport), 1u);
  EXPECT_STREQ(hp.host[1]->last_foreign_transport(), "UD");
  // The same datagram rewritten on the wire to RD (0x44) and XRC (0xa4) SEND ONLY opcodes.
  for (uint8_t op : {uint8_t{0x44}, uint8_t{0xa4}}) {
    hp.wire->set_mutator([op](int, uint8_t* f, uint32_t) { f[wire::kBthOff] = op; });
    ASSERT_EQ(hp.post_ud(0, smr, 32, 2, kQkey), 0);
    EXPECT_TRUE(hp.run_idle(kLimitNs));
  }
  EXPECT_EQ(drops(*hp.host[1], RxDrop::kUnsupportedTransport), 2u);
  EXPECT_EQ(drops(*hp.host[1], RxDrop::kBadOpcode), 0u);
  EXPECT_STREQ(hp.host[1]->last_foreign_transport(), "XRC");
  EXPECT_STREQ(nic::transport_name(0x44), "RD");
  EXPECT_STREQ(nic::transport_name(0xa4), "XRC");
}

TEST(Transport, RcPacketsToAUcQpAreCountedAsTheWrongTransport) {
  Pair hp(IBV_QPT_UC);
  auto src = pattern(32, 5);
  const auto smr = hp.reg(0, src);
  // Host 0's UC SEND, rewritten on the wire to RC SEND ONLY.
  hp.wire->set_mutator([](int, uint8_t* f, uint32_t) {
    f[wire::kBthOff] &= 0x1f;
    nic::seal_frame(f);  // a valid ICRC: the frame reaches the transport check
  });
  ibv_sge sge{smr.addr, 32, smr.lkey};
  ibv_send_wr wr = make_wr(1, IBV_WR_SEND, &sge, 1);
  ASSERT_EQ(hp.host[0]->post_send(hp.q[0], &wr, nullptr), 0);
  EXPECT_TRUE(hp.run_idle(kLimitNs));
  EXPECT_EQ(drops(*hp.host[1], RxDrop::kWrongTransport), 1u);
}

TEST(Uc, SendAndWriteAcrossPacketsWithoutAcks) {
  Pair hp(IBV_QPT_UC);
  const uint32_t mtu = hp.host[0]->params().mtu_bytes;
  const uint32_t n = 3 * mtu + mtu / 2;
  auto src = pattern(n, 8);
  std::vector<uint8_t> rbuf(n, 0), wbuf(n, 0);
  const auto smr = hp.reg(0, src), rmr = hp.reg(1, rbuf), wmr = hp.reg(1, wbuf);
  ASSERT_EQ(hp.post_recv(1, rmr, n, 10), 0);
  ASSERT_EQ(hp.post_recv(1, rmr, n, 11), 0);  // for the WRITE's immediate
  std::vector<uint8_t> opcodes;
  hp.wire->set_inspector([&](int side, const uint8_t* f, uint32_t) {
    if (side == 0) opcodes.push_back(f[wire::kBthOff]);
    EXPECT_FALSE(f[wire::kBthOff + 8] & 0x80) << "AckReq";
  });
  ibv_sge sge{smr.addr, n, smr.lkey};
  ibv_send_wr s = make_wr(1, IBV_WR_SEND, &sge, 1);
  ibv_send_wr w = make_wr(2, IBV_WR_RDMA_WRITE_WITH_IMM, &sge, 1, wmr.addr, wmr.rkey);
  w.imm_data = 0xabcd;
  s.next = &w;
  ASSERT_EQ(hp.host[0]->post_send(hp.q[0], &s, nullptr), 0);
  std::vector<ibv_wc> swc, rwc;
  ASSERT_TRUE(hp.wait_wcs(0, 2, swc, kLimitNs));
  ASSERT_TRUE(hp.wait_wcs(1, 2, rwc, kLimitNs));
  EXPECT_EQ(swc[0].opcode, IBV_WC_SEND);
  EXPECT_EQ(swc[1].opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(rwc[0].opcode, IBV_WC_RECV);
  EXPECT_EQ(rwc[0].byte_len, n);
  EXPECT_EQ(rwc[1].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(rwc[1].imm_data, 0xabcdu);
  for (const auto& c : rwc) EXPECT_EQ(c.status, IBV_WC_SUCCESS);
  EXPECT_EQ(rbuf, src);
  EXPECT_EQ(wbuf, src);
  using nic::uc_opcode;
  const std::vector<uint8_t> want = {
      uc_opcode(wire::kRcSendFirst),   uc_opcode(wire::kRcSendMiddle),
      uc_opcode(wire::kRcSendMiddle),  uc_opcode(wire::kRcSendLast),
      uc_opcode(wire::kRcWriteFirst),  uc_opcode(wire::kRcWriteMiddle),
      uc_opcode(wire::kRcWriteMiddle), uc_opcode(wire::kRcWriteLastImm)};
  EXPECT_EQ(opcodes, want);
  EXPECT_TRUE(hp.run_idle(kLimitNs));
  EXPECT_EQ(hp.host[1]->counters().acks_sent, 0u);
  EXPECT_EQ(hp.host[1]->counters().naks_sent, 0u);
  EXPECT_EQ(hp.host[0]->counters().data_packets_sent, 8u);  // nothing resent
}

// Random loss of UC packets, seed by seed: exactly the messages that lost no packet arrive
// (in order, intact, each into the next receive WQE); the sender completes everything; no
// timer stays armed and nothing is sent twice.
TEST(Uc, LossDropsExactlyTheBrokenMessagesAndNeverHangs) {
  constexpr int kMsgs = 40, kPkts = 4;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Pair hp(IBV_QPT_UC, seed);
    const uint32_t mtu = hp.host[0]->params().mtu_bytes;
    const uint32_t n = kPkts * mtu;
    std::vector<std::vector<uint8_t>> msgs;
    std::vector<nic::MrInfo> mrs;
    for (int i = 0; i < kMsgs; ++i) msgs.push_back(pattern(n, seed * 1000 + i));
    for (auto& m : msgs) mrs.push_back(hp.reg(0, m));
    std::vector<uint8_t> rbuf(size_t{n} * kMsgs, 0);
    const auto rmr = hp.reg(1, rbuf);
    for (int i = 0; i < kMsgs; ++i) ASSERT_EQ(hp.post_recv(1, rmr, n, i, uint64_t{n} * i), 0);
    Rng loss(seed);
    int frame = 0;
    std::vector<bool> broken(kMsgs, false);
    hp.wire->set_filter([&](int side, const uint8_t*, uint32_t) {
      if (side != 0) return false;
      const bool drop = loss.uniform() < 0.03;
      if (drop) broken[frame / kPkts] = true;
      ++frame;
      return drop;
    });
    for (int i = 0; i < kMsgs; ++i) {
      ibv_sge sge{mrs[i].addr, n, mrs[i].lkey};
      ibv_send_wr wr = make_wr(i, IBV_WR_SEND, &sge, 1);
      ASSERT_EQ(hp.host[0]->post_send(hp.q[0], &wr, nullptr), 0);
    }
    std::vector<ibv_wc> swc, rwc;
    ASSERT_TRUE(hp.wait_wcs(0, kMsgs, swc, kLimitNs)) << "seed " << seed;
    ASSERT_TRUE(hp.run_idle(kLimitNs)) << "seed " << seed << ": a timer stays armed";
    ibv_wc wc[64];
    for (int got; (got = hp.host[1]->poll_cq(hp.cq[1], 64, wc)) > 0;)
      rwc.insert(rwc.end(), wc, wc + got);
    std::vector<int> whole;
    for (int i = 0; i < kMsgs; ++i)
      if (!broken[i]) whole.push_back(i);
    ASSERT_EQ(rwc.size(), whole.size()) << "seed " << seed;
    for (size_t k = 0; k < rwc.size(); ++k) {
      EXPECT_EQ(rwc[k].status, IBV_WC_SUCCESS);
      EXPECT_EQ(rwc[k].wr_id, k);  // receive WQEs are used in order, none wasted
      EXPECT_EQ(std::memcmp(rbuf.data() + size_t{n} * k, msgs[whole[k]].data(), n), 0)
          << "seed " << seed << " completion " << k;
    }
    EXPECT_EQ(frame, kMsgs * kPkts);
    EXPECT_EQ(hp.host[0]->counters().retransmitted_packets, 0u);
    EXPECT_EQ(hp.host[0]->check_invariants(), "");
    EXPECT_EQ(hp.host[1]->check_invariants(), "");
  }
}

}  // namespace
}  // namespace rocemu::test
