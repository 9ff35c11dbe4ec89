#include "common/rng.h"

#include <cmath>

#include <gtest/gtest.h>

namespace rocemu {

TEST(Rng, SameSeedAndComponentReplayExactly) {
  Rng a(42, "sw0"), b(42, "sw0");
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.next(), b.next());
}

TEST(Rng, ComponentsGetDifferentStreams) {
  Rng a(42, "sw0"), b(42, "sw1");
  int same = 0;
  for (int i = 0; i < 100; ++i) same += (a.next() == b.next());
  EXPECT_EQ(same, 0);
}

TEST(Rng, UniformHasMeanOneHalfWithinThreeStandardErrors) {
  Rng r(7);
  const int n = 200000;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  const double se = std::sqrt(1.0 / 12.0 / n);
  EXPECT_NEAR(sum / n, 0.5, 3 * se);
}

TEST(Rng, BelowStaysInRangeAndCoversIt) {
  Rng r(9);
  int seen[5] = {};
  for (int i = 0; i < 1000; ++i) {
    const auto v = r.below(5);
    ASSERT_LT(v, 5u);
    ++seen[v];
  }
  for (int c : seen) EXPECT_GT(c, 150);
}

}  // namespace rocemu
