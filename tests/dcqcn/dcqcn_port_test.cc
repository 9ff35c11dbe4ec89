// dcqcn_port_test.cc — one NIC port's DCQCN parts kept consistent: RP rates reach the
// pacer, windows gate the scheduler, NP per QP, deadlines cover RP timers and pacing.
#include "nic/dcqcn/dcqcn_port.h"

#include <gtest/gtest.h>

#include <sstream>

namespace rocemu::dcqcn {
namespace {

constexpr TimeNs kUs = kNsPerUs;

DcqcnConfig config(int64_t window_kb = 0) {
  DcqcnParams p;
  p.window_kb = window_kb;
  p.pacer_burst_kb = 0;
  return make_dcqcn_config(p, 25 * kBpsPerGbps);
}

TEST(DcqcnPort, CnpCutReachesThePacerAtOnce) {
  const auto cfg = config();
  DcqcnPort port(cfg, 4);
  port.set_backlogged(1, true);
  EXPECT_EQ(port.pick(0), 1);
  port.on_sent(1, 1000, 0);  // 320 ns at 25 Gbps
  EXPECT_EQ(port.pacer().next_eligible_ns(1), 320);
  port.on_cnp(1, 100);  // alpha = 1: rate halves to 12.5 Gbps; 220 ns left become 440 ns
  EXPECT_EQ(port.pacer().rate_bps(1), 12'500'000'000u);
  EXPECT_EQ(port.pacer().next_eligible_ns(1), 540);
  EXPECT_EQ(port.pick(539), -1);
  EXPECT_EQ(port.pick(540), 1);
}

TEST(DcqcnPort, RateIncreaseTimersAreInTheDeadlineAndRaiseThePacedRate) {
  const auto cfg = config();
  DcqcnPort port(cfg, 2);
  EXPECT_EQ(port.next_deadline(), kNever);
  port.on_cnp(0, 0);
  EXPECT_EQ(port.next_deadline(), 55 * kUs);
  port.on_timer(55 * kUs);
  EXPECT_EQ(port.pacer().rate_bps(0), 18'750'000'000u);  // (25 + 12.5) / 2
  EXPECT_EQ(port.rp(0).rate_bps(), 18.75e9);
  EXPECT_EQ(port.next_deadline(), 110 * kUs);
  EXPECT_EQ(port.pacer().rate_bps(1), 25'000'000'000u);  // other QPs untouched
}

TEST(DcqcnPort, ClosedWindowTakesTheQpOutOfSchedulingUntilAcked) {
  const auto cfg = config(/*window_kb=*/2);  // 2048 bytes in flight
  DcqcnPort port(cfg, 1);
  port.set_backlogged(0, true);
  TimeNs t = 0;
  for (int k = 0; k < 3; ++k) {  // 0, 1000, 2000 bytes in flight: open
    ASSERT_EQ(port.pick(t), 0) << k;
    port.on_sent(0, 1000, t);
    if (k < 2) t = port.next_deadline();
  }
  EXPECT_EQ(port.window(0).inflight_bytes(), 3000u);
  EXPECT_EQ(port.next_deadline(), kNever);  // nothing to wait for but an ACK
  EXPECT_EQ(port.pick(t + 10 * kUs), -1);
  port.on_acked(0, 1000);
  EXPECT_EQ(port.pick(t + 10 * kUs), 0);
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

TEST(DcqcnPort, ResetQpReturnsItToLineRateAndIdle) {
  const auto cfg = config();
  DcqcnPort port(cfg, 2);
  port.set_backlogged(0, true);
  port.on_cnp(0, 0);
  port.on_sent(0, 1000, 0);
  EXPECT_TRUE(port.on_ce_packet(0, 0));
  port.reset_qp(0);
  EXPECT_EQ(port.rp(0).rate_bps(), 25e9);
  EXPECT_EQ(port.rp(0).counters().cnps, 0u);
  EXPECT_EQ(port.pacer().rate_bps(0), 25'000'000'000u);
  EXPECT_FALSE(port.pacer().active(0));
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
