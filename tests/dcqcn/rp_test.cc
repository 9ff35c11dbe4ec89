// rp_test.cc — each DCQCN reaction-point rule against its formula (rp.h; Zhu et al.,
// SIGCOMM 2015, section 3.1; HPCC simulator's Mellanox variant for the periodic modes).
#include "nic/dcqcn/rp.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rocemu::dcqcn {
namespace {

constexpr uint64_t kLine = 25 * kBpsPerGbps;
constexpr TimeNs kUs = kNsPerUs;

DcqcnConfig paper(uint64_t line = kLine) { return make_dcqcn_config(DcqcnParams{}, line); }

DcqcnConfig mellanox(uint64_t line = kLine) {
  DcqcnParams p;
  p.alpha_update = AlphaUpdate::kPeriodic;
  p.alpha_interval_us = 1;
  p.rate_decrease_interval_us = 4;
  p.rate_increase_timer_us = 300;
  p.byte_counter_kb = 0;
  p.fast_recovery_stages = 1;
  p.rate_ai_mbps = 5;
  p.rate_hai_mbps = 50;
  p.rate_reference_gbps = 25;
  p.min_rate_mbps = 1000;
  p.clamp_target_rate = false;
  return make_dcqcn_config(p, line);
}

TEST(DcqcnRp, StartsAtLineRateWithNoTimerArmed) {
  const auto cfg = paper();
  DcqcnRp rp(cfg);
  EXPECT_EQ(rp.rate_bps(), static_cast<double>(kLine));
  EXPECT_EQ(rp.target_bps(), static_cast<double>(kLine));
  EXPECT_EQ(rp.next_deadline(), kNever);
  rp.on_bytes_sent(100'000'000, 10 * kNsPerMs);  // no congestion yet: nothing changes
  EXPECT_EQ(rp.rate_bps(), static_cast<double>(kLine));
}

TEST(DcqcnRp, OneCnpSetsTargetToRateCutsByHalfAlphaThenRaisesAlpha) {
  auto cfg = paper();
  cfg.initial_alpha = 0.5;
  const double g = cfg.g;
  DcqcnRp rp(cfg);
  rp.on_cnp(1000);
  EXPECT_DOUBLE_EQ(rp.target_bps(), 25e9);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 25e9 * (1 - 0.5 / 2));
  EXPECT_DOUBLE_EQ(rp.alpha(), (1 - g) * 0.5 + g);
  EXPECT_EQ(rp.counters().cnps, 1u);
  EXPECT_EQ(rp.counters().rate_cuts, 1u);
  EXPECT_EQ(rp.next_deadline(), 1000 + 55 * kUs);  // increase timer T restarted at the cut
}

TEST(DcqcnRp, SecondCnpCutsWithTheUpdatedAlpha) {
  const auto cfg = paper();
  const double g = cfg.g;
  DcqcnRp rp(cfg);
  rp.on_cnp(0);
  const double r1 = 25e9 * (1 - 1.0 / 2);
  const double a1 = (1 - g) * 1.0 + g;  // = 1
  rp.on_cnp(10 * kUs);
  EXPECT_DOUBLE_EQ(rp.target_bps(), r1);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), r1 * (1 - a1 / 2));
  EXPECT_DOUBLE_EQ(rp.alpha(), (1 - g) * a1 + g);
}

TEST(DcqcnRp, AlphaDecaysByOneMinusGEveryKWithoutCnp) {
  auto cfg = paper();
  cfg.initial_alpha = 0.5;
  const double g = cfg.g;
  DcqcnRp rp(cfg);
  rp.on_cnp(0);
  const double a1 = (1 - g) * 0.5 + g;
  rp.advance(55 * kUs - 1);
  EXPECT_DOUBLE_EQ(rp.alpha(), a1);
  rp.advance(55 * kUs);
  EXPECT_DOUBLE_EQ(rp.alpha(), a1 * (1 - g));
  rp.advance(3 * 55 * kUs + 7);
  EXPECT_NEAR(rp.alpha(), a1 * std::pow(1 - g, 3), 1e-15);
  // A CNP restarts the K timer: next decay 55 us after it, not on the old grid.
  rp.on_cnp(200 * kUs);
  const double a_after = (1 - g) * (a1 * std::pow(1 - g, 3)) + g;
  EXPECT_NEAR(rp.alpha(), a_after, 1e-15);
  rp.advance(220 * kUs);  // the old grid had a tick at 220 us
  EXPECT_NEAR(rp.alpha(), a_after, 1e-15);
  rp.advance(255 * kUs);
  EXPECT_NEAR(rp.alpha(), a_after * (1 - g), 1e-15);
  // A long idle period: closed form over 10^5 ticks.
  rp.advance(200 * kUs + 100'000 * 55 * kUs);
  EXPECT_NEAR(rp.alpha(), a_after * std::pow(1 - g, 100'000), 1e-15);
}

TEST(DcqcnRp, FastRecoveryHalvesTheGapToTargetForFTimerStages) {
  const auto cfg = paper();
  DcqcnRp rp(cfg);
  rp.on_cnp(0);
  const double target = 25e9;
  double rate = 12.5e9;
  for (uint32_t k = 1; k <= cfg.fast_recovery_stages; ++k) {
    rp.on_timer(k * 55 * kUs);
    rate = (target + rate) / 2;
    EXPECT_DOUBLE_EQ(rp.rate_bps(), rate) << "stage " << k;
    EXPECT_DOUBLE_EQ(rp.target_bps(), target);
    EXPECT_EQ(rp.timer_stage(), k);
  }
  EXPECT_EQ(rp.counters().fast_recovery_steps, 5u);
  EXPECT_EQ(rp.counters().additive_steps, 0u);
}

TEST(DcqcnRp, AdditiveIncreaseAddsRaiToTargetOnceTimerPassesF) {
  const auto cfg = paper();
  DcqcnRp rp(cfg);
  rp.on_cnp(0);
  rp.on_cnp(1 * kUs);  // target 12.5G, rate 6.25G
  double target = 12.5e9;
  double rate = 6.25e9;
  TimeNs t = 1 * kUs;
  for (int k = 0; k < 5; ++k) rate = (target + rate) / 2;
  t += 5 * 55 * kUs;
  rp.on_timer(t);
  ASSERT_DOUBLE_EQ(rp.rate_bps(), rate);
  for (int k = 0; k < 3; ++k) {
    t += 55 * kUs;
    rp.on_timer(t);
    target += 40e6;  // R_AI = 40 Mbps
    rate = (target + rate) / 2;
    EXPECT_DOUBLE_EQ(rp.target_bps(), target);
    EXPECT_DOUBLE_EQ(rp.rate_bps(), rate);
  }
  EXPECT_EQ(rp.counters().additive_steps, 3u);
  EXPECT_EQ(rp.counters().hyper_steps, 0u);  // byte stage is still 0 < F
}

TEST(DcqcnRp, HyperIncreaseAddsRhaiWhenTimerAndByteStagesBothReachF) {
  const auto cfg = paper();
  DcqcnRp rp(cfg);
  rp.on_cnp(0);
  rp.on_cnp(1 * kUs);
  double target = 12.5e9;
  double rate = 6.25e9;
  // Five byte-counter events right away (10 MiB each): fast recovery, BC = 1..5.
  for (int k = 0; k < 5; ++k) {
    rp.on_bytes_sent(cfg.byte_counter_bytes, 2 * kUs);
    rate = (target + rate) / 2;
  }
  EXPECT_EQ(rp.byte_stage(), 5u);
  EXPECT_EQ(rp.counters().fast_recovery_steps, 5u);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rate);
  // Timer events: T = 0..4 with BC = 5 -> max >= F, min < F: additive.
  TimeNs t = 1 * kUs;
  for (int k = 0; k < 5; ++k) {
    t += 55 * kUs;
    rp.on_timer(t);
    target += 40e6;
    rate = (target + rate) / 2;
  }
  EXPECT_EQ(rp.counters().additive_steps, 5u);
  EXPECT_DOUBLE_EQ(rp.target_bps(), target);
  // T = 5, BC = 5: hyper increase.
  t += 55 * kUs;
  rp.on_timer(t);
  target += 400e6;  // R_HAI
  rate = (target + rate) / 2;
  EXPECT_EQ(rp.counters().hyper_steps, 1u);
  EXPECT_DOUBLE_EQ(rp.target_bps(), target);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rate);
}

TEST(DcqcnRp, ByteCounterStagesAloneGiveFastRecoveryThenAdditive) {
  const auto cfg = paper();
  DcqcnRp rp(cfg);
  rp.on_cnp(0);
  double target = 25e9;
  double rate = 12.5e9;
  // Bytes arrive in pieces: an event per full B only; remainder carried.
  const uint64_t b = cfg.byte_counter_bytes;
  rp.on_bytes_sent(b / 2, 1 * kUs);
  EXPECT_EQ(rp.counters().byte_events, 0u);
  rp.on_bytes_sent(b / 2 + b, 2 * kUs);  // completes two B
  EXPECT_EQ(rp.counters().byte_events, 2u);
  for (int k = 0; k < 2; ++k) rate = (target + rate) / 2;
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rate);
  for (int k = 0; k < 4; ++k) rp.on_bytes_sent(b, 3 * kUs);  // BC 3,4,5 FR; 6th: additive
  for (int k = 0; k < 3; ++k) rate = (target + rate) / 2;
  target = std::min(25e9, target + 40e6);
  rate = (target + rate) / 2;
  EXPECT_EQ(rp.counters().fast_recovery_steps, 5u);
  EXPECT_EQ(rp.counters().additive_steps, 1u);
  EXPECT_DOUBLE_EQ(rp.target_bps(), target);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rate);
  EXPECT_EQ(rp.timer_stage(), 0u);
}

TEST(DcqcnRp, CutsNeverGoBelowTheMinimumRate) {
  const auto cfg = paper();
  DcqcnRp rp(cfg);
  for (int k = 0; k < 20; ++k) rp.on_cnp(k * kUs);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 100e6);  // 25G / 2^20 would be 24 kbps
  EXPECT_EQ(rp.counters().rate_cuts, 20u);
}

TEST(DcqcnRp, TargetAndRateNeverExceedLineRateAndTimerStopsThere) {
  const auto cfg = paper();
  DcqcnRp rp(cfg);
  rp.on_cnp(0);
  rp.on_timer(100 * kNsPerMs);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 25e9);
  EXPECT_DOUBLE_EQ(rp.target_bps(), 25e9);
  EXPECT_EQ(rp.next_deadline(), kNever);
}

TEST(DcqcnRp, LateOnTimerGivesTheSameStateAsPunctualCalls) {
  const auto cfg = paper();
  DcqcnRp punctual(cfg), late(cfg);
  punctual.on_cnp(0);
  late.on_cnp(0);
  punctual.on_cnp(20 * kUs);
  late.on_cnp(20 * kUs);
  const TimeNs end = 3 * kNsPerMs;
  while (punctual.next_deadline() <= end) punctual.on_timer(punctual.next_deadline());
  punctual.advance(end);
  late.on_timer(end);
  EXPECT_DOUBLE_EQ(late.rate_bps(), punctual.rate_bps());
  EXPECT_DOUBLE_EQ(late.target_bps(), punctual.target_bps());
  EXPECT_DOUBLE_EQ(late.alpha(), punctual.alpha());
  EXPECT_EQ(late.counters().timer_events, punctual.counters().timer_events);
  EXPECT_GT(late.counters().additive_steps, 0u);
}

TEST(DcqcnRpMellanox, RaiAndRhaiScaleWithLineRate) {
  const auto c25 = mellanox(25 * kBpsPerGbps);
  const auto c100 = mellanox(100 * kBpsPerGbps);
  EXPECT_DOUBLE_EQ(c25.rate_ai_bps, 5e6);
  EXPECT_DOUBLE_EQ(c25.rate_hai_bps, 50e6);
  EXPECT_DOUBLE_EQ(c100.rate_ai_bps, 20e6);
  EXPECT_DOUBLE_EQ(c100.rate_hai_bps, 200e6);
  EXPECT_DOUBLE_EQ(c100.min_rate_bps, 1e9);  // the floor is not scaled
}

TEST(DcqcnRpMellanox, CutWaitsForTheDecreaseTickAndUsesAlphaDecayedPerSlot) {
  const auto cfg = mellanox();
  const double g = cfg.g;
  DcqcnRp rp(cfg);
  rp.on_cnp(0);  // first CNP: alpha = 1, the CNP does not count in its slot
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 25e9);
  EXPECT_EQ(rp.next_deadline(), 4 * kUs);
  rp.on_cnp(2 * kUs);      // counts in slot (1, 2] -> tick at 3 us adds g
  rp.on_cnp(3 * kUs + 1);  // slot (3, 4] -> tick at 4 us adds g; still one cut
  rp.on_timer(4 * kUs);
  // Alpha at 4 us, ticks at 1, 2, 3, 4 us (alpha ticks come before the cut at 4 us):
  double a = 1.0;
  a = (1 - g) * a;      // 1 us: no CNP in (0, 1]
  a = (1 - g) * a;      // 2 us: the CNP at exactly 2 us arrived after this tick
  a = (1 - g) * a + g;  // 3 us: CNP at 2 us
  a = (1 - g) * a + g;  // 4 us: CNP at 3 us + 1 ns
  EXPECT_DOUBLE_EQ(rp.alpha(), a);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 25e9 * (1 - a / 2));
  EXPECT_EQ(rp.counters().rate_cuts, 1u);
  EXPECT_EQ(rp.counters().cnps, 3u);
  EXPECT_EQ(rp.next_deadline(), 4 * kUs + 300 * kUs);
  rp.advance(10 * kUs);  // six empty slots
  EXPECT_NEAR(rp.alpha(), a * std::pow(1 - g, 6), 1e-15);
}

TEST(DcqcnRpMellanox, TimerOnlyIncreaseIsOneFastRecoveryOneAdditiveThenHyper) {
  const auto cfg = mellanox();
  DcqcnRp rp(cfg);
  rp.on_cnp(0);
  rp.on_timer(4 * kUs);
  double target = 25e9;  // not clamped on the first cut: target stays at line rate...
  ASSERT_DOUBLE_EQ(rp.target_bps(), target);
  rp.on_cnp(5 * kUs);
  rp.on_timer(8 * kUs);  // ...nor on a cut before any increase event
  ASSERT_DOUBLE_EQ(rp.target_bps(), target);
  double rate = rp.rate_bps();
  rp.on_timer(308 * kUs);  // T = 0 < F: fast recovery
  rate = (target + rate) / 2;
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rate);
  rp.on_cnp(309 * kUs);
  rp.on_timer(312 * kUs);  // an increase happened: this cut sets target = rate
  target = rate;
  EXPECT_DOUBLE_EQ(rp.target_bps(), target);
  rate = rp.rate_bps();
  rp.on_timer(612 * kUs);  // T = 0: fast recovery
  rate = (target + rate) / 2;
  rp.on_timer(912 * kUs);  // T = 1 == F: additive
  target += 5e6;
  rate = (target + rate) / 2;
  EXPECT_DOUBLE_EQ(rp.target_bps(), target);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rate);
  rp.on_timer(1212 * kUs);  // T = 2 > F: hyper
  target += 50e6;
  rate = (target + rate) / 2;
  EXPECT_DOUBLE_EQ(rp.target_bps(), target);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rate);
  EXPECT_EQ(rp.counters().fast_recovery_steps, 2u);
  EXPECT_EQ(rp.counters().additive_steps, 1u);
  EXPECT_EQ(rp.counters().hyper_steps, 1u);
}

TEST(DcqcnRpMellanox, ByteCountIsIgnoredWhenTimerOnly) {
  const auto cfg = mellanox();
  DcqcnRp rp(cfg);
  rp.on_cnp(0);
  rp.on_timer(4 * kUs);
  const double r = rp.rate_bps();
  rp.on_bytes_sent(uint64_t{1} << 40, 5 * kUs);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), r);
  EXPECT_EQ(rp.counters().byte_events, 0u);
}

}  // namespace
}  // namespace rocemu::dcqcn
