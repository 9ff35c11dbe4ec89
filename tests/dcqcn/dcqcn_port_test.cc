// dcqcn_port_test.cc — one NIC port's DCQCN parts kept consistent: sent bytes reach the
// QP's RP byte counter, RP timers are in the port's deadline, NP per QP, reset_qp, CSV rows.
#include "nic/dcqcn/dcqcn_port.h"

#include <gtest/gtest.h>

#include <sstream>

namespace rocemu::dcqcn {
namespace {

constexpr TimeNs kUs = kNsPerUs;

DcqcnConfig config(int64_t byte_counter_kb = DcqcnParams{}.byte_counter_kb) {
  DcqcnParams p;
  p.byte_counter_kb = byte_counter_kb;
  return make_dcqcn_config(p, 25 * kBpsPerGbps);
}

TEST(DcqcnPort, RateIncreaseTimersAreInTheDeadline) {
  const auto cfg = config();
  DcqcnPort port(cfg, 2);
  EXPECT_EQ(port.next_deadline(), kNever);
  port.on_cnp(0, 0);  // alpha = 1: 25 -> 12.5 Gbps, increase timer T = 55 us armed
  EXPECT_EQ(port.rp(0).rate_bps(), 12.5e9);
  EXPECT_EQ(port.next_deadline(), 55 * kUs);
  port.on_timer(55 * kUs - 1);  // not due: nothing changes
  EXPECT_EQ(port.rp(0).rate_bps(), 12.5e9);
  port.on_timer(55 * kUs);
  EXPECT_EQ(port.rp(0).rate_bps(), 18.75e9);  // fast recovery: (25 + 12.5) / 2
  EXPECT_EQ(port.next_deadline(), 110 * kUs);
  EXPECT_EQ(port.rp(1).rate_bps(), 25e9);  // other QPs untouched
}

TEST(DcqcnPort, TheEarliestQpTimerIsTheDeadline) {
  const auto cfg = config();
  DcqcnPort port(cfg, 3);
  port.on_cnp(2, 10 * kUs);
  port.on_cnp(1, 3 * kUs);
  EXPECT_EQ(port.next_deadline(), 58 * kUs);
  port.on_timer(58 * kUs);  // QP 1's stage runs; QP 2's is next
  EXPECT_EQ(port.rp(1).counters().timer_events, 1u);
  EXPECT_EQ(port.rp(2).counters().timer_events, 0u);
  EXPECT_EQ(port.next_deadline(), 65 * kUs);
}

TEST(DcqcnPort, SentBytesDriveTheQpsByteCounter) {
  const auto cfg = config(/*byte_counter_kb=*/1);  // B = 1024 bytes
  DcqcnPort port(cfg, 2);
  port.on_cnp(0, 0);
  port.on_cnp(1, 0);
  port.on_sent(0, 1023, 1);
  EXPECT_EQ(port.rp(0).rate_bps(), 12.5e9);  // below B: no event
  port.on_sent(0, 1, 2);                     // B reached: fast recovery
  EXPECT_EQ(port.rp(0).counters().byte_events, 1u);
  EXPECT_EQ(port.rp(0).rate_bps(), 18.75e9);
  EXPECT_EQ(port.rp(1).rate_bps(), 12.5e9);  // counted per QP
  EXPECT_EQ(port.rp(1).counters().byte_events, 0u);
}

TEST(DcqcnPort, NpKeepsOneIntervalPerQp) {
  const auto cfg = config();
  DcqcnPort port(cfg, 3);
  EXPECT_TRUE(port.on_ce_packet(0, 0));
  EXPECT_TRUE(port.on_ce_packet(2, 1));
  EXPECT_FALSE(port.on_ce_packet(0, 49 * kUs));
  EXPECT_TRUE(port.on_ce_packet(0, 50 * kUs));
  EXPECT_EQ(port.np().counters().cnps_sent, 3u);
}

TEST(DcqcnPort, ResetQpReturnsItToLineRateWithNoTimers) {
  const auto cfg = config();
  DcqcnPort port(cfg, 2);
  port.on_cnp(0, 0);
  port.on_sent(0, 1000, 0);
  EXPECT_TRUE(port.on_ce_packet(0, 0));
  port.reset_qp(0);
  EXPECT_EQ(port.rp(0).rate_bps(), 25e9);
  EXPECT_EQ(port.rp(0).counters().cnps, 0u);
  EXPECT_EQ(port.next_deadline(), kNever);
  EXPECT_TRUE(port.on_ce_packet(0, 1));  // NP state forgotten too
}

TEST(DcqcnPort, WritesOneCsvRowPerQp) {
  const auto cfg = config();
  DcqcnPort port(cfg, 4);
  port.on_cnp(2, 0);
  std::ostringstream os;
  RateCsvWriter w(os);
  port.write_samples(w, 3, 5 * kUs);
  EXPECT_EQ(w.rows(), 3u);
  EXPECT_NE(os.str().find("5000,2,12.500000,25.000000,1.000000,1\n"), std::string::npos);
}

// Sampling reads a copy brought up to `now`: the RP's own lazy state, and so every later
// decision bit for bit, is the same whether or not (and however often) it was sampled.
TEST(DcqcnPort, SamplingDoesNotChangeTheReactionPoint) {
  const auto cfg = config();
  DcqcnPort sampled(cfg, 1), alone(cfg, 1);
  std::ostringstream os;
  RateCsvWriter w(os);
  TimeNs now = 0;
  for (int i = 0; i < 40; ++i) {
    now += 7 * kUs;
    if (i % 5 == 0) {
      sampled.on_cnp(0, now);
      alone.on_cnp(0, now);
    }
    sampled.write_samples(w, 1, now + 3 * kUs);  // ahead of the RP's own time
    if (i % 3 == 0) {
      sampled.on_timer(now);
      alone.on_timer(now);
    }
    ASSERT_EQ(sampled.rp(0).rate_bps(), alone.rp(0).rate_bps()) << i;
    ASSERT_EQ(sampled.rp(0).alpha(), alone.rp(0).alpha()) << i;
    ASSERT_EQ(sampled.next_deadline(), alone.next_deadline()) << i;
  }
  EXPECT_EQ(w.rows(), 40u);
  const RpSample s = sample_rp(alone.rp(0), 0, now + 500 * kUs);
  EXPECT_GT(s.rate_bps, alone.rp(0).rate_bps()) << "the sample sees the increases due by then";
}

}  // namespace
}  // namespace rocemu::dcqcn
