// red_ecn_test.cc — RED-ECN marking against p(q) = Pmax (q - Kmin) / (Kmax - Kmin):
// measured marking rates at fixed queue depths within 3 standard errors over 200k samples.
#include "switchsw/red_ecn.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rocemu::sw {
namespace {

TEST(RedEcn, ProbabilityFollowsTheClosedForm) {
  const RedEcn red(EcnSetting{100 * 1024, 400 * 1024, 0.2});
  EXPECT_EQ(red.probability(0), 0.0);
  EXPECT_EQ(red.probability(100 * 1024), 0.0);
  EXPECT_DOUBLE_EQ(red.probability(250 * 1024), 0.2 * 150.0 / 300.0);
  EXPECT_DOUBLE_EQ(red.probability(400 * 1024), 0.2);
  EXPECT_EQ(red.probability(400 * 1024 + 1), 1.0);
}

TEST(RedEcn, MarksWithProbabilityLinearBetweenKminAndKmax) {
  const EcnSetting s{5 * 1024, 200 * 1024, 0.5};
  const RedEcn red(s);
  Rng rng(42, "red-test");
  constexpr int kSamples = 200'000;
  for (double frac : {0.1, 0.25, 0.5, 0.75, 1.0}) {
    const auto q = static_cast<uint64_t>(s.kmin_bytes + frac * (s.kmax_bytes - s.kmin_bytes));
    const double p = s.pmax * static_cast<double>(q - s.kmin_bytes) / (s.kmax_bytes - s.kmin_bytes);
    int marks = 0;
    for (int i = 0; i < kSamples; ++i) marks += red.mark(q, rng);
    const double rate = static_cast<double>(marks) / kSamples;
    const double se = std::sqrt(p * (1 - p) / kSamples);
    EXPECT_NEAR(rate, p, 3 * se) << "q=" << q << " expected p=" << p;
  }
}

TEST(RedEcn, NeverMarksAtOrBelowKminAndAlwaysAboveKmax) {
  const RedEcn red(EcnSetting{5 * 1024, 200 * 1024, 0.01});
  Rng rng(7, "red-test");
  for (int i = 0; i < 10'000; ++i) {
    ASSERT_FALSE(red.mark(5 * 1024, rng));
    ASSERT_FALSE(red.mark(0, rng));
    ASSERT_TRUE(red.mark(200 * 1024 + 1, rng));
  }
}

TEST(RedEcn, EqualThresholdsGiveADctcpStyleCutOff) {
  const RedEcn red(EcnSetting{30 * 1024, 30 * 1024, 1.0});
  Rng rng(1, "red-test");
  EXPECT_FALSE(red.mark(30 * 1024, rng));
  EXPECT_TRUE(red.mark(30 * 1024 + 1, rng));
}

}  // namespace
}  // namespace rocemu::sw
