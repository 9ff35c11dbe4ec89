// features_reward_test.cc — features from counter differences and the reward formula.
#include <gtest/gtest.h>

#include <cmath>

#include "agent/port_features.h"
#include "agent/reward.h"
#include "common/config.h"

namespace rocemu::agent {
namespace {

// One switch "s" with two hosts: agent 0 = s port 0 (to h0), agent 1 = s port 1 (to h1).
Topology two_port() {
  Topology t;
  const auto h0 = t.add_node("h0", NodeKind::kHost);
  const auto h1 = t.add_node("h1", NodeKind::kHost);
  const auto s = t.add_node("s", NodeKind::kSwitch);
  t.add_link(s, h0, 25 * kBpsPerGbps, 0);
  t.add_link(s, h1, 25 * kBpsPerGbps, 0);
  return t;
}

SwitchSnapshot snap(TimeNs at, uint64_t tx0, uint64_t marked0, uint32_t queue0) {
  SwitchSnapshot s;
  s.at_ns = at;
  s.node = 2;
  s.port_rate_bps = {25 * kBpsPerGbps, 25 * kBpsPerGbps};
  s.ecn = {EcnSetting{8 * 1024, 64 * 1024, 0.5}, EcnSetting{}};
  s.ports.resize(2);
  s.ports[0].tx_bytes = tx0;
  s.ports[0].ecn_marked_bytes = marked0;
  s.ports[0].queue_bytes[3] = queue0;
  s.ports[0].queue_bytes[0] = 1024;
  return s;
}

TEST(FeatureTracker, RatesComeFromCounterDifferencesOverCapacity) {
  const auto t = two_port();
  const PortGraph g(t);
  FeatureTracker f(g, FeatureConfig{256 * 1024});
  // 100 us at 25 Gbps carries 312500 bytes.
  std::vector<SwitchSnapshot> s{snap(1'000'000, 1000, 10, 0)};
  f.update(s);
  EXPECT_EQ(f.utilisation(0), 0.0f);  // first snapshot: no difference yet
  s = {snap(1'100'000, 1000 + 156'250, 10 + 31'250, 63 * 1024)};
  f.update(s);
  EXPECT_NEAR(f.utilisation(0), 0.5, 1e-6);
  EXPECT_NEAR(f.marking(0), 0.1, 1e-6);
  EXPECT_NEAR(f.queue(0), 0.25, 1e-6);  // 63 KB + 1 KB (two priorities) of 256 KB
  EXPECT_NEAR(f.settings()[0], 8.0 / 256, 1e-6);
  EXPECT_NEAR(f.settings()[1], 64.0 / 256, 1e-6);
  EXPECT_NEAR(f.settings()[2], 0.5, 1e-6);
}

TEST(FeatureTracker, HistoryShiftsThroughThreeStepsThenDrops) {
  const PortGraph g(two_port());
  FeatureTracker f(g, FeatureConfig{256 * 1024});
  const uint32_t q[] = {0, 32 * 1024, 64 * 1024, 128 * 1024};
  for (int i = 0; i < 4; ++i) {
    std::vector<SwitchSnapshot> s{snap(i * 100'000, 0, 0, q[i] - (i ? 1024 : 0))};
    if (i == 0) s[0].ports[0].queue_bytes[0] = 0;
    f.update(s);
  }
  const float* row = f.features().data();
  EXPECT_NEAR(row[1], 0.5, 1e-6);    // t
  EXPECT_NEAR(row[4], 0.25, 1e-6);   // t-1
  EXPECT_NEAR(row[7], 0.125, 1e-6);  // t-2
}

TEST(FeatureTracker, BadSnapshotsAreSkippedAndCounted) {
  const PortGraph g(two_port());
  FeatureTracker f(g, FeatureConfig{});
  std::vector<SwitchSnapshot> s{snap(100, 5000, 0, 0)};
  f.update(s);
  s[0].node = 0;  // a host
  f.update(s);
  EXPECT_EQ(f.skipped(FeatureSkip::kUnknownSwitch), 1u);
  s = {snap(100, 6000, 0, 0)};  // time did not advance: counted for each of the 2 ports
  f.update(s);
  EXPECT_EQ(f.skipped(FeatureSkip::kTimeNotAdvancing), 2u);
  s = {snap(200, 10, 0, 0)};  // port 0's counter went back (switch restarted)
  f.update(s);
  EXPECT_EQ(f.skipped(FeatureSkip::kCounterWentBack), 1u);
  EXPECT_EQ(f.utilisation(0), 0.0f);
  s[0].ports.resize(1);
  f.update(s);
  EXPECT_EQ(f.skipped(FeatureSkip::kPortCountMismatch), 1u);
}

TEST(FeatureTracker, ValuesAreClampedEvenForImpossibleCounters) {
  const PortGraph g(two_port());
  FeatureTracker f(g, FeatureConfig{1024});
  std::vector<SwitchSnapshot> s{snap(0, 0, 0, 0)};
  f.update(s);
  s = {snap(1, 1'000'000'000, 0, 4'000'000)};
  f.update(s);
  EXPECT_EQ(f.utilisation(0), kFeatureClamp);
  EXPECT_EQ(f.queue(0), kFeatureClamp);
}

TEST(Reward, LinearPenaltyIsWeightedSumOfThroughputAndDelayHeadroom) {
  const RewardConfig r;
  EXPECT_DOUBLE_EQ(r.reward(1.0, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(r.reward(0.5, 0.5), 0.7 * 0.5 + 0.3 * 0.5);
  EXPECT_DOUBLE_EQ(r.reward(0.0, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(r.reward(2.0, 3.0), 0.3);  // both clamped to [0, 1]
}

TEST(Reward, EveryPenaltyIsDecreasingFromOne) {
  for (auto p : {QueuePenalty::kLinear, QueuePenalty::kQuadratic, QueuePenalty::kExponential}) {
    RewardConfig r;
    r.penalty = p;
    EXPECT_DOUBLE_EQ(r.queue_score(0.0), 1.0);
    double prev = 2.0;
    for (int i = 0; i <= 20; ++i) {
      const double f = r.queue_score(i / 20.0);
      EXPECT_LT(f, prev);
      prev = f;
    }
  }
  RewardConfig q;
  q.penalty = QueuePenalty::kQuadratic;
  EXPECT_DOUBLE_EQ(q.queue_score(0.5), 0.25);
  RewardConfig e;
  e.penalty = QueuePenalty::kExponential;
  e.exp_scale = 0.5;
  EXPECT_DOUBLE_EQ(e.queue_score(0.5), std::exp(-1.0));
}

TEST(Reward, ConfigReadsWeightsAndReportsEveryProblem) {
  auto ok = toml::parse("w_queue = 0.6\nw_util = 0.4\npenalty = \"quadratic\"\n");
  ConfigErrors errors;
  ConfigReader r(ok, "reward", errors);
  const auto c = load_reward_config(r);
  EXPECT_TRUE(errors.empty());
  EXPECT_DOUBLE_EQ(c.w_queue, 0.6);
  EXPECT_EQ(c.penalty, QueuePenalty::kQuadratic);

  auto bad = toml::parse("w_queue = 1.5\npenalty = \"cubic\"\nweight = 1\n");
  ConfigErrors e2;
  ConfigReader r2(bad, "reward", e2);
  load_reward_config(r2);
  ASSERT_EQ(e2.size(), 3u);
  EXPECT_NE(e2.problems()[0].find("reward.w_queue=1.5"), std::string::npos);
}

}  // namespace
}  // namespace rocemu::agent
