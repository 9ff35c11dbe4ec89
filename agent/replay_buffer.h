// replay_buffer.h — experience replay for multi-agent DQN over a whole port graph.
//
// One entry per control interval for the whole graph (Bernardez et al., Sec. 4 "Training":
// the agents share one network, so a graph step is one training sample with N agent
// transitions): observation [N x kObsDim], action [N], reward [N], next observation
// [N x kObsDim]. The observation is the 9 GraphCC features followed by the 3 setting
// features (ACC uses all 12, GraphCC the first 9). Fixed capacity, oldest overwritten;
// storage allocated once. Sampling is uniform with replacement from a seeded Rng.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "agent/port_features.h"
#include "common/rng.h"

namespace rocemu::agent {

inline constexpr int kObsDim = kNumFeatures + kNumSettingFeatures;

class ReplayBuffer {
 public:
  ReplayBuffer(int num_agents, int capacity);

  int num_agents() const noexcept { return n_; }
  int capacity() const noexcept { return capacity_; }
  int size() const noexcept { return size_; }

  /// Copies one graph transition in (obs/next_obs: N x kObsDim; actions, rewards: N).
  void push(std::span<const float> obs, std::span<const uint16_t> actions,
            std::span<const float> rewards, std::span<const float> next_obs) noexcept;

  /// `count` entry indices drawn uniformly (size() must be > 0).
  void sample(Rng& rng, int count, std::vector<int>& out) const;

  const float* obs(int i) const noexcept { return &obs_[static_cast<size_t>(i) * n_ * kObsDim]; }
  const float* next_obs(int i) const noexcept {
    return &next_obs_[static_cast<size_t>(i) * n_ * kObsDim];
  }
  const uint16_t* actions(int i) const noexcept { return &actions_[static_cast<size_t>(i) * n_]; }
  const float* rewards(int i) const noexcept { return &rewards_[static_cast<size_t>(i) * n_]; }

  /// The whole storage and fill state, for training checkpoints (DqnTrainer).
  int head() const noexcept { return head_; }
  std::span<float> obs_storage() noexcept { return obs_; }
  std::span<float> next_obs_storage() noexcept { return next_obs_; }
  std::span<float> rewards_storage() noexcept { return rewards_; }
  std::span<uint16_t> actions_storage() noexcept { return actions_; }
  /// Whether (size, head) is a fill state this buffer can have: entries [0, size), the next
  /// write at head (== size unless full).
  bool fill_ok(int size, int head) const noexcept;
  /// Sets the fill state after the storage was restored; false (nothing changed) if not
  /// fill_ok().
  bool set_fill(int size, int head) noexcept;

 private:
  int n_, capacity_, size_ = 0, head_ = 0;
  std::vector<float> obs_, next_obs_, rewards_;
  std::vector<uint16_t> actions_;
};

/// Fills `obs` (N x kObsDim) from a tracker: features then settings, per agent.
void observation(const FeatureTracker& tracker, std::vector<float>& obs);

}  // namespace rocemu::agent
