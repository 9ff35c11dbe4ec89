// idle_backoff_test.cc — the poll-loop backoff decision (fabric/idle_backoff.h).
#include "fabric/idle_backoff.h"

#include <gtest/gtest.h>

#include <chrono>

namespace rocemu::fabric {
namespace {

IdleBackoffParams params(TimeNs max_ns) {
  IdleBackoffParams p;
  p.max_sleep_ns = max_ns;
  p.idle_iterations = 4;
  p.min_sleep_ns = 2 * kNsPerUs;
  return p;
}

TEST(IdleBackoff, NeverSleepsWhenTurnedOff) {
  EXPECT_EQ(sleep_for_ns(params(0), 1'000'000, 0, kNever), 0);
}

TEST(IdleBackoff, SleepsOnlyAfterEnoughIdleIterations) {
  const auto p = params(50 * kNsPerUs);
  EXPECT_EQ(sleep_for_ns(p, 3, 0, kNever), 0);
  EXPECT_EQ(sleep_for_ns(p, 4, 0, kNever), 50 * kNsPerUs);
}

TEST(IdleBackoff, NeverSleepsPastTheNextEvent) {
  const auto p = params(50 * kNsPerUs);
  EXPECT_EQ(sleep_for_ns(p, 10, 1000, 1000 + 7 * kNsPerUs), 7 * kNsPerUs);
  EXPECT_EQ(sleep_for_ns(p, 10, 1000, 1000 + 80 * kNsPerUs), 50 * kNsPerUs);
}

TEST(IdleBackoff, SkipsSleepsShorterThanTheMinimum) {
  const auto p = params(50 * kNsPerUs);
  EXPECT_EQ(sleep_for_ns(p, 10, 1000, 1000 + kNsPerUs), 0);
  EXPECT_EQ(sleep_for_ns(p, 10, 1000, 500), 0);  // the event is already due
}

TEST(IdleBackoff, BusyIterationResetsTheIdleCount) {
  IdleBackoff b(params(20 * kNsPerUs));
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(b.after_iteration(false, 0, kNever));
  EXPECT_FALSE(b.after_iteration(true, 0, kNever));
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(b.after_iteration(false, 0, kNever));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(b.after_iteration(false, 0, kNever));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::microseconds(20));
  EXPECT_EQ(b.sleeps(), 1u);
}

}  // namespace
}  // namespace rocemu::fabric
