// reward.h — the per-agent reward r = w1 f(q) + w2 u (GraphCC, Bernardez et al., Sec. 4
// "Reward"; weights w1 = 0.7, w2 = 0.3 as in the paper).
//
// u is the port's utilisation in [0, 1] and q its queue length normalised by the feature
// queue scale, clamped to [0, 1]. f is decreasing on [0, 1] with f(0) = 1:
//   linear (default)  f(q) = 1 - q
//   quadratic         f(q) = (1 - q)^2          (punishes the first KB hardest)
//   exponential       f(q) = exp(-q / scale)
// Why linear by default: queueing delay is proportional to queue bytes, so 1 - q is the
// normalised latency headroom; with it the reward is a plain weighted sum of normalised
// throughput and normalised delay, its slope is the same for every KB (a short flow
// behind 10 KB suffers the same extra delay whichever 10 KB they are), and it stays in
// [0, 1] so w1 and w2 read directly as the price of delay against throughput.
#pragma once

#include <string>

namespace rocemu {
class ConfigReader;
}

namespace rocemu::agent {

enum class QueuePenalty : uint8_t { kLinear, kQuadratic, kExponential };

struct RewardConfig {
  double w_queue = 0.7;  // w1
  double w_util = 0.3;   // w2
  QueuePenalty penalty = QueuePenalty::kLinear;
  double exp_scale = 0.25;  // only for kExponential

  /// f(q): decreasing on [0, 1], f(0) = 1; q is clamped to [0, 1].
  double queue_score(double q) const noexcept;
  /// w1 f(q) + w2 u, with u clamped to [0, 1].
  double reward(double utilisation, double queue) const noexcept;
};

/// Reads a [reward] table: w_queue, w_util (each in [0, 1]), penalty ("linear",
/// "quadratic", "exponential"), exp_scale (> 0). Problems go to the reader's ConfigErrors.
RewardConfig load_reward_config(ConfigReader& r);

}  // namespace rocemu::agent
