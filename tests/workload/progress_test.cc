// progress_test.cc — the progress line: at most one per wall interval, linear time-left.
#include "fabric/workload/progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rocemu::workload {
namespace {

using ::testing::HasSubstr;

TEST(Progress, PrintsAtMostOncePerWallInterval) {
  Progress p(0, 25 * kNsPerMs, 2 * kNsPerSec);
  EXPECT_FALSE(p.update(kNsPerMs, 10, kNsPerSec / 2));
  EXPECT_FALSE(p.update(2 * kNsPerMs, 20, 1999 * kNsPerMs));
  EXPECT_TRUE(p.update(3 * kNsPerMs, 30, 2 * kNsPerSec));
  EXPECT_FALSE(p.update(4 * kNsPerMs, 40, 3 * kNsPerSec));
  EXPECT_FALSE(p.update(5 * kNsPerMs, 50, 3999 * kNsPerMs));
  EXPECT_TRUE(p.update(6 * kNsPerMs, 60, 4 * kNsPerSec));
}

TEST(Progress, EstimatesTimeLeftFromTheSimulatedFractionDone) {
  Progress p(0, 25 * kNsPerMs, kNsPerSec);
  // 10 of 25 ms took 4 s of wall time: 15 ms more take 6 s.
  EXPECT_EQ(p.estimate_left_ns(10 * kNsPerMs, 4 * kNsPerSec), 6 * kNsPerSec);
  EXPECT_EQ(p.estimate_left_ns(0, 4 * kNsPerSec), -1);
  const auto line = p.update(10 * kNsPerMs, 1234, 4 * kNsPerSec);
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, "sim 10.000 ms / 25.000 ms (40.0%), 1234 flows done, wall 4.0 s, ~6.0 s left");
  Progress offset(5 * kNsPerMs, 15 * kNsPerMs);
  EXPECT_EQ(offset.estimate_left_ns(10 * kNsPerMs, kNsPerSec), kNsPerSec);
  EXPECT_THAT(offset.format(5 * kNsPerMs, 0, 0), HasSubstr("time left unknown"));
}

}  // namespace
}  // namespace rocemu::workload
