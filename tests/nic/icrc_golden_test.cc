// icrc_golden_test.cc — common/icrc.h against the ICRC real Linux rxe put on the wire
// (IPv4 and IPv6 frames in data/rxe_frames.txt, from the golden captures), and against an
// independent bit-by-bit CRC-32 over the masked pseudo-header (IBTA annex A17.3.3).
#include <gtest/gtest.h>

#include <cstring>

#include "common/icrc.h"
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
  test_mempool();  // rte_net_crc needs EAL's CPU detection
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
    EXPECT_EQ(f, fr.bytes) << fr.name << ": icrc_compute must restore the frame";
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

}  // namespace
}  // namespace rocemu::test
