// reliability_test.cc — RC reliability in virtual time (IBTA Vol. 1 9.7.5-9.7.6): mixed
// WRITE / READ / SEND (with and without immediate) over a link with 1% loss, 1% reordering
// and 1% duplication complete with the right data and in posting order; PSNs wrap; an
// unreachable peer exhausts retry_cnt (IBV_WC_RETRY_EXC_ERR); an rkey violation gives
// IBV_WC_REM_ACCESS_ERR at the requester; an empty receive queue gets RNR NAKs until a
// receive is posted.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "nic/psn.h"
#include "tests/nic/host_pair.h"

namespace rocemu::test {
namespace {

struct Op {
  ibv_wr_opcode opcode;
  uint32_t len;
  uint64_t src_off, dst_off;
};

class LossyLink : public ::testing::TestWithParam<uint64_t> {};
class LossyLinkMtu : public ::testing::TestWithParam<uint64_t> {};

void run_mixed_ops(uint64_t seed, uint32_t mtu);

TEST_P(LossyLink, MixedOpsCompleteInOrderWithRightData) { run_mixed_ops(GetParam(), 1024); }

// Seeds 1-3 again at the smallest and largest MTU: segmentation and resumed-READ offsets.
TEST_P(LossyLinkMtu, MixedOpsCompleteAtMtu256And4096) {
  run_mixed_ops(GetParam(), 256);
  run_mixed_ops(GetParam(), 4096);
}

void run_mixed_ops(uint64_t seed, uint32_t mtu) {
  SCOPED_TRACE("seed " + std::to_string(seed) + " mtu " + std::to_string(mtu));
  nic::NicParams p;
  p.mtu_bytes = mtu;
  nic::ConnectOptions opt;
  opt.timeout = 8;  // ~1 ms
  opt.max_rd_atomic = 4;
  // Start side 0 just below the PSN wrap so the run crosses it.
  HostPair hp(p, 25 * kBpsPerGbps, 2000, seed, opt, 0xFFFF00, 0xFFFFF0);
  hp.wire->set_faults({0.01, 0.01, 0.01});
  constexpr size_t kBuf = 1 << 20;
  auto a = pattern(kBuf, 1), b = pattern(kBuf, 2);
  const auto a0 = a, b0 = b;
  std::vector<uint8_t> recv_buf(kBuf, 0);
  const auto amr = hp.reg(0, a), bmr = hp.reg(1, b), rmr = hp.reg(1, recv_buf);

  Rng rng(seed, "ops");
  std::vector<Op> ops;
  std::vector<uint8_t> expect_a = a0, expect_b = b0, expect_recv(kBuf, 0);
  uint64_t recv_off = 0;
  int sends = 0;
  for (int i = 0; i < 150; ++i) {
    const uint32_t len = static_cast<uint32_t>(1 + rng.below(i % 3 == 0 ? 20000 : 3000));
    const uint64_t so = rng.below(kBuf / 2 - len), dof = kBuf / 2 + rng.below(kBuf / 2 - len);
    const int kind = static_cast<int>(rng.below(4));
    Op op{};
    op.len = len;
    if (kind == 0 || kind == 3) {
      op = {kind == 0 ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM, len, so, dof};
      std::memcpy(expect_b.data() + dof, expect_a.data() + so, len);
    } else if (kind == 1) {
      // READ b[so..] into a[dof..] (disjoint halves, so the order of ops does not matter).
      op = {IBV_WR_RDMA_READ, len, dof, so};
      std::memcpy(expect_a.data() + dof, expect_b.data() + so, len);
    } else {
      op = {IBV_WR_SEND_WITH_IMM, len, so, recv_off};
      std::memcpy(expect_recv.data() + recv_off, expect_a.data() + so, len);
      recv_off += len;
      ++sends;
    }
    ops.push_back(op);
  }
  // One receive per SEND and per WRITE_WITH_IMM, each big enough; SENDs fill recv_buf in
  // order, so receive i covers exactly the i-th SEND's bytes.
  uint64_t roff = 0;
  uint64_t posted_recvs = 0;
  for (const Op& op : ops) {
    if (op.opcode == IBV_WR_RDMA_WRITE) continue;
    if (op.opcode == IBV_WR_RDMA_READ) continue;
    ibv_sge sge{reinterpret_cast<uint64_t>(recv_buf.data()) + roff,
                op.opcode == IBV_WR_SEND_WITH_IMM ? op.len : 0u, rmr.lkey};
    if (op.opcode == IBV_WR_SEND_WITH_IMM) roff += op.len;
    ibv_recv_wr rw{};
    rw.wr_id = 1000 + posted_recvs++;
    rw.sg_list = &sge;
    rw.num_sge = 1;
    const ibv_recv_wr* bad = nullptr;
    ASSERT_EQ(hp.host[1]->post_recv(hp.qpn[1], &rw, &bad), 0);
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    ibv_sge sge{reinterpret_cast<uint64_t>(a.data()) + op.src_off, op.len, amr.lkey};
    ibv_send_wr wr = make_wr(i, op.opcode, &sge, 1, 0, bmr.rkey);
    if (op.opcode == IBV_WR_RDMA_READ) {
      wr.wr.rdma.remote_addr = bmr.addr + op.dst_off;
    } else if (op.opcode != IBV_WR_SEND_WITH_IMM) {
      wr.wr.rdma.remote_addr = bmr.addr + op.dst_off;
    }
    wr.imm_data = htonl(static_cast<uint32_t>(i));
    const ibv_send_wr* bad = nullptr;
    ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, &bad), 0);
  }
  std::vector<ibv_wc> wcs, rwcs;
  ASSERT_TRUE(hp.wait_wcs(0, ops.size(), wcs, 10 * kNsPerSec))
      << "completions " << wcs.size() << " of " << ops.size();
  for (size_t i = 0; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].status, IBV_WC_SUCCESS) << i;
    EXPECT_EQ(wcs[i].wr_id, i) << "completions in posting order";
  }
  ASSERT_TRUE(hp.wait_wcs(1, posted_recvs, rwcs, kNsPerSec))
      << "receive completions " << rwcs.size() << " of " << posted_recvs <<
      [&] {
        std::string r;
        for (int i = 0; i < nic::kNumRxDrops; ++i)
          r += std::string(" ") + nic::rx_drop_name(static_cast<nic::RxDrop>(i)) + "=" +
               std::to_string(hp.host[1]->counters().drops[i]);
        return r;
      }()
      << [&] {
           int s = 0, w = 0, rs = 0, rw = 0;
           for (auto& op : ops) {
             s += op.opcode == IBV_WR_SEND_WITH_IMM;
             w += op.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
           }
           for (auto& wc : rwcs) {
             rs += wc.opcode == IBV_WC_RECV;
             rw += wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM;
           }
           return " sends " + std::to_string(s) + "/" + std::to_string(rs) + " wimm " +
                  std::to_string(w) + "/" + std::to_string(rw);
         }();
  for (size_t i = 0; i < rwcs.size(); ++i) {
    EXPECT_EQ(rwcs[i].status, IBV_WC_SUCCESS);
    EXPECT_EQ(rwcs[i].wr_id, 1000 + i);
    EXPECT_TRUE(rwcs[i].wc_flags & IBV_WC_WITH_IMM);
  }
  EXPECT_TRUE(a == expect_a) << "READ data";
  EXPECT_TRUE(b == expect_b) << "WRITE data";
  EXPECT_TRUE(recv_buf == expect_recv) << "SEND data";
  const auto& c0 = hp.host[0]->counters();
  const auto& c1 = hp.host[1]->counters();
  std::printf("seed %lu: %.3f ms, sent %lu data (%lu resent), %lu timeouts, %lu NAKs, %lu dups\n",
              static_cast<unsigned long>(seed), hp.wire->now() / 1e6,
              static_cast<unsigned long>(c0.data_packets_sent),
              static_cast<unsigned long>(c0.retransmitted_packets),
              static_cast<unsigned long>(c0.timeouts), static_cast<unsigned long>(c0.naks_received),
              static_cast<unsigned long>(c1.drops[static_cast<int>(nic::RxDrop::kDuplicate)]));
  EXPECT_GT(c0.retransmitted_packets, 0u) << "the faults must have cost something";
  EXPECT_EQ(c1.drops[static_cast<int>(nic::RxDrop::kIcrc)], 0u);
  EXPECT_GT(c1.drops[static_cast<int>(nic::RxDrop::kDuplicate)], 0u);
  EXPECT_EQ(hp.host[0]->qp_state(hp.qpn[0]), IBV_QPS_RTS);
  // The PSN wrapped: side 0 started at 0xFFFF00 and sent well over 256 packets.
  EXPECT_GT(c0.data_packets_sent, 600u * 1024 / mtu);
  EXPECT_GE(sends, 1);
}

INSTANTIATE_TEST_SUITE_P(Seeds, LossyLink, ::testing::Range(uint64_t{1}, uint64_t{13}));
INSTANTIATE_TEST_SUITE_P(Seeds, LossyLinkMtu, ::testing::Range(uint64_t{1}, uint64_t{4}));

// Receive copies a WRITE MIDDLE/LAST's payload into memory in the same pass as its ICRC
// (RoceHost::place_write_payload). A frame whose ICRC then fails must still be dropped, and
// the bytes it left must be overwritten before the WRITE completes. One bit of 5% of the
// requester's frames flips (anywhere past the Ethernet header: headers, payload or ICRC),
// over 10 seeds at MTU 1024 and 4096: every WRITE completes with the right bytes, corrupted
// frames are dropped (ICRC, or earlier when a header no longer parses), none is taken.
TEST(CorruptedFrames, WritesCompleteWithTheRightBytesWhenFramesAreCorrupted) {
  for (uint32_t mtu : {1024u, 4096u})
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " mtu " + std::to_string(mtu));
      nic::NicParams p;
      p.mtu_bytes = mtu;
      nic::ConnectOptions opt;
      opt.timeout = 8;  // ~1 ms
      HostPair hp(p, 25 * kBpsPerGbps, 2000, seed, opt);
      Rng rng(seed, "flips");
      uint64_t flipped = 0;
      hp.wire->set_mutator([&](int side, uint8_t* f, uint32_t len) {
        if (side != 0 || len <= 14 || rng.uniform() >= 0.05) return;
        const uint32_t at = 14 + static_cast<uint32_t>(rng.below(len - 14));
        f[at] ^= static_cast<uint8_t>(1u << rng.below(8));
        ++flipped;
      });
      constexpr size_t kBuf = 1 << 20;
      auto a = pattern(kBuf, seed), b = pattern(kBuf, seed + 100);
      auto expect_b = b;
      const auto amr = hp.reg(0, a), bmr = hp.reg(1, b);
      constexpr int kWrites = 60;
      for (int i = 0; i < kWrites; ++i) {
        const uint32_t len = static_cast<uint32_t>(1 + rng.below(5 * mtu));
        const uint64_t so = rng.below(kBuf - len), dof = rng.below(kBuf - len);
        std::memcpy(expect_b.data() + dof, a.data() + so, len);
        ibv_sge sge{reinterpret_cast<uint64_t>(a.data()) + so, len, amr.lkey};
        ibv_send_wr wr = make_wr(static_cast<uint64_t>(i), IBV_WR_RDMA_WRITE, &sge, 1,
                                 bmr.addr + dof, bmr.rkey);
        const ibv_send_wr* bad = nullptr;
        ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, &bad), 0);
      }
      std::vector<ibv_wc> wcs;
      ASSERT_TRUE(hp.wait_wcs(0, kWrites, wcs, 10 * kNsPerSec)) << wcs.size() << " of " << kWrites;
      for (const ibv_wc& wc : wcs) EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << wc.wr_id;
      EXPECT_TRUE(b == expect_b) << "WRITE data";
      const auto& c1 = hp.host[1]->counters();
      uint64_t dropped = 0;
      for (int i = 0; i < nic::kNumRxDrops; ++i)
        if (i != static_cast<int>(nic::RxDrop::kDuplicate) &&
            i != static_cast<int>(nic::RxDrop::kPsnOutOfSeq))
          dropped += c1.drops[i];
      EXPECT_GT(flipped, 0u);
      EXPECT_GT(c1.drops[static_cast<int>(nic::RxDrop::kIcrc)], 0u);
      // At most one drop per flip: flips in the fields the ICRC masks (TTL, TOS, UDP
      // checksum) or in the IP header checksum alone may pass or be dropped earlier.
      EXPECT_LE(dropped, flipped);
    }
}

// The early copy is visible, as documented: a WRITE MIDDLE whose payload was corrupted on
// the wire is counted as an ICRC drop, and its bytes are in memory until the resent packet
// overwrites them (here nothing is resent: every later frame is filtered out).
TEST(CorruptedFrames, AMiddlesPayloadLandsBeforeItsIcrcFailsAndTheQpWaitsForTheResend) {
  nic::NicParams p;
  p.mtu_bytes = 1024;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 1);
  int frame = 0;
  hp.wire->set_mutator([&](int side, uint8_t* f, uint32_t len) {
    if (side == 0 && frame++ == 1) f[len - 4 - 100] ^= 0x01;  // the second frame: a MIDDLE
  });
  hp.wire->set_filter([&](int side, const uint8_t*, uint32_t) { return side == 0 && frame > 2; });
  std::vector<uint8_t> a(4096, 0x11), b(4096, 0x00);
  const auto amr = hp.reg(0, a), bmr = hp.reg(1, b);
  ibv_sge sge{reinterpret_cast<uint64_t>(a.data()), 4096, amr.lkey};
  ibv_send_wr wr = make_wr(1, IBV_WR_RDMA_WRITE, &sge, 1, bmr.addr, bmr.rkey);
  const ibv_send_wr* bad = nullptr;
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, &bad), 0);
  hp.wire->run_until([] { return false; }, 200'000);
  const auto& c1 = hp.host[1]->counters();
  EXPECT_EQ(c1.drops[static_cast<int>(nic::RxDrop::kIcrc)], 1u);
  // Payload byte 1024 + (1024 - 100) of the MIDDLE (no pad: 1024 is a multiple of 4).
  EXPECT_EQ(b[1024 + 1024 - 100], 0x10) << "the MIDDLE's bytes went in with its ICRC pass";
  EXPECT_EQ(b[0], 0x11) << "the FIRST is in";
  EXPECT_EQ(b[2048], 0x00) << "nothing after the bad MIDDLE was taken";
  ibv_wc wc;
  EXPECT_EQ(hp.host[0]->poll_cq(hp.cq[0], 1, &wc), 0) << "the WRITE is not complete";
}

TEST(Retry, UnreachablePeerExhaustsRetriesWithRetryExcErr) {
  nic::NicParams p;
  nic::ConnectOptions opt;
  opt.timeout = 6;  // 262 us
  opt.retry_cnt = 3;
  HostPair hp(p, 25 * kBpsPerGbps, 1000, 5, opt);
  uint64_t sent = 0;
  hp.wire->set_filter([&](int side, const uint8_t*, uint32_t) {
    sent += side == 0;
    return side == 0;
  });
  auto a = pattern(8192, 3);
  std::vector<uint8_t> b(8192);
  const auto amr = hp.reg(0, a), bmr = hp.reg(1, b);
  ibv_sge sge{amr.addr, 8192, amr.lkey};
  ibv_send_wr wr[2] = {make_wr(1, IBV_WR_RDMA_WRITE, &sge, 1, bmr.addr, bmr.rkey),
                       make_wr(2, IBV_WR_RDMA_WRITE, &sge, 1, bmr.addr, bmr.rkey)};
  wr[0].next = &wr[1];
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], wr, nullptr), 0);
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, 2, wcs, kNsPerSec));
  EXPECT_EQ(wcs[0].status, IBV_WC_RETRY_EXC_ERR);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[1].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(hp.host[0]->qp_state(hp.qpn[0]), IBV_QPS_ERR);
  EXPECT_EQ(hp.host[0]->counters().timeouts, 4u);  // the first try, then 3 retries
  EXPECT_EQ(sent, 4u * 16);                        // 16 packets, sent 1 + retry_cnt times
  // Timed at 4.096 us x 2^6 per attempt (plus the send time of the first burst).
  EXPECT_GE(hp.wire->now(), 4 * nic::local_ack_timeout_ns(6));
  EXPECT_LT(hp.wire->now(), 5 * nic::local_ack_timeout_ns(6));
}

TEST(RemoteAccess, RkeyViolationGivesRemAccessErrAtRequester) {
  nic::NicParams p;
  HostPair hp(p);
  auto a = pattern(4096, 3);
  std::vector<uint8_t> b(4096, 0), ro(4096, 0);
  const auto amr = hp.reg(0, a), bmr = hp.reg(1, b);
  const auto romr = hp.reg(1, ro, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
  struct Case {
    uint64_t addr;
    uint32_t rkey, len;
    ibv_wr_opcode op;
  } cases[] = {
      {bmr.addr, bmr.rkey ^ 0x1, 100, IBV_WR_RDMA_WRITE},   // wrong key
      {bmr.addr + 4000, bmr.rkey, 200, IBV_WR_RDMA_WRITE},  // past the end
      {romr.addr, romr.rkey, 100, IBV_WR_RDMA_WRITE},       // no remote write right
      {bmr.addr + 4095, bmr.rkey, 2, IBV_WR_RDMA_READ},     // READ past the end
      {bmr.addr - 1, bmr.rkey, 10, IBV_WR_RDMA_READ},       // READ before the start
  };
  for (const Case& c : cases) {
    HostPair h(p);
    auto src = pattern(4096, 3);
    std::vector<uint8_t> dst(4096, 0), guard(4096, 0);
    const auto smr = h.reg(0, src);
    const auto dmr = h.reg(1, dst);
    const auto gmr = h.reg(1, guard, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
    const uint64_t base = c.rkey == romr.rkey ? gmr.addr : dmr.addr;
    const uint32_t rkey =
        c.rkey == romr.rkey ? gmr.rkey : (c.rkey == bmr.rkey ? dmr.rkey : dmr.rkey ^ 1);
    const uint64_t addr = base + (c.addr - (c.rkey == romr.rkey ? romr.addr : bmr.addr));
    ibv_sge sge{smr.addr, c.len, smr.lkey};
    ibv_send_wr wr = make_wr(9, c.op, &sge, 1, addr, rkey);
    ASSERT_EQ(h.host[0]->post_send(h.qpn[0], &wr, nullptr), 0);
    std::vector<ibv_wc> wcs;
    ASSERT_TRUE(h.wait_wcs(0, 1, wcs, 100 * kNsPerMs));
    EXPECT_EQ(wcs[0].status, IBV_WC_REM_ACCESS_ERR);
    EXPECT_EQ(h.host[0]->qp_state(h.qpn[0]), IBV_QPS_ERR);
    EXPECT_EQ(h.host[1]->counters().drops[static_cast<int>(nic::RxDrop::kRemoteAccess)], 1u);
    EXPECT_TRUE(std::all_of(dst.begin(), dst.end(), [](uint8_t x) { return x == 0; }));
    EXPECT_TRUE(std::all_of(guard.begin(), guard.end(), [](uint8_t x) { return x == 0; }));
    // The responder is not wedged: a fresh QP pair on the same hosts is not needed; its QP
    // still answers in-sequence traffic (checked in Fuzz tests).
  }
  (void)amr;
}

TEST(Rnr, EmptyReceiveQueueGetsRnrNakUntilAReceiveIsPosted) {
  nic::NicParams p;
  p.min_rnr_timer = 1;  // 10 us
  HostPair hp(p);
  auto a = pattern(3000, 3);
  std::vector<uint8_t> r(4096, 0);
  const auto amr = hp.reg(0, a), rmr = hp.reg(1, r);
  ibv_sge sge{amr.addr, 3000, amr.lkey};
  ibv_send_wr wr = make_wr(5, IBV_WR_SEND, &sge, 1);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
  std::vector<ibv_wc> wcs;
  EXPECT_FALSE(hp.wait_wcs(0, 1, wcs, 200 * kNsPerUs));
  EXPECT_GT(hp.host[1]->counters().rnr_naks_sent, 3u);
  EXPECT_GT(hp.host[0]->counters().rnr_naks_received, 3u);
  ibv_sge rs{rmr.addr, 4096, rmr.lkey};
  ibv_recv_wr rw{};
  rw.wr_id = 77;
  rw.sg_list = &rs;
  rw.num_sge = 1;
  ASSERT_EQ(hp.host[1]->post_recv(hp.qpn[1], &rw, nullptr), 0);
  ASSERT_TRUE(hp.wait_wcs(0, 1, wcs, 10 * kNsPerMs));
  EXPECT_EQ(wcs[0].status, IBV_WC_SUCCESS);
  std::vector<ibv_wc> rwcs;
  ASSERT_TRUE(hp.wait_wcs(1, 1, rwcs, kNsPerMs));
  EXPECT_EQ(rwcs[0].wr_id, 77u);
  EXPECT_EQ(rwcs[0].byte_len, 3000u);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), r.begin()));
}

TEST(Rnr, RnrRetryCountEndsInRnrRetryExcErr) {
  nic::NicParams p;
  p.min_rnr_timer = 1;
  nic::ConnectOptions opt;
  opt.rnr_retry = 2;
  HostPair hp(p, 100 * kBpsPerGbps, 1000, 1, opt);
  auto a = pattern(100, 3);
  const auto amr = hp.reg(0, a);
  ibv_sge sge{amr.addr, 100, amr.lkey};
  ibv_send_wr wr = make_wr(5, IBV_WR_SEND, &sge, 1);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, 1, wcs, 10 * kNsPerMs));
  EXPECT_EQ(wcs[0].status, IBV_WC_RNR_RETRY_EXC_ERR);
  EXPECT_EQ(hp.host[0]->counters().rnr_naks_received, 3u);
}

// An ACK timeout shorter than the round trip (as with Linux rxe's default against a slow
// peer): the requester rewinds, and the ACKs of the first transmission then arrive for PSNs
// beyond the rewound send position. They acknowledge data the responder has, so they must
// retire the WQE and move sending forward instead of being dropped as stale.
TEST(Retry, AcksForDataSentBeforeARewindAreAccepted) {
  nic::NicParams p;
  nic::ConnectOptions opt;
  opt.timeout = 1;  // 8.192 us, shorter than the 20 us round trip
  opt.retry_cnt = 7;
  HostPair hp(p, 100 * kBpsPerGbps, 10 * kNsPerUs, 3, opt);
  const size_t n = 256 * 1024;
  auto a = pattern(n, 5);
  std::vector<uint8_t> b(n, 0);
  const auto amr = hp.reg(0, a), bmr = hp.reg(1, b);
  ibv_sge sge{amr.addr, static_cast<uint32_t>(n), amr.lkey};
  ibv_send_wr wr = make_wr(1, IBV_WR_RDMA_WRITE, &sge, 1, bmr.addr, bmr.rkey);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, 1, wcs, 100 * kNsPerMs));
  EXPECT_EQ(wcs[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(a, b);
  const auto& c = hp.host[0]->counters();
  EXPECT_GE(c.timeouts, 1u);  // the scenario did rewind (and, before the fix, ended in
                              // IBV_WC_RETRY_EXC_ERR with the data incomplete)
}

// After a local ACK timeout the requester resends a small window (16 packets) first and
// opens it again as ACKs make progress, instead of resending max_outstanding_packets at once:
// against a peer that is not keeping up, every timeout would otherwise queue another full
// window behind the copies it has not read yet (the interop guest's window collapse).
TEST(Retry, AfterATimeoutTheResendStartsWithASmallWindow) {
  nic::NicParams p;
  nic::ConnectOptions opt;
  opt.timeout = 8;  // 1.05 ms
  HostPair hp(p, 25 * kBpsPerGbps, 1000, 3, opt);
  const size_t n = 256 * 1024;  // 256 packets, all inside the 1024-packet window
  const TimeNs t_out = nic::local_ack_timeout_ns(8);
  std::vector<TimeNs> sent_at;
  hp.wire->set_filter([&](int side, const uint8_t*, uint32_t) {
    if (side == 0) sent_at.push_back(hp.wire->now());
    return side == 1 && hp.wire->now() < t_out * 3 / 2;  // every ACK lost until 1.5 timeouts
  });
  const auto w = hp.write_once(n, 5, 100 * kNsPerMs);
  EXPECT_EQ(w.status, IBV_WC_SUCCESS);
  EXPECT_TRUE(w.data_ok);
  const size_t first_burst = static_cast<size_t>(
      std::count_if(sent_at.begin(), sent_at.end(), [&](TimeNs t) { return t < t_out; }));
  const size_t after_first_timeout = static_cast<size_t>(std::count_if(
      sent_at.begin(), sent_at.end(), [&](TimeNs t) { return t >= t_out && t < 2 * t_out; }));
  EXPECT_EQ(first_burst, 256u);
  EXPECT_EQ(after_first_timeout, 16u) << "the first resend is a 16-packet window";
  EXPECT_EQ(hp.host[0]->counters().timeouts, 2u);
}

// A window smaller than ack_every_packets: the packet that fills the window asks for an ACK,
// so the transfer never waits for the timer.
TEST(Window, AWindowBelowAckEveryPacketsAsksForAnAckWhenFull) {
  nic::NicParams p;
  p.max_outstanding_packets = 8;
  p.ack_every_packets = 64;
  nic::ConnectOptions opt;
  opt.timeout = 14;  // 67 ms: one timeout would dominate the run time
  HostPair hp(p, 25 * kBpsPerGbps, 1000, 3, opt);
  const auto w = hp.write_once(200 * 1024, 6, kNsPerSec);
  EXPECT_EQ(w.status, IBV_WC_SUCCESS);
  EXPECT_TRUE(w.data_ok);
  EXPECT_EQ(hp.host[0]->counters().timeouts, 0u);
  EXPECT_LT(hp.wire->now(), 2 * kNsPerMs)
      << "200 packets at ~0.4 us each plus RTTs, no 67 ms stall";
}

// DCQCN's window (RoceHost::set_window_bytes): at most that many payload bytes in flight per
// QP. On a 20 us round trip at 25 Gbps (~62 KB in flight unlimited), an 8 KiB window lets 8
// packets of 1 KiB out before the first ACK returns, bounds the rate at window / RTT, and the
// transfer completes without a timeout (the packet that fills the window asks for an ACK).
TEST(Window, ByteWindowCapsInFlightPayload) {
  for (const uint64_t window : {uint64_t{0}, uint64_t{8 * 1024}}) {
    SCOPED_TRACE("window " + std::to_string(window));
    nic::NicParams p;
    nic::ConnectOptions opt;
    opt.timeout = 14;
    HostPair hp(p, 25 * kBpsPerGbps, 10 * kNsPerUs, 3, opt);
    hp.host[0]->set_window_bytes(window);
    const size_t n = 256 * 1024;
    uint64_t data_before_first_ack = 0;
    bool acked = false;
    hp.wire->set_inspector([&](int side, const uint8_t*, uint32_t) {
      if (side == 1) acked = true;
      if (side == 0 && !acked) ++data_before_first_ack;
    });
    const auto w = hp.write_once(n, 8, kNsPerSec);
    EXPECT_EQ(w.status, IBV_WC_SUCCESS);
    EXPECT_TRUE(w.data_ok);
    EXPECT_EQ(hp.host[0]->counters().timeouts, 0u);
    const double rtt_s = 20e-6;
    if (window == 0) {
      EXPECT_GT(data_before_first_ack, 50u) << "unlimited: a round trip's worth goes out";
    } else {
      EXPECT_LE(data_before_first_ack, 8u) << "8 KiB window: 8 packets of 1 KiB";
      // 256 KiB at <= 8 KiB per 20 us round trip takes at least 32 round trips.
      EXPECT_GE(static_cast<double>(hp.wire->now()) / 1e9, 0.9 * (n / 8192.0) * rtt_s);
    }
  }
}

// The responder's view a stalled peer is diagnosed by (RoceHost::responder_view; the perftest
// tools' stall_report): caught up only when every PSN it took was answered. A WRITE that
// completed, then a READ, leave it caught up (the last ACK, then the last READ response);
// a WRITE whose frames stop arriving after 3 of 8 (none asking for an ACK) leaves 3 PSNs
// taken and unanswered, and the requester's resends never arrive either.
TEST(ResponderView, CaughtUpOnlyWhenEveryPsnTakenWasAnswered) {
  nic::NicParams p;
  p.mtu_bytes = 1024;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 1, {}, 100, 500);
  nic::ResponderView v = hp.host[1]->responder_view(hp.qpn[1]);
  EXPECT_EQ(v.expected_psn, 100u);
  EXPECT_FALSE(v.answered_any);
  EXPECT_FALSE(v.caught_up()) << "nothing taken: nothing to be caught up on";
  EXPECT_EQ(hp.host[1]->responder_view(0xABCDEF).expected_psn, 0u) << "no such QP";

  const auto w = hp.write_once(8192, 7, 10'000'000);
  ASSERT_EQ(w.status, IBV_WC_SUCCESS);
  v = hp.host[1]->responder_view(hp.qpn[1]);
  EXPECT_EQ(v.expected_psn, 108u);
  EXPECT_TRUE(v.answered_any);
  EXPECT_EQ(v.answered_psn, 107u);
  EXPECT_FALSE(v.answer_pending);
  EXPECT_TRUE(v.caught_up());

  std::vector<uint8_t> a(4096, 0), b(4096, 0x5A);
  const auto amr = hp.reg(0, a), bmr = hp.reg(1, b);
  ibv_sge rsge{amr.addr, 4096, amr.lkey};
  ibv_send_wr rd = make_wr(2, IBV_WR_RDMA_READ, &rsge, 1, bmr.addr, bmr.rkey);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &rd, nullptr), 0);
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, 1, wcs, 10'000'000));
  ASSERT_EQ(wcs[0].status, IBV_WC_SUCCESS);
  v = hp.host[1]->responder_view(hp.qpn[1]);
  EXPECT_EQ(v.expected_psn, 112u) << "a READ of 4 responses takes 4 PSNs";
  EXPECT_EQ(v.answered_psn, 111u) << "its READ_RESPONSE_LAST";
  EXPECT_TRUE(v.caught_up());

  int frames = 0;
  hp.wire->set_filter([&](int side, const uint8_t*, uint32_t) { return side == 0 && ++frames > 3; });
  std::vector<uint8_t> c(8192, 0x33), d(8192, 0);
  const auto cmr = hp.reg(0, c), dmr = hp.reg(1, d);
  ibv_sge wsge{cmr.addr, 8192, cmr.lkey};
  ibv_send_wr wr = make_wr(3, IBV_WR_RDMA_WRITE, &wsge, 1, dmr.addr, dmr.rkey);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
  hp.wire->run_until([] { return false; }, 200'000'000);  // past several retransmit timeouts
  EXPECT_GT(hp.host[0]->counters().timeouts, 0u) << "the requester did resend";
  v = hp.host[1]->responder_view(hp.qpn[1]);
  EXPECT_EQ(v.expected_psn, 115u);
  EXPECT_EQ(v.answered_psn, 111u);
  EXPECT_FALSE(v.answer_pending);
  EXPECT_FALSE(v.caught_up()) << "3 PSNs taken and never answered";
}

}  // namespace
}  // namespace rocemu::test
