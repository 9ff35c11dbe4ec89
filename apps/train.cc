// train.cc — rocemu-train: trains the GraphCC agent (or the ACC per-port baseline) with
// multi-agent DQN and writes a model file.
//
// The environment today is the agent's closed-form TEST environment (agent/queue_env.h) on
// a leaf-spine (default: the GraphCC paper's 24-host Clos); it proves the learning machinery
// end to end. The virtual-time network implements the same Environment interface later.
// Exit codes: 0 ok, 1 runtime error (model file, I/O), 2 usage or configuration error.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/action_table.h"
#include "agent/dqn_trainer.h"
#include "agent/model_file.h"
#include "agent/queue_env.h"
#include "agent/train_config.h"
#include "common/config.h"
#include "common/log.h"

namespace {

using namespace rocemu;
using namespace rocemu::agent;

constexpr const char* kUsage = R"(usage: rocemu-train [options]

Trains ECN-tuning agents (GraphCC: one MPNN shared by every switch egress port; or the
ACC-style baseline: one Q-network per port) with multi-agent DQN on the agent's test
environment (a closed-form queue per port, see docs/agent.md), then evaluates the greedy
policy and writes a model file.

options:
  --config FILE        TOML with [train], [dqn], [reward], [features], [env] tables
                       (example: configs/agent/train.toml); defaults apply without it
  --model KIND         graphcc | acc (overrides [dqn].model)
  --steps N            training steps, one control interval each (overrides [train].steps)
  --eval-steps N       greedy evaluation steps after training (overrides [train].eval_steps)
  --seed N             seed of weights, exploration and replay sampling (overrides [dqn].seed)
  --model-in FILE      start from this model file instead of fresh weights
  --model-out FILE     write the trained model here (nothing is written without it)
  --leaves N           leaf switches of the leaf-spine (default 4)
  --spines N           spine switches (default 2)
  --hosts-per-leaf N   hosts per leaf (default 6)
  --log-every N        print progress every N steps (default 100; 0 = never)
  --log-level LEVEL    trace, debug, info, warn, error, critical, off (default info)
  --help               this text

exit status: 0 success, 1 runtime error (e.g. unreadable model), 2 usage/config error
)";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "rocemu-train: %s\n\n%s", msg.c_str(), kUsage);
  return kExitUsage;
}

std::optional<int64_t> parse_int(std::string_view s, int64_t min, int64_t max) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const std::string str(s);
  errno = 0;
  const long long v = std::strtoll(str.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max) return std::nullopt;
  return v;
}

struct Flags {
  std::string config, model_kind, model_in, model_out, log_level;
  std::optional<int64_t> steps, eval_steps, seed;
  int64_t leaves = 4, spines = 2, hosts_per_leaf = 6, log_every = 100;
};

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  std::vector<std::string_view> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a.substr(0, 2) != "--") return usage_error("unexpected argument '" + std::string(a) + "'");
    if (i + 1 >= args.size()) return usage_error(std::string(a) + " needs a value");
    const std::string_view v = args[++i];
    auto int_flag = [&](int64_t min, int64_t max) -> std::optional<int64_t> {
      auto r = parse_int(v, min, max);
      return r;
    };
    auto bad = [&](const char* what) {
      return usage_error(std::string(a) + "=" + std::string(v) + ": " + what);
    };
    if (a == "--config") f.config = v;
    else if (a == "--model") {
      if (v != "graphcc" && v != "acc") return bad("expected graphcc or acc");
      f.model_kind = v;
    } else if (a == "--model-in") f.model_in = v;
    else if (a == "--model-out") f.model_out = v;
    else if (a == "--log-level") f.log_level = v;
    else if (a == "--steps") { if (!(f.steps = int_flag(1, 100'000'000))) return bad("expected an integer in [1, 1e8]"); }
    else if (a == "--eval-steps") { if (!(f.eval_steps = int_flag(0, 100'000'000))) return bad("expected an integer in [0, 1e8]"); }
    else if (a == "--seed") { if (!(f.seed = int_flag(0, INT64_MAX))) return bad("expected a non-negative integer"); }
    else if (a == "--leaves") { auto r = int_flag(1, 256); if (!r) return bad("expected an integer in [1, 256]"); f.leaves = *r; }
    else if (a == "--spines") { auto r = int_flag(1, 64); if (!r) return bad("expected an integer in [1, 64]"); f.spines = *r; }
    else if (a == "--hosts-per-leaf") { auto r = int_flag(1, 256); if (!r) return bad("expected an integer in [1, 256]"); f.hosts_per_leaf = *r; }
    else if (a == "--log-every") { auto r = int_flag(0, INT64_MAX); if (!r) return bad("expected a non-negative integer"); f.log_every = *r; }
    else return usage_error("unknown option '" + std::string(a) + "'");
  }
  if (!setup_logging(f.log_level)) return usage_error("--log-level=" + f.log_level + ": unknown level");

  TrainConfig cfg;
  try {
    if (!f.config.empty()) cfg = load_train_config(parse_toml_file(f.config), f.config);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "rocemu-train: invalid configuration:\n%s", e.what());
    return kExitUsage;
  }
  if (f.model_kind == "acc") cfg.dqn.kind = ModelKind::kAccPerPort;
  if (f.model_kind == "graphcc") cfg.dqn.kind = ModelKind::kGraphCc;
  if (f.steps) cfg.steps = static_cast<int>(*f.steps);
  if (f.eval_steps) cfg.eval_steps = static_cast<int>(*f.eval_steps);
  if (f.seed) cfg.dqn.seed = static_cast<uint64_t>(*f.seed);

  try {
    QueueEnv env(make_leaf_spine(static_cast<int>(f.leaves), static_cast<int>(f.spines),
                                 static_cast<int>(f.hosts_per_leaf), 25, 100),
                 cfg.env);
    const PortGraph graph(env.topology());
    DqnTrainer trainer(graph, cfg.dqn, cfg.reward, cfg.features);
    if (!f.model_in.empty()) trainer.import_model(load_model(f.model_in));
    const char* kind = cfg.dqn.kind == ModelKind::kGraphCc ? "graphcc" : "acc";
    spdlog::info("training {} on {} agents, {} edges, {} steps (seed {})", kind,
                 graph.num_agents(), graph.num_edges(), cfg.steps, cfg.dqn.seed);
    double window = 0.0;
    int64_t in_window = 0;
    const auto stats = trainer.train(env, cfg.steps, [&](const StepLog& s) {
      window += s.mean_reward;
      ++in_window;
      if (f.log_every > 0 && s.step % f.log_every == 0) {
        spdlog::info("step {:>7}  epsilon {:.3f}  mean reward {:.4f}  loss {:.5f}", s.step,
                     s.epsilon, window / in_window, s.loss);
        window = 0.0;
        in_window = 0;
      }
    });
    spdlog::info("done: {} steps, {} gradient steps, last loss {:.5f}", stats.env_steps,
                 stats.gradient_steps, stats.last_loss);
    if (cfg.eval_steps > 0) {
      const uint64_t eval_seed = cfg.dqn.seed ^ 0x5eed;
      const double greedy = trainer.evaluate(env, cfg.eval_steps, eval_seed);
      const double optimum = env.optimal_mean_reward(cfg.reward, cfg.features);
      std::printf("greedy mean reward %.4f, best table action per port %.4f (%.1f%%)\n", greedy,
                  optimum, optimum > 0 ? 100.0 * greedy / optimum : 0.0);
    }
    if (!f.model_out.empty()) {
      save_model(f.model_out, trainer.export_model());
      std::printf("model written to %s\n", f.model_out.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rocemu-train: %s\n", e.what());
    return 1;
  }
  return 0;
}
