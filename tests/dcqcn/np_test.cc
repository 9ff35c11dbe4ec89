// np_test.cc — DCQCN notification point: one CNP per interval per flow (Zhu et al.,
// SIGCOMM 2015, section 3.1) and the CNP transport header (IBTA annex A17.9).
#include "nic/dcqcn/np.h"

#include <gtest/gtest.h>

#include <array>

namespace rocemu::dcqcn {
namespace {

constexpr TimeNs kUs = kNsPerUs;

TEST(DcqcnNp, SendsAtMostOneCnpPerIntervalPerFlow) {
  Np np(50 * kUs);
  NpFlow a, b;
  EXPECT_TRUE(np.on_ce_packet(a, 1000));
  EXPECT_FALSE(np.on_ce_packet(a, 1000));
  EXPECT_FALSE(np.on_ce_packet(a, 1000 + 50 * kUs - 1));
  EXPECT_TRUE(np.on_ce_packet(b, 1000 + 10 * kUs));  // flows are independent
  EXPECT_TRUE(np.on_ce_packet(a, 1000 + 50 * kUs));
  EXPECT_FALSE(np.on_ce_packet(b, 1000 + 59 * kUs));
  EXPECT_TRUE(np.on_ce_packet(b, 1000 + 60 * kUs));
  EXPECT_EQ(np.counters().ce_packets, 7u);
  EXPECT_EQ(np.counters().cnps_sent, 4u);
  EXPECT_EQ(np.counters().cnps_suppressed, 3u);
}

TEST(DcqcnNp, ContinuousMarkingYieldsOneCnpPerIntervalOverALongRun) {
  Np np(50 * kUs);
  NpFlow f;
  // A CE packet every 328 ns (1 KiB frames at 25 Gbps) for 10 ms.
  uint64_t cnps = 0;
  for (TimeNs t = 0; t < 10 * kNsPerMs; t += 328) cnps += np.on_ce_packet(f, t);
  // Each CNP opens a 50 us window; the first CE at or after its end sends the next one:
  // spacing ceil(50000 / 328) * 328 = 50184 ns -> floor(10 ms / 50184 ns) + 1 CNPs.
  EXPECT_EQ(cnps, 10 * kNsPerMs / 50184 + 1);
}

TEST(DcqcnNp, ZeroIntervalAnswersEveryCePacket) {
  Np np(0);
  NpFlow f;
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(np.on_ce_packet(f, 7));
  EXPECT_EQ(np.counters().cnps_sent, 5u);
}

TEST(DcqcnNp, TimeGoingBackwardsDoesNotSendAnExtraCnp) {
  Np np(50 * kUs);
  NpFlow f;
  EXPECT_TRUE(np.on_ce_packet(f, 100 * kUs));
  EXPECT_FALSE(np.on_ce_packet(f, 90 * kUs));
}

TEST(DcqcnCnp, TransportHeaderIsOpcode81ToSenderQpWith16ZeroReservedBytes) {
  std::array<uint8_t, kCnpTransportBytes + 2> buf;
  buf.fill(0xAA);
  write_cnp_transport(buf.data(), 0x1234567, 0x8001);  // QPN is 24 bits: high bits dropped
  const auto* bth = reinterpret_cast<const wire::Bth*>(buf.data());
  EXPECT_TRUE(is_cnp(*bth));
  EXPECT_EQ(bth->opcode, 0x81);
  EXPECT_EQ(bth->dqpn(), 0x234567u);
  EXPECT_EQ(bth->pkey(), 0x8001);
  EXPECT_EQ(bth->psn(), 0u);
  EXPECT_FALSE(bth->ack_req());
  EXPECT_FALSE(bth->solicited());
  EXPECT_EQ(bth->pad_count(), 0);
  EXPECT_EQ(bth->tver(), 0);
  EXPECT_EQ(bth->resv8a, 0);
  for (uint32_t i = sizeof(wire::Bth); i < kCnpTransportBytes; ++i) EXPECT_EQ(buf[i], 0) << i;
  EXPECT_EQ(buf[kCnpTransportBytes], 0xAA);  // writes nothing past the 28 bytes
  EXPECT_EQ(kCnpTransportBytes, 28u);
  // Exact bytes: 81 00 80 01 00 23 45 67 00 00 00 00.
  const std::array<uint8_t, 12> want{0x81, 0, 0x80, 0x01, 0, 0x23, 0x45, 0x67, 0, 0, 0, 0};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(buf[i], want[i]) << i;
}

TEST(DcqcnCnp, DefaultPkeyIsFullMembership) {
  std::array<uint8_t, kCnpTransportBytes> buf{};
  write_cnp_transport(buf.data(), 17);
  EXPECT_EQ(reinterpret_cast<const wire::Bth*>(buf.data())->pkey(), 0xFFFF);
}

}  // namespace
}  // namespace rocemu::dcqcn
