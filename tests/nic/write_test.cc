// write_test.cc — milestone 1: two RoceHosts back to back RDMA-WRITE 4 MB; the data lands
// intact, every frame on the wire carries a valid ICRC, segmentation follows the MTU.
#include <gtest/gtest.h>
#include <rte_errno.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "common/wire.h"
#include "nic/packet.h"
#include "tests/nic/host_pair.h"

namespace rocemu::test {
namespace {

class WriteAcrossMtus : public ::testing::TestWithParam<uint32_t> {};

TEST_P(WriteAcrossMtus, Writes4MiBIntactWithValidIcrcOnEveryFrame) {
  nic::NicParams p;
  p.mtu_bytes = GetParam();
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 7);
  constexpr size_t kBytes = 4 << 20;
  auto src = pattern(kBytes, 11);
  std::vector<uint8_t> dst(kBytes, 0);
  const auto smr = hp.reg(0, src);
  const auto dmr = hp.reg(1, dst);
  ASSERT_NE(smr.lkey, 0u);
  ASSERT_NE(dmr.rkey, 0u);

  uint64_t frames = 0, bad_icrc = 0, data_frames = 0, oversize = 0;
  hp.wire->set_inspector([&](int side, const uint8_t* f, uint32_t len) {
    ++frames;
    if (!roce_icrc_valid(f, len)) ++bad_icrc;
    if (side == 0) {
      ++data_frames;
      if (len > nic::frame_bytes(16, p.mtu_bytes)) ++oversize;
      const auto* ip = reinterpret_cast<const wire::Ipv4*>(f + wire::kIpOff);
      EXPECT_EQ(ip->ttl, 64);
      EXPECT_EQ(ip->frag(), 0x4000);  // DF
      EXPECT_EQ(ip->checksum(), ip->compute_checksum());
      const auto* udp = reinterpret_cast<const wire::Udp*>(f + wire::kUdpOff);
      EXPECT_EQ(udp->checksum(), 0);
      EXPECT_GE(udp->src_port(), 0xC000);
      EXPECT_EQ(reinterpret_cast<const wire::Bth*>(f + wire::kBthOff)->pkey(), 0xFFFF);
    }
  });

  // 4 messages of 1 MiB.
  constexpr uint32_t kMsg = 1 << 20;
  for (uint32_t i = 0; i < 4; ++i) {
    ibv_sge sge{reinterpret_cast<uint64_t>(src.data()) + i * kMsg, kMsg, smr.lkey};
    ibv_send_wr wr = make_wr(i, IBV_WR_RDMA_WRITE, &sge, 1, dmr.addr + i * kMsg, dmr.rkey);
    const ibv_send_wr* bad = nullptr;
    ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, &bad), 0);
  }
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, 4, wcs, 100 * kNsPerMs));
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(wcs[i].status, IBV_WC_SUCCESS);
    EXPECT_EQ(wcs[i].opcode, IBV_WC_RDMA_WRITE);
    EXPECT_EQ(wcs[i].wr_id, i);
  }
  EXPECT_TRUE(src == dst);
  EXPECT_EQ(bad_icrc, 0u);
  EXPECT_EQ(oversize, 0u);
  EXPECT_EQ(data_frames, kBytes / p.mtu_bytes);
  EXPECT_EQ(hp.host[1]->counters().drops_total(), 0u);
  EXPECT_EQ(hp.host[0]->counters().drops_total(), 0u);
  EXPECT_EQ(hp.host[0]->counters().retransmitted_packets, 0u);
  // Goodput close to the line: 4 MiB at 25 Gbps takes >= 1.34 ms of wire time.
  const double gbps = kBytes * 8.0 / static_cast<double>(hp.wire->now());
  EXPECT_GT(gbps, 0.85 * 25 * static_cast<double>(p.mtu_bytes) / (p.mtu_bytes + 78 + 24));
  EXPECT_LT(gbps, 25.0);
}

INSTANTIATE_TEST_SUITE_P(Mtus, WriteAcrossMtus, ::testing::Values(256u, 1024u, 4096u));

}  // namespace
}  // namespace rocemu::test

namespace rocemu::test {
namespace {

TEST(Acks, OneAckPerAckRequestCoalescedAndMsnCountsMessages) {
  nic::NicParams p;
  p.ack_every_packets = 64;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 3);
  auto src = pattern(1 << 20, 1);
  std::vector<uint8_t> dst(src.size());
  const auto smr = hp.reg(0, src), dmr = hp.reg(1, dst);
  uint32_t last_msn = 0, acks = 0;
  hp.wire->set_inspector([&](int side, const uint8_t* f, uint32_t) {
    if (side == 1 && f[wire::kBthOff] == wire::kRcAcknowledge) {
      ++acks;
      last_msn = wire::detail::get24(f + wire::kRoceHeadersBytes + 1);
    }
  });
  // Three messages: 1 MiB (1024 packets, AckReq every 64th and on the last), 2 small ones.
  const uint32_t lens[] = {1 << 20, 100, 200};
  for (uint32_t i = 0; i < 3; ++i) {
    ibv_sge sge{smr.addr, lens[i], smr.lkey};
    ibv_send_wr wr = make_wr(i, IBV_WR_RDMA_WRITE, &sge, 1, dmr.addr, dmr.rkey);
    ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
  }
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, 3, wcs, 10 * kNsPerMs));
  EXPECT_EQ(last_msn, 3u);
  EXPECT_LE(acks, 1024u / 64 + 2);  // coalesced: never more than the AckReqs
  EXPECT_GE(acks, 3u);
  EXPECT_EQ(hp.host[1]->counters().acks_sent, acks);
}

TEST(MultipleQps, QpsSharingALinkProgressRoundRobin) {
  nic::NicParams p;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 4);
  // Three more QP pairs on the same two hosts.
  uint32_t qa[4] = {hp.qpn[0]}, qb[4] = {hp.qpn[1]};
  for (int i = 1; i < 4; ++i) {
    nic::QpInitAttr a;
    a.pd = hp.pd[0];
    a.send_cq = a.recv_cq = hp.cq[0];
    qa[i] = hp.host[0]->create_qp(a);
    a.pd = hp.pd[1];
    a.send_cq = a.recv_cq = hp.cq[1];
    qb[i] = hp.host[1]->create_qp(a);
    nic::ConnectOptions opt;
    ASSERT_EQ(nic::connect_rc(*hp.host[0], qa[i], hp.host[1]->local_info(qb[i]), opt), 0);
    ASSERT_EQ(nic::connect_rc(*hp.host[1], qb[i], hp.host[0]->local_info(qa[i]), opt), 0);
  }
  auto src = pattern(1 << 20, 1);
  std::vector<uint8_t> dst(4u << 20);
  const auto smr = hp.reg(0, src), dmr = hp.reg(1, dst);
  for (int i = 0; i < 4; ++i) {
    ibv_sge sge{smr.addr, 1u << 20, smr.lkey};
    ibv_send_wr wr = make_wr(static_cast<uint64_t>(i), IBV_WR_RDMA_WRITE, &sge, 1,
                             dmr.addr + (uint64_t{1} << 20) * i, dmr.rkey);
    ASSERT_EQ(hp.host[0]->post_send(qa[i], &wr, nullptr), 0);
  }
  std::vector<ibv_wc> wcs;
  std::vector<TimeNs> done_at;
  ASSERT_TRUE(hp.wire->run_until(
      [&] {
        ibv_wc wc[4];
        const int n = hp.host[0]->poll_cq(hp.cq[0], 4, wc);
        for (int k = 0; k < n; ++k) {
          wcs.push_back(wc[k]);
          done_at.push_back(hp.wire->now());
        }
        return wcs.size() == 4;
      },
      10 * kNsPerMs));
  for (const auto& wc : wcs) EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin() + (1 << 20) * i)) << "QP " << i;
  // Interleaved packet by packet, the four finish within a few packet times of each other.
  EXPECT_LT(done_at.back() - done_at.front(), done_at.front() / 50);
}

}  // namespace
}  // namespace rocemu::test

namespace rocemu::test {
namespace {

// NicParams::random_qpns (the perftest tools and rocemu-interop): QPNs are unpredictable
// from off the path, differ per host and seed, are never 0, 1 or 0xFFFFFF, and the QPs work
// (and are found again after destroy and re-create) as with 0x11, 0x12, ...
// ibv_reg_mr_iova: regions named by chosen I/O virtual addresses. Local SGEs, RETH addresses
// of WRITE and READ, and receive SGEs are all in the IOVA space and land at the right host
// bytes; an address just outside [iova, iova + length) is a remote access error, and no host
// address reaches the wire (the jobs rely on it for byte-identical captures).
TEST(IovaRegions, WriteReadAndSendAddressTheRegionByIovaOnly) {
  nic::NicParams p;
  HostPair hp(p);
  constexpr uint64_t kIovaA = 0x100000000000ull, kIovaB = 0x200000000000ull;
  constexpr size_t n = 64 * 1024;
  auto src = pattern(n, 5);
  std::vector<uint8_t> back(n, 0), dst(2 * n, 0), rbuf(n, 0);
  const int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  const auto a = hp.host[0]->reg_mr_iova(hp.pd[0], src.data(), n, kIovaA, all);
  const auto a2 = hp.host[0]->reg_mr_iova(hp.pd[0], back.data(), n, kIovaA + (1ull << 32), all);
  const auto b = hp.host[1]->reg_mr_iova(hp.pd[1], dst.data(), dst.size(), kIovaB, all);
  const auto r = hp.host[1]->reg_mr_iova(hp.pd[1], rbuf.data(), n, kIovaB + (1ull << 32), all);
  ASSERT_NE(a.lkey, 0u);
  ASSERT_NE(b.rkey, 0u);
  EXPECT_EQ(a.addr, kIovaA);
  EXPECT_EQ(b.addr, kIovaB);
  EXPECT_EQ(hp.host[0]->reg_mr_iova(hp.pd[0], src.data(), n, ~0ull - 10, all).lkey, 0u)
      << "iova + length overflowing";

  // A local SGE by host address is outside the IOVA space: refused at post time.
  ibv_sge host_sge{reinterpret_cast<uint64_t>(src.data()), 8, a.lkey};
  auto local = make_wr(5, IBV_WR_SEND, &host_sge, 1);
  EXPECT_EQ(hp.host[0]->post_send(hp.qpn[0], &local, nullptr), EINVAL);

  // WRITE the second half of src into dst at offset n, READ dst's second half into back.
  ibv_sge ws{kIovaA + n / 2, n / 2, a.lkey};
  auto w = make_wr(1, IBV_WR_RDMA_WRITE, &ws, 1, kIovaB + n, b.rkey);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &w, nullptr), 0);
  ibv_sge rs{a2.addr, n / 2, a2.lkey};
  auto rd = make_wr(2, IBV_WR_RDMA_READ, &rs, 1, kIovaB + n, b.rkey);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &rd, nullptr), 0);
  // SEND the first half into h1's receive buffer, addressed by its IOVA + 16.
  ibv_sge recv_sge{r.addr + 16, n - 16, r.lkey};
  ibv_recv_wr rwr{};
  rwr.wr_id = 9;
  rwr.sg_list = &recv_sge;
  rwr.num_sge = 1;
  ASSERT_EQ(hp.host[1]->post_recv(hp.qpn[1], &rwr, nullptr), 0);
  ibv_sge ss{kIovaA, n / 2, a.lkey};
  auto snd = make_wr(3, IBV_WR_SEND, &ss, 1);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &snd, nullptr), 0);
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, 3, wcs, 10 * kNsPerMs));
  for (const auto& wc : wcs) EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << wc.wr_id;
  EXPECT_TRUE(std::equal(src.begin() + n / 2, src.end(), dst.begin() + n));
  EXPECT_TRUE(std::all_of(dst.begin(), dst.begin() + n, [](uint8_t v) { return v == 0; }));
  EXPECT_TRUE(std::equal(src.begin() + n / 2, src.end(), back.begin()));
  EXPECT_TRUE(std::equal(src.begin(), src.begin() + n / 2, rbuf.begin() + 16));

  // One byte below the region: refused by the responder (NAK remote access).
  ibv_sge bs{kIovaA, 8, a.lkey};
  auto bad = make_wr(4, IBV_WR_RDMA_WRITE, &bs, 1, kIovaB - 1, b.rkey);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &bad, nullptr), 0);
  wcs.clear();
  ASSERT_TRUE(hp.wait_wcs(0, 1, wcs, 10 * kNsPerMs));
  EXPECT_EQ(wcs[0].status, IBV_WC_REM_ACCESS_ERR);
}

TEST(RandomQpns, KeyedPerHostAndSeedAndTheQpsWork) {
  nic::NicParams p;
  EXPECT_EQ(HostPair(p).qpn[0], 0x11u) << "off: rxe's numbering";
  p.random_qpns = true;
  std::set<uint32_t> seen;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    HostPair hp(p, 25 * kBpsPerGbps, 1000, seed);
    for (int side = 0; side < 2; ++side) {
      const uint32_t q = hp.qpn[side];
      EXPECT_GE(q, 1u << 17) << seed;
      EXPECT_LT(q, 0xFFFFFFu - (1u << 16)) << seed;
      EXPECT_EQ(hp.host[side]->qp_slot(q), 0);
      EXPECT_EQ(hp.host[side]->qp_slot(q ^ 1), -1) << "a neighbouring number is no QP";
      EXPECT_EQ(hp.host[side]->qp_slot(0x11), -1);
      seen.insert(q);
    }
    if (seed <= 3) {
      const auto w = hp.write_once(64 * 1024, seed, 10 * kNsPerMs);
      EXPECT_EQ(w.status, IBV_WC_SUCCESS);
      EXPECT_TRUE(w.data_ok);
    }
  }
  EXPECT_GE(seen.size(), 39u) << "40 QPNs from 20 seeds x 2 hosts should (almost) all differ";
  // A destroyed QP's slot is reused with the same keyed number.
  HostPair hp(p);
  nic::RoceHost& h = *hp.host[0];
  nic::QpInitAttr a;
  a.pd = hp.pd[0];
  a.send_cq = a.recv_cq = hp.cq[0];
  const uint32_t second = h.create_qp(a);
  EXPECT_EQ(h.qp_slot(second), 1);
  EXPECT_EQ(h.destroy_qp(second), 0);
  EXPECT_EQ(h.create_qp(a), second);
  // Several destroyed, in any order: each creation takes the lowest free slot.
  std::vector<uint32_t> q;  // slots 2..7
  for (int i = 0; i < 6; ++i) q.push_back(h.create_qp(a));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(h.qp_slot(q[static_cast<size_t>(i)]), i + 2);
  for (int i : {4, 1, 5, 2}) EXPECT_EQ(h.destroy_qp(q[static_cast<size_t>(i)]), 0);  // slots 6 3 7 4
  EXPECT_EQ(h.create_qp(a), q[1]);
  EXPECT_EQ(h.create_qp(a), q[2]);
  EXPECT_EQ(h.destroy_qp(q[0]), 0);  // slot 2, freed after the others
  EXPECT_EQ(h.create_qp(a), q[0]);
  EXPECT_EQ(h.create_qp(a), q[4]);
  EXPECT_EQ(h.create_qp(a), q[5]);
}

// A QP's queues hold exactly the work requests asked for (their rings round their slots up
// to a power of two: not what they hold), and run them; depths beyond kMaxQpWr (rxe's
// limit) are refused.
TEST(QueueDepth, AQpHoldsTheWorkRequestsAskedForNoMore) {
  nic::NicParams p;
  HostPair hp(p);
  nic::QpInitAttr a[2];
  uint32_t q[2];
  for (int i = 0; i < 2; ++i) {
    a[i].pd = hp.pd[i];
    a[i].send_cq = a[i].recv_cq = hp.cq[i];
    a[i].max_send_wr = 3;
    a[i].max_recv_wr = 5;
    nic::QpInitAttr big = a[i];
    big.max_send_wr = nic::kMaxQpWr + 1;
    EXPECT_EQ(hp.host[i]->create_qp(big), 0u);
    big.max_send_wr = 3;
    big.max_recv_wr = nic::kMaxQpWr + 1;
    EXPECT_EQ(hp.host[i]->create_qp(big), 0u);
    q[i] = hp.host[i]->create_qp(a[i]);
    ASSERT_NE(q[i], 0u);
  }
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(nic::connect_rc(*hp.host[i], q[i], hp.host[1 - i]->local_info(q[1 - i]), {}), 0);
  std::vector<uint8_t> src = pattern(3 * 4096, 3), rbuf(5 * 4096, 0);
  const auto smr = hp.reg(0, src), rmr = hp.reg(1, rbuf);
  uint32_t posted = 0;  // receives
  // Each round queues receives up to the depth and three SENDs: the rings (4 and 8 slots)
  // wrap in the second round.
  for (uint32_t round = 0; round < 4; ++round) {
    SCOPED_TRACE(round);
    for (;;) {
      ibv_sge rsge{rmr.addr + (posted % 5) * 4096, 4096, rmr.lkey};
      ibv_recv_wr rwr{};
      rwr.wr_id = posted;
      rwr.sg_list = &rsge;
      rwr.num_sge = 1;
      const int rc = hp.host[1]->post_recv(q[1], &rwr, nullptr);
      if (rc != 0) {
        EXPECT_EQ(rc, ENOMEM);
        break;
      }
      ++posted;
    }
    EXPECT_EQ(posted, 5 + 3 * round) << "the receive queue holds 5";
    ibv_sge sge[4];
    for (uint32_t k = 0; k < 4; ++k) {
      sge[k] = {smr.addr + (k % 3) * 4096, 4096, smr.lkey};
      ibv_send_wr wr = make_wr(10 * round + k, IBV_WR_SEND, &sge[k], 1, 0, 0);
      wr.send_flags = IBV_SEND_SIGNALED;
      EXPECT_EQ(hp.host[0]->post_send(q[0], &wr, nullptr), k < 3 ? 0 : ENOMEM) << k;
    }
    std::vector<ibv_wc> sent, got;
    ASSERT_TRUE(hp.wait_wcs(0, 3, sent, 10 * kNsPerMs));
    ASSERT_TRUE(hp.wait_wcs(1, 3, got, 10 * kNsPerMs));
    for (uint32_t k = 0; k < 3; ++k) {
      EXPECT_EQ(sent[k].status, IBV_WC_SUCCESS);
      EXPECT_EQ(sent[k].wr_id, 10 * round + k);
      EXPECT_EQ(got[k].status, IBV_WC_SUCCESS);
      EXPECT_EQ(got[k].wr_id, 3 * round + k) << "receives are used in the order posted";
      const uint64_t at = got[k].wr_id % 5 * 4096;
      EXPECT_TRUE(std::equal(src.begin() + k * 4096, src.begin() + (k + 1) * 4096,
                             rbuf.begin() + static_cast<ptrdiff_t>(at)));
    }
  }
}

}  // namespace
}  // namespace rocemu::test

namespace rocemu::test {
namespace {

// NicParams::elide_payload (virtual-time runs nobody verifies): the same WRITE, READ, SEND and
// fetch & add complete at the same engine times, over the same number of frames and wire
// bytes, as with every byte copied; the WRITE, READ and SEND move no byte, the atomic still
// moves its 8. The eliding hosts' mbufs have room for headers only (kElidedFrameRoomBytes),
// as the virtual-time workload job gives them.
rte_mempool* header_mempool() {
  static rte_mempool* pool = [] {
    (void)test_mempool();  // EAL
    return rte_pktmbuf_pool_create("test_header_pool", 4095, 256, 0,
                                   RTE_PKTMBUF_HEADROOM + nic::kElidedFrameRoomBytes,
                                   SOCKET_ID_ANY);
  }();
  EXPECT_NE(pool, nullptr) << rte_strerror(rte_errno);
  return pool;
}

struct ElideRun {
  std::vector<ibv_wc> wcs;
  std::vector<TimeNs> done_ns;
  uint64_t frames = 0;
  uint64_t wire_bytes = 0;
  std::vector<uint8_t> src, dst, back, rbuf;
  uint64_t counter = 5, fetched = 0;
};

ElideRun run_mixed_ops(bool elide) {
  nic::NicParams p;
  p.mtu_bytes = 1024;
  p.elide_payload = elide;
  nic::ConnectOptions opt;
  opt.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
               IBV_ACCESS_REMOTE_ATOMIC;
  HostPair hp(p, 25 * kBpsPerGbps, 1000, 3, opt, -1, -1, elide ? header_mempool() : nullptr);
  constexpr size_t n = 256 * 1024 + 100;  // not a multiple of the MTU: a short last packet
  ElideRun r;
  r.src = pattern(n, 9);
  r.dst.assign(n, 0);
  r.back.assign(n, 0);
  r.rbuf.assign(n, 0);
  const auto a = hp.reg(0, r.src), bk = hp.reg(0, r.back);
  const auto d = hp.reg(1, r.dst), rb = hp.reg(1, r.rbuf);
  const auto c = hp.host[1]->reg_mr(hp.pd[1], &r.counter, 8, opt.access);
  const auto f = hp.host[0]->reg_mr(hp.pd[0], &r.fetched, 8, opt.access);
  hp.wire->set_inspector([&](int, const uint8_t*, uint32_t len) {
    ++r.frames;
    r.wire_bytes += len;
  });
  ibv_recv_wr rwr{};
  ibv_sge recv_sge{rb.addr, static_cast<uint32_t>(n), rb.lkey};
  rwr.wr_id = 9;
  rwr.sg_list = &recv_sge;
  rwr.num_sge = 1;
  EXPECT_EQ(hp.host[1]->post_recv(hp.qpn[1], &rwr, nullptr), 0);
  ibv_sge ws{a.addr, static_cast<uint32_t>(n), a.lkey};
  auto w = make_wr(1, IBV_WR_RDMA_WRITE, &ws, 1, d.addr, d.rkey);
  ibv_sge rs{bk.addr, static_cast<uint32_t>(n), bk.lkey};
  auto rd = make_wr(2, IBV_WR_RDMA_READ, &rs, 1, d.addr, d.rkey);
  ibv_sge ss{a.addr, static_cast<uint32_t>(n), a.lkey};
  auto snd = make_wr(3, IBV_WR_SEND, &ss, 1);
  ibv_sge fs{f.addr, 8, f.lkey};
  auto fa = make_wr(4, IBV_WR_ATOMIC_FETCH_AND_ADD, &fs, 1);
  fa.wr.atomic.remote_addr = c.addr;
  fa.wr.atomic.rkey = c.rkey;
  fa.wr.atomic.compare_add = 3;
  for (ibv_send_wr* x : {&w, &rd, &snd, &fa})
    EXPECT_EQ(hp.host[0]->post_send(hp.qpn[0], x, nullptr), 0);
  while (r.wcs.size() < 4) {
    const size_t had = r.wcs.size();
    if (!hp.wait_wcs(0, had + 1, r.wcs, 100 * kNsPerMs)) break;
    r.done_ns.resize(r.wcs.size(), hp.wire->now());
  }
  std::vector<ibv_wc> recv;
  EXPECT_TRUE(hp.wait_wcs(1, 1, recv, 100 * kNsPerMs));
  EXPECT_EQ(recv.size(), 1u);
  if (!recv.empty()) {
    EXPECT_EQ(recv[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(recv[0].byte_len, n);
  }
  EXPECT_EQ(hp.host[0]->counters().drops_total(), 0u);
  EXPECT_EQ(hp.host[1]->counters().drops_total(), 0u);
  return r;
}

TEST(ElidedPayload, SameCompletionsAtTheSameTimesButNoBytesMovedExceptAtomics) {
  const ElideRun copied = run_mixed_ops(false), elided = run_mixed_ops(true);
  ASSERT_EQ(copied.wcs.size(), 4u);
  ASSERT_EQ(elided.wcs.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(elided.wcs[i].wr_id, copied.wcs[i].wr_id);
    EXPECT_EQ(elided.wcs[i].status, IBV_WC_SUCCESS);
    EXPECT_EQ(elided.wcs[i].opcode, copied.wcs[i].opcode);
    EXPECT_EQ(elided.done_ns[i], copied.done_ns[i]) << "completion " << i;
  }
  EXPECT_EQ(elided.frames, copied.frames);
  EXPECT_EQ(elided.wire_bytes, copied.wire_bytes) << "elided frames are as long on the wire";
  // Copied: every byte where it belongs.
  EXPECT_EQ(copied.dst, copied.src);
  EXPECT_EQ(copied.back, copied.src);
  EXPECT_EQ(copied.rbuf, copied.src);
  // Elided: WRITE, READ and SEND left their targets as they were.
  const auto zero = [](const std::vector<uint8_t>& v) {
    return std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; });
  };
  EXPECT_TRUE(zero(elided.dst));
  EXPECT_TRUE(zero(elided.back));
  EXPECT_TRUE(zero(elided.rbuf));
  // The atomic is carried in headers: it still happens.
  EXPECT_EQ(copied.counter, 8u);
  EXPECT_EQ(copied.fetched, 5u);
  EXPECT_EQ(elided.counter, 8u);
  EXPECT_EQ(elided.fetched, 5u);
}

// completions_waiting() is what the host's CQs hold, whichever CQ (a poller skips reading
// them when it is 0): completions add to it, polls take from it.
TEST(Completions, WaitingCountsWhatEveryCqHolds) {
  nic::NicParams p;
  HostPair hp(p);
  std::vector<uint8_t> a = pattern(3000, 4), b(3000, 0), r(3000, 0);
  const auto amr = hp.reg(0, a), bmr = hp.reg(1, b), rmr = hp.reg(1, r);
  EXPECT_EQ(hp.host[0]->completions_waiting(), 0u);
  ibv_recv_wr rwr{};
  ibv_sge rs{rmr.addr, 3000, rmr.lkey};
  rwr.sg_list = &rs;
  rwr.num_sge = 1;
  ASSERT_EQ(hp.host[1]->post_recv(hp.qpn[1], &rwr, nullptr), 0);
  ibv_sge s{amr.addr, 1000, amr.lkey};
  for (uint64_t i = 0; i < 3; ++i) {
    auto w = make_wr(i, IBV_WR_RDMA_WRITE, &s, 1, bmr.addr, bmr.rkey);
    ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &w, nullptr), 0);
  }
  auto snd = make_wr(3, IBV_WR_SEND, &s, 1);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &snd, nullptr), 0);
  ASSERT_TRUE(hp.wire->run_until(
      [&] { return hp.host[0]->completions_waiting() == 4 && hp.host[1]->completions_waiting() == 1; },
      10 * kNsPerMs));
  ibv_wc wc[4];
  EXPECT_EQ(hp.host[0]->poll_cq(hp.cq[0], 3, wc), 3);
  EXPECT_EQ(hp.host[0]->completions_waiting(), 1u);
  EXPECT_EQ(hp.host[0]->poll_cq(hp.cq[0], 4, wc), 1);
  EXPECT_EQ(hp.host[0]->completions_waiting(), 0u);
  EXPECT_EQ(hp.host[0]->poll_cq(hp.cq[0], 4, wc), 0);
  EXPECT_EQ(hp.host[1]->poll_cq(hp.cq[1], 4, wc), 1);
  EXPECT_EQ(wc[0].opcode, IBV_WC_RECV);
  EXPECT_EQ(hp.host[1]->completions_waiting(), 0u);
}

// Header-only mbufs are for eliding hosts: a host that copies payloads refuses them at
// construction, an eliding one refuses UD QPs (datagrams move in full), and a host that
// copies payloads drops a frame whose mbuf holds fewer bytes than its length, counted.
TEST(ElidedPayload, HeaderOnlyMbufsOnlyWhereNothingReadsPayloads) {
  Topology topo;
  topo.add_node("h0", NodeKind::kHost);
  topo.add_node("h1", NodeKind::kHost);
  topo.add_link(0, 1, 25 * kBpsPerGbps, 1000);
  nic::NicParams copying, eliding;
  eliding.elide_payload = true;
  try {
    nic::RoceHost h(copying, topo, 0, header_mempool(), 1);
    ADD_FAILURE() << "a host that copies payloads took header-only mbufs";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("mtu_bytes"), std::string::npos) << e.what();
  }
  nic::RoceHost h(eliding, topo, 0, header_mempool(), 1);
  nic::QpInitAttr a;
  a.pd = h.alloc_pd();
  a.send_cq = a.recv_cq = h.create_cq(16);
  a.qp_type = IBV_QPT_UD;
  EXPECT_EQ(h.create_qp(a), 0u) << "UD datagrams need MTU-sized mbufs";
  a.qp_type = IBV_QPT_RC;
  EXPECT_NE(h.create_qp(a), 0u);

  // An eliding peer's data frame (64 bytes held, 1,082 long) at a host that copies payloads.
  nic::RoceHost reader(copying, topo, 1, test_mempool(), 1);
  rte_mbuf* m = rte_pktmbuf_alloc(test_mempool());
  ASSERT_NE(m, nullptr);
  std::memset(rte_pktmbuf_append(m, 64), 0, 64);
  m->pkt_len = 1082;
  reader.rx(0, &m, 1, 0);
  EXPECT_EQ(reader.counters().drops[static_cast<int>(nic::RxDrop::kTruncated)], 1u);
  EXPECT_EQ(reader.counters().rx_packets, 1u);
}

}  // namespace
}  // namespace rocemu::test
