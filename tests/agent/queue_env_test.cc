// queue_env_test.cc — the closed-form test environment and the replay buffer.
#include "agent/queue_env.h"

#include <gtest/gtest.h>

#include "agent/action_table.h"
#include "agent/policy.h"
#include "agent/replay_buffer.h"
#include "agent/train_config.h"
#include "common/config.h"
#include "tests/agent/clos.h"

namespace rocemu::agent {
namespace {

TEST(QueueEnv, QueueSitsWhereRedMarksWithTheEquilibriumProbability) {
  QueueEnvConfig c;
  c.demands = {2.0};
  QueueEnv env(test::paper_clos(), c);
  env.reset(1);
  // p_eq = 0.2 * (1 - 1/2) = 0.1; Kmin 8 KB, Kmax 64 KB, Pmax 0.5: q = 8K + 56K * 0.2.
  const auto o = env.outcome(0, EcnSetting{8192, 65536, 0.5});
  EXPECT_NEAR(o.queue_bytes, 8192 + 57344 * 0.2, 1e-9);
  EXPECT_NEAR(o.utilisation, 1.0, 1e-12);  // swing 16 KB < q
  EXPECT_NEAR(o.marking, 0.1, 1e-12);
  // Pmax below p_eq: the queue rides at Kmax.
  EXPECT_NEAR(env.outcome(0, EcnSetting{8192, 65536, 0.01}).queue_bytes, 65536, 1e-9);
  // Too low a threshold drains the queue: utilisation q / swing.
  const auto low = env.outcome(0, EcnSetting{2048, 16384, 1.0});
  EXPECT_NEAR(low.utilisation, (2048 + 14336 * 0.1) / 16384.0, 1e-12);
}

TEST(QueueEnv, SnapshotsCarryCumulativeCountersTheTrackerTurnsBackIntoTheOutcome) {
  QueueEnvConfig c;
  c.demands = {4.0};
  c.noise = 0.0;
  QueueEnv env(test::paper_clos(), c);
  const PortGraph g(env.topology());
  FeatureTracker f(g, FeatureConfig{});
  f.update(env.reset(3));
  auto settings = make_switch_settings(g);
  std::vector<uint16_t> actions(g.num_agents(), 57);
  apply_actions(g, actions, settings);
  for (int i = 0; i < 2; ++i) f.update(env.step(settings).snapshots);
  const auto o = env.outcome(0, action_setting(57));
  EXPECT_NEAR(f.utilisation(0), o.utilisation, 1e-4);
  EXPECT_NEAR(f.marking(0), o.marking, 1e-4);
  EXPECT_NEAR(f.queue(0), o.queue_bytes / (256 * 1024), 1e-5);
}

TEST(QueueEnv, BestActionDependsOnLoadAndBeatsTheDefaultByMoreThanFivePercent) {
  QueueEnvConfig c;
  QueueEnv env(test::paper_clos(), c);
  env.reset(5);
  const RewardConfig r;
  const double opt = env.optimal_mean_reward(r, FeatureConfig{});
  double static_sum = 0.0;
  for (int v = 0; v < 40; ++v) {
    const auto o = env.outcome(v, action_setting(119));
    static_sum += r.reward(o.utilisation, o.queue_bytes / (256 * 1024));
  }
  EXPECT_LT(static_sum / 40, 0.95 * opt);
  auto best = [&](double d) {
    QueueEnvConfig one = c;
    one.demands = {d};
    QueueEnv e(test::paper_clos(), one);
    e.reset(1);
    int arg = 0;
    double bv = -1;
    for (int a = 0; a < kNumActions; ++a) {
      const auto o = e.outcome(0, action_setting(a));
      const double rv = r.reward(o.utilisation, o.queue_bytes / (256 * 1024));
      if (rv > bv) bv = rv, arg = a;
    }
    return arg;
  };
  EXPECT_NE(best(1.25), best(4.0));
}

TEST(QueueEnv, EpisodeEndsAfterConfiguredSteps) {
  QueueEnvConfig c;
  c.episode_steps = 3;
  QueueEnv env(test::paper_clos(), c);
  const PortGraph g(env.topology());
  env.reset(1);
  const auto s = make_switch_settings(g);
  EXPECT_FALSE(env.step(s).done);
  EXPECT_FALSE(env.step(s).done);
  EXPECT_TRUE(env.step(s).done);
}

TEST(ReplayBuffer, OverwritesOldestAndSamplesOnlyStoredEntries) {
  ReplayBuffer b(2, 3);
  std::vector<float> obs(2 * kObsDim), rew(2);
  std::vector<uint16_t> act(2);
  for (int i = 0; i < 5; ++i) {
    obs[0] = static_cast<float>(i);
    act[1] = static_cast<uint16_t>(i);
    b.push(obs, act, rew, obs);
  }
  EXPECT_EQ(b.size(), 3);
  // Entries 0..2 hold pushes 3, 4, 2.
  EXPECT_EQ(b.obs(0)[0], 3.0f);
  EXPECT_EQ(b.actions(1)[1], 4);
  EXPECT_EQ(b.obs(2)[0], 2.0f);
  Rng rng(1, "t");
  std::vector<int> idx;
  b.sample(rng, 100, idx);
  for (int i : idx) EXPECT_TRUE(i >= 0 && i < 3);
  b.push(std::vector<float>(3), act, rew, obs);  // wrong size: ignored
  EXPECT_EQ(b.obs(2)[0], 2.0f);
}

TEST(TrainConfig, ReadsEveryTableAndReportsAllProblemsAtOnce) {
  auto ok = toml::parse(R"(
[train]
steps = 10
[dqn]
model = "acc"
gamma = 0.9
[reward]
w_queue = 0.5
[features]
queue_scale_kb = 128
[env]
demands_pct = [150, 300]
)");
  const auto c = load_train_config(ok, "t.toml");
  EXPECT_EQ(c.steps, 10);
  EXPECT_EQ(c.dqn.kind, ModelKind::kAccPerPort);
  EXPECT_DOUBLE_EQ(c.dqn.gamma, 0.9);
  EXPECT_DOUBLE_EQ(c.reward.w_queue, 0.5);
  EXPECT_EQ(c.features.queue_scale_bytes, 128u * 1024);
  EXPECT_EQ(c.env.demands, (std::vector<double>{1.5, 3.0}));

  auto bad = toml::parse("[dqn]\ngamma = 2.0\nmodel = \"ppo\"\n[env]\nnoise = -1\n[extra]\n");
  try {
    load_train_config(bad, "bad.toml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("bad.toml: dqn.gamma=2"), std::string::npos) << m;
    EXPECT_NE(m.find("dqn.model=ppo"), std::string::npos) << m;
    EXPECT_NE(m.find("env.noise=-1"), std::string::npos) << m;
    EXPECT_NE(m.find("extra"), std::string::npos) << m;
  }
}

TEST(DqnConfig, EpsilonDecaysLinearlyThenStaysAtFloor) {
  DqnConfig d;
  d.eps_start = 1.0;
  d.eps_end = 0.1;
  d.eps_decay_steps = 100;
  EXPECT_DOUBLE_EQ(d.epsilon(0), 1.0);
  EXPECT_DOUBLE_EQ(d.epsilon(50), 0.55);
  EXPECT_DOUBLE_EQ(d.epsilon(100), 0.1);
  EXPECT_DOUBLE_EQ(d.epsilon(1000), 0.1);
}

}  // namespace
}  // namespace rocemu::agent

namespace rocemu::agent {
namespace {

// The numbering the agent tests and the ACC baseline (one net per port, in PortGraph order)
// rely on, from the one Clos builder: hosts 0..23, leaves 24..27, spines 28..29; a leaf's
// ports 0..5 face its hosts, 6 and 7 the spines; spine port i faces leaf i.
TEST(PaperClos, NodesAndPortsAreNumberedAsTheAgentTestsAssume) {
  const Topology t = test::paper_clos();
  ASSERT_EQ(t.nodes().size(), 30u);
  for (int l = 0; l < test::kClosLeaves; ++l) {
    const auto& leaf = t.node(test::kLeaf0 + l);
    EXPECT_EQ(leaf.name, "leaf" + std::to_string(l));
    ASSERT_EQ(leaf.ports.size(), 8u);
    for (uint16_t p = 0; p < 6; ++p) {
      EXPECT_EQ(leaf.ports[p].peer.node, static_cast<uint32_t>(l * 6 + p));
      EXPECT_EQ(t.links()[leaf.ports[p].link].rate_bps, 25 * kBpsPerGbps);
    }
    for (uint16_t s = 0; s < 2; ++s) {
      EXPECT_EQ(leaf.ports[6 + s].peer, (PortRef{test::kSpine0 + s, static_cast<uint16_t>(l)}));
      EXPECT_EQ(t.links()[leaf.ports[6 + s].link].rate_bps, 100 * kBpsPerGbps);
    }
  }
  for (int h = 0; h < test::kClosHosts; ++h) EXPECT_EQ(t.node(h).kind, NodeKind::kHost);
  const PortGraph g(t);
  EXPECT_EQ(g.num_agents(), 40);
  EXPECT_EQ(g.num_edges(), 96);
}

}  // namespace
}  // namespace rocemu::agent
