#include "common/wire.h"

#include <cstring>

#include <gtest/gtest.h>

#include "common/rng.h"

namespace rocemu::wire {

TEST(Wire, BthRoundTripsEveryField) {
  uint8_t buf[12] = {};
  auto* b = reinterpret_cast<Bth*>(buf);
  b->opcode = kRcWriteFirst;
  b->set_flags(true, false, 2, 0);
  b->set_pkey(0xffff);
  b->set_dqpn(0x123456);
  b->set_ack_req(true);
  b->set_psn(0xfedcba);
  const uint8_t expect[12] = {0x06, 0xa0, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56, 0x80, 0xfe, 0xdc, 0xba};
  EXPECT_EQ(std::memcmp(buf, expect, 12), 0);
  EXPECT_TRUE(b->solicited());
  EXPECT_EQ(b->pad_count(), 2);
  EXPECT_EQ(b->dqpn(), 0x123456u);
  EXPECT_EQ(b->psn(), 0xfedcbau);
  EXPECT_TRUE(b->ack_req());
}

TEST(Wire, RethAndAethRoundTrip) {
  Reth r{};
  r.set_va(0x0102030405060708ULL);
  r.set_rkey(0xdeadbeef);
  r.set_dma_len(1 << 20);
  EXPECT_EQ(r.va_be[0], 0x01);
  EXPECT_EQ(r.va(), 0x0102030405060708ULL);
  EXPECT_EQ(r.rkey(), 0xdeadbeefu);
  EXPECT_EQ(r.dma_len(), 1u << 20);
  Aeth a{};
  a.syndrome = 0x1f;
  a.set_msn(0xabcdef);
  EXPECT_EQ(a.msn(), 0xabcdefu);
}

TEST(Wire, Ipv4ChecksumAndIncrementalEcnUpdateAgree) {
  Ipv4 ip{};
  ip.ver_ihl = 0x45;
  ip.set_dscp(26);
  ip.set_ecn(kEcnEct0);
  ip.set_total_length(1068);
  ip.set_frag(0x4000);
  ip.ttl = 64;
  ip.protocol = kIpProtoUdp;
  ip.set_src(0x0a000001);
  ip.set_dst(0x0a000002);
  ip.set_checksum(ip.compute_checksum());
  EXPECT_EQ(ip.dscp(), 26);
  EXPECT_EQ(ip.ecn(), kEcnEct0);
  ip.set_tos_update_checksum(static_cast<uint8_t>((ip.tos & 0xfc) | kEcnCe));
  EXPECT_EQ(ip.ecn(), kEcnCe);
  EXPECT_EQ(ip.checksum(), ip.compute_checksum());
}

// The checksum against RFC 791's definition, word by word in network order, over headers of
// random bytes and the edge cases (all zero, all ones, sums that carry out of 16 bits twice).
TEST(Wire, Ipv4ChecksumIsTheOnesComplementSumOfTheWords) {
  const auto reference = [](const Ipv4& ip) {
    const auto* p = reinterpret_cast<const uint8_t*>(&ip);
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
      if (i != 10) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
  };
  Rng rng(15);
  for (int run = 0; run < 100000; ++run) {
    Ipv4 ip{};
    auto* p = reinterpret_cast<uint8_t*>(&ip);
    if (run == 1) std::memset(p, 0xff, sizeof ip);
    if (run == 2) std::memset(p, 0x80, sizeof ip);
    for (size_t i = 0; run > 2 && i < sizeof ip; ++i) {
      const uint64_t x = rng.next();
      // Bytes biased to 0xff in half the runs so that sums carry often.
      p[i] = static_cast<uint8_t>(run % 2 ? x | 0xf0 : x);
    }
    ASSERT_EQ(ip.compute_checksum(), reference(ip)) << "run " << run;
  }
}

TEST(Wire, PfcFrameLayoutMatches8021Qbb) {
  PfcFrame f{};
  f.set_opcode(kPfcOpcode);
  f.set_class_enable(1 << 3);
  f.set_quanta(3, 0xffff);
  const auto* p = reinterpret_cast<const uint8_t*>(&f);
  EXPECT_EQ(p[0], 0x01);
  EXPECT_EQ(p[1], 0x01);
  EXPECT_EQ(p[3], 0x08);
  EXPECT_EQ(p[4 + 6], 0xff);
  EXPECT_EQ(f.quanta(3), 0xffff);
  EXPECT_EQ(f.quanta(2), 0);
}

}  // namespace rocemu::wire
