// train_config.cc — reading [dqn], [reward], [features], [env], [train] tables.
#include "agent/train_config.h"

#include <algorithm>

#include "common/config.h"

namespace rocemu::agent {

double DqnConfig::epsilon(int64_t step) const noexcept {
  if (eps_decay_steps <= 0 || step >= eps_decay_steps) return eps_end;
  const double f = static_cast<double>(step) / eps_decay_steps;
  return eps_start + (eps_end - eps_start) * f;
}

TrainConfig load_train_config(const toml::table& root, const std::string& source) {
  ConfigErrors errors;
  ConfigReader top(root, "", errors);
  TrainConfig c;
  if (auto t = top.table("train")) {
    c.steps = static_cast<int>(t->integer("steps", c.steps, 1, 100'000'000));
    c.eval_steps = static_cast<int>(t->integer("eval_steps", c.eval_steps, 0, 100'000'000));
    c.dqn.threads = static_cast<int>(t->integer("threads", c.dqn.threads, 1, 2));
    t->finish();
  }
  if (auto t = top.table("dqn")) {
    DqnConfig& d = c.dqn;
    const auto kind = t->string("model", "graphcc", {"graphcc", "acc"});
    d.kind = kind == "acc" ? ModelKind::kAccPerPort : ModelKind::kGraphCc;
    d.seed = static_cast<uint64_t>(t->integer("seed", static_cast<int64_t>(d.seed), 0, INT64_MAX));
    d.learning_rate = t->number("learning_rate", d.learning_rate, 1e-8, 1.0);
    d.gamma = t->number("gamma", d.gamma, 0.0, 0.999);
    d.batch_graphs = static_cast<int>(t->integer("batch_graphs", d.batch_graphs, 1, 4096));
    d.replay_capacity =
        static_cast<int>(t->integer("replay_capacity", d.replay_capacity, 1, 10'000'000));
    d.warmup_steps = static_cast<int>(t->integer("warmup_steps", d.warmup_steps, 1, 10'000'000));
    d.train_every = static_cast<int>(t->integer("train_every", d.train_every, 1, 1'000'000));
    d.target_sync_steps =
        static_cast<int>(t->integer("target_sync_steps", d.target_sync_steps, 1, 10'000'000));
    d.eps_start = t->number("eps_start", d.eps_start, 0.0, 1.0);
    d.eps_end = t->number("eps_end", d.eps_end, 0.0, 1.0);
    d.eps_decay_steps =
        static_cast<int>(t->integer("eps_decay_steps", d.eps_decay_steps, 0, 100'000'000));
    d.grad_clip_norm = t->number("grad_clip_norm", d.grad_clip_norm, 1e-6, 1e6);
    d.huber_delta = t->number("huber_delta", d.huber_delta, 1e-6, 1e6);
    if (d.eps_end > d.eps_start) t->error("eps_end", "exceeds eps_start");
    t->finish();
  }
  if (auto t = top.table("reward")) c.reward = load_reward_config(*t);
  if (auto t = top.table("features")) {
    c.features.queue_scale_bytes = static_cast<uint64_t>(
        t->integer("queue_scale_kb", static_cast<int64_t>(c.features.queue_scale_bytes / 1024), 1,
                   1'000'000) *
        1024);
    t->finish();
  }
  if (auto t = top.table("env")) c.env = load_queue_env_config(*t);
  top.finish();
  if (!errors.empty()) throw ConfigError(errors.format(source));
  return c;
}

}  // namespace rocemu::agent
