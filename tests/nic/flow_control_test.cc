// flow_control_test.cc — what the endpoint does for the layers around it: obeys 802.1Qbb
// PFC frames per priority (pause of quanta x 512 bit times at the link rate, XON with
// quanta 0) while other priorities keep flowing; sends data in the priority its DSCP maps
// to and control in the control priority; marks data ECT(0) when ECN-capable; reports
// CE-marked arrivals to the congestion hooks and sends the CNP they ask for (annex
// A17.9.3); paces a QP at the rate set by set_qp_rate_bps and reports the release time in
// next_deadline().
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstdlib>

#include "common/wire.h"
#include "nic/packet.h"
#include "tests/nic/host_pair.h"

namespace rocemu::test {
namespace {

rte_mbuf* pfc_frame(uint8_t prio, uint16_t quanta) {
  rte_mbuf* m = rte_pktmbuf_alloc(test_mempool());
  auto* f = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, 60));
  if (f == nullptr) std::abort();
  std::memset(f, 0, 60);
  auto* eth = reinterpret_cast<wire::Ethernet*>(f);
  std::memcpy(eth->dst, wire::kPfcDstMac.data(), 6);
  eth->set_ethertype(wire::kEtherTypeMacControl);
  auto* pfc = reinterpret_cast<wire::PfcFrame*>(f + sizeof(wire::Ethernet));
  pfc->set_opcode(wire::kPfcOpcode);
  pfc->set_class_enable(static_cast<uint16_t>(1u << prio));
  pfc->set_quanta(prio, quanta);
  return m;
}

uint8_t frame_dscp(rte_mbuf* m) {
  return rte_pktmbuf_mtod_offset(m, const wire::Ipv4*, wire::kIpOff)->dscp();
}

/// Source and destination buffers of one RDMA WRITE of `n` pattern bytes from side 0 to
/// side 1, posted on construction (the tests then drive host 0 frame by frame).
struct PostedWrite {
  std::vector<uint8_t> a, b;
  PostedWrite(HostPair& hp, size_t n) : a(pattern(n, 1)), b(n) {
    const auto amr = hp.reg(0, a), bmr = hp.reg(1, b);
    ibv_sge sge{amr.addr, static_cast<uint32_t>(n), amr.lkey};
    ibv_send_wr wr = make_wr(1, IBV_WR_RDMA_WRITE, &sge, 1, bmr.addr, bmr.rkey);
    EXPECT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
  }
};

TEST(Pfc, PausedPriorityStopsForQuantaTimesSlotTimeAndXonResumes) {
  nic::NicParams p;
  HostPair hp(p, 25 * kBpsPerGbps);
  nic::RoceHost& h = *hp.host[0];
  const PostedWrite w(hp, 64 * 1024);

  rte_mbuf* first = h.tx(0, 0);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(frame_dscp(first), 26);
  rte_pktmbuf_free(first);
  // Pause priority 3 (DSCP 26 / 8) for 1000 quanta: 1000 x 512 bits at 25 Gbps = 20.48 us.
  rte_mbuf* pause = pfc_frame(3, 1000);
  h.rx(0, &pause, 1, 1000);
  EXPECT_EQ(h.paused_until(3), 1000 + 20480);
  EXPECT_EQ(h.counters().pfc_frames_received[3], 1u);
  EXPECT_EQ(h.tx(0, 2000), nullptr);
  EXPECT_EQ(h.next_deadline(), 1000 + 20480);
  h.on_timer(21480);
  rte_mbuf* again = h.tx(0, 21480);
  ASSERT_NE(again, nullptr);
  rte_pktmbuf_free(again);
  // Pause another priority: data still flows.
  rte_mbuf* other = pfc_frame(5, 0xffff);
  h.rx(0, &other, 1, 22000);
  rte_mbuf* m = h.tx(0, 22000);
  ASSERT_NE(m, nullptr);
  rte_pktmbuf_free(m);
  // Pause 3 with the maximum, then XON (quanta 0) resumes at once.
  rte_mbuf* longp = pfc_frame(3, 0xffff);
  h.rx(0, &longp, 1, 23000);
  EXPECT_EQ(h.tx(0, 24000), nullptr);
  rte_mbuf* xon = pfc_frame(3, 0);
  h.rx(0, &xon, 1, 25000);
  EXPECT_EQ(h.paused_until(3), 0);
  m = h.tx(0, 25000);
  ASSERT_NE(m, nullptr);
  rte_pktmbuf_free(m);
}

// [nic.pfc_watchdog]: a priority paused without a break while the NIC has data for it, for
// the detection time, is a storm: the pause in force is dropped and further pauses on that
// priority are ignored (counted) for the restore time; then pauses are obeyed again.
TEST(Pfc, WatchdogIgnoresAPauseStormAfterDetectionForTheRestoreTime) {
  for (const bool on : {false, true}) {
    SCOPED_TRACE(on ? "watchdog on" : "watchdog off");
    nic::NicParams p;
    if (on) p.pfc_watchdog = PfcWatchdog{1 * kNsPerMs, 2 * kNsPerMs};
    HostPair hp(p, 25 * kBpsPerGbps);
    nic::RoceHost& h = *hp.host[0];
    const PostedWrite w(hp, 1 << 20);
    rte_mbuf* first = h.tx(0, 0);
    ASSERT_NE(first, nullptr);
    rte_pktmbuf_free(first);
    // A storm: the maximum pause (65535 quanta = 1.342157 ms at 25 Gbps) every 0.5 ms.
    const auto storm_frame = [&](TimeNs at) {
      rte_mbuf* f = pfc_frame(3, 0xffff);
      h.rx(0, &f, 1, at);
    };
    storm_frame(1000);
    EXPECT_EQ(h.tx(0, 2000), nullptr);
    storm_frame(501'000);
    EXPECT_EQ(h.tx(0, 502'000), nullptr);
    const TimeNs detect = 1000 + 1 * kNsPerMs;
    EXPECT_EQ(h.next_deadline(), on ? detect : 501'000 + 1'342'157) << "watchdog deadline";
    h.on_timer(detect);
    rte_mbuf* m = h.tx(0, detect);
    EXPECT_EQ(m != nullptr, on) << "storm detected: the NIC sends despite the pause";
    if (m) rte_pktmbuf_free(m);
    EXPECT_EQ(h.counters().pfc_storms[3], on ? 1u : 0u);
    // Pauses during the restore time are counted and ignored.
    storm_frame(1'200'000);
    m = h.tx(0, 1'300'000);
    EXPECT_EQ(m != nullptr, on);
    if (m) rte_pktmbuf_free(m);
    EXPECT_EQ(h.counters().pfc_frames_received[3], 3u);
    if (!on) continue;
    EXPECT_EQ(h.paused_until(3), 0);
    // After detect + 2 ms pauses are obeyed again, and detection starts over.
    storm_frame(detect + 2 * kNsPerMs + 1000);
    EXPECT_EQ(h.tx(0, detect + 2 * kNsPerMs + 2000), nullptr);
    EXPECT_EQ(h.next_deadline(), detect + 2 * kNsPerMs + 1000 + 1 * kNsPerMs);
    EXPECT_EQ(h.counters().pfc_storms[3], 1u);
    EXPECT_EQ(h.check_invariants(), "");
  }
}

// The watchdog needs packets waiting: a NIC with nothing to send on a paused priority never
// declares a storm, however long the pause.
TEST(Pfc, WatchdogDoesNotTripWithoutPacketsWaiting) {
  nic::NicParams p;
  p.pfc_watchdog = PfcWatchdog{1 * kNsPerMs, 2 * kNsPerMs};
  HostPair hp(p, 25 * kBpsPerGbps);
  nic::RoceHost& h = *hp.host[0];
  for (TimeNs t = 0; t < 10 * kNsPerMs; t += 500'000) {
    rte_mbuf* f = pfc_frame(3, 0xffff);
    h.rx(0, &f, 1, t);
    h.on_timer(t + 1);
  }
  EXPECT_EQ(h.counters().pfc_storms[3], 0u);
  EXPECT_GT(h.paused_until(3), 0);
}

TEST(Pfc, AcksUseTheControlPriorityAndPassADataPause) {
  nic::NicParams p;
  HostPair hp(p, 25 * kBpsPerGbps);
  std::vector<uint8_t> a = pattern(1000, 1), b(1000);
  const auto amr = hp.reg(0, a), bmr = hp.reg(1, b);
  // The responder (host 1) has its data priority paused; its ACKs (DSCP 48, priority 6)
  // still go.
  rte_mbuf* pause = pfc_frame(3, 0xffff);
  hp.host[1]->rx(0, &pause, 1, 0);
  uint8_t ack_dscp = 0;
  hp.wire->set_inspector([&](int side, const uint8_t* f, uint32_t) {
    if (side == 1) ack_dscp = reinterpret_cast<const wire::Ipv4*>(f + wire::kIpOff)->dscp();
  });
  ibv_sge sge{amr.addr, 1000, amr.lkey};
  ibv_send_wr wr = make_wr(1, IBV_WR_RDMA_WRITE, &sge, 1, bmr.addr, bmr.rkey);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, 1, wcs, 100 * kNsPerUs));
  EXPECT_EQ(ack_dscp, 48);
}

struct RecordingHooks : nic::CongestionHooks {
  int ce = 0, cnp = 0;
  uint64_t sent_bytes = 0;
  bool on_ce_marked(uint32_t, TimeNs) noexcept override { return ++ce % 4 == 1; }
  void on_cnp(uint32_t, TimeNs) noexcept override { ++cnp; }
  void on_data_sent(uint32_t, uint32_t bytes, TimeNs) noexcept override { sent_bytes += bytes; }
};

TEST(CongestionHooks, CeMarkedArrivalsReachTheHooksAndCnpsReachThePeer) {
  nic::NicParams p;
  p.ecn_capable = true;
  HostPair hp(p, 25 * kBpsPerGbps);
  RecordingHooks rp, np;
  hp.host[0]->set_congestion_hooks(&rp);
  hp.host[1]->set_congestion_hooks(&np);
  auto a = pattern(64 * 1024, 1);
  std::vector<uint8_t> b(a.size());
  const auto amr = hp.reg(0, a), bmr = hp.reg(1, b);
  int ect0 = 0, data = 0, cnp_frames = 0;
  hp.wire->set_inspector([&](int side, const uint8_t* f, uint32_t) {
    const auto* ip = reinterpret_cast<const wire::Ipv4*>(f + wire::kIpOff);
    if (side == 0) {
      ++data;
      ect0 += ip->ecn() == wire::kEcnEct0;
    } else if (f[wire::kBthOff] == wire::kCnp) {
      ++cnp_frames;
    }
  });
  // A switch would mark CE at dequeue: mark every data frame (TOS is outside the ICRC).
  hp.wire->set_mutator([](int side, uint8_t* f, uint32_t) {
    if (side != 0) return;
    auto* ip = reinterpret_cast<wire::Ipv4*>(f + wire::kIpOff);
    ip->set_tos_update_checksum(static_cast<uint8_t>((ip->tos & 0xfc) | wire::kEcnCe));
  });
  ibv_sge sge{amr.addr, static_cast<uint32_t>(a.size()), amr.lkey};
  ibv_send_wr wr = make_wr(1, IBV_WR_RDMA_WRITE, &sge, 1, bmr.addr, bmr.rkey);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, 1, wcs, kNsPerMs));
  EXPECT_EQ(wcs[0].status, IBV_WC_SUCCESS);
  EXPECT_TRUE(a == b);
  EXPECT_EQ(ect0, data);
  EXPECT_EQ(np.ce, 64);       // 64 packets of 1 KiB, all CE
  EXPECT_EQ(cnp_frames, 16);  // the hooks asked for every 4th
  EXPECT_EQ(rp.cnp, 16);
  EXPECT_EQ(hp.host[1]->counters().cnps_sent, 16u);
  EXPECT_EQ(hp.host[1]->counters().drops_total(), 0u);
  EXPECT_EQ(rp.sent_bytes, 64u * nic::frame_bytes(0, 1024) + 16);  // + the first RETH
}

TEST(Pacing, QpRateLimitHoldsGoodputAndReportsTheReleaseTime) {
  nic::NicParams p;
  HostPair hp(p, 100 * kBpsPerGbps, 1000);
  hp.host[0]->set_qp_rate_bps(hp.qpn[0], 10 * kBpsPerGbps);
  auto a = pattern(1 << 20, 1);
  std::vector<uint8_t> b(a.size());
  const auto amr = hp.reg(0, a), bmr = hp.reg(1, b);
  ibv_sge sge{amr.addr, static_cast<uint32_t>(a.size()), amr.lkey};
  ibv_send_wr wr = make_wr(1, IBV_WR_RDMA_WRITE, &sge, 1, bmr.addr, bmr.rkey);
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, 1, wcs, 10 * kNsPerMs));
  // 1024 frames of 1100 bytes at 10 Gbps: 901 us; the 100 Gbps link alone would take 90 us.
  const double secs = static_cast<double>(hp.wire->now()) / 1e9;
  const double frame_gbps = 1024.0 * nic::frame_bytes(0, 1024) * 8 / secs / 1e9;
  EXPECT_NEAR(frame_gbps, 10.0, 0.2);
  EXPECT_TRUE(a == b);
}

}  // namespace
}  // namespace rocemu::test
