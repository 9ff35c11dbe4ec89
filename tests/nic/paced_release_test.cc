// paced_release_test.cc — the host's per-QP rate limiter (nic/paced_release.h) against its
// formula release' = max(now, release) + ceil(bytes * 8e9 / rate): the rounding of each
// frame's spacing, no banked credit, back-to-back accumulation, rate 0 = no limit, and the
// line-rate lift DCQCN applies.
#include "nic/paced_release.h"

#include <gtest/gtest.h>

#include <array>

namespace rocemu::nic {
namespace {

// A 1024-byte-MTU RoCEv2 WRITE middle frame: 1082 bytes on the wire as the host counts them.
constexpr uint64_t kFrame = 1082;

TEST(PacedRelease, SpacingIsTheFrameTimeAtTheRateRoundedUpToTheNanosecond) {
  // 1000 B at 10 Gbps: exactly 800 ns; 1082 B at 25 Gbps: 346.24 ns -> 347;
  // 1 B at 25 Gbps: 0.32 ns -> 1; 1082 B at 100 Mbps: 86 560 ns exactly.
  EXPECT_EQ(paced_release_ns(0, 0, 1000, 10 * kBpsPerGbps), 800);
  EXPECT_EQ(paced_release_ns(0, 0, kFrame, 25 * kBpsPerGbps), 347);
  EXPECT_EQ(paced_release_ns(0, 0, 1, 25 * kBpsPerGbps), 1);
  EXPECT_EQ(paced_release_ns(0, 0, kFrame, 100 * kBpsPerMbps), 86'560);
  // Odd rates: ceil(1082 * 8e9 / 3e9) = ceil(2885.33) = 2886; 8e9 / 7 = 1142857142.86 -> ...43.
  EXPECT_EQ(paced_release_ns(0, 0, kFrame, 3 * kBpsPerGbps), 2'886);
  EXPECT_EQ(paced_release_ns(0, 0, 1, 7), 1'142'857'143);
}

TEST(PacedRelease, MatchesTheFormulaOverRatesAndSizes) {
  const std::array<uint64_t, 6> rates{
      1, 999'999, 100 * kBpsPerMbps, 12'345'678'901ULL, 25 * kBpsPerGbps, 400 * kBpsPerGbps};
  const std::array<uint64_t, 5> sizes{1, 64, kFrame, 4154, 65'536};
  for (uint64_t r : rates) {
    for (uint64_t b : sizes) {
      const unsigned __int128 bit_ns = static_cast<unsigned __int128>(b) * 8 * 1'000'000'000ULL;
      const auto want = static_cast<TimeNs>((bit_ns + r - 1) / r);  // ceil
      EXPECT_EQ(paced_release_ns(0, 0, b, r), want) << b << " B at " << r << " bit/s";
      EXPECT_EQ(paced_release_ns(10, 5, b, r), 10 + want) << b << " B at " << r << " bit/s";
    }
  }
}

TEST(PacedRelease, AnIdleQpBanksNoCredit) {
  // Last release at 1 000 ns, next frame only at 50 000 ns: spacing counts from now.
  EXPECT_EQ(paced_release_ns(1'000, 50'000, 1000, 10 * kBpsPerGbps), 50'800);
  // A frame sent exactly at its release time (the punctual caller) loses nothing.
  EXPECT_EQ(paced_release_ns(800, 800, 1000, 10 * kBpsPerGbps), 1'600);
}

TEST(PacedRelease, BackToBackFramesAccumulateTheRoundedSpacing) {
  // Frames sent as soon as allowed: the n-th release is n * ceil(spacing), so the rounding
  // error grows by under 1 ns per frame (100 Gbps: 87 ns per 1082 B instead of 86.56).
  TimeNs release = 0, now = 0;
  for (int n = 1; n <= 1000; ++n) {
    release = paced_release_ns(release, now, kFrame, 100 * kBpsPerGbps);
    ASSERT_EQ(release, n * 87) << n;
    now = release;
  }
  // Sent before the previous release (a caller that ignores the hold) still queues up.
  EXPECT_EQ(paced_release_ns(1'000, 0, 1000, 10 * kBpsPerGbps), 1'800);
}

TEST(PacedRelease, HoldsUntilTheReleaseTimeAndNeverWithoutALimit) {
  EXPECT_TRUE(pacing_holds(10 * kBpsPerGbps, 800, 799));
  EXPECT_FALSE(pacing_holds(10 * kBpsPerGbps, 800, 800));
  EXPECT_FALSE(pacing_holds(10 * kBpsPerGbps, 800, 801));
  EXPECT_FALSE(pacing_holds(0, 800, 0));  // rate 0: no limit
  // Rate 0 leaves the release time as it was.
  EXPECT_EQ(paced_release_ns(1'234, 5'000, kFrame, 0), 1'234);
}

TEST(PacedRelease, TheLimitIsLiftedAtAndAboveLineRate) {
  EXPECT_EQ(limiter_rate_bps(12'500'000'000ULL, 25 * kBpsPerGbps), 12'500'000'000ULL);
  EXPECT_EQ(limiter_rate_bps(25 * kBpsPerGbps - 1, 25 * kBpsPerGbps), 25 * kBpsPerGbps - 1);
  EXPECT_EQ(limiter_rate_bps(25 * kBpsPerGbps, 25 * kBpsPerGbps), 0u);
  EXPECT_EQ(limiter_rate_bps(30 * kBpsPerGbps, 25 * kBpsPerGbps), 0u);
}

}  // namespace
}  // namespace rocemu::nic
