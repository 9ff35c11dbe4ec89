// psn_opcode_test.cc — unit tests of the pure transport rules: 24-bit PSN arithmetic across
// the wrap, the local ACK timeout and RNR timer formulas, the opcode legality table, frame
// building/parsing round trips, and [nic] parameter validation.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <deque>
#include <set>

#include "common/rng.h"
#include "common/wire.h"
#include "nic/nic_params.h"
#include "nic/opcode_table.h"
#include "nic/packet.h"
#include "nic/psn.h"
#include "nic/qp.h"
#include "tests/support/eal_env.h"

namespace rocemu::nic {
namespace {

TEST(Psn, DifferenceIsSignedAcrossTheWrap) {
  EXPECT_EQ(psn_diff(0, 0xFFFFFF), 1);
  EXPECT_EQ(psn_diff(0xFFFFFF, 0), -1);
  EXPECT_EQ(psn_diff(5, 0xFFFFFA), 11);
  EXPECT_EQ(psn_diff(0xFFFFFA, 5), -11);
  EXPECT_EQ(psn_diff(0x7FFFFF, 0), 0x7FFFFF);
  EXPECT_EQ(psn_diff(0x800000, 0), -0x800000);  // half the circle: counts as behind
  EXPECT_TRUE(psn_before(0xFFFFF0, 3));
  EXPECT_FALSE(psn_before(3, 0xFFFFF0));
  EXPECT_EQ(psn_add(0xFFFFFE, 5), 3u);
  for (uint32_t a : {0u, 1u, 0x7FFFFFu, 0xFFFFFFu})
    for (uint32_t n : {0u, 1u, 100u, 0x7FFFFFu})
      EXPECT_EQ(psn_diff(psn_add(a, n), a), static_cast<int32_t>(n));
}

// The send, receive and READ queues' ring: each queued entry has its own slot when the
// indices wrap at 2^32, for capacities that are and are not powers of two (taken modulo 3,
// 2^32 - 1 and 0 were one slot: a QP's 4,294,967,296th work request overwrote one still
// queued); it holds exactly its capacity, gives entries back in order, and an emptied ring
// keeps capacity and storage.
TEST(Ring, EntriesKeepTheirOwnSlotsAcrossTheIndexWrap) {
  for (const uint32_t cap : {1u, 3u, 5u, 500u, 1024u}) {
    SCOPED_TRACE(cap);
    Ring<uint64_t> r;
    r.reset(cap);
    EXPECT_TRUE(r.empty());
    r.head = r.tail = 0xFFFFFFFFu - cap / 2;  // the wrap falls inside the first fill
    uint64_t pushed = 0, popped = 0;
    for (uint32_t round = 0; round < 2 * cap + 7; ++round) {
      while (!r.full()) r.at(r.tail++) = pushed++;
      ASSERT_EQ(r.size(), cap);
      std::set<const uint64_t*> slots;
      for (uint32_t i = r.head; i != r.tail; ++i) slots.insert(&r.at(i));
      ASSERT_EQ(slots.size(), cap) << "round " << round;
      for (uint32_t k = 1 + round % cap; k > 0; --k) ASSERT_EQ(r.at(r.head++), popped++);
    }
    EXPECT_GT(r.tail, 0u);
    EXPECT_LT(r.tail, 0x80000000u) << "the indices went past the wrap";
    const uint64_t* storage = &r.at(0);
    const Ring<uint64_t> e = r.emptied();
    EXPECT_TRUE(e.empty());
    EXPECT_EQ(e.capacity, cap);
    EXPECT_EQ(&e.at(0), storage);
  }
}

TEST(Timers, LocalAckTimeoutIs4096nsTimesTwoToTheTimeout) {
  EXPECT_EQ(local_ack_timeout_ns(0), kNever);
  for (uint8_t t = 1; t <= 31; ++t) EXPECT_EQ(local_ack_timeout_ns(t), TimeNs{4096} << t);
  EXPECT_EQ(local_ack_timeout_ns(14), 67'108'864);  // ~67 ms, rxe's default
}

TEST(Timers, RnrTimerCodesFollowIbtaTable45) {
  EXPECT_EQ(rnr_timer_ns(0), 655'360'000);
  EXPECT_EQ(rnr_timer_ns(1), 10'000);
  EXPECT_EQ(rnr_timer_ns(12), 640'000);
  EXPECT_EQ(rnr_timer_ns(14), 1'280'000);
  EXPECT_EQ(rnr_timer_ns(31), 491'520'000);
}

TEST(OpcodeTable, ExtendedHeadersMatchIbtaTable38) {
  using namespace wire;
  EXPECT_EQ(op_info(kRcWriteFirst).ext_bytes, 16);
  EXPECT_EQ(op_info(kRcWriteOnlyImm).ext_bytes, 20);
  EXPECT_EQ(op_info(kRcReadRequest).ext_bytes, 16);
  EXPECT_EQ(op_info(kRcReadResponseMiddle).ext_bytes, 0);
  EXPECT_EQ(op_info(kRcReadResponseLast).ext_bytes, 4);
  EXPECT_EQ(op_info(kRcAcknowledge).ext_bytes, 4);
  EXPECT_EQ(op_info(kRcAtomicAcknowledge).ext_bytes, 12);
  EXPECT_EQ(op_info(kRcFetchAdd).ext_bytes, 28);
  EXPECT_EQ(op_info(kRcSendLastImm).ext_bytes, 4);
  EXPECT_EQ(op_info(kCnp).ext_bytes, 16);
  EXPECT_EQ(op_info(0x15).flags, 0u);     // reserved
  EXPECT_EQ(op_info(0x64).ext_bytes, 8);  // UD SEND_ONLY: DETH
  EXPECT_EQ(op_info(0x64).flags & (kOpRequest | kOpResponse | kOpUd), kOpRequest | kOpUd);
  EXPECT_EQ(op_info(0x2a).ext_bytes, 16);  // UC WRITE_ONLY: RETH
  EXPECT_EQ(op_info(0x2a).flags & (kOpRequest | kOpUc), kOpRequest | kOpUc);
  EXPECT_EQ(op_info(0x2c).flags, 0u);
}

TEST(OpcodeTable, TransportsByTheTopThreeBits) {
  EXPECT_STREQ(transport_name(0x04), "RC");
  EXPECT_STREQ(transport_name(0x24), "UC");
  EXPECT_STREQ(transport_name(0x44), "RD");
  EXPECT_STREQ(transport_name(0x64), "UD");
  EXPECT_STREQ(transport_name(0x81), "CNP");
  EXPECT_STREQ(transport_name(0xa4), "XRC");
  EXPECT_STREQ(transport_name(0xc0), "manufacturer-specific");
  for (int op = 0; op < 256; ++op) {
    const bool impl = op < 0x40 || (op >= 0x60 && op < 0x80) || op == wire::kCnp;
    EXPECT_EQ(transport_implemented(static_cast<uint8_t>(op)), impl) << op;
  }
  EXPECT_EQ(uc_opcode(wire::kRcWriteLastImm), 0x29);
  EXPECT_TRUE(op_sequence_ok(uc_opcode(wire::kRcSendFirst), uc_opcode(wire::kRcSendLast)));
  EXPECT_FALSE(op_sequence_ok(uc_opcode(wire::kRcSendFirst), uc_opcode(wire::kRcWriteLast)));
  EXPECT_FALSE(op_sequence_ok(0xff, uc_opcode(wire::kRcSendMiddle)));
}

TEST(OpcodeTable, LegalityByQpState) {
  using namespace wire;
  EXPECT_FALSE(opcode_legal_in_state(kRcWriteOnly, IBV_QPS_RESET));
  EXPECT_FALSE(opcode_legal_in_state(kRcWriteOnly, IBV_QPS_INIT));
  EXPECT_TRUE(opcode_legal_in_state(kRcWriteOnly, IBV_QPS_RTR));
  EXPECT_TRUE(opcode_legal_in_state(kRcWriteOnly, IBV_QPS_RTS));
  EXPECT_FALSE(opcode_legal_in_state(kRcWriteOnly, IBV_QPS_ERR));
  EXPECT_FALSE(opcode_legal_in_state(kRcAcknowledge, IBV_QPS_RTR));  // RTR has nothing sent
  EXPECT_TRUE(opcode_legal_in_state(kRcAcknowledge, IBV_QPS_RTS));
  EXPECT_FALSE(opcode_legal_in_state(kRcReadResponseOnly, IBV_QPS_ERR));
  EXPECT_FALSE(opcode_legal_in_state(0x1f, IBV_QPS_RTS));
}

TEST(OpcodeTable, RequestSequenceRules) {
  using namespace wire;
  EXPECT_TRUE(op_sequence_ok(0xff, kRcWriteFirst));
  EXPECT_FALSE(op_sequence_ok(0xff, kRcWriteMiddle));
  EXPECT_FALSE(op_sequence_ok(0xff, kRcSendLast));
  EXPECT_TRUE(op_sequence_ok(kRcWriteFirst, kRcWriteMiddle));
  EXPECT_TRUE(op_sequence_ok(kRcWriteMiddle, kRcWriteLastImm));
  EXPECT_FALSE(op_sequence_ok(kRcWriteMiddle, kRcSendLast));
  EXPECT_FALSE(op_sequence_ok(kRcWriteFirst, kRcWriteOnly));
  EXPECT_FALSE(op_sequence_ok(kRcSendFirst, kRcReadRequest));
  EXPECT_TRUE(op_sequence_ok(kRcSendLast, kRcReadRequest));
  EXPECT_TRUE(op_sequence_ok(kRcWriteLast, kRcSendOnly));
}

// READ response k of n: FIRST/ONLY at 0; later ones MIDDLE/LAST of the original answer, or
// FIRST/ONLY where a responder answers a re-request from inside the READ as a new request.
TEST(OpcodeTable, ReadResponsePositions) {
  using namespace wire;
  const auto ok = [](uint8_t op, uint32_t k, uint32_t n) {
    return read_response_position_ok(op_info(op).flags, k, n);
  };
  // One-packet READ: only ONLY.
  EXPECT_TRUE(ok(kRcReadResponseOnly, 0, 1));
  EXPECT_FALSE(ok(kRcReadResponseFirst, 0, 1));
  EXPECT_FALSE(ok(kRcReadResponseMiddle, 0, 1));
  EXPECT_FALSE(ok(kRcReadResponseLast, 0, 1));
  // Response 0 of 4: FIRST only.
  EXPECT_TRUE(ok(kRcReadResponseFirst, 0, 4));
  EXPECT_FALSE(ok(kRcReadResponseMiddle, 0, 4));
  EXPECT_FALSE(ok(kRcReadResponseOnly, 0, 4));
  EXPECT_FALSE(ok(kRcReadResponseLast, 0, 4));
  // Response 2 of 4: MIDDLE (rxe's replay and the original) or FIRST (a new-request replay).
  EXPECT_TRUE(ok(kRcReadResponseMiddle, 2, 4));
  EXPECT_TRUE(ok(kRcReadResponseFirst, 2, 4));
  EXPECT_FALSE(ok(kRcReadResponseLast, 2, 4));
  EXPECT_FALSE(ok(kRcReadResponseOnly, 2, 4));
  // Response 3 of 4: LAST, or ONLY for a new-request replay of one packet.
  EXPECT_TRUE(ok(kRcReadResponseLast, 3, 4));
  EXPECT_TRUE(ok(kRcReadResponseOnly, 3, 4));
  EXPECT_FALSE(ok(kRcReadResponseMiddle, 3, 4));
  EXPECT_FALSE(ok(kRcReadResponseFirst, 3, 4));
  // Not a READ response at all.
  EXPECT_FALSE(ok(kRcAcknowledge, 0, 1));
}

// IBTA 9.4.5: compare & swap stores the swap value only if the target equals the compare
// value; fetch & add adds modulo 2^64. Either returns the original value.
TEST(Atomics, ResultFollowsIbtaCompareSwapAndFetchAdd) {
  EXPECT_EQ(atomic_result(true, 5, 9, 5), 9u) << "equal: swapped";
  EXPECT_EQ(atomic_result(true, 5, 9, 6), 5u) << "not equal: unchanged";
  EXPECT_EQ(atomic_result(true, 0, 0, 0), 0u);
  EXPECT_EQ(atomic_result(true, ~0ull, 1, ~0ull), 1u);
  EXPECT_EQ(atomic_result(false, 5, 9, 1234), 14u) << "fetch & add ignores compare";
  EXPECT_EQ(atomic_result(false, ~0ull, 2, 0), 1u) << "wraps modulo 2^64";
  EXPECT_EQ(atomic_result(false, 1ull << 63, 1ull << 63, 0), 0u);
  EXPECT_TRUE(is_rd_atomic(IBV_WR_RDMA_READ));
  EXPECT_TRUE(is_rd_atomic(IBV_WR_ATOMIC_CMP_AND_SWP));
  EXPECT_TRUE(is_rd_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD));
  EXPECT_FALSE(is_rd_atomic(IBV_WR_RDMA_WRITE));
  EXPECT_FALSE(is_atomic(IBV_WR_RDMA_READ));
}

TEST(Packet, AtomicHeadersAreBigEndianAtTheirIbtaOffsets) {
  test::test_mempool();
  FrameAddress a;
  a.src_ip = 0x0a000001;
  a.dst_ip = 0x0a000002;
  a.dqpn = 0x11;
  RocePacket p;
  // Request: AtomicETH right after the BTH, VA(8) R_Key(4) swap/add(8) compare(8).
  std::array<uint8_t, 256> f{};
  uint32_t at = write_headers(f.data(), make_template(a), wire::kRcCompareSwap, 7, true, false,
                              sizeof(wire::AtomicEth), 0, 1);
  auto* e = reinterpret_cast<wire::AtomicEth*>(f.data() + at);
  e->set_va(0x0102030405060708ull);
  e->set_rkey(0x11223344u);
  e->set_swap_add(0xa1a2a3a4a5a6a7a8ull);
  e->set_compare(0xb1b2b3b4b5b6b7b8ull);
  seal_frame(f.data());
  const uint8_t want[28] = {1,    2,    3,    4,    5,    6,    7,    8,    0x11, 0x22,
                            0x33, 0x44, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8,
                            0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8};
  EXPECT_EQ(std::memcmp(f.data() + wire::kRoceHeadersBytes, want, 28), 0);
  const uint32_t len = frame_bytes(28, 0);
  EXPECT_EQ(len, 86u) << "as rxe's atomic requests (golden captures 11, 12)";
  ASSERT_EQ(parse_roce(f.data(), len, p), RxDrop::kNone);
  EXPECT_TRUE(icrc_ok(p));
  EXPECT_EQ(p.va, 0x0102030405060708ull);
  EXPECT_EQ(p.rkey, 0x11223344u);
  EXPECT_EQ(p.atomic_swap_add, 0xa1a2a3a4a5a6a7a8ull);
  EXPECT_EQ(p.atomic_compare, 0xb1b2b3b4b5b6b7b8ull);
  // ATOMIC_ACKNOWLEDGE: AETH then the 8-byte original value.
  std::array<uint8_t, 256> g{};
  at = write_headers(g.data(), make_template(a), wire::kRcAtomicAcknowledge, 7, false, false, 12, 0,
                     2);
  g[at] = 0x1f;
  reinterpret_cast<wire::AtomicAckEth*>(g.data() + at + 4)->set_orig(0xc1c2c3c4c5c6c7c8ull);
  seal_frame(g.data());
  EXPECT_EQ(g[at + 4], 0xc1);
  EXPECT_EQ(g[at + 11], 0xc8);
  ASSERT_EQ(parse_roce(g.data(), frame_bytes(12, 0), p), RxDrop::kNone);
  EXPECT_EQ(frame_bytes(12, 0), 70u);
  EXPECT_EQ(p.atomic_orig, 0xc1c2c3c4c5c6c7c8ull);
  EXPECT_EQ(p.syndrome, 0x1f);
}

TEST(Packet, BuildThenParseRoundTripsEveryField) {
  test::test_mempool();
  FrameAddress a;
  a.src_mac = {2, 0, 0, 0, 0, 1};
  a.dst_mac = {2, 0, 0, 0, 0, 2};
  a.src_ip = 0x0a000001;
  a.dst_ip = 0x0a000002;
  a.tos = 26 << 2 | wire::kEcnEct0;
  a.udp_sport = qp_udp_source_port(0x11, 0x12);
  a.dqpn = 0x12;
  const FrameTemplate t = make_template(a);
  std::vector<uint8_t> f(frame_bytes(20, 1001));
  uint32_t at =
      write_headers(f.data(), t, wire::kRcWriteOnlyImm, 0xFFFFFF, true, true, 20, 1001, 7);
  auto* r = reinterpret_cast<wire::Reth*>(f.data() + at);
  r->set_va(0x1122334455667788ull);
  r->set_rkey(0xabcd);
  r->set_dma_len(1001);
  const uint32_t imm = 0xdeadbeef;
  std::memcpy(f.data() + at + 16, &imm, 4);
  for (uint32_t i = 0; i < 1001; ++i) f[at + 20 + i] = static_cast<uint8_t>(i);
  seal_frame(f.data());
  RocePacket p;
  ASSERT_EQ(parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), RxDrop::kNone);
  EXPECT_TRUE(icrc_ok(p));
  EXPECT_EQ(p.opcode, wire::kRcWriteOnlyImm);
  EXPECT_EQ(p.psn, 0xFFFFFFu);
  EXPECT_TRUE(p.ack_req);
  EXPECT_TRUE(p.solicited);
  EXPECT_EQ(p.pad, 3);
  EXPECT_EQ(p.pkey, 0xFFFF);
  EXPECT_EQ(p.dqpn, 0x12u);
  EXPECT_EQ(p.va, 0x1122334455667788ull);
  EXPECT_EQ(p.rkey, 0xabcdu);
  EXPECT_EQ(p.dma_len, 1001u);
  EXPECT_EQ(p.imm_be, imm);
  EXPECT_EQ(p.payload_len, 1001u);
  EXPECT_EQ(p.payload_off, at + 20);
  EXPECT_EQ(p.tos, a.tos);
  EXPECT_GE(p.udp_sport, 0xC000);
  const auto* ip = reinterpret_cast<const wire::Ipv4*>(f.data() + wire::kIpOff);
  EXPECT_EQ(ip->checksum(), ip->compute_checksum());
  f[at + 30] ^= 1;
  ASSERT_EQ(parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), RxDrop::kNone);
  EXPECT_FALSE(icrc_ok(p));
}

TEST(Packet, HeaderChecksumFromTheTemplateIsTheChecksumOfTheHeader) {
  // write_headers() adds the length and id to the template's sum: over random addresses,
  // TOS, lengths and ids (ids near 0xffff make the sum carry) it must equal RFC 791's
  // checksum of the header it wrote.
  Rng rng(15);
  const auto next = [&rng] { return rng.next(); };
  std::vector<uint8_t> f(frame_bytes(16, 4096));
  for (int run = 0; run < 20000; ++run) {
    FrameAddress a;
    a.src_ip = static_cast<uint32_t>(next());
    a.dst_ip = run % 3 == 0 ? 0xffffffffu : static_cast<uint32_t>(next());
    a.tos = static_cast<uint8_t>(next());
    a.dqpn = static_cast<uint32_t>(next()) & 0xffffff;
    const auto payload = static_cast<uint32_t>(next() % 4097);
    const auto id = static_cast<uint16_t>(run % 2 ? 0xffff - next() % 64 : next());
    write_headers(f.data(), make_template(a), wire::kRcWriteFirst, 7, false, false, 16,
                  payload, id);
    const auto* ip = reinterpret_cast<const wire::Ipv4*>(f.data() + wire::kIpOff);
    ASSERT_EQ(ip->id(), id);
    ASSERT_EQ(ip->total_length(), frame_bytes(16, payload) - wire::kIpOff);
    ASSERT_EQ(ip->checksum(), ip->compute_checksum()) << "run " << run;
  }
}

TEST(Packet, TruncatedAndGarbledFramesAreRejectedWithTheirReason) {
  std::vector<uint8_t> f(frame_bytes(0, 0));
  FrameAddress a;
  write_headers(f.data(), make_template(a), wire::kRcSendOnly, 1, false, false, 0, 0, 0);
  RocePacket p;
  EXPECT_EQ(parse_roce(f.data(), 10, p), RxDrop::kTruncated);
  EXPECT_EQ(parse_roce(f.data(), static_cast<uint32_t>(f.size()) - 1, p), RxDrop::kTruncated);
  f[wire::kBthOff] = 0x1e;
  EXPECT_EQ(parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), RxDrop::kBadOpcode);
  f[wire::kBthOff] = wire::kRcAcknowledge;  // needs an AETH that is not there
  EXPECT_EQ(parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), RxDrop::kTruncated);
  f[wire::kBthOff] = wire::kRcSendOnly;
  f[wire::kUdpOff + 5] ^= 1;
  EXPECT_EQ(parse_roce(f.data(), static_cast<uint32_t>(f.size()), p), RxDrop::kUdpLength);
}

TEST(NicParams, RejectsBadValuesAndUnknownKeys) {
  auto t = toml::parse("mtu_bytes = 1000\ndata_dscp = 70\nbogus = 1\ntimeout = 8\n");
  ConfigErrors errors;
  ConfigReader r(t, "nic", errors);
  const NicParams p = parse_nic_params(r);
  EXPECT_EQ(errors.size(), 3u);
  EXPECT_EQ(p.timeout, 8);
  auto ok = toml::parse("mtu_bytes = 4096\necn_capable = true\n");
  ConfigErrors e2;
  ConfigReader r2(ok, "nic", e2);
  const NicParams q = parse_nic_params(r2);
  EXPECT_TRUE(e2.empty());
  EXPECT_EQ(q.mtu_bytes, 4096u);
  EXPECT_TRUE(q.ecn_capable);
  EXPECT_EQ(q.dscp_to_priority[26], 3);
  EXPECT_EQ(q.dscp_to_priority[48], 6);
}

TEST(NicParams, PfcWatchdogTableForwardsOnly) {
  const auto parse = [](const char* text, ConfigErrors& e) {
    auto t = toml::parse(text);
    ConfigReader r(t, "nic", e);
    return parse_nic_params(r);
  };
  ConfigErrors errs;
  EXPECT_FALSE(parse("", errs).pfc_watchdog.on()) << "off without the table";
  const NicParams d = parse("[pfc_watchdog]\n", errs);
  EXPECT_EQ(d.pfc_watchdog.detection_ns, 200 * kNsPerMs);
  EXPECT_EQ(d.pfc_watchdog.restore_ns, 200 * kNsPerMs);
  EXPECT_EQ(parse("[pfc_watchdog]\ndetection_ms = 2\n", errs).pfc_watchdog.detection_ns,
            2 * kNsPerMs);
  ASSERT_TRUE(errs.empty()) << errs.format("t");
  ConfigErrors bad;
  parse("[pfc_watchdog]\naction = \"drop\"\nrestore_ms = -1\n", bad);
  const std::string all = bad.format("t");
  EXPECT_NE(all.find("nic.pfc_watchdog.action=drop"), std::string::npos) << all;
  EXPECT_NE(all.find("nic.pfc_watchdog.restore_ms"), std::string::npos) << all;
}

}  // namespace
}  // namespace rocemu::nic

namespace rocemu::nic {
namespace {

TEST(NicParams, ShippedDefaultConfigParsesToTheDefaults) {
  auto t = toml::parse_file("../../configs/nic/default.toml");
  ConfigErrors errors;
  ConfigReader root(t, "", errors);
  auto r = root.table("nic");
  ASSERT_TRUE(r.has_value());
  const NicParams p = parse_nic_params(*r);
  EXPECT_TRUE(errors.empty()) << errors.format("default.toml");
  const NicParams d;
  EXPECT_EQ(p.mtu_bytes, d.mtu_bytes);
  EXPECT_EQ(p.timeout, d.timeout);
  EXPECT_EQ(p.dscp_to_priority, d.dscp_to_priority);
  EXPECT_EQ(p.max_read_jobs, d.max_read_jobs);
}

}  // namespace
}  // namespace rocemu::nic

#include <rte_mbuf.h>

#include <stdexcept>
#include <string>

#include "nic/roce_host.h"
#include "tests/support/eal_env.h"

namespace rocemu::nic {
namespace {

TEST(CompletionQueue, IsAFifoOfItsCapacityAcrossWrapsAndCountsOverflows) {
  // Against a deque model, over random pushes and pops: the same completions in the same
  // order, a push into a full ring refused and counted, and the ring back at entry 0 each
  // time it empties (it touches only as many entries as ever waited at once).
  CompletionQueue cq(5);
  std::deque<uint64_t> model;
  uint64_t next = 1, refused = 0;
  uint32_t seed = 12345;
  for (int step = 0; step < 20000; ++step) {
    seed = seed * 1103515245u + 12345u;
    if ((seed >> 16) % 3 != 0) {
      ibv_wc wc{};
      wc.wr_id = next;
      const bool ok = cq.push(wc);
      ASSERT_EQ(ok, model.size() < 5);
      if (ok)
        model.push_back(next);
      else
        ++refused;
      ++next;
    } else if (!model.empty()) {
      ASSERT_EQ(cq.pop().wr_id, model.front());
      model.pop_front();
      if (model.empty()) {
        ASSERT_EQ(cq.head, 0u);
      }
    }
    ASSERT_EQ(cq.count, model.size());
  }
  EXPECT_EQ(cq.overflows, refused);
  EXPECT_GT(refused, 0u);
}

TEST(Verbs, QpStateMachineFollowsIbtaTransitions) {
  Topology topo;
  topo.add_node("a", NodeKind::kHost);
  topo.add_node("b", NodeKind::kHost);
  topo.add_link(0, 1, 25 * kBpsPerGbps, 0);
  NicParams p;
  p.mtu_bytes = 4096;
  RoceHost h(p, topo, 0, test::test_mempool(), 1);
  const uint32_t pd = h.alloc_pd(), cq = h.create_cq(8);
  QpInitAttr a;
  a.pd = pd;
  a.send_cq = a.recv_cq = cq;
  const uint32_t qpn = h.create_qp(a);
  ASSERT_NE(qpn, 0u);
  EXPECT_EQ(h.qp_state(qpn), IBV_QPS_RESET);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTS;
  EXPECT_EQ(h.modify_qp(qpn, attr, IBV_QP_STATE), EINVAL);  // RESET -> RTS is illegal
  attr.qp_state = IBV_QPS_RTR;
  EXPECT_EQ(h.modify_qp(qpn, attr, IBV_QP_STATE), EINVAL);  // RESET -> RTR is illegal
  attr.qp_state = IBV_QPS_INIT;
  EXPECT_EQ(h.modify_qp(qpn, attr, IBV_QP_STATE), 0);
  attr.qp_state = IBV_QPS_RTR;
  EXPECT_EQ(h.modify_qp(qpn, attr, IBV_QP_STATE), EINVAL) << "RTR needs AV, dest QPN, RQ PSN, MTU";
  ibv_sge sge{};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  const ibv_send_wr* bad = nullptr;
  EXPECT_EQ(h.post_send(qpn, &wr, &bad), EINVAL) << "no send before RTS";
  EXPECT_EQ(bad, &wr);
  EXPECT_EQ(h.modify_qp(qpn, attr, 0), 0) << "a modify without IBV_QP_STATE keeps INIT";
  EXPECT_EQ(h.qp_state(qpn), IBV_QPS_INIT);
  attr.qp_state = IBV_QPS_RESET;
  EXPECT_EQ(h.modify_qp(qpn, attr, IBV_QP_STATE), 0);
  EXPECT_EQ(connect_rc(h, qpn, QpInfo{0x11, 5, topo.node(1).ipv4}), 0);
  EXPECT_EQ(h.qp_state(qpn), IBV_QPS_RTS);
  EXPECT_EQ(h.expected_psn(qpn), 5u);
  attr.qp_state = IBV_QPS_ERR;
  EXPECT_EQ(h.modify_qp(qpn, attr, IBV_QP_STATE), 0);
  EXPECT_EQ(h.qp_state(qpn), IBV_QPS_ERR);
}

TEST(Verbs, AHostRefusesMbufsTooSmallForItsMtu) {
  Topology topo;
  topo.add_node("a", NodeKind::kHost);
  topo.add_node("b", NodeKind::kHost);
  topo.add_link(0, 1, 25 * kBpsPerGbps, 0);
  (void)test::test_mempool();  // starts EAL
  // 2 KB data rooms, as the real-time engine gives af_xdp ports.
  rte_mempool* small = rte_pktmbuf_pool_create("verbs_small_pool", 255, 0, 0,
                                               RTE_PKTMBUF_HEADROOM + 2048, SOCKET_ID_ANY);
  ASSERT_NE(small, nullptr);
  NicParams p;
  p.mtu_bytes = 1024;  // 54 + 16 + 1024 + 4 = 1098 bytes: fits
  EXPECT_NO_THROW(RoceHost(p, topo, 0, small, 1));
  p.mtu_bytes = 4096;  // 4170 bytes: does not
  try {
    RoceHost h(p, topo, 0, small, 1);
    ADD_FAILURE() << "an MTU of 4096 on 2 KB mbufs was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("mtu_bytes = 4096"), std::string::npos) << e.what();
  }
  rte_mempool_free(small);
}

TEST(Verbs, MemoryRegionKeysAccessAndBoundsAreChecked) {
  Topology topo;
  topo.add_node("a", NodeKind::kHost);
  topo.add_node("b", NodeKind::kHost);
  topo.add_link(0, 1, 25 * kBpsPerGbps, 0);
  RoceHost h(NicParams{}, topo, 0, test::test_mempool(), 1);
  const uint32_t pd = h.alloc_pd(), cq = h.create_cq(8);
  std::vector<uint8_t> buf(4096);
  EXPECT_EQ(h.reg_mr(pd + 1, buf.data(), buf.size(), 0).lkey, 0u) << "unknown PD";
  const MrInfo mr = h.reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr.lkey, 0u);
  QpInitAttr a;
  a.pd = pd;
  a.send_cq = a.recv_cq = cq;
  const uint32_t qpn = h.create_qp(a);
  ASSERT_EQ(connect_rc(h, qpn, QpInfo{0x11, 5, topo.node(1).ipv4}), 0);
  ibv_sge sge{mr.addr + 4000, 200, mr.lkey};  // past the end
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  EXPECT_EQ(h.post_send(qpn, &wr, nullptr), EINVAL);
  sge = {mr.addr, 100, mr.lkey ^ 0x1};  // wrong key
  EXPECT_EQ(h.post_send(qpn, &wr, nullptr), EINVAL);
  sge = {mr.addr, 100, mr.lkey};
  EXPECT_EQ(h.post_send(qpn, &wr, nullptr), 0);
  EXPECT_EQ(h.dereg_mr(mr.lkey), 0);
  EXPECT_EQ(h.post_send(qpn, &wr, nullptr), EINVAL) << "deregistered";
}

}  // namespace
}  // namespace rocemu::nic
