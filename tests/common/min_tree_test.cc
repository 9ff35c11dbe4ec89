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

}  // namespace
}  // namespace rocemu
