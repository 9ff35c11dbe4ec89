// min_tree_test.cc — MinTree against a brute-force minimum.
#include "common/min_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "common/rng.h"

namespace rocemu {
namespace {

TEST(MinTree, EmptyAndFreshEntriesAreNever) {
  EXPECT_EQ(MinTree().min(), kNever);
  MinTree t(5);
  EXPECT_EQ(t.min(), kNever);
  EXPECT_EQ(t.at(4), kNever);
}

TEST(MinTree, MinEqualsBruteForceAfterRandomUpdates) {
  for (uint32_t n : {1u, 2u, 3u, 46u, 64u, 184u}) {
    MinTree t(n);
    std::vector<TimeNs> ref(n, kNever);
    Rng rng(n);
    for (int k = 0; k < 5000; ++k) {
      const auto i = static_cast<uint32_t>(rng.next() % n);
      const TimeNs v = rng.next() % 4 == 0 ? kNever : static_cast<TimeNs>(rng.next() % 1000);
      t.update(i, v);
      ref[i] = v;
      ASSERT_EQ(t.min(), *std::min_element(ref.begin(), ref.end())) << "n=" << n << " k=" << k;
      ASSERT_EQ(t.at(i), v);
    }
  }
}

// first_due against a scan, and the visiting loop DcqcnPort::on_timer runs (update the
// entry found, ask again from the next index) against the scan it replaced.
TEST(MinTree, FirstDueEqualsAScanAndVisitsDueEntriesInIndexOrder) {
  for (uint32_t n : {1u, 2u, 3u, 5u, 46u, 64u, 256u, 300u}) {
    MinTree t(n);
    std::vector<TimeNs> ref(n, kNever);
    Rng rng(1000 + n);
    for (int k = 0; k < 400; ++k) {
      for (int u = 0; u < 8; ++u) {
        const auto i = static_cast<uint32_t>(rng.next() % n);
        ref[i] = rng.next() % 3 == 0 ? kNever : static_cast<TimeNs>(rng.next() % 1000);
        t.update(i, ref[i]);
      }
      const auto now = static_cast<TimeNs>(rng.next() % 1000);
      for (uint32_t from = 0; from <= n + 1; ++from) {
        uint32_t want = n;
        for (uint32_t i = from; i < n; ++i)
          if (ref[i] <= now) {
            want = i;
            break;
          }
        ASSERT_EQ(t.first_due(now, from), want) << "n=" << n << " k=" << k << " from=" << from;
      }
      std::vector<uint32_t> visited, expected;
      for (uint32_t i = 0; i < n; ++i)
        if (ref[i] <= now) expected.push_back(i);
      for (uint32_t i = t.first_due(now, 0); i < n; i = t.first_due(now, i + 1)) {
        visited.push_back(i);
        // Re-armed: half later than now, half still due (visited once all the same).
        ref[i] = rng.next() % 2 ? now + 1 + static_cast<TimeNs>(rng.next() % 500) : now;
        t.update(i, ref[i]);
      }
      ASSERT_EQ(visited, expected) << "n=" << n << " k=" << k;
    }
  }
  EXPECT_EQ(MinTree().first_due(0, 0), 0u);  // empty: size() is 0
}

// grow() as a host uses it (one entry at a time, and in jumps), with updates in between: the
// entries kept, the new ones kNever, min() and first_due() as over a tree built afresh.
TEST(MinTree, GrowKeepsTheEntriesAndAddsNeverOnes) {
  MinTree t;
  std::vector<TimeNs> ref;
  Rng rng(7);
  while (ref.size() < 600) {
    const auto n = static_cast<uint32_t>(ref.size() + (rng.next() % 4 == 0 ? 1 + rng.next() % 70 : 1));
    t.grow(n);
    ref.resize(n, kNever);
    ASSERT_EQ(t.size(), n);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(t.at(i), ref[i]) << "n=" << n << " i=" << i;
    ASSERT_EQ(t.min(), *std::min_element(ref.begin(), ref.end())) << "n=" << n;
    for (int u = 0; u < 3; ++u) {
      const auto i = static_cast<uint32_t>(rng.next() % n);
      ref[i] = rng.next() % 3 == 0 ? kNever : static_cast<TimeNs>(rng.next() % 1000);
      t.update(i, ref[i]);
    }
    ASSERT_EQ(t.min(), *std::min_element(ref.begin(), ref.end())) << "n=" << n;
    const auto now = static_cast<TimeNs>(rng.next() % 1000);
    const auto from = static_cast<uint32_t>(rng.next() % (n + 1));
    uint32_t want = n;
    for (uint32_t i = from; i < n; ++i)
      if (ref[i] <= now) {
        want = i;
        break;
      }
    ASSERT_EQ(t.first_due(now, from), want) << "n=" << n;
  }
  t.grow(10);  // never shrinks
  EXPECT_EQ(t.size(), ref.size());
}

}  // namespace
}  // namespace rocemu
