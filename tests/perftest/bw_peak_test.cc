// bw_peak_test.cc — perftest's BW peak (apps/perftest/bw_peak.h) against perftest's own
// O(n^2) scan over every (posted i, completed j >= i) pair.
#include "apps/perftest/bw_peak.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace rocemu::perftest {
namespace {

double brute_force(const std::vector<TimeNs>& p, const std::vector<TimeNs>& c) {
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < p.size(); ++i)
    for (size_t j = i; j < c.size(); ++j)
      best = std::min(best, static_cast<double>(c[j] - p[i]) / static_cast<double>(j - i + 1));
  return best;
}

TEST(BwPeak, OneMessageIsItsOwnLatency) {
  EXPECT_DOUBLE_EQ(min_ns_per_message({100}, {600}), 500.0);
  EXPECT_DOUBLE_EQ(perftest_peak_bytes_per_s({100}, {600}, 1000), 1000 * 1e9 / 500);
  EXPECT_EQ(perftest_peak_bytes_per_s({}, {}, 1000), 0.0);
}

TEST(BwPeak, HandExampleFindsTheBestRun) {
  // Messages 1..3 were posted at 10 and completed by 40: 30 ns for 3 messages = 10 ns each,
  // better than any single message (>= 20 ns) or the whole run (100 / 4 = 25 ns).
  const std::vector<TimeNs> posted{0, 10, 11, 12};
  const std::vector<TimeNs> completed{60, 30, 35, 40};
  EXPECT_DOUBLE_EQ(min_ns_per_message(posted, completed), 10.0);
  EXPECT_DOUBLE_EQ(brute_force(posted, completed), 10.0);
}

TEST(BwPeak, EqualsPerftestsPairScanOnRandomRuns) {
  std::mt19937_64 rng(7);
  for (int run = 0; run < 300; ++run) {
    const size_t n = 1 + rng() % 120;
    std::vector<TimeNs> posted(n), completed(n);
    TimeNs t = static_cast<TimeNs>(rng() % 1000);
    for (size_t i = 0; i < n; ++i) {
      // Posts in bursts (a tx-depth window), completions a latency later, in order.
      t += (rng() % 4 == 0) ? static_cast<TimeNs>(rng() % 5000) : static_cast<TimeNs>(rng() % 50);
      posted[i] = t;
      const TimeNs after = std::max(i > 0 ? completed[i - 1] : 0, t);
      completed[i] = after + 1 + static_cast<TimeNs>(rng() % 3000);
    }
    EXPECT_NEAR(min_ns_per_message(posted, completed), brute_force(posted, completed), 1e-9)
        << "run " << run << " n " << n;
  }
}

TEST(BwPeak, LargeTimestampsDoNotOverflow) {
  // A day of TSC nanoseconds and a million messages stay exact (128-bit geometry).
  const TimeNs base = 86'400LL * kNsPerSec;
  std::vector<TimeNs> posted, completed;
  for (int i = 0; i < 1'000'000; ++i) {
    posted.push_back(base + i * 100LL);
    completed.push_back(base + i * 100LL + 5000);
  }
  // Best: all of them, (last completion - first post) / n = (99'999'900 + 5000) / 1e6.
  EXPECT_NEAR(min_ns_per_message(posted, completed), (99'999'900.0 + 5000) / 1e6, 1e-9);
}

}  // namespace
}  // namespace rocemu::perftest
