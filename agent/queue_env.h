// queue_env.h — TEST ENVIRONMENT: a closed-form queue per port that answers to its ECN
// thresholds. It exists to prove the learning machinery end to end; it is not a network
// model (the virtual-time engine in fabric/ is the real environment).
//
// Each agent port v gets an offered load d_v (a multiple of its capacity) per episode, drawn
// from `demands`. Within one interval the port reaches the steady state of a DCQCN-like
// loop (senders cut their rate in proportion to the marking probability):
//   d <= 1: no queue, no marking, utilisation u = d;
//   d > 1:  the loop settles where RED marks with p_eq = min(1, mark_gain * (1 - 1/d)),
//           so the queue sits where RED(q) = p_eq:
//             q = Kmin + (Kmax - Kmin) * p_eq / Pmax   if p_eq < Pmax, else q = Kmax;
//           the queue swings by A = swing_bytes_per_load * d around q, and the port idles
//           when it drains: u = min(1, q / A).
// Thresholds that are too low starve the port, too high build a standing queue: the best
// action depends on d, which the agent can infer from its marking rate (p_eq * u). The queue
// carries multiplicative noise of +-noise. Snapshots are cumulative counters as a switch
// would publish (queue bytes in priority 3). Units: bytes, ns.
#pragma once

#include <cstdint>
#include <vector>

#include "agent/environment.h"
#include "agent/port_features.h"
#include "agent/reward.h"
#include "common/rng.h"

namespace rocemu {
class ConfigReader;
}

namespace rocemu::agent {

struct QueueEnvConfig {
  TimeNs interval_ns = 100 * kNsPerUs;
  std::vector<double> demands = {1.25, 2.0, 4.0};
  double mark_gain = 0.2;
  double swing_bytes_per_load = 8 * 1024;
  double noise = 0.02;
  int episode_steps = 50;
};

/// Reads an [env] table (interval_us, demands_pct = offered loads in % of capacity,
/// mark_gain, swing_kb_per_load, noise, episode_steps). Problems go to the reader's
/// ConfigErrors.
QueueEnvConfig load_queue_env_config(ConfigReader& r);

class QueueEnv final : public Environment {
 public:
  QueueEnv(Topology topo, QueueEnvConfig config);

  const Topology& topology() const override { return topo_; }
  std::vector<SwitchSnapshot> reset(uint64_t seed) override;
  StepResult step(const std::vector<SwitchEcn>& settings) override;

  /// Noise-free steady state of agent v under setting s.
  struct Outcome {
    double queue_bytes, utilisation, marking;
  };
  Outcome outcome(int v, const EcnSetting& s) const noexcept;
  /// Mean over agents of the best noise-free reward any table action reaches this episode.
  double optimal_mean_reward(const RewardConfig& reward, const FeatureConfig& features) const;
  double demand(int v) const noexcept { return demand_[v]; }

 private:
  Topology topo_;
  PortGraph graph_;
  QueueEnvConfig config_;
  Rng rng_;
  std::vector<double> demand_;
  std::vector<SwitchSnapshot> snaps_;
  int steps_ = 0;
};

}  // namespace rocemu::agent
