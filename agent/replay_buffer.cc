// replay_buffer.cc — fixed-capacity graph-transition replay (DQN, Mnih et al. 2015).
#include "agent/replay_buffer.h"

#include <algorithm>

namespace rocemu::agent {

ReplayBuffer::ReplayBuffer(int num_agents, int capacity)
    : n_(num_agents), capacity_(std::max(1, capacity)) {
  const size_t c = static_cast<size_t>(capacity_);
  obs_.assign(c * n_ * kObsDim, 0.0f);
  next_obs_.assign(c * n_ * kObsDim, 0.0f);
  rewards_.assign(c * n_, 0.0f);
  actions_.assign(c * n_, 0);
}

void ReplayBuffer::push(std::span<const float> obs, std::span<const uint16_t> actions,
                        std::span<const float> rewards, std::span<const float> next_obs) noexcept {
  const size_t no = static_cast<size_t>(n_) * kObsDim;
  if (obs.size() != no || next_obs.size() != no || actions.size() != static_cast<size_t>(n_) ||
      rewards.size() != static_cast<size_t>(n_)) [[unlikely]]
    return;
  const size_t h = static_cast<size_t>(head_);
  std::copy(obs.begin(), obs.end(), obs_.begin() + h * no);
  std::copy(next_obs.begin(), next_obs.end(), next_obs_.begin() + h * no);
  std::copy(actions.begin(), actions.end(), actions_.begin() + h * n_);
  std::copy(rewards.begin(), rewards.end(), rewards_.begin() + h * n_);
  head_ = (head_ + 1) % capacity_;
  size_ = std::min(size_ + 1, capacity_);
}

bool ReplayBuffer::fill_ok(int size, int head) const noexcept {
  if (size < 0 || size > capacity_ || head < 0 || head >= capacity_) return false;
  return size == capacity_ || head == size;  // not full: entries are [0, size)
}

bool ReplayBuffer::set_fill(int size, int head) noexcept {
  if (!fill_ok(size, head)) return false;
  size_ = size;
  head_ = head;
  return true;
}

void ReplayBuffer::sample(Rng& rng, int count, std::vector<int>& out) const {
  out.resize(static_cast<size_t>(count));
  for (auto& i : out) i = static_cast<int>(rng.below(static_cast<uint64_t>(size_)));
}

void observation(const FeatureTracker& tracker, std::vector<float>& obs) {
  const int n = tracker.num_agents();
  obs.resize(static_cast<size_t>(n) * kObsDim);
  const float* f = tracker.features().data();
  const float* s = tracker.settings().data();
  for (int v = 0; v < n; ++v) {
    std::copy_n(f + static_cast<size_t>(v) * kNumFeatures, kNumFeatures,
                &obs[static_cast<size_t>(v) * kObsDim]);
    std::copy_n(s + static_cast<size_t>(v) * kNumSettingFeatures, kNumSettingFeatures,
                &obs[static_cast<size_t>(v) * kObsDim + kNumFeatures]);
  }
}

}  // namespace rocemu::agent
