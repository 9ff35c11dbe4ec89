// train_config.h — DQN hyper-parameters and the rocemu-train configuration (TOML).
//
// Multi-agent DQN as in GraphCC (Bernardez et al., Sec. 4 "Training"; DQN: Mnih et al.,
// Nature 2015): epsilon-greedy exploration decaying linearly from eps_start to eps_end over
// eps_decay_steps, experience replay, a target network synced every target_sync_steps,
// Adam, Huber loss, gradient-norm clipping, discount gamma. Tables: [dqn], [reward]
// (reward.h), [features], [env] (queue_env.h). Unknown keys are errors.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <string>

#include "agent/model_weights.h"
#include "agent/port_features.h"
#include "agent/queue_env.h"
#include "agent/reward.h"

namespace rocemu::agent {

struct DqnConfig {
  ModelKind kind = ModelKind::kGraphCc;
  uint64_t seed = 1;
  double learning_rate = 1e-3;
  double gamma = 0.5;
  int batch_graphs = 32;
  int replay_capacity = 4096;
  int warmup_steps = 64;  // env steps before the first gradient step
  int train_every = 1;    // env steps per gradient step
  int target_sync_steps = 100;
  double eps_start = 1.0;
  double eps_end = 0.02;
  int eps_decay_steps = 1000;
  double grad_clip_norm = 10.0;
  double huber_delta = 1.0;
  // 1: act, step, learn in turn. 2: a learner thread computes the gradient step on the
  // replay as it was before this interval while the caller's thread steps the environment
  // with the weights of the previous gradient step (one step stale); deterministic too,
  // but not the same numbers as 1. ([train] threads)
  int threads = 1;

  /// Epsilon after `step` environment steps (linear decay, then flat).
  double epsilon(int64_t step) const noexcept;
};

struct TrainConfig {
  DqnConfig dqn;
  RewardConfig reward;
  FeatureConfig features;
  QueueEnvConfig env;
  int steps = 3000;      // training environment steps
  int eval_steps = 200;  // greedy evaluation steps after training
};

/// Parses a TOML table into TrainConfig. Throws ConfigError listing every problem
/// (`path=value: reason (line N)`); `source` names the file in messages.
TrainConfig load_train_config(const toml::table& root, const std::string& source);

}  // namespace rocemu::agent
