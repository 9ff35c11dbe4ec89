// icrc_golden_test.cc — common/icrc.h against the ICRC real Linux rxe put on the wire
// (IPv4 and IPv6 frames in data/rxe_frames.txt, from the golden captures), and against an
// independent bit-by-bit CRC-32 over the masked pseudo-header (IBTA annex A17.3.3).
#include <gtest/gtest.h>

#include <cstring>

#include "common/icrc.h"
#include "nic/packet.h"
#include "tests/nic/frame_fixture.h"
#include "tests/support/eal_env.h"

namespace rocemu::test {
namespace {

/// Independent ICRC: copy, mask the variant fields, prefix 8 bytes of 0xFF, CRC-32.
uint32_t reference_icrc(const std::vector<uint8_t>& f, uint32_t icrc_off) {
  std::vector<uint8_t> v(8 + icrc_off - 14, 0xff);
  std::memcpy(v.data() + 8, f.data() + 14, icrc_off - 14);
  uint8_t* ip = v.data() + 8;
  uint32_t udp;
  if (ip[0] >> 4 == 4) {
    ip[1] = 0xff;             // TOS
    ip[8] = 0xff;             // TTL
    ip[10] = ip[11] = 0xff;   // checksum
    udp = 20;
  } else {
    ip[0] |= 0x0f;            // traffic class, flow label
    ip[1] = ip[2] = ip[3] = 0xff;
    ip[7] = 0xff;             // hop limit
    udp = 40;
  }
  ip[udp + 6] = ip[udp + 7] = 0xff;  // UDP checksum
  ip[udp + 8 + 4] = 0xff;            // BTH resv8a
  return crc32_reference(0, v.data(), static_cast<uint32_t>(v.size()));
}

TEST(IcrcGolden, MatchesLinuxRxeOnIpv4AndIpv6Frames) {
  test_mempool();
  const auto frames = load_rxe_frames();
  ASSERT_GE(frames.size(), 15u);
  int v4 = 0, v6 = 0, ce = 0;
  for (const auto& fr : frames) {
    auto f = fr.bytes;
    const uint32_t off = fixture_icrc_off(f);
    ASSERT_LE(off + 4, f.size()) << fr.name;
    const uint32_t wire_icrc = icrc_load(f.data(), off);
    EXPECT_EQ(icrc_compute(f.data(), 14, off), wire_icrc) << fr.name;
    EXPECT_EQ(reference_icrc(f, off), wire_icrc) << fr.name;
    EXPECT_EQ(f, fr.bytes) << fr.name << ": icrc_compute must not change the frame";
    (f[14] >> 4 == 4 ? v4 : v6)++;
    if (f[14] >> 4 == 4 && (f[15] & 3) == 3) ++ce;
  }
  EXPECT_GE(v4, 10);
  EXPECT_GE(v6, 3);
  EXPECT_GE(ce, 1) << "a CE-marked frame checks that TOS is masked";
}

TEST(IcrcGolden, DetectsAnyFlippedInvariantBit) {
  test_mempool();
  const auto frames = load_rxe_frames();
  ASSERT_FALSE(frames.empty());
  auto f = frames.front().bytes;
  const uint32_t off = fixture_icrc_off(f);
  const uint32_t good = icrc_load(f.data(), off);
  // Flip a bit of the BTH PSN, the payload, and the IP source: each must change the CRC.
  for (uint32_t at : {14u + 12, 14u + 20 + 8 + 11, off - 1}) {
    f[at] ^= 0x10;
    EXPECT_NE(icrc_compute(f.data(), 14, off), good) << "byte " << at;
    f[at] ^= 0x10;
  }
  // Variant fields do not count: TTL and TOS.
  f[14 + 8] = 1;
  f[14 + 1] ^= 0x3;
  EXPECT_EQ(icrc_compute(f.data(), 14, off), good);
}

// The transmit path CRCs the payload as it copies it (seal_begin, crc32_copy, seal_end):
// the frame must equal the one seal_frame() seals after a plain copy, and its ICRC the
// independent reference, for IPv4 and IPv6, every pad count and the sizes MTUs give.
TEST(IcrcGolden, SealingInTwoHalvesAroundTheCopyGivesSealFramesBytes) {
  std::vector<uint8_t> payload(4200);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 131 + 7);
  for (bool v6 : {false, true}) {
    nic::FrameAddress a;
    a.src_ip = 0x0a000001;
    a.dst_ip = 0x0a000002;
    a.ipv6 = v6;
    a.src_ip6[15] = 1;
    a.dst_ip6[15] = 2;
    a.tos = 0x2a;
    a.dqpn = 0x123456;
    const nic::FrameTemplate t = nic::make_template(a);
    std::vector<uint32_t> lens;
    for (uint32_t n = 0; n <= 300; ++n) lens.push_back(n);
    for (uint32_t n : {1023u, 1024u, 2048u, 4095u, 4096u}) lens.push_back(n);
    for (uint32_t n : lens) {
      const uint32_t ext = n % 3 == 0 ? 16 : 0;  // a RETH's worth of extended headers
      const uint32_t len = nic::frame_bytes(t, ext, n);
      std::vector<uint8_t> one(len, 0xEE), two(len, 0xEE);
      const uint32_t at =
          nic::write_headers(one.data(), t, wire::kRcWriteMiddle, n, false, false, ext, n, 9) +
          ext;
      std::memcpy(two.data(), one.data(), at);
      std::memcpy(one.data() + at, payload.data(), n);
      nic::seal_frame(one.data());
      const IcrcHead head = nic::seal_begin(two.data(), at);
      nic::seal_end(two.data(),
                    head.crc_with(two.data() + at, payload.data(), n));
      ASSERT_EQ(one, two) << (v6 ? "IPv6" : "IPv4") << " payload " << n;
      ASSERT_EQ(icrc_load(one.data(), len - 4), reference_icrc(one, len - 4)) << n;
    }
  }
}

}  // namespace
}  // namespace rocemu::test
