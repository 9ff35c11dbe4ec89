// queue_env.cc — the closed-form test environment (see queue_env.h for the model).
#include "agent/queue_env.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "agent/action_table.h"
#include "common/config.h"

namespace rocemu::agent {

QueueEnvConfig load_queue_env_config(ConfigReader& r) {
  QueueEnvConfig c;
  c.interval_ns = r.integer("interval_us", c.interval_ns / kNsPerUs, 1, 1'000'000) * kNsPerUs;
  c.mark_gain = r.number("mark_gain", c.mark_gain, 1e-6, 1.0);
  c.swing_bytes_per_load =
      r.number("swing_kb_per_load", c.swing_bytes_per_load / 1024, 0.001, 1e6) * 1024;
  c.noise = r.number("noise", c.noise, 0.0, 0.5);
  c.episode_steps = static_cast<int>(r.integer("episode_steps", c.episode_steps, 1, 1'000'000));
  std::vector<int64_t> pct;
  for (double d : c.demands) pct.push_back(static_cast<int64_t>(std::lround(d * 100)));
  pct = r.integer_array("demands_pct", pct, 1, 10'000);
  if (pct.empty()) r.error("demands_pct", "needs at least one load");
  c.demands.clear();
  for (auto p : pct) c.demands.push_back(static_cast<double>(p) / 100.0);
  if (c.demands.empty()) c.demands = {1.0};
  r.finish();
  return c;
}

QueueEnv::QueueEnv(Topology topo, QueueEnvConfig config)
    : topo_(std::move(topo)),
      graph_(topo_),
      config_(std::move(config)),
      rng_(0, "queue_env"),
      demand_(graph_.num_agents(), 1.0) {}

QueueEnv::Outcome QueueEnv::outcome(int v, const EcnSetting& s) const noexcept {
  const double d = demand_[v];
  if (d <= 1.0) return {0.0, d, 0.0};
  const double p_eq = std::min(1.0, config_.mark_gain * (1.0 - 1.0 / d));
  const double kmin = s.kmin_bytes, kmax = s.kmax_bytes;
  const double q = p_eq < s.pmax ? kmin + (kmax - kmin) * p_eq / s.pmax : kmax;
  const double swing = config_.swing_bytes_per_load * d;
  const double u = std::min(1.0, q / swing);
  return {q, u, p_eq * u};
}

double QueueEnv::optimal_mean_reward(const RewardConfig& reward, const FeatureConfig& f) const {
  double sum = 0.0;
  for (int v = 0; v < graph_.num_agents(); ++v) {
    double best = -1e300;
    for (const auto& s : action_table()) {
      const Outcome o = outcome(v, s);
      best = std::max(best, reward.reward(o.utilisation, o.queue_bytes / f.queue_scale_bytes));
    }
    sum += best;
  }
  return graph_.num_agents() > 0 ? sum / graph_.num_agents() : 0.0;
}

std::vector<SwitchSnapshot> QueueEnv::reset(uint64_t seed) {
  rng_ = Rng(seed, "queue_env");
  for (auto& d : demand_) d = config_.demands[rng_.below(config_.demands.size())];
  steps_ = 0;
  snaps_.clear();
  for (uint32_t n : graph_.switches()) {
    SwitchSnapshot s;
    s.at_ns = 0;
    s.node = n;
    const auto& node = topo_.node(n);
    for (const auto& p : node.ports) s.port_rate_bps.push_back(topo_.links()[p.link].rate_bps);
    s.ecn.assign(node.ports.size(), EcnSetting{});
    s.ports.assign(node.ports.size(), PortCounters{});
    snaps_.push_back(std::move(s));
  }
  return snaps_;
}

StepResult QueueEnv::step(const std::vector<SwitchEcn>& settings) {
  for (const auto& se : settings) {
    for (auto& s : snaps_) {
      if (s.node != se.node) continue;
      const size_t n = std::min(s.ecn.size(), se.ecn.size());
      std::copy_n(se.ecn.begin(), n, s.ecn.begin());
    }
  }
  for (auto& s : snaps_) {
    s.at_ns += config_.interval_ns;
    for (size_t p = 0; p < s.ports.size(); ++p) {
      const int v = graph_.agent_of(s.node, static_cast<uint16_t>(p));
      if (v < 0) continue;
      const Outcome o = outcome(v, s.ecn[p]);
      const double cap_bytes =
          static_cast<double>(config_.interval_ns) * static_cast<double>(s.port_rate_bps[p]) / 8e9;
      const double q = o.queue_bytes * (1.0 + config_.noise * (2.0 * rng_.uniform() - 1.0));
      PortCounters& c = s.ports[p];
      c.tx_bytes += static_cast<uint64_t>(std::llround(o.utilisation * cap_bytes));
      c.ecn_marked_bytes += static_cast<uint64_t>(std::llround(o.marking * cap_bytes));
      c.queue_bytes[3] = static_cast<uint32_t>(std::max(0.0, q));
    }
  }
  ++steps_;
  return StepResult{snaps_, steps_ >= config_.episode_steps};
}

}  // namespace rocemu::agent
