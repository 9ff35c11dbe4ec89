// dqn_trainer.h — multi-agent DQN training of the GraphCC MPNN or the ACC per-port nets.
//
// Torch-free interface to the LibTorch implementation in agent/torch/ (link
// agent_torch_dep). Acting (epsilon-greedy) uses the torch-free forward pass from weights
// exported after every gradient step, exactly what a deployed agent runs; LibTorch computes
// the loss and gradients on batches of whole graphs (GraphCC Sec. 4 "Training"). Torch runs
// with one intra-op and one inter-op thread. Deterministic for DqnConfig::seed. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/environment.h"
#include "agent/model_weights.h"
#include "agent/port_graph.h"
#include "agent/replay_buffer.h"
#include "agent/train_config.h"

namespace rocemu::agent {

struct StepLog {
  int64_t step = 0;
  double epsilon = 0.0;
  double mean_reward = 0.0;   // over agents, this step
  double loss = 0.0;          // last gradient step's loss (0 before the first)
  double mean_queue = 0.0;    // over agents, this step: queue / queue_scale (the reward's q)
  bool episode_done = false;  // this step ended an episode (the environment said done)
};

struct TrainStats {
  int64_t env_steps = 0;
  int64_t gradient_steps = 0;
  double last_loss = 0.0;
  double mean_reward_last_100 = 0.0;
};

/// Sets LibTorch to one intra-op and one inter-op thread (idempotent; safe to call again).
void init_torch_threads();

class DqnTrainer {
 public:
  /// Builds the online and target networks (seeded) for `graph` (copied).
  DqnTrainer(const PortGraph& graph, DqnConfig dqn, RewardConfig reward, FeatureConfig features);
  ~DqnTrainer();
  DqnTrainer(const DqnTrainer&) = delete;
  DqnTrainer& operator=(const DqnTrainer&) = delete;

  /// Interacts with `env` for `steps` control intervals (epsilon-greedy, replay, training,
  /// target sync), resetting it when an episode ends. Continues from the previous call.
  TrainStats train(Environment& env, int steps,
                   const std::function<void(const StepLog&)>& on_step = {});

  /// Mean per-agent reward of the greedy policy over `steps` intervals from reset(seed).
  double evaluate(Environment& env, int steps, uint64_t seed);

  /// One gradient step on a batch sampled from the replay buffer; returns the loss.
  double train_batch();
  /// Copies the online network into the target network.
  void sync_target();

  /// Writes everything training depends on (both networks, the optimiser's moments, the
  /// replay buffer, the random streams, the counters) to `path` (written beside and renamed,
  /// so a crash leaves the previous checkpoint). Only between episodes: throws
  /// std::logic_error inside one, std::runtime_error if the file cannot be written.
  void save_checkpoint(const std::string& path) const;
  /// Restores a checkpoint of a trainer built with the same graph and configuration; train()
  /// then continues exactly as the run that wrote it would have. Throws std::runtime_error
  /// naming the file and the problem (unreadable, corrupt, another configuration or graph).
  void load_checkpoint(const std::string& path);
  /// Environment steps taken and episodes started so far (restored by load_checkpoint).
  int64_t env_steps() const noexcept;
  int64_t episodes() const noexcept;

  /// The online network's weights, ready for save_model / the fast policies.
  Model export_model() const;
  /// Loads weights into the online and target networks (kind and sizes must match).
  void import_model(const Model& model);

  /// LibTorch forward of the online network: Q [N x kNumActions] for one graph;
  /// features [N x kNumFeatures], settings [N x kNumSettingFeatures].
  std::vector<float> torch_q_values(const float* features, const float* settings) const;
  /// Greedy actions through LibTorch (InferenceMode), for comparison with the fast path.
  void torch_greedy(const float* features, const float* settings, uint16_t* actions) const;

  ReplayBuffer& replay() noexcept;
  const PortGraph& graph() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rocemu::agent
