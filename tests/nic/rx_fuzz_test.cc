// rx_fuzz_test.cc — a seeded corpus of bad packets against the receive path (see
// rx_fuzz_harness.h): truncated, garbled, oversized, bad ICRC, wrong QPN, PSN far outside
// the window, rkey violations, READ past the end of the region, and UC and UD frames to the
// victim's UC and UD QPs. Every one is counted or handled, NAKed where the spec says, memory
// outside the region and outside each receive buffer is never written, and the RC QP keeps
// answering.
#include <gtest/gtest.h>

#include "tests/nic/rx_fuzz_harness.h"

namespace rocemu::test {
namespace {

TEST(RxFuzz, SeededCorpusNeverCorruptsMemoryNorWedgesTheQp) {
  RxFuzzHarness h;
  Rng r(2024, "corpus");
  const auto& c = h.host().counters();
  TimeNs now = 0;
  for (int i = 0; i < 4000; ++i) {
    const auto f = h.mutated_frame(r);
    h.deliver(f.data(), static_cast<uint32_t>(f.size()), now);
    now += 500;
    if (i % 50 == 49) {
      ASSERT_EQ(h.damage(), "") << "after input " << i;
      ASSERT_TRUE(h.answers_in_sequence_write(now)) << "after input " << i;
      EXPECT_EQ(h.host().qp_state(h.qpn()), IBV_QPS_RTS);
    }
    h.drain(now);
  }
  EXPECT_TRUE(h.guards_intact());
  EXPECT_EQ(c.rx_packets, 4000u + 80u);
  // Every reason the corpus aims at was hit.
  for (nic::RxDrop d : {nic::RxDrop::kTruncated, nic::RxDrop::kIcrc, nic::RxDrop::kUnknownQp,
                        nic::RxDrop::kPsnOutOfSeq, nic::RxDrop::kDuplicate,
                        nic::RxDrop::kRemoteAccess, nic::RxDrop::kInvalidRequest,
                        nic::RxDrop::kStaleResponse, nic::RxDrop::kQkeyMismatch,
                        nic::RxDrop::kUcMessageDropped})
    EXPECT_GT(c.drops[static_cast<int>(d)], 0u) << nic::rx_drop_name(d);
  EXPECT_GT(c.naks_sent, 0u);
  EXPECT_GT(h.unreliable_receives(), 100u) << "UC and UD SENDs placed";
}

TEST(RxFuzz, ReadPastTheEndIsNakedWithRemoteAccessError) {
  RxFuzzHarness h;
  const uint32_t psn = h.host().expected_psn(h.qpn());
  const auto f = h.request(wire::kRcReadRequest, psn, h.mr().addr + RxFuzzHarness::kRegionBytes - 10,
                           h.mr().rkey, 11, 0);
  h.deliver(f.data(), static_cast<uint32_t>(f.size()), 0);
  const auto out = h.drain(0);
  ASSERT_EQ(out.size(), 1u) << "one NAK, no data";
  auto copy = out[0];
  nic::RocePacket p;
  ASSERT_EQ(nic::parse_roce(copy.data(), static_cast<uint32_t>(copy.size()), p), nic::RxDrop::kNone);
  EXPECT_EQ(p.opcode, wire::kRcAcknowledge);
  EXPECT_EQ(p.syndrome, 0x62);  // NAK, remote access error
  EXPECT_EQ(p.psn, psn);
  EXPECT_EQ(h.host().expected_psn(h.qpn()), psn) << "the rejected READ takes no PSN";
}

TEST(RxFuzz, PsnFarAheadGetsOneSequenceNakNotOnePerPacket) {
  RxFuzzHarness h;
  const uint32_t psn = h.host().expected_psn(h.qpn());
  for (int i = 0; i < 5; ++i) {
    const auto f = h.request(wire::kRcWriteOnly, (psn + 0x400000 + i) & 0xFFFFFF, h.mr().addr,
                             h.mr().rkey, 8, 8);
    h.deliver(f.data(), static_cast<uint32_t>(f.size()), 0);
  }
  const auto out = h.drain(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0][wire::kRoceHeadersBytes], 0x60);  // NAK, PSN sequence error
  EXPECT_EQ(h.host().counters().drops[static_cast<int>(nic::RxDrop::kPsnOutOfSeq)], 5u);
}

}  // namespace
}  // namespace rocemu::test
