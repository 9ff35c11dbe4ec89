// port_features.h — per-agent input features from cumulative switch counters.
//
// GraphCC (Bernardez et al., Sec. 4 "State"): each agent observes its port's utilisation,
// queue length and ECN marking rate over the last three control intervals. Per step t:
//   util(t)  = 8 * (tx_bytes(t) - tx_bytes(t-1)) / (dt_s * rate_bps)          (0..1)
//   queue(t) = total_queue_bytes(t) / queue_scale_bytes                         (0..~1)
//   mark(t)  = 8 * (ecn_marked_bytes(t) - ecn_marked_bytes(t-1)) / (dt_s * rate_bps)
// Row v of features() is [util, queue, mark] at t, then t-1, then t-2 (9 floats); steps
// before the first snapshot are zeros, and so are the rates of the first snapshot (no
// difference yet). Row v of settings() is the ECN setting in force (ACC's extra state,
// Yan et al. Sec. 4.2): [kmin / 256 KB, kmax / 256 KB, pmax]. Every value is clamped to
// [0, kFeatureClamp] so a counter glitch cannot blow up the network's input.
// update() is noexcept and allocation-free: bad input is skipped and counted.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "agent/port_graph.h"
#include "common/telemetry.h"

namespace rocemu::agent {

inline constexpr int kStepFeatures = 3;
inline constexpr int kHistorySteps = 3;
inline constexpr int kNumFeatures = kStepFeatures * kHistorySteps;  // 9
inline constexpr int kNumSettingFeatures = 3;
inline constexpr float kFeatureClamp = 4.0f;

struct FeatureConfig {
  uint64_t queue_scale_bytes = 256 * 1024;  // queue normalisation (default: the largest Kmax)
};

/// Why snapshot data was ignored (counted, never thrown): kUnknownSwitch and
/// kPortCountMismatch once per snapshot, the others once per agent port.
enum class FeatureSkip : uint8_t { kUnknownSwitch, kPortCountMismatch, kTimeNotAdvancing,
                                   kCounterWentBack, kCount };

class FeatureTracker {
 public:
  FeatureTracker(const PortGraph& graph, FeatureConfig config);

  /// Forgets all history (start of an episode).
  void reset() noexcept;
  /// Consumes one snapshot per switch (any order) taken at the end of a control interval
  /// and shifts the history by one step. Snapshots of unknown nodes are skipped and counted.
  void update(std::span<const SwitchSnapshot> snapshots) noexcept;

  int num_agents() const noexcept { return n_; }
  /// [num_agents x kNumFeatures], row-major.
  const std::vector<float>& features() const noexcept { return features_; }
  /// [num_agents x kNumSettingFeatures], row-major.
  const std::vector<float>& settings() const noexcept { return settings_; }
  /// Latest-step values of agent v.
  float utilisation(int v) const noexcept { return features_[v * kNumFeatures + 0]; }
  float queue(int v) const noexcept { return features_[v * kNumFeatures + 1]; }
  float marking(int v) const noexcept { return features_[v * kNumFeatures + 2]; }

  uint64_t skipped(FeatureSkip r) const noexcept { return skipped_[static_cast<int>(r)]; }

 private:
  const PortGraph* graph_;
  FeatureConfig config_;
  int n_;
  std::vector<float> features_;
  std::vector<float> settings_;
  std::vector<uint64_t> prev_tx_bytes_, prev_marked_bytes_;
  std::vector<TimeNs> prev_at_ns_;  // per agent; kNever = no previous snapshot
  uint64_t skipped_[static_cast<int>(FeatureSkip::kCount)] = {};
};

}  // namespace rocemu::agent
