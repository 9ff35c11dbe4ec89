// action_table_test.cc — the 120-action ECN table (GraphCC Sec. 4, ACC Sec. 4.2).
#include "agent/action_table.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

namespace rocemu::agent {
namespace {

TEST(ActionTable, HasExactly120UniqueValidEntries) {
  const auto& t = action_table();
  std::set<std::tuple<uint32_t, uint32_t, double>> seen;
  for (const auto& e : t) {
    EXPECT_EQ(e.validate(), "") << e.kmin_bytes << " " << e.kmax_bytes << " " << e.pmax;
    EXPECT_LE(e.kmin_bytes, e.kmax_bytes);
    seen.insert({e.kmin_bytes, e.kmax_bytes, e.pmax});
  }
  EXPECT_EQ(seen.size(), 120u);
}

TEST(ActionTable, ContainsEveryAllowedCombinationAndNothingElse) {
  int expected = 0;
  for (uint32_t kmin : kKminKb)
    for (uint32_t kmax : kKmaxKb)
      for (double p : kPmax) {
        const int i = action_index(EcnSetting{kmin * 1024, kmax * 1024, p});
        if (kmin <= kmax) {
          EXPECT_EQ(i, expected++) << kmin << "/" << kmax << "/" << p;
        } else {
          EXPECT_EQ(i, -1);
        }
      }
  EXPECT_EQ(expected, kNumActions);
}

TEST(ActionTable, FirstAndLastEntriesAreTheExtremes) {
  EXPECT_EQ(action_setting(0), (EcnSetting{2 * 1024, 16 * 1024, 0.01}));
  EXPECT_EQ(action_setting(119), (EcnSetting{32 * 1024, 256 * 1024, 1.0}));
  EXPECT_EQ(action_index(EcnSetting{5 * 1024, 200 * 1024, 0.01}), -1);
}

TEST(ActionTable, HashIsStableAndDependsOnContents) {
  EXPECT_EQ(action_table_hash(), action_table_hash());
  EXPECT_NE(action_table_hash(), 0xcbf29ce484222325ULL);
}

}  // namespace
}  // namespace rocemu::agent
