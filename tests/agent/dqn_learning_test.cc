// dqn_learning_test.cc — end-to-end learning on the closed-form test environment, and
// determinism of training for a seed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "agent/dqn_trainer.h"
#include "agent/queue_env.h"
#include "common/rng.h"
#include "tests/agent/clos.h"

namespace rocemu::agent {
namespace {

constexpr uint64_t kEvalSeed = 4242;  // an episode (load draw) never used in training
constexpr int kEvalSteps = 50;
constexpr int kFlipTrials = 300;

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

// A trainer small enough to checkpoint often: gradient steps from the 8th, a replay of 64.
DqnConfig checkpoint_config() {
  DqnConfig d = learning_config(ModelKind::kGraphCc);
  d.batch_graphs = 4;
  d.warmup_steps = 8;
  d.replay_capacity = 64;
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
  std::printf("untrained %.4f trained %.4f optimum %.4f (%.1f s)\n", untrained, trained, optimum,
              secs);
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

// A checkpoint between episodes, loaded into a fresh trainer, continues exactly as the run
// that wrote it: same weights after the remaining steps, for both loops and both models.
TEST(DqnCheckpoint, ResumingGivesTheSameModelAsTrainingStraightThrough) {
  const std::string path = testing::TempDir() + "dqn_checkpoint_test.ckpt";
  for (const ModelKind kind : {ModelKind::kGraphCc, ModelKind::kAccPerPort}) {
    for (const int threads : {1, 2}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, kind " +
                   std::to_string(static_cast<int>(kind)));
      DqnConfig d = learning_config(kind);
      d.batch_graphs = 4;
      d.warmup_steps = 8;
      d.threads = threads;
      QueueEnvConfig ec;
      ec.episode_steps = 20;
      auto fresh = [&](QueueEnv& env) {
        return std::make_unique<DqnTrainer>(PortGraph(env.topology()), d, RewardConfig{},
                                            FeatureConfig{});
      };
      QueueEnv env_a(test::paper_clos(), ec);
      auto straight = fresh(env_a);
      straight->train(env_a, 60);

      QueueEnv env_b(test::paper_clos(), ec);
      auto first = fresh(env_b);
      first->train(env_b, 40);  // two whole episodes
      first->save_checkpoint(path);
      QueueEnv env_c(test::paper_clos(), ec);
      auto resumed = fresh(env_c);
      resumed->load_checkpoint(path);
      EXPECT_EQ(resumed->env_steps(), 40);
      EXPECT_EQ(resumed->episodes(), 2);
      EXPECT_TRUE(resumed->export_model() == first->export_model());
      resumed->train(env_c, 20);
      EXPECT_TRUE(resumed->export_model() == straight->export_model());

      first->train(env_b, 5);  // inside an episode: no checkpoint
      EXPECT_THROW(first->save_checkpoint(path), std::logic_error);
    }
  }
  std::remove(path.c_str());
}

TEST(DqnCheckpoint, ABadCheckpointIsRefusedAndChangesNothing) {
  const std::string dir = testing::TempDir();
  QueueEnv env(test::paper_clos(), QueueEnvConfig{});
  const DqnConfig d = checkpoint_config();
  DqnTrainer trainer(PortGraph(env.topology()), d, RewardConfig{}, FeatureConfig{});
  trainer.train(env, 50);  // one episode of the default 50 steps
  const Model before = trainer.export_model();
  const std::string good = dir + "dqn_good.ckpt", bad = dir + "dqn_bad.ckpt";
  trainer.save_checkpoint(good);
  {
    std::ifstream in(good, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(bad, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  DqnTrainer other(PortGraph(env.topology()), d, RewardConfig{}, FeatureConfig{});
  const Model other_before = other.export_model();
  EXPECT_THROW(other.load_checkpoint(bad), std::runtime_error);
  EXPECT_THROW(other.load_checkpoint(dir + "no_such.ckpt"), std::runtime_error);
  EXPECT_TRUE(other.export_model() == other_before);
  EXPECT_EQ(other.env_steps(), 0);
  DqnConfig acc = d;
  acc.kind = ModelKind::kAccPerPort;
  DqnTrainer wrong_kind(PortGraph(env.topology()), acc, RewardConfig{}, FeatureConfig{});
  try {
    wrong_kind.load_checkpoint(good);
    ADD_FAILURE() << "a GraphCC checkpoint loaded into an ACC trainer";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("its model kind is graphcc, this one's is acc"),
              std::string::npos)
        << e.what();
  }
  other.load_checkpoint(good);
  EXPECT_TRUE(other.export_model() == before);
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

// A checkpoint with one byte changed anywhere (zip headers, the pickled index, tensor data)
// either loads, and then the trainer trains on from it, or is refused with a
// std::runtime_error that leaves the trainer as it was: never another exception, a crash or
// a trainer that fails later.
TEST(DqnCheckpoint, AFlippedByteIsRefusedUntouchedOrResumesTraining) {
  const std::string dir = testing::TempDir();
  QueueEnv env(test::paper_clos(), QueueEnvConfig{});
  const DqnConfig d = checkpoint_config();
  DqnTrainer trainer(PortGraph(env.topology()), d, RewardConfig{}, FeatureConfig{});
  trainer.train(env, 50);
  const std::string good = dir + "dqn_flip_good.ckpt", bad = dir + "dqn_flip_bad.ckpt";
  trainer.save_checkpoint(good);
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(bytes.size(), 1000u);
  Rng rng(7, "checkpoint-flips");
  int refused = 0, loaded = 0;
  for (int trial = 0; trial < kFlipTrials; ++trial) {
    std::string b = bytes;
    const size_t at = static_cast<size_t>(rng.uniform() * static_cast<double>(b.size()));
    b[at] = static_cast<char>(b[at] ^ (1 + static_cast<int>(rng.uniform() * 255)));
    std::ofstream(bad, std::ios::binary | std::ios::trunc) << b;
    DqnTrainer other(PortGraph(env.topology()), d, RewardConfig{}, FeatureConfig{});
    const Model before = other.export_model();
    const std::string where = "byte " + std::to_string(at) + " of " + std::to_string(b.size());
    try {
      other.load_checkpoint(bad);
    } catch (const std::runtime_error& e) {
      ++refused;
      EXPECT_EQ(std::string(e.what()).rfind(bad + ": ", 0), 0u) << where << ": " << e.what();
      EXPECT_TRUE(other.export_model() == before) << where;
      EXPECT_EQ(other.env_steps(), 0) << where;
      continue;
    } catch (const std::exception& e) {
      ADD_FAILURE() << where << ": not a std::runtime_error: " << e.what();
      continue;
    }
    ++loaded;
    try {
      other.train(env, 20);
    } catch (const std::exception& e) {
      ADD_FAILURE() << where << ": loaded, then training failed: " << e.what();
    }
  }
  std::printf("%d flips refused, %d loaded and trained on\n", refused, loaded);
  EXPECT_GT(refused, 0);
  EXPECT_GT(loaded, 0);
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

// What a CRC cannot catch (a file written with impossible contents, its CRC made to match):
// a replayed action outside the table, a replayed value that is not finite. Refused, naming
// it, and the trainer loading it is unchanged.
TEST(DqnCheckpoint, ImpossibleContentsUnderAValidCrcAreRefused) {
  const std::string dir = testing::TempDir();
  QueueEnv env(test::paper_clos(), QueueEnvConfig{});
  const DqnConfig d = checkpoint_config();
  const std::string path = dir + "dqn_impossible.ckpt";
  const auto refused_with = [&](const std::function<void(ReplayBuffer&)>& spoil) {
    DqnTrainer t(PortGraph(env.topology()), d, RewardConfig{}, FeatureConfig{});
    t.train(env, 50);
    spoil(t.replay());
    t.save_checkpoint(path);
    DqnTrainer other(PortGraph(env.topology()), d, RewardConfig{}, FeatureConfig{});
    const Model before = other.export_model();
    try {
      other.load_checkpoint(path);
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(other.export_model() == before);
      EXPECT_EQ(other.env_steps(), 0);
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused_with([](ReplayBuffer& r) { r.actions_storage()[5] = kNumActions; })
                .find("a replayed action outside 0..119"),
            std::string::npos);
  EXPECT_NE(refused_with([](ReplayBuffer& r) {
              r.obs_storage()[7] = std::numeric_limits<float>::quiet_NaN();
            }).find("'replay_obs' holds a value that is not finite"),
            std::string::npos);
  EXPECT_NE(refused_with([](ReplayBuffer& r) {
              r.rewards_storage()[0] = std::numeric_limits<float>::infinity();
            }).find("'replay_rewards' holds a value that is not finite"),
            std::string::npos);
  // And the same trainer's checkpoint, unspoilt, loads.
  EXPECT_EQ(refused_with([](ReplayBuffer&) {}), "");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace rocemu::agent
