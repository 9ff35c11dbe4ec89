// write_test.cc — milestone 1: two RoceHosts back to back RDMA-WRITE 4 MB; the data lands
// intact, every frame on the wire carries a valid ICRC, segmentation follows the MTU.
#include <gtest/gtest.h>

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
