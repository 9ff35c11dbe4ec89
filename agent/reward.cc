// reward.cc — GraphCC reward (Bernardez et al., Sec. 4 "Reward").
#include "agent/reward.h"

#include <algorithm>
#include <cmath>

#include "common/config.h"

namespace rocemu::agent {

double RewardConfig::queue_score(double q) const noexcept {
  q = std::isnan(q) ? 1.0 : std::clamp(q, 0.0, 1.0);
  switch (penalty) {
    case QueuePenalty::kLinear: return 1.0 - q;
    case QueuePenalty::kQuadratic: return (1.0 - q) * (1.0 - q);
    case QueuePenalty::kExponential: return std::exp(-q / exp_scale);
  }
  return 1.0 - q;
}

double RewardConfig::reward(double utilisation, double queue) const noexcept {
  const double u = std::isnan(utilisation) ? 0.0 : std::clamp(utilisation, 0.0, 1.0);
  return w_queue * queue_score(queue) + w_util * u;
}

RewardConfig load_reward_config(ConfigReader& r) {
  RewardConfig c;
  c.w_queue = r.number("w_queue", c.w_queue, 0.0, 1.0);
  c.w_util = r.number("w_util", c.w_util, 0.0, 1.0);
  const std::string p = r.string("penalty", "linear", {"linear", "quadratic", "exponential"});
  c.penalty = p == "quadratic"     ? QueuePenalty::kQuadratic
              : p == "exponential" ? QueuePenalty::kExponential
                                   : QueuePenalty::kLinear;
  c.exp_scale = r.number("exp_scale", c.exp_scale, 1e-6, 1e6);
  if (c.w_queue + c.w_util <= 0.0) r.error("w_queue", "w_queue + w_util must be > 0");
  r.finish();
  return c;
}

}  // namespace rocemu::agent
