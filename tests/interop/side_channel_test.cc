// side_channel_test.cc — rc_pingpong's and perftest's address messages, ARP replies and the
// RDMA-check pattern/messages, against bytes observed from Linux rxe's tools: the guest's
// rc_pingpong sent "0000:000011:de2123:00000000000000000000ffff0a4d000a" (tests/interop/
// standin_peer run); the perftest key is frame 17 of /work/shared/data/golden-rxe/
// 06_write_bw_8k.pcapng (ib_write_bw client 10.77.0.12), copied here.
#include "apps/interop/side_channel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "apps/interop/arp_reply.h"
#include "apps/interop/rdma_check_proto.h"
#include "common/wire.h"

namespace rocemu::interop {
namespace {

TEST(PingpongDest, ParsesTheMessageOfLinuxRcPingpong) {
  const char msg[] = "0000:000011:de2123:00000000000000000000ffff0a4d000a";
  static_assert(sizeof msg == kPingpongMsgBytes);
  const auto d = parse_pingpong_dest(msg, sizeof msg);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->lid, 0);
  EXPECT_EQ(d->qpn, 0x11u);
  EXPECT_EQ(d->psn, 0xde2123u);
  ASSERT_TRUE(ipv4_of_mapped_gid(d->gid).has_value());
  EXPECT_EQ(*ipv4_of_mapped_gid(d->gid), (10u << 24) | (77u << 16) | 10u);
}

TEST(PingpongDest, FormatsExactlyWhatRcPingpongSends) {
  PingpongDest d;
  d.qpn = 0x11;
  d.psn = 0xde2123;
  ipv4_mapped_gid_bytes((10u << 24) | (77u << 16) | 10u, d.gid);
  const std::string m = format_pingpong_dest(d);
  ASSERT_EQ(m.size(), kPingpongMsgBytes);
  EXPECT_STREQ(m.c_str(), "0000:000011:de2123:00000000000000000000ffff0a4d000a");
  EXPECT_EQ(m.back(), '\0');
}

TEST(PingpongDest, RejectsMalformedMessages) {
  EXPECT_FALSE(parse_pingpong_dest("0000:000011", 11).has_value());
  const char bad_sep[] = "0000-000011:de2123:00000000000000000000ffff0a4d000a";
  EXPECT_FALSE(parse_pingpong_dest(bad_sep, sizeof bad_sep).has_value());
  const char bad_hex[] = "0000:00001g:de2123:00000000000000000000ffff0a4d000a";
  EXPECT_FALSE(parse_pingpong_dest(bad_hex, sizeof bad_hex).has_value());
  uint8_t link_local[16] = {0xfe, 0x80};
  EXPECT_FALSE(ipv4_of_mapped_gid(link_local).has_value());
}

constexpr char kGoldenWriteBwKey[] =
    "0000:0001:000016:8416f0:0000070f:0000561d8d643000:00:00:00:00:00:00:00:00:00:00:ff:ff:0a:"
    "4d:00:0c:00000000:";

TEST(PerftestKey, ParsesTheKeyOfLinuxIbWriteBw) {
  char msg[kPerftestKeyBytes] = {};
  std::memcpy(msg, kGoldenWriteBwKey, sizeof kGoldenWriteBwKey);
  PerftestKey k;
  ASSERT_TRUE(parse_perftest_key(msg, sizeof msg, k));
  EXPECT_EQ(k.lid, 0u);
  EXPECT_EQ(k.out_reads, 1u);
  EXPECT_EQ(k.qpn, 0x16u);
  EXPECT_EQ(k.psn, 0x8416f0u);
  EXPECT_EQ(k.rkey, 0x70fu);
  EXPECT_EQ(k.vaddr, 0x561d8d643000ull);
  EXPECT_EQ(k.srqn, 0u);
  ASSERT_TRUE(ipv4_of_mapped_gid(k.gid).has_value());
  EXPECT_EQ(*ipv4_of_mapped_gid(k.gid), (10u << 24) | (77u << 16) | 12u);
}

TEST(PerftestKey, FormatsByteForByteWhatIbWriteBwSends) {
  PerftestKey k;
  k.out_reads = 1;
  k.qpn = 0x16;
  k.psn = 0x8416f0;
  k.rkey = 0x70f;
  k.vaddr = 0x561d8d643000ull;
  ipv4_mapped_gid_bytes((10u << 24) | (77u << 16) | 12u, k.gid);
  const std::string m = format_perftest_key(k);
  ASSERT_EQ(m.size(), kPerftestKeyBytes);
  EXPECT_STREQ(m.c_str(), kGoldenWriteBwKey);
  EXPECT_EQ(std::string(m.c_str()).size(), sizeof kGoldenWriteBwKey - 1);  // then NUL padding
}

TEST(PerftestKey, RejectsTruncatedOrGarbledKeys) {
  PerftestKey k;
  char msg[kPerftestKeyBytes] = {};
  std::memcpy(msg, kGoldenWriteBwKey, 40);
  EXPECT_FALSE(parse_perftest_key(msg, sizeof msg, k));
  EXPECT_FALSE(parse_perftest_key(kGoldenWriteBwKey, 50, k));
}

TEST(PerftestKey, EveryFieldIsItsFullWidthOfHexDigits) {
  // Found by fuzz_perftest_msg: sscanf's %6x read "-00017" as QPN 0xffffffef.
  auto with = [](size_t at, const char* text) {
    std::string m(kGoldenWriteBwKey, sizeof kGoldenWriteBwKey - 1);
    m.replace(at, std::strlen(text), text);
    m.resize(kPerftestKeyBytes, '\0');
    return m;
  };
  PerftestKey k;
  const std::string signed_qpn = with(10, "-00017");
  EXPECT_FALSE(parse_perftest_key(signed_qpn.data(), signed_qpn.size(), k));
  const std::string spaced_psn = with(17, " 416f0");
  EXPECT_FALSE(parse_perftest_key(spaced_psn.data(), spaced_psn.size(), k));
  const std::string short_lid = with(0, "0:00");  // "%4x" took "0" and stopped at ':'
  EXPECT_FALSE(parse_perftest_key(short_lid.data(), short_lid.size(), k));
  const std::string upper = with(24, "00000A0F");
  ASSERT_TRUE(parse_perftest_key(upper.data(), upper.size(), k));
  EXPECT_EQ(k.rkey, 0xa0fu);
  EXPECT_EQ(k.qpn, 0x16u);
}

// An ARP request from the guest (52:54:00:77:00:10, 10.77.0.10) for 10.77.0.2.
std::array<uint8_t, 42> arp_request() {
  return {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x52, 0x54, 0x00, 0x77, 0x00, 0x10, 0x08, 0x06,
          0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x52, 0x54, 0x00, 0x77, 0x00, 0x10,
          10,   77,   0,    10,   0,    0,    0,    0,    0,    0,    10,   77,   0,    2};
}

TEST(ArpReply, AnswersOnlyRequestsForOurAddress) {
  auto f = arp_request();
  const uint32_t ours = (10u << 24) | (77u << 16) | 2u;
  EXPECT_TRUE(is_arp_request_for(f.data(), f.size(), ours));
  EXPECT_FALSE(is_arp_request_for(f.data(), f.size(), ours + 1));
  EXPECT_FALSE(is_arp_request_for(f.data(), 41, ours));
  f[21] = 2;  // a reply, not a request
  EXPECT_FALSE(is_arp_request_for(f.data(), f.size(), ours));
}

TEST(ArpReply, ReplyCarriesOurMacAndSwapsTheAddresses) {
  auto f = arp_request();
  const MacAddr mine = {0x02, 0x00, 0x0a, 0x4d, 0x00, 0x02};
  make_arp_reply_in_place(f.data(), mine);
  const std::array<uint8_t, 42> want = {
      0x52, 0x54, 0x00, 0x77, 0x00, 0x10, 0x02, 0x00, 0x0a, 0x4d, 0x00, 0x02, 0x08, 0x06,
      0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x02, 0x02, 0x00, 0x0a, 0x4d, 0x00, 0x02,
      10,   77,   0,    2,    0x52, 0x54, 0x00, 0x77, 0x00, 0x10, 10,   77,   0,    10};
  EXPECT_EQ(f, want);
}

TEST(RdmaCheckProto, PatternDetectsAWordMovedByOnePacket) {
  std::vector<uint8_t> buf(1 << 16);
  rc_pattern_fill(buf.data(), buf.size(), 42);
  EXPECT_EQ(rc_pattern_mismatches(buf.data(), buf.size(), 42), 0u);
  EXPECT_EQ(rc_pattern_mismatches(buf.data(), buf.size(), 43), buf.size() / 8);
  // A 1024-byte packet placed one MTU too far shows up as 128 bad words.
  std::memmove(buf.data() + 2048, buf.data() + 1024, 1024);
  EXPECT_EQ(rc_pattern_mismatches(buf.data(), buf.size(), 42), 128u);
}

TEST(RdmaCheckProto, InfoMessageRoundTrips) {
  const rc_info in{0x12, 0xabcdef, 0x1234, 1u << 20, 0x7f0012345000ull, 99};
  char msg[RC_INFO_BYTES];
  rc_info_format(&in, msg);
  rc_info out{};
  ASSERT_EQ(rc_info_parse(msg, &out), 0);
  EXPECT_EQ(out.qpn, in.qpn);
  EXPECT_EQ(out.psn, in.psn);
  EXPECT_EQ(out.rkey, in.rkey);
  EXPECT_EQ(out.bytes, in.bytes);
  EXPECT_EQ(out.addr, in.addr);
  EXPECT_EQ(out.seed, in.seed);
  msg[0] = 'X';
  EXPECT_EQ(rc_info_parse(msg, &out), -1);
}

// Signs and prefixes sscanf's %x would accept are refused: "-8" would be a length of
// 0xfffffff8 bytes passing the multiple-of-8 check.
TEST(RdmaCheckProto, InfoMessageWithSignsOrPrefixesIsRefused) {
  for (const char* text :
       {"RDMACHECK 000012 abcdef 0000000000001234 00100000 -0000008 0000000000000063",
        "RDMACHECK +00012 abcdef 0000000000001234 00100000 00100000 0000000000000063",
        "RDMACHECK 0x0012 abcdef 0000000000001234 00100000 00100000 0000000000000063",
        "RDMACHECK 000012 abcdef 0000000000001234 00100000 00100000 000000000000006g"}) {
    char msg[RC_INFO_BYTES] = {};
    std::strncpy(msg, text, RC_INFO_BYTES - 1);
    rc_info out{};
    EXPECT_EQ(rc_info_parse(msg, &out), -1) << text;
  }
  char msg[RC_INFO_BYTES] = {};
  std::strncpy(msg, "RDMACHECK 000012 abcdef 0000000000001234 00100000 00100000 0000000000000063",
               RC_INFO_BYTES - 1);
  rc_info out{};
  EXPECT_EQ(rc_info_parse(msg, &out), 0) << "the well-formed original of the cases above";
  EXPECT_EQ(out.bytes, 0x100000u);
}

}  // namespace
}  // namespace rocemu::interop

namespace rocemu::interop {
namespace {

std::vector<uint8_t> from_hex(const std::string& h) {
  std::vector<uint8_t> v;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    v.push_back(static_cast<uint8_t>(std::stoul(h.substr(i, 2), nullptr, 16)));
  return v;
}

// Frames 8 and 9 of the golden capture 03_rc_pingpong_ipv6_gid0 (ibv_rc_pingpong -g 0 between
// two rxe guests): guest .11's kernel solicits fe80::5054:ff:fe77:12, whose kernel answers.
const char* kRxeNs =
    "3333ff77001252540077001186dd6000000000203afffe80000000000000505400fffe770011ff02000000"
    "00000000000001ff7700128700897e00000000fe80000000000000505400fffe7700120101525400770011";
const char* kLinuxNa =
    "52540077001152540077001286dd6000000000203afffe80000000000000505400fffe770012fe80000000"
    "000000505400fffe7700118800d7ac60000000fe80000000000000505400fffe7700120201525400770012";

TEST(NeighborAdvertisement, AnswersAnRxeSolicitationAsTheLinuxKernelDoes) {
  auto f = from_hex(kRxeNs);
  ASSERT_EQ(f.size(), 86u);
  Ipv6Addr target{};
  ASSERT_TRUE(is_neighbor_solicitation(f.data(), static_cast<uint32_t>(f.size()), target));
  EXPECT_EQ(ipv6_to_string(target), "fe80::5054:ff:fe77:12");
  const MacAddr mine{0x52, 0x54, 0x00, 0x77, 0x00, 0x12};
  EXPECT_EQ(target, link_local_ipv6(mine));
  std::vector<uint8_t> out(kNaFrameBytes);
  std::copy(f.begin(), f.end(), out.begin());
  EXPECT_EQ(make_neighbor_advertisement(out.data(), mine), kNaFrameBytes);
  EXPECT_EQ(out, from_hex(kLinuxNa)) << "byte for byte the kernel's own answer";
}

TEST(NeighborAdvertisement, RefusesWhatIsNotAValidSolicitation) {
  const auto good = from_hex(kRxeNs);
  Ipv6Addr t{};
  auto f = good;
  f[21] = 64;  // hop limit: RFC 4861 7.1.1 requires 255
  EXPECT_FALSE(is_neighbor_solicitation(f.data(), static_cast<uint32_t>(f.size()), t));
  f = good;
  f[60] ^= 1;  // checksum
  EXPECT_FALSE(is_neighbor_solicitation(f.data(), static_cast<uint32_t>(f.size()), t));
  f = good;
  f[54] = 136;  // an advertisement
  EXPECT_FALSE(is_neighbor_solicitation(f.data(), static_cast<uint32_t>(f.size()), t));
  for (uint32_t n = 0; n < good.size(); ++n)  // every truncation
    EXPECT_FALSE(is_neighbor_solicitation(good.data(), n, t)) << n;
  // A DAD probe (from ::) is answered to all-nodes, without the Solicited flag.
  f = good;
  std::fill(f.begin() + 22, f.begin() + 38, 0);
  f.resize(78);  // no source link-layer option from ::
  f[19] = 24;
  const uint16_t c = wire::ipv6_l4_checksum(*reinterpret_cast<const wire::Ipv6*>(f.data() + 14),
                                            f.data() + 54, 24, wire::kIpProtoIcmpv6, 2);
  f[56] = static_cast<uint8_t>(c >> 8);
  f[57] = static_cast<uint8_t>(c);
  ASSERT_TRUE(is_neighbor_solicitation(f.data(), static_cast<uint32_t>(f.size()), t));
  f.resize(kNaFrameBytes);
  make_neighbor_advertisement(f.data(), MacAddr{2, 0, 0, 0, 0, 1});
  EXPECT_EQ(ipv6_to_string(*reinterpret_cast<const Ipv6Addr*>(f.data() + 38)), "ff02::1");
  EXPECT_EQ(f[0], 0x33);
  EXPECT_EQ(f[58], 0x20) << "Override only";
}

}  // namespace
}  // namespace rocemu::interop
