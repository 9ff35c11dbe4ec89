// rxe_wire_test.cc — wire compatibility with Linux rxe (INTEROP.md): every RoCEv2/IPv4
// packet of the golden captures parses with the endpoint's own parser, carries a valid
// ICRC by its computation, and re-encodes from the parsed fields to the same bytes, ICRC
// included. Also checks the field values the endpoint's own frames must share with rxe's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

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

}  // namespace
}  // namespace rocemu::test
