// perftest_exchange_test.cc — perftest's fixed-size side-channel messages against the bytes a
// real perftest 4.5 client sent (Debian 12 ib_write_bw -s 8192 over rxe), copied from
// ../shared/data/golden-rxe/06_write_bw_8k.pcapng (frames 6-15 and 118-126; INTEROP.md).
#include <gtest/gtest.h>

#include <cstring>

#include "apps/perftest/perftest_exchange.h"

using namespace rocemu::perftest;

namespace {
// The client's five 8-byte report fields (frames 118, 120, 122, 124, 126).
const uint8_t kGoldenReport[40] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00,  // size 8192
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a,  // 10 iterations
    0x40, 0x24, 0xee, 0xbd, 0x28, 0x14, 0x54, 0x7b,  // BW peak (double)
    0x40, 0x1b, 0x31, 0xe4, 0xab, 0x92, 0xf0, 0xb8,  // BW average (double)
    0x3f, 0x4c, 0x84, 0x12, 0xfc, 0xc0, 0x6a, 0xa9,  // MsgRate (double)
};
}  // namespace

TEST(PerftestExchange, SetupMessagesAreTheGoldenBytes) {
  const auto v = version_message();
  const uint8_t want_v[16] = {'6', '.', '0', '6'};
  EXPECT_EQ(std::memcmp(v.data(), want_v, 16), 0);
  const uint8_t page[4] = {0x00, 0x00, 0x10, 0x00}, line[4] = {0x00, 0x00, 0x00, 0x40};
  EXPECT_EQ(std::memcmp(be32_message(kPageSizeBytes).data(), page, 4), 0);
  EXPECT_EQ(std::memcmp(be32_message(kCacheLineBytes).data(), line, 4), 0);
  const char mtu1024[2] = {'3', '\0'}, mtu4096[2] = {'5', '\0'};  // frames 14, and 14_mtu4096
  EXPECT_EQ(std::memcmp(mtu_message(1024).data(), mtu1024, 2), 0);
  EXPECT_EQ(std::memcmp(mtu_message(4096).data(), mtu4096, 2), 0);
  EXPECT_EQ(mtu_message(256)[0], '1');
  EXPECT_EQ(mtu_message(2048)[0], '4');
}

TEST(PerftestExchange, MtuMessageParsesAndRejectsJunk) {
  for (uint32_t m : {256u, 512u, 1024u, 2048u, 4096u})
    EXPECT_EQ(mtu_from_message(mtu_message(m).data()), m);
  EXPECT_EQ(mtu_from_message("0"), 0u);
  EXPECT_EQ(mtu_from_message("6"), 0u);
  const char no_nul[2] = {'3', '3'};
  EXPECT_EQ(mtu_from_message(no_nul), 0u);
}

TEST(PerftestExchange, GoldenReportDecodesAndRoundTrips) {
  const BwRow r = bw_row_from_report(kGoldenReport, false);
  EXPECT_EQ(r.size_bytes, 8192u);
  EXPECT_EQ(r.iters, 10u);
  EXPECT_NEAR(r.peak_bytes_per_s / 1048576.0, 10.466, 0.001);
  EXPECT_NEAR(r.avg_bytes_per_s / 1048576.0, 6.7987, 0.001);
  EXPECT_NEAR(r.msg_rate_pps / 1e6, 0.00087, 0.00001);
  // Average MiB/s and message rate of one report agree: 6.80 MiB/s / 8 KiB = 870 msg/s.
  EXPECT_NEAR(r.avg_bytes_per_s / 8192.0, r.msg_rate_pps, 1.0);
  const auto back = bw_report_message(r, false);
  EXPECT_EQ(std::memcmp(back.data(), kGoldenReport, sizeof kGoldenReport), 0);
  // In Gb/s the same bytes per second give a different number on the wire, read back alike.
  const BwRow g = bw_row_from_report(bw_report_message(r, true).data(), true);
  EXPECT_NEAR(g.avg_bytes_per_s, r.avg_bytes_per_s, 1e-6 * r.avg_bytes_per_s);
}

TEST(PerftestExchange, BidirectionalRowSumsRatesKeepsOurSizeAndIterations) {
  BwRow a{65536, 200, 100.0, 80.0, 5.0}, b{65536, 190, 60.0, 50.0, 3.0};
  const BwRow s = sum_rows(a, b);
  EXPECT_EQ(s.size_bytes, 65536u);
  EXPECT_EQ(s.iters, 200u);
  EXPECT_DOUBLE_EQ(s.peak_bytes_per_s, 160.0);
  EXPECT_DOUBLE_EQ(s.avg_bytes_per_s, 130.0);
  EXPECT_DOUBLE_EQ(s.msg_rate_pps, 8.0);
}

// perftest -R's key message: the client's SEND in frame 33 of golden capture 13
// (ib_send_bw -R -T 3 between two rxe; ../shared/data/golden-rxe/13_rdmacm_send_tos3_ce,
// copied under tests/conformance/data).
TEST(PerftestExchange, RdmaCmKeyMessageIsTheGoldenStruct) {
  const uint8_t golden[kCmKeyMsgBytes] = {
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x1e, 0x00, 0xfd,
      0xf7, 0x03, 0x00, 0x00, 0x00, 0x00, 0x96, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x55, 0x6b,
      0x32, 0x3d, 0x50, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0xff, 0xff, 0x0a, 0x4d, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01};
  AddressFields k;
  ASSERT_TRUE(parse_cm_key_message(golden, sizeof golden, k));
  EXPECT_EQ(k.lid, 0u);
  EXPECT_EQ(k.out_reads, 1u);
  EXPECT_EQ(k.qpn, 0x1eu);
  EXPECT_EQ(k.psn, 0xfdf703u);
  EXPECT_EQ(k.rkey, 0u);
  EXPECT_EQ(k.vaddr, 0x556b323d5000ull);
  const uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, 12};
  EXPECT_EQ(std::memcmp(k.gid, gid, 16), 0);
  // Ours is the same struct, but zeros where perftest leaves its stack's padding (20..23).
  auto mine = cm_key_message(k, 1);
  uint8_t want[kCmKeyMsgBytes];
  std::memcpy(want, golden, sizeof want);
  std::memset(want + 20, 0, 4);
  EXPECT_EQ(std::memcmp(mine.data(), want, sizeof want), 0);
  EXPECT_FALSE(parse_cm_key_message(golden, sizeof golden - 1, k));  // a short SEND
}
