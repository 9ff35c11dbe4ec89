// torch_forward_test.cc — the LibTorch networks against the torch-free forward pass, and
// weight export/import through the trainer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "agent/dqn_trainer.h"
#include "agent/fast_mpnn.h"
#include "agent/model_file.h"
#include "agent/policy.h"
#include "agent/queue_env.h"
#include "common/topology_generators.h"
#include "tests/agent/clos.h"
#include "tests/agent/test_weights.h"

namespace rocemu::agent {
namespace {

DqnConfig small_config(ModelKind kind, uint64_t seed) {
  DqnConfig d;
  d.kind = kind;
  d.seed = seed;
  d.batch_graphs = 4;
  d.replay_capacity = 64;
  d.warmup_steps = 4;
  return d;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  return worst;
}

TEST(TorchForward, GraphCcTorchEqualsFastForwardWithin1e5) {
  // Weights as training leaves them: the trainer's initialisation after 40 steps of
  // learning on the test environment.
  QueueEnv env(test::paper_clos(), QueueEnvConfig{});
  const PortGraph g(env.topology());
  DqnTrainer trainer(g, small_config(ModelKind::kGraphCc, 3), RewardConfig{}, FeatureConfig{});
  trainer.train(env, 40);
  const auto f = test::random_rows(10, g.num_agents(), kNumFeatures);
  const auto s = test::random_rows(11, g.num_agents(), kNumSettingFeatures);
  const auto tq = trainer.torch_q_values(f.data(), s.data());
  ASSERT_EQ(tq.size(), static_cast<size_t>(g.num_agents()) * kNumActions);
  FastMpnn fast(trainer.export_model().mpnn, g);
  std::vector<float> fq(tq.size());
  fast.q_values(f.data(), fq.data());
  EXPECT_LT(max_abs_diff(tq, fq), 1e-5);
  const auto [lo, hi] = std::minmax_element(tq.begin(), tq.end());
  EXPECT_GT(*hi - *lo, 0.01f) << "Q-values should spread";

  std::vector<uint16_t> ta(g.num_agents()), fa(g.num_agents());
  trainer.torch_greedy(f.data(), s.data(), ta.data());
  fast.greedy(f.data(), fa.data());
  EXPECT_EQ(ta, fa);
}

// The K=16 fat tree: 5,120 agents, 65,536 edges, 8 or 16 ingress neighbours each.
TEST(TorchForward, GraphCcTorchEqualsFastForwardOnTheK16FatTree) {
  FatTreeParams p;
  p.k = 16;
  const PortGraph g(make_fattree(p));
  ASSERT_EQ(g.num_agents(), 5120);
  DqnConfig d = small_config(ModelKind::kGraphCc, 12);
  d.replay_capacity = 4;
  DqnTrainer trainer(g, d, RewardConfig{}, FeatureConfig{});
  const auto f = test::random_rows(16, g.num_agents(), kNumFeatures);
  const auto tq = trainer.torch_q_values(f.data(), nullptr);
  FastMpnn fast(trainer.export_model().mpnn, g);
  std::vector<float> fq(tq.size());
  fast.q_values(f.data(), fq.data());
  EXPECT_LT(max_abs_diff(tq, fq), 1e-5);

  // Over 5,120 x 120 Q-values the two summation orders may split a near tie: then the two
  // actions' LibTorch Q-values must be equal within the same 1e-5.
  std::vector<uint16_t> ta(g.num_agents()), fa(g.num_agents());
  trainer.torch_greedy(f.data(), nullptr, ta.data());
  fast.greedy(f.data(), fa.data());
  int same = 0;
  for (int v = 0; v < g.num_agents(); ++v) {
    if (ta[v] == fa[v]) {
      ++same;
      continue;
    }
    const float* qv = &tq[static_cast<size_t>(v) * kNumActions];
    EXPECT_NEAR(qv[ta[v]], qv[fa[v]], 1e-5) << "agent " << v;
  }
  EXPECT_GT(same, g.num_agents() * 99 / 100);
}

TEST(TorchForward, GraphCcWithLargeWeightsAgreesToFloatRounding) {
  // Weights U(-0.5, 0.5) make Q-values of tens: the two paths sum in different orders, so
  // compare relative to the largest magnitude (float32 epsilon is 1.2e-7).
  const PortGraph g(test::paper_clos());
  DqnTrainer trainer(g, small_config(ModelKind::kGraphCc, 3), RewardConfig{}, FeatureConfig{});
  Model m;
  m.mpnn = test::random_mpnn(9, 0.5f);
  trainer.import_model(m);
  const auto f = test::random_rows(10, g.num_agents(), kNumFeatures);
  const auto tq = trainer.torch_q_values(f.data(), nullptr);
  FastMpnn fast(m.mpnn, g);
  std::vector<float> fq(tq.size());
  fast.q_values(f.data(), fq.data());
  double scale = 0.0;
  for (float q : tq) scale = std::max(scale, std::abs(double(q)));
  EXPECT_GT(scale, 1.0);
  EXPECT_LT(max_abs_diff(tq, fq) / scale, 1e-6);
}

TEST(TorchForward, GraphCcHandlesPortsWithoutNeighboursLikeFastPath) {
  Topology t;
  const auto h0 = t.add_node("h0", NodeKind::kHost);
  const auto h1 = t.add_node("h1", NodeKind::kHost);
  const auto s = t.add_node("s", NodeKind::kSwitch);
  t.add_link(s, h0, 10 * kBpsPerGbps, 0);
  t.add_link(s, h1, 10 * kBpsPerGbps, 0);
  const PortGraph g(t);
  DqnTrainer trainer(g, small_config(ModelKind::kGraphCc, 4), RewardConfig{}, FeatureConfig{});
  const auto f = test::random_rows(1, 2, kNumFeatures);
  const auto tq = trainer.torch_q_values(f.data(), nullptr);
  FastMpnn fast(trainer.export_model().mpnn, g);
  std::vector<float> fq(tq.size());
  fast.q_values(f.data(), fq.data());
  EXPECT_LT(max_abs_diff(tq, fq), 1e-5);
}

TEST(TorchForward, AccTorchEqualsFastForwardWithin1e5) {
  const PortGraph g(test::paper_clos());
  DqnTrainer trainer(g, small_config(ModelKind::kAccPerPort, 5), RewardConfig{}, FeatureConfig{});
  const auto f = test::random_rows(12, g.num_agents(), kNumFeatures);
  const auto s = test::random_rows(13, g.num_agents(), kNumSettingFeatures);
  const auto tq = trainer.torch_q_values(f.data(), s.data());
  const Model m = trainer.export_model();
  ASSERT_EQ(m.acc.size(), 40u);
  EXPECT_FALSE(m.acc[0] == m.acc[1]) << "ports must not share parameters";
  FastAccNets fast(m.acc);
  std::vector<float> fq(tq.size());
  fast.q_values(f.data(), s.data(), fq.data());
  EXPECT_LT(max_abs_diff(tq, fq), 1e-5);
}

TEST(TorchForward, ExportImportThroughModelFileIsExact) {
  const PortGraph g(test::paper_clos());
  for (auto kind : {ModelKind::kGraphCc, ModelKind::kAccPerPort}) {
    DqnTrainer a(g, small_config(kind, 6), RewardConfig{}, FeatureConfig{});
    DqnTrainer b(g, small_config(kind, 7), RewardConfig{}, FeatureConfig{});
    const std::string path = ::testing::TempDir() + "rocemu_torch_roundtrip.bin";
    save_model(path, a.export_model());
    EXPECT_FALSE(b.export_model() == a.export_model());
    b.import_model(load_model(path));
    EXPECT_TRUE(b.export_model() == a.export_model());
    const auto f = test::random_rows(14, g.num_agents(), kNumFeatures);
    const auto s = test::random_rows(15, g.num_agents(), kNumSettingFeatures);
    EXPECT_EQ(a.torch_q_values(f.data(), s.data()), b.torch_q_values(f.data(), s.data()));
    std::remove(path.c_str());
  }
}

TEST(TorchForward, ATrainerOfAnUnknownModelKindIsRefused) {
  const PortGraph g(test::paper_clos());
  EXPECT_THROW(
      DqnTrainer(g, small_config(static_cast<ModelKind>(7), 1), RewardConfig{}, FeatureConfig{}),
      std::invalid_argument);
}

}  // namespace
}  // namespace rocemu::agent

namespace rocemu::agent {
namespace {

// Deploy path: train, save, load in a torch-free EcnAgent, act on live snapshots; the
// actions equal LibTorch's greedy actions on the same features.
TEST(TorchForward, SavedModelActsInEcnAgentLikeTheTrainer) {
  QueueEnv env(test::paper_clos(), QueueEnvConfig{});
  const PortGraph g(env.topology());
  for (auto kind : {ModelKind::kGraphCc, ModelKind::kAccPerPort}) {
    DqnTrainer trainer(g, small_config(kind, 8), RewardConfig{}, FeatureConfig{});
    trainer.train(env, 20);
    const std::string path = ::testing::TempDir() + "rocemu_deploy.bin";
    save_model(path, trainer.export_model());
    EcnAgent agent(env.topology(), FeatureConfig{}, make_policy(load_model(path), g));
    std::remove(path.c_str());
    FeatureTracker tracker(g, FeatureConfig{});
    auto settings = make_switch_settings(g, action_setting(60));
    auto snaps = env.reset(99);
    for (int i = 0; i < 3; ++i) {
      tracker.update(snaps);
      settings = agent.decide(snaps);
      std::vector<uint16_t> expected(g.num_agents());
      trainer.torch_greedy(tracker.features().data(), tracker.settings().data(), expected.data());
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), agent.actions().begin()))
          << "step " << i;
      EXPECT_EQ(settings[0].ecn[0], action_setting(agent.actions()[0]));
      snaps = env.step(settings).snapshots;
    }
  }
}

}  // namespace
}  // namespace rocemu::agent
