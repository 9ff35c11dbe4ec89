// port_features.cc — counters to GraphCC features (Bernardez et al., Sec. 4 "State").
#include "agent/port_features.h"

#include <algorithm>
#include <cstring>

#include "agent/action_table.h"

namespace rocemu::agent {

namespace {
float clamp_feature(double x) noexcept {
  if (!(x > 0.0)) return 0.0f;  // also maps NaN to 0
  return static_cast<float>(std::min<double>(x, kFeatureClamp));
}
}  // namespace

FeatureTracker::FeatureTracker(const PortGraph& graph, FeatureConfig config)
    : graph_(&graph), config_(config), n_(graph.num_agents()) {
  if (config_.queue_scale_bytes == 0) config_.queue_scale_bytes = 1;
  features_.assign(static_cast<size_t>(n_) * kNumFeatures, 0.0f);
  settings_.assign(static_cast<size_t>(n_) * kNumSettingFeatures, 0.0f);
  prev_tx_bytes_.assign(n_, 0);
  prev_marked_bytes_.assign(n_, 0);
  prev_at_ns_.assign(n_, kNever);
  reset();
}

void FeatureTracker::reset() noexcept {
  std::fill(features_.begin(), features_.end(), 0.0f);
  std::fill(prev_at_ns_.begin(), prev_at_ns_.end(), kNever);
  const EcnSetting def{};
  for (int v = 0; v < n_; ++v) {
    float* s = &settings_[static_cast<size_t>(v) * kNumSettingFeatures];
    s[0] = static_cast<float>(def.kmin_bytes) / kLargestKmaxBytes;
    s[1] = static_cast<float>(def.kmax_bytes) / kLargestKmaxBytes;
    s[2] = static_cast<float>(def.pmax);
  }
}

void FeatureTracker::update(std::span<const SwitchSnapshot> snapshots) noexcept {
  // Shift history: t -> t-1 -> t-2; the new step starts at zero.
  for (int v = 0; v < n_; ++v) {
    float* f = &features_[static_cast<size_t>(v) * kNumFeatures];
    std::memmove(f + kStepFeatures, f, sizeof(float) * kStepFeatures * (kHistorySteps - 1));
    f[0] = f[1] = f[2] = 0.0f;
  }
  for (const auto& snap : snapshots) {
    const auto& sw = graph_->switches();
    if (!std::binary_search(sw.begin(), sw.end(), snap.node)) [[unlikely]] {
      ++skipped_[static_cast<int>(FeatureSkip::kUnknownSwitch)];
      continue;
    }
    if (snap.ports.size() != graph_->ports_of(snap.node)) [[unlikely]]
      ++skipped_[static_cast<int>(FeatureSkip::kPortCountMismatch)];
    const size_t np = std::min<size_t>(snap.ports.size(), graph_->ports_of(snap.node));
    for (size_t p = 0; p < np; ++p) {
      const int v = graph_->agent_of(snap.node, static_cast<uint16_t>(p));
      if (v < 0) continue;
      const PortCounters& c = snap.ports[p];
      float* f = &features_[static_cast<size_t>(v) * kNumFeatures];
      f[1] = clamp_feature(static_cast<double>(c.total_queue_bytes()) /
                           static_cast<double>(config_.queue_scale_bytes));
      if (p < snap.ecn.size()) {
        float* s = &settings_[static_cast<size_t>(v) * kNumSettingFeatures];
        s[0] = clamp_feature(static_cast<double>(snap.ecn[p].kmin_bytes) / kLargestKmaxBytes);
        s[1] = clamp_feature(static_cast<double>(snap.ecn[p].kmax_bytes) / kLargestKmaxBytes);
        s[2] = clamp_feature(snap.ecn[p].pmax);
      }
      const uint64_t rate = p < snap.port_rate_bps.size() && snap.port_rate_bps[p] > 0
                                ? snap.port_rate_bps[p]
                                : graph_->agents()[v].rate_bps;
      const TimeNs prev_at = prev_at_ns_[v];
      const uint64_t prev_tx = prev_tx_bytes_[v], prev_mk = prev_marked_bytes_[v];
      prev_at_ns_[v] = snap.at_ns;
      prev_tx_bytes_[v] = c.tx_bytes;
      prev_marked_bytes_[v] = c.ecn_marked_bytes;
      if (prev_at == kNever) continue;
      if (snap.at_ns <= prev_at) [[unlikely]] {
        ++skipped_[static_cast<int>(FeatureSkip::kTimeNotAdvancing)];
        continue;
      }
      if (c.tx_bytes < prev_tx || c.ecn_marked_bytes < prev_mk) [[unlikely]] {
        ++skipped_[static_cast<int>(FeatureSkip::kCounterWentBack)];
        continue;
      }
      // Bits the port could have sent in the interval: dt_ns * rate_bps / 1e9.
      const double capacity_bits =
          static_cast<double>(snap.at_ns - prev_at) * static_cast<double>(rate) / 1e9;
      if (capacity_bits <= 0.0) continue;
      f[0] = clamp_feature(8.0 * static_cast<double>(c.tx_bytes - prev_tx) / capacity_bits);
      f[2] = clamp_feature(8.0 * static_cast<double>(c.ecn_marked_bytes - prev_mk) / capacity_bits);
    }
  }
}

}  // namespace rocemu::agent
