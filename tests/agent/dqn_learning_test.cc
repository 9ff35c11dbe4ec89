// dqn_learning_test.cc — end-to-end learning on the closed-form test environment, and
// determinism of training for a seed.
#include <gtest/gtest.h>

#include <chrono>

#include "agent/dqn_trainer.h"
#include "agent/queue_env.h"
#include "tests/agent/clos.h"

namespace rocemu::agent {
namespace {

constexpr uint64_t kEvalSeed = 4242;  // an episode (load draw) never used in training
constexpr int kEvalSteps = 50;

DqnConfig learning_config(ModelKind kind) {
  DqnConfig d;
  d.kind = kind;
  d.seed = 1;
  d.learning_rate = 2e-3;
  d.gamma = 0.5;
  d.batch_graphs = 32;
  d.warmup_steps = 32;
  d.target_sync_steps = 50;
  d.eps_start = 1.0;
  d.eps_end = 0.02;
  d.eps_decay_steps = 400;
  return d;
}

TEST(DqnLearning, GraphCcGreedyRewardWithinFivePercentOfOptimumAfter600Steps) {
  QueueEnv env(test::paper_clos(), QueueEnvConfig{});
  const PortGraph g(env.topology());
  const RewardConfig reward;
  const FeatureConfig features;
  DqnTrainer trainer(g, learning_config(ModelKind::kGraphCc), reward, features);
  const double untrained = trainer.evaluate(env, kEvalSteps, kEvalSeed);
  const double optimum = env.optimal_mean_reward(reward, features);
  // The untrained network must be measurably worse, or this test could not fail.
  EXPECT_LT(untrained, 0.95 * optimum);

  const auto t0 = std::chrono::steady_clock::now();
  const TrainStats stats = trainer.train(env, 600);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(stats.env_steps, 600);
  EXPECT_EQ(stats.gradient_steps, 600 - 32 + 1);
  const double trained = trainer.evaluate(env, kEvalSteps, kEvalSeed);
  EXPECT_DOUBLE_EQ(env.optimal_mean_reward(reward, features), optimum);  // same load draw
  EXPECT_GE(trained, 0.95 * optimum) << "untrained " << untrained << ", optimum " << optimum;
  RecordProperty("train_seconds", std::to_string(secs));
  std::printf("untrained %.4f trained %.4f optimum %.4f (%.1f s)\n", untrained, trained, optimum, secs);
}

TEST(DqnLearning, TrainingIsDeterministicForASeed) {
  auto run = [](uint64_t seed) {
    QueueEnv env(test::paper_clos(), QueueEnvConfig{});
    const PortGraph g(env.topology());
    DqnConfig d = learning_config(ModelKind::kGraphCc);
    d.seed = seed;
    d.batch_graphs = 4;
    d.warmup_steps = 8;
    DqnTrainer trainer(g, d, RewardConfig{}, FeatureConfig{});
    trainer.train(env, 30);
    return trainer.export_model();
  };
  const Model a = run(9), b = run(9), c = run(10);
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
}

TEST(DqnLearning, AccBaselineTrainsAndActsThroughTheSameLoop) {
  QueueEnv env(test::paper_clos(), QueueEnvConfig{});
  const PortGraph g(env.topology());
  DqnConfig d = learning_config(ModelKind::kAccPerPort);
  d.batch_graphs = 8;
  DqnTrainer trainer(g, d, RewardConfig{}, FeatureConfig{});
  const Model before = trainer.export_model();
  const TrainStats s = trainer.train(env, 60);
  EXPECT_GT(s.gradient_steps, 0);
  EXPECT_FALSE(trainer.export_model() == before);
  const double r = trainer.evaluate(env, 10, kEvalSeed);
  EXPECT_GT(r, 0.0);
  EXPECT_LE(r, 1.0);
}

}  // namespace
}  // namespace rocemu::agent
