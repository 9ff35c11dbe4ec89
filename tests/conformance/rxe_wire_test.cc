// rxe_wire_test.cc — wire compatibility with Linux rxe (INTEROP.md): every RoCEv2/IPv4
// packet of the golden captures parses with the endpoint's own parser, carries a valid
// ICRC by its computation, and re-encodes from the parsed fields to the same bytes, ICRC
// included. Also checks the field values the endpoint's own frames must share with rxe's.
// The same for RoCEv2 over IPv6 (ibv_rc_pingpong -g 0, capture 03), with the ICRC also
// recomputed from annex A17's pseudo-packet by the bit-wise reference CRC.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "common/icrc.h"
#include "nic/opcode_table.h"
#include "nic/packet.h"
#include "tests/conformance/pcapng_reader.h"
#include "tests/nic/host_pair.h"
#include "tests/support/eal_env.h"

namespace rocemu::test {
namespace {

const char* kCaptures[] = {
    "02_rc_pingpong_s64",  "04_uc_pingpong",          "05_ud_pingpong",
    "06_write_bw_8k",      "07_write_lat_64",         "09_read_bw_8k",
    "10_read_lat_64",      "11_atomic_fetchadd",      "12_atomic_cmpswap",
    "13_rdmacm_send_tos3_ce", "14_mtu4096_write_bw_16k",
    "16_hostpeer_python_rc_pingpong_with_injected_cnp"};

bool is_roce_v4(const std::vector<uint8_t>& f) {
  return f.size() >= 42 && f[12] == 0x08 && f[13] == 0x00 && f[23] == 17 && f[36] == 0x12 &&
         f[37] == 0xb7;
}

class RxeCapture : public ::testing::TestWithParam<const char*> {};

TEST_P(RxeCapture, EveryRocePacketParsesHasValidIcrcAndReencodesIdentically) {
  test_mempool();
  const auto frames = read_pcapng(std::string("data/") + GetParam() + ".pcapng");
  ASSERT_FALSE(frames.empty());
  int roce = 0;
  std::map<uint8_t, int> opcodes;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (!is_roce_v4(frames[i])) continue;
    ++roce;
    auto f = frames[i];
    nic::RocePacket p;
    ASSERT_EQ(nic::parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), nic::RxDrop::kNone)
        << GetParam() << " frame " << i;
    EXPECT_TRUE(nic::icrc_ok(p)) << GetParam() << " frame " << i;
    ++opcodes[p.opcode];
    std::vector<uint8_t> out(f.size() + 8, 0xee);
    const uint32_t len = nic::encode_roce(p, f.data() + p.payload_off, out.data());
    out.resize(len);
    EXPECT_EQ(out, frames[i]) << GetParam() << " frame " << i << " opcode "
                              << nic::op_info(p.opcode).name;
    // What the endpoint's frames share with rxe's (INTEROP.md).
    EXPECT_EQ(p.ttl, 64);
    EXPECT_EQ(p.ip_frag, 0x4000);
    EXPECT_EQ(p.pkey, 0xFFFF);
    EXPECT_EQ(wire::detail::get16(f.data() + wire::kUdpOff + 6), 0) << "UDP checksum";
  }
  EXPECT_GT(roce, 0);
  RecordProperty("roce_packets", roce);
}

INSTANTIATE_TEST_SUITE_P(Golden, RxeCapture, ::testing::ValuesIn(kCaptures),
                         [](const auto& info) { return std::string(info.param); });

TEST(RxeCaptures, CoverEveryRcOpcodeTheEndpointSpeaks) {
  std::set<uint8_t> seen;
  for (const char* c : kCaptures)
    for (const auto& f : read_pcapng(std::string("data/") + c + ".pcapng"))
      if (is_roce_v4(f)) seen.insert(f[wire::kBthOff]);
  using namespace wire;
  for (uint8_t op :
       {kRcSendFirst, kRcSendMiddle, kRcSendLast, kRcSendOnly, kRcWriteFirst, kRcWriteMiddle,
        kRcWriteLast, kRcWriteOnly, kRcReadRequest, kRcReadResponseFirst, kRcReadResponseMiddle,
        kRcReadResponseLast, kRcReadResponseOnly, kRcAcknowledge, kRcCompareSwap, kRcFetchAdd,
        kRcAtomicAcknowledge, kCnp})
    EXPECT_TRUE(seen.count(op)) << nic::op_info(op).name;
}

// rocemu's own atomics against rxe's (ib_atomic_bw, captures 11 and 12): the first request
// of a capture repeated by a rocemu requester (same VA through an IOVA region, same
// operands) gives the same AtomicETH bytes and frame length, and a rocemu responder whose
// target holds (host order) the value rxe's ATOMIC_ACKNOWLEDGE returned gives the same
// AtomicAckETH bytes, syndrome and MSN.
TEST(RxeCaptures, RocemuAtomicsCarryTheSameHeadersAsRxe) {
  test_mempool();
  for (const char* cap : {"11_atomic_fetchadd", "12_atomic_cmpswap"}) {
    SCOPED_TRACE(cap);
    std::vector<uint8_t> req, ack;
    for (const auto& f : read_pcapng(std::string("data/") + cap + ".pcapng")) {
      if (!is_roce_v4(f)) continue;
      const uint8_t op = f[wire::kBthOff];
      if (req.empty() && (op == wire::kRcFetchAdd || op == wire::kRcCompareSwap)) req = f;
      if (!req.empty() && ack.empty() && op == wire::kRcAtomicAcknowledge) ack = f;
    }
    ASSERT_FALSE(req.empty());
    ASSERT_FALSE(ack.empty());
    nic::RocePacket rq, ak;
    ASSERT_EQ(nic::parse_roce(req.data(), static_cast<uint32_t>(req.size()), rq),
              nic::RxDrop::kNone);
    ASSERT_EQ(nic::parse_roce(ack.data(), static_cast<uint32_t>(ack.size()), ak),
              nic::RxDrop::kNone);
    ASSERT_EQ(ak.psn, rq.psn);

    nic::NicParams p;
    nic::ConnectOptions opt;
    opt.access |= IBV_ACCESS_REMOTE_ATOMIC;
    HostPair hp(p, 25 * kBpsPerGbps, 2000, 1, opt, rq.psn, 1);
    constexpr int kAll = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                         IBV_ACCESS_REMOTE_ATOMIC;
    std::vector<uint8_t> target(64, 0), local(8, 0);
    std::memcpy(target.data(), &ak.atomic_orig, 8);  // rxe's target value, host order
    const auto tmr = hp.host[1]->reg_mr_iova(hp.pd[1], target.data(), target.size(), rq.va, kAll);
    const auto lmr = hp.reg(0, local);
    std::vector<uint8_t> our_req, our_ack;
    hp.wire->set_inspector([&](int side, const uint8_t* f, uint32_t len) {
      (side == 0 ? our_req : our_ack).assign(f, f + len);
    });
    ibv_sge sge{lmr.addr, 8, lmr.lkey};
    ibv_send_wr wr{};
    wr.opcode =
        rq.opcode == wire::kRcCompareSwap ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.atomic.remote_addr = rq.va;
    wr.wr.atomic.rkey = tmr.rkey;
    wr.wr.atomic.compare_add =
        rq.opcode == wire::kRcCompareSwap ? rq.atomic_compare : rq.atomic_swap_add;
    wr.wr.atomic.swap = rq.atomic_swap_add;
    ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
    std::vector<ibv_wc> wcs;
    ASSERT_TRUE(hp.wait_wcs(0, 1, wcs, 10 * kNsPerMs));
    EXPECT_EQ(wcs[0].status, IBV_WC_SUCCESS);
    uint64_t got;
    std::memcpy(&got, local.data(), 8);
    EXPECT_EQ(got, ak.atomic_orig);
    ASSERT_EQ(our_req.size(), req.size());
    ASSERT_EQ(our_ack.size(), ack.size());
    const uint32_t ext = wire::kRoceHeadersBytes;
    EXPECT_EQ(our_req[wire::kBthOff], req[wire::kBthOff]);
    EXPECT_EQ(our_req[wire::kBthOff + 8] & 0x80, req[wire::kBthOff + 8] & 0x80) << "AckReq";
    // AtomicETH: VA (8), R_Key (4, ours differs), swap/add (8), compare (8).
    EXPECT_TRUE(std::equal(our_req.begin() + ext, our_req.begin() + ext + 8, req.begin() + ext));
    EXPECT_TRUE(
        std::equal(our_req.begin() + ext + 12, our_req.begin() + ext + 28, req.begin() + ext + 12));
    EXPECT_EQ(our_ack[wire::kBthOff], ack[wire::kBthOff]);
    EXPECT_TRUE(std::equal(our_ack.begin() + ext, our_ack.begin() + ext + 12, ack.begin() + ext))
        << "AETH (syndrome, MSN of the first message) and AtomicAckETH";
  }
}

// The UC and UD captures (ibv_uc_pingpong, ibv_ud_pingpong): the opcodes rocemu sends for
// those transports, with what its requester copies from rxe: AckReq clear (nothing is
// acknowledged), and for UD a DETH naming the Q_Key and the sending QP.
TEST(RxeCaptures, UcAndUdFramesAsTheEndpointSendsThem) {
  test_mempool();
  std::set<uint8_t> seen;
  int ud = 0;
  for (const char* c : {"04_uc_pingpong", "05_ud_pingpong"}) {
    for (auto f : read_pcapng(std::string("data/") + c + ".pcapng")) {
      if (!is_roce_v4(f)) continue;
      nic::RocePacket p;
      ASSERT_EQ(nic::parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), nic::RxDrop::kNone);
      seen.insert(p.opcode);
      EXPECT_TRUE(p.op_flags & (nic::kOpUc | nic::kOpUd))
          << c << " " << nic::op_info(p.opcode).name;
      EXPECT_TRUE(p.op_flags & nic::kOpRequest);
      EXPECT_FALSE(p.ack_req) << c;
      if (p.op_flags & nic::kOpUd) {
        ++ud;
        EXPECT_EQ(p.qkey, 0x11111111u);  // ibv_ud_pingpong's Q_Key
        EXPECT_NE(p.src_qpn, 0u);
        EXPECT_EQ(p.frame[wire::kRoceHeadersBytes + 4], 0) << "DETH reserved byte";
      }
    }
  }
  using nic::uc_opcode;
  for (uint8_t op : {uc_opcode(wire::kRcSendFirst), uc_opcode(wire::kRcSendMiddle),
                     uc_opcode(wire::kRcSendLast), nic::kUdSendOnly})
    EXPECT_TRUE(seen.count(op)) << nic::op_info(op).name;
  EXPECT_EQ(ud, 10);  // every datagram of the capture
}

TEST(RxeCaptures, ACorruptedCopyFailsTheIcrc) {
  test_mempool();
  auto frames = read_pcapng("data/06_write_bw_8k.pcapng");
  int checked = 0;
  for (auto& f : frames) {
    if (!is_roce_v4(f)) continue;
    f[wire::kBthOff + 11] ^= 1;  // PSN bit
    nic::RocePacket p;
    ASSERT_EQ(nic::parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), nic::RxDrop::kNone);
    EXPECT_FALSE(nic::icrc_ok(p));
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

bool is_roce_v6(const std::vector<uint8_t>& f) {
  return f.size() >= wire::kRoce6HeadersBytes && f[12] == 0x86 && f[13] == 0xdd && f[20] == 17 &&
         f[56] == 0x12 && f[57] == 0xb7;
}

// Annex A17.3.3 over IPv6, written out independently of common/icrc.cc: 8 bytes of 1s (the
// LRH), the IPv6 header with Traffic Class, Flow Label and Hop Limit all 1s, the UDP header
// with its checksum all 1s, the BTH with resv8a all 1s, the rest up to the ICRC.
uint32_t annex_a17_icrc_ipv6(const std::vector<uint8_t>& f, uint32_t icrc_off) {
  std::vector<uint8_t> pseudo(8, 0xff);
  pseudo.insert(pseudo.end(), f.begin() + wire::kIpOff, f.begin() + icrc_off);
  uint8_t* ip = pseudo.data() + 8;
  ip[0] |= 0x0f;                   // Traffic Class high nibble
  ip[1] = ip[2] = ip[3] = 0xff;    // Traffic Class low nibble, Flow Label
  ip[7] = 0xff;                    // Hop Limit
  ip[40 + 6] = ip[40 + 7] = 0xff;  // UDP checksum
  ip[48 + 4] = 0xff;               // BTH resv8a
  return crc32_reference(0, pseudo.data(), static_cast<uint32_t>(pseudo.size()));
}

TEST(RxeIpv6Capture, EveryRocePacketParsesHasValidIcrcAndReencodesIdentically) {
  test_mempool();
  const auto frames = read_pcapng("data/03_rc_pingpong_ipv6_gid0.pcapng");
  ASSERT_FALSE(frames.empty());
  std::set<uint8_t> opcodes;
  int roce = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (!is_roce_v6(frames[i])) continue;
    ++roce;
    auto f = frames[i];
    nic::RocePacket p;
    ASSERT_EQ(nic::parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), nic::RxDrop::kNone)
        << "frame " << i;
    ASSERT_TRUE(p.ipv6);
    EXPECT_TRUE(nic::icrc_ok(p)) << "frame " << i;
    EXPECT_EQ(annex_a17_icrc_ipv6(f, p.icrc_off), icrc_load(f.data(), p.icrc_off)) << "frame " << i;
    EXPECT_TRUE(nic::udp_checksum_ok(p));
    opcodes.insert(p.opcode);
    std::vector<uint8_t> out(f.size() + 8, 0xee);
    const uint32_t len = nic::encode_roce(p, f.data() + p.payload_off, out.data());
    out.resize(len);
    EXPECT_EQ(out, frames[i]) << "frame " << i << " opcode " << nic::op_info(p.opcode).name;
    // What rxe puts in the IPv6 header and what rocemu's frames share with it.
    EXPECT_EQ(p.ttl, 64) << "hop limit";
    EXPECT_EQ(p.tos, 0) << "traffic class";
    EXPECT_EQ(p.flow_label, 0u);
    EXPECT_EQ(p.udp_checksum, 0) << "rxe sends no UDP checksum over IPv6";
    EXPECT_EQ(p.pkey, 0xFFFF);
    EXPECT_EQ(p.src_ip, 0u);
    // GID index 0: the link-local address of the sender's MAC (modified EUI-64).
    EXPECT_EQ(p.src_ip6, link_local_ipv6(p.src_mac)) << "frame " << i;
    EXPECT_EQ(p.dst_ip6, link_local_ipv6(p.dst_mac)) << "frame " << i;
  }
  EXPECT_EQ(roce, 50);
  for (uint8_t op :
       {wire::kRcSendFirst, wire::kRcSendMiddle, wire::kRcSendLast, wire::kRcAcknowledge})
    EXPECT_TRUE(opcodes.count(op)) << nic::op_info(op).name;
}

TEST(RxeIpv6Capture, ACorruptedFieldFailsTheIcrcAndAMaskedOneDoesNot) {
  test_mempool();
  int checked = 0;
  for (auto f : read_pcapng("data/03_rc_pingpong_ipv6_gid0.pcapng")) {
    if (!is_roce_v6(f)) continue;
    nic::RocePacket p;
    ASSERT_EQ(nic::parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), nic::RxDrop::kNone);
    // Variant fields (Traffic Class/ECN, Flow Label, Hop Limit) are masked: still valid.
    auto* ip = reinterpret_cast<wire::Ipv6*>(f.data() + wire::kIpOff);
    ip->set_vtcfl(static_cast<uint8_t>(26 << 2 | wire::kEcnCe), 0x12345);
    ip->hop_limit = 3;
    EXPECT_TRUE(nic::icrc_ok(p));
    ip->src[15] ^= 1;  // an invariant field
    EXPECT_FALSE(nic::icrc_ok(p));
    ++checked;
  }
  EXPECT_EQ(checked, 50);
}

TEST(RxeIpv6Capture, AWrongNonZeroUdpChecksumIsCaughtAndARightOneAccepted) {
  test_mempool();
  for (auto f : read_pcapng("data/03_rc_pingpong_ipv6_gid0.pcapng")) {
    if (!is_roce_v6(f)) continue;
    nic::RocePacket p;
    ASSERT_EQ(nic::parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), nic::RxDrop::kNone);
    const uint16_t c = nic::udp_checksum_ipv6(f.data());
    wire::detail::put16(f.data() + wire::kUdp6Off + 6, c);
    ASSERT_EQ(nic::parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), nic::RxDrop::kNone);
    EXPECT_TRUE(nic::udp_checksum_ok(p));
    EXPECT_TRUE(nic::icrc_ok(p)) << "the UDP checksum is masked in the ICRC";
    // Re-encoding a frame that carries a checksum reproduces it.
    std::vector<uint8_t> out(f.size() + 8);
    out.resize(nic::encode_roce(p, f.data() + p.payload_off, out.data()));
    EXPECT_EQ(out, f);
    wire::detail::put16(f.data() + wire::kUdp6Off + 6, static_cast<uint16_t>(c ^ 0x0100));
    ASSERT_EQ(nic::parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), nic::RxDrop::kNone);
    EXPECT_FALSE(nic::udp_checksum_ok(p));
    return;
  }
  FAIL() << "no IPv6 RoCE frame";
}

TEST(RxeIpv6Capture, MalformedCopiesAreRefusedWithAReason) {
  test_mempool();
  std::vector<uint8_t> good;
  for (const auto& f : read_pcapng("data/03_rc_pingpong_ipv6_gid0.pcapng"))
    if (is_roce_v6(f)) {
      good = f;
      break;
    }
  ASSERT_FALSE(good.empty());
  nic::RocePacket p;
  for (uint32_t n = 0; n < good.size(); ++n) {  // every truncation
    auto f = good;
    EXPECT_NE(nic::parse_roce(f.data(), n, p), nic::RxDrop::kNone) << n;
  }
  auto f = good;
  f[wire::kIpOff] = 0x45;  // version 4 under ethertype IPv6
  EXPECT_EQ(nic::parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), nic::RxDrop::kIpHeader);
  f = good;
  f[20] = 0;  // next header: hop-by-hop options (rxe sends no extension headers)
  EXPECT_EQ(nic::parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), nic::RxDrop::kNotRoce);
  f = good;
  wire::detail::put16(f.data() + 18, 0xffff);  // payload length past the frame
  EXPECT_EQ(nic::parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), nic::RxDrop::kTruncated);
  f = good;
  wire::detail::put16(f.data() + wire::kUdp6Off + 4, 9);  // UDP length
  EXPECT_EQ(nic::parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), nic::RxDrop::kUdpLength);
}

}  // namespace
}  // namespace rocemu::test

namespace rocemu::test {
namespace {

// Seeded mutations of rxe's IPv6 frames (random bytes, lengths, the IPv6 length fields):
// every one is parsed or refused with a reason, and the checks on a parsed one stay inside
// the frame (run under the ASan build option to see it).
TEST(RxeIpv6Capture, MutatedFramesAreParsedOrRefusedNeverReadPastTheirEnd) {
  test_mempool();
  std::vector<std::vector<uint8_t>> seeds;
  for (const auto& f : read_pcapng("data/03_rc_pingpong_ipv6_gid0.pcapng"))
    if (is_roce_v6(f)) seeds.push_back(f);
  ASSERT_FALSE(seeds.empty());
  Rng r(13);
  int parsed = 0, refused = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> f = seeds[r.next() % seeds.size()];
    const int flips = 1 + static_cast<int>(r.next() % 4);
    for (int k = 0; k < flips; ++k) {
      const uint64_t pick = r.next();
      if (pick % 3 == 0) {  // a length field: IPv6 payload length or UDP length
        const uint32_t at = pick % 2 ? 18 : wire::kUdp6Off + 4;
        wire::detail::put16(f.data() + at, static_cast<uint16_t>(r.next()));
      } else {
        f[r.next() % f.size()] = static_cast<uint8_t>(r.next());
      }
    }
    if (r.next() % 4 == 0) f.resize(r.next() % (f.size() + 1));  // truncated to any length
    std::vector<uint8_t> exact(f.begin(), f.end());  // a heap block of exactly the frame
    nic::RocePacket p;
    if (nic::parse_roce(exact.data(), static_cast<uint32_t>(exact.size()), p) ==
        nic::RxDrop::kNone) {
      ++parsed;
      ASSERT_LE(p.icrc_off + wire::kIcrcBytes, exact.size());
      ASSERT_LE(p.payload_off + p.payload_len, p.icrc_off);
      (void)nic::icrc_ok(p);
      (void)nic::udp_checksum_ok(p);
    } else {
      ++refused;
    }
  }
  EXPECT_GT(parsed, 100);
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace rocemu::test
