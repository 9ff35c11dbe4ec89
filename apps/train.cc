// train.cc — rocemu-train: trains the GraphCC agent (or the ACC per-port baseline) with
// multi-agent DQN and writes a model file.
//
// Environments: `--env queue` (default), the agent's closed-form TEST environment
// (agent/queue_env.h) on a leaf-spine (default: the GraphCC paper's 24-host Clos), which
// proves the learning machinery; `--env network --run FILE`, the virtual-time network of a
// run file with [workload] (fabric/network_env.h): rocemu's own switch, NIC and DCQCN, one
// control interval per step.
// Exit codes: 0 ok, 1 runtime error (model file, I/O), 2 usage or configuration error.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/action_table.h"
#include "agent/dqn_trainer.h"
#include "agent/model_file.h"
#include "agent/queue_env.h"
#include "agent/train_config.h"
#include "common/config.h"
#include "common/file_read.h"
#include "common/file_write.h"
#include "common/log.h"
#include "common/topology_generators.h"
#include "fabric/eal.h"
#include "fabric/network_env.h"

namespace {

using namespace rocemu;
using namespace rocemu::agent;

constexpr const char* kUsage = R"(usage: rocemu-train [options]

Trains ECN-tuning agents (GraphCC: one MPNN shared by every switch egress port; or the
ACC-style baseline: one Q-network per port) with multi-agent DQN, then evaluates the greedy
policy and writes a model file. Environments: the agent's test environment (a closed-form
queue per port, see docs/agent.md), or the virtual-time network of a run file.

options:
  --env ENV            queue (default: the test environment) | network (needs --run)
  --run FILE           network: a run file with [workload] (e.g.
                       configs/workloads/clos24_fbhdp_incast.toml); each step is one [env]
                       interval_us of its virtual time, an episode its [sim] until_us or
                       until every flow finished; --leaves/--spines/--hosts-per-leaf and
                       [env]'s other keys do not apply
  --config FILE        TOML with [train], [dqn], [reward], [features], [env] tables
                       (example: configs/agent/train.toml); defaults apply without it
  --model KIND         graphcc | acc (overrides [dqn].model)
  --steps N            training steps, one control interval each (overrides [train].steps)
  --eval-steps N       greedy evaluation steps after training (overrides [train].eval_steps)
  --seed N             seed of weights, exploration and replay sampling (overrides [dqn].seed)
  --threads N          1 (default) or 2: a learner thread computes each gradient step while
                       the environment steps with the previous step's weights (overrides
                       [train].threads; deterministic, but other numbers than 1)
  --checkpoint FILE    write a checkpoint (networks, optimiser, replay, random streams) here
                       after every --checkpoint-every episodes; replaced atomically
  --checkpoint-every N episodes between checkpoints (default 1)
  --resume FILE        continue from this checkpoint, exactly as the run that wrote it would
                       have: same --config, --run, --model and --seed; --steps stays the
                       total (the steps already taken count); with --curve, the curve's rows
                       after the checkpoint are dropped and new rows appended
  --model-in FILE      start from this model file instead of fresh weights
  --model-out FILE     write the trained model here (nothing is written without it)
  --leaves N           leaf switches of the leaf-spine (default 4)
  --spines N           spine switches (default 2)
  --hosts-per-leaf N   hosts per leaf (default 6)
  --log-every N        print progress every N steps (default 100; 0 = never)
  --curve FILE         write the training curve: one CSV row per episode (episode, steps,
                       epsilon, mean_reward, mean_queue, loss, wall_s); with --env network
                       also a progress line per episode (reward, queue, flows done, ETA)
  --log-level LEVEL    trace, debug, info, warn, error, critical, off (default info)
  --help               this text

exit status: 0 success, 1 runtime error, 2 usage/config error (also an unreadable --model-in
or one of the other kind, or a --model-out or --checkpoint path that cannot take the file:
nothing is started)
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

// The rows of an existing training curve (--curve, on --resume) up to `episodes`, each with
// its newline, and the last kept row's wall_s in *wall_s. A path that is not a regular file
// (none yet, /dev/null) keeps no rows; one that cannot be read, or holds more than a curve
// can, is an error (the file would be overwritten). Rows that are not seven comma-separated
// fields with an episode number and a finite wall time are dropped, and counted in the log.
std::string kept_curve_rows(const std::string& path, int64_t episodes, double* wall_s) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return {};
  std::string text;
  if (const std::string why = read_regular_file(path, 256ull << 20, &text); !why.empty())
    throw std::runtime_error("--curve " + path + ": cannot keep its rows: " + why);
  std::string kept;
  size_t rows = 0, dropped = 0;
  bool header = true;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + at, end - at);
    at = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (std::exchange(header, false)) continue;
    if (line.empty()) continue;
    ++rows;
    const size_t first_comma = line.find(','), last_comma = line.rfind(',');
    const auto ep = first_comma == std::string_view::npos
                        ? std::nullopt
                        : parse_int(line.substr(0, first_comma), 0, INT64_MAX);
    double w = -1.0;
    if (ep && std::count(line.begin(), line.end(), ',') == 6) {
      const std::string tail(line.substr(last_comma + 1));
      char* stop = nullptr;
      w = std::strtod(tail.c_str(), &stop);
      if (tail.empty() || *stop != '\0' || !std::isfinite(w)) w = -1.0;
    }
    if (!ep || w < 0.0) {
      ++dropped;
      continue;
    }
    if (*ep > episodes) continue;  // after the checkpoint
    kept.append(line);
    kept += '\n';
    *wall_s = w;
  }
  if (dropped > 0)
    spdlog::warn("--curve {}: dropped {} of its {} rows that were not curve rows", path, dropped,
                 rows);
  return kept;
}

struct Flags {
  std::string config, model_kind, model_in, model_out, log_level, env = "queue", run, curve;
  std::string checkpoint, resume;
  std::optional<int64_t> steps, eval_steps, seed, threads;
  int64_t leaves = 4, spines = 2, hosts_per_leaf = 6, log_every = 100, checkpoint_every = 1;
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
    auto bad = [&](const char* what) {
      return usage_error(std::string(a) + "=" + std::string(v) + ": " + what);
    };
    // Integer flags: where the value goes and its range.
    struct IntFlag {
      std::string_view name;
      int64_t min, max;
      const char* expected;
    };
    static constexpr IntFlag kIntFlags[] = {
        {"--steps", 1, 100'000'000, "expected an integer in [1, 1e8]"},
        {"--eval-steps", 0, 100'000'000, "expected an integer in [0, 1e8]"},
        {"--seed", 0, INT64_MAX, "expected a non-negative integer"},
        {"--leaves", 1, 256, "expected an integer in [1, 256]"},
        {"--spines", 1, 64, "expected an integer in [1, 64]"},
        {"--hosts-per-leaf", 1, 256, "expected an integer in [1, 256]"},
        {"--log-every", 0, INT64_MAX, "expected a non-negative integer"},
        {"--threads", 1, 2, "expected 1 or 2"},
        {"--checkpoint-every", 1, 100'000'000, "expected an integer in [1, 1e8]"},
    };
    const IntFlag* int_flag = nullptr;
    for (const auto& fl : kIntFlags)
      if (fl.name == a) int_flag = &fl;
    if (int_flag) {
      const auto r = parse_int(v, int_flag->min, int_flag->max);
      if (!r) return bad(int_flag->expected);
      if (a == "--steps")
        f.steps = r;
      else if (a == "--eval-steps")
        f.eval_steps = r;
      else if (a == "--seed")
        f.seed = r;
      else if (a == "--leaves")
        f.leaves = *r;
      else if (a == "--spines")
        f.spines = *r;
      else if (a == "--hosts-per-leaf")
        f.hosts_per_leaf = *r;
      else if (a == "--threads")
        f.threads = r;
      else if (a == "--checkpoint-every")
        f.checkpoint_every = *r;
      else
        f.log_every = *r;
    } else if (a == "--config") {
      f.config = v;
    } else if (a == "--env") {
      if (v != "queue" && v != "network") return bad("expected queue or network");
      f.env = v;
    } else if (a == "--run") {
      f.run = v;
    } else if (a == "--curve") {
      f.curve = v;
    } else if (a == "--model") {
      if (v != "graphcc" && v != "acc") return bad("expected graphcc or acc");
      f.model_kind = v;
    } else if (a == "--checkpoint") {
      f.checkpoint = v;
    } else if (a == "--resume") {
      f.resume = v;
    } else if (a == "--model-in") {
      f.model_in = v;
    } else if (a == "--model-out") {
      f.model_out = v;
    } else if (a == "--log-level") {
      f.log_level = v;
    } else {
      return usage_error("unknown option '" + std::string(a) + "'");
    }
  }
  if (!setup_logging(f.log_level))
    return usage_error("--log-level=" + f.log_level + ": unknown level");
  if (f.env == "network" && f.run.empty()) return usage_error("--env network needs --run FILE");
  if (f.env == "queue" && !f.run.empty()) return usage_error("--run is for --env network");
  if (!f.resume.empty() && !f.model_in.empty())
    return usage_error("--resume and --model-in exclude each other (a checkpoint has the weights)");

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
  if (f.threads) cfg.dqn.threads = static_cast<int>(*f.threads);
  // The files written after training, or during it, are checked before it starts: a path
  // that cannot take them would lose the run's work at its end.
  for (const auto& [flag, path] : {std::pair<const char*, const std::string&>{"--model-out", f.model_out},
                                   {"--checkpoint", f.checkpoint}}) {
    if (path.empty()) continue;
    if (const std::string why = output_file_problem(path, true); !why.empty()) {
      std::fprintf(stderr, "rocemu-train: %s %s: %s\n", flag, path.c_str(), why.c_str());
      return kExitUsage;
    }
  }
  // A model to start from is checked before anything starts (EAL, the network).
  std::optional<Model> model_in;
  if (!f.model_in.empty()) {
    std::string why;
    try {
      model_in = load_model(f.model_in);
      if (model_in->kind != cfg.dqn.kind)
        why = "--model-in " + f.model_in + ": a " + model_kind_name(model_in->kind) +
              " model, but this run trains " + model_kind_name(cfg.dqn.kind) +
              " (--model, or [train] model in the configuration)";
    } catch (const ModelFileError& e) {
      why = std::string("--model-in: ") + e.what();
    }
    if (!why.empty()) {
      std::fprintf(stderr, "rocemu-train: %s\n", why.c_str());
      return kExitUsage;
    }
  }

  std::optional<fabric::RunConfig> run;
  if (f.env == "network") {
    try {
      run = fabric::load_run_config(f.run);
      if (!run->workload)
        throw ConfigError(f.run + ": --env network needs a run file with [workload]");
    } catch (const ConfigError& e) {
      std::fprintf(stderr, "rocemu-train: %s", e.what());
      if (std::string(e.what()).back() != '\n') std::fputc('\n', stderr);
      return kExitUsage;
    }
  }
  try {
    std::unique_ptr<Environment> env_ptr;
    QueueEnv* queue_env = nullptr;
    fabric::NetworkEnv* net_env = nullptr;
    if (run) {
      fabric::EalOptions eal;
      eal.program = "rocemu-train";
      eal.user_args = {"--log-level", "lib.eal:error"};
      fabric::eal_start(eal);
      // EAL pins this thread to lcore 0's core, and threads inherit it: the learner thread
      // (--threads 2) would share that one core with the environment. Nothing here polls a
      // port, so this process may run on every core.
      cpu_set_t all;
      CPU_ZERO(&all);
      const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
      for (long c = 0; c < ncpu && c < CPU_SETSIZE; ++c) CPU_SET(static_cast<int>(c), &all);
      sched_setaffinity(0, sizeof all, &all);
      auto n = std::make_unique<fabric::NetworkEnv>(*run, cfg.env.interval_ns);
      net_env = n.get();
      env_ptr = std::move(n);
    } else {
      auto q = std::make_unique<QueueEnv>(
          make_clos(ClosParams{.hosts = static_cast<uint32_t>(f.leaves * f.hosts_per_leaf),
                               .leaves = static_cast<uint32_t>(f.leaves),
                               .spines = static_cast<uint32_t>(f.spines)}),
          cfg.env);
      queue_env = q.get();
      env_ptr = std::move(q);
    }
    Environment& env = *env_ptr;
    const PortGraph graph(env.topology());
    DqnTrainer trainer(graph, cfg.dqn, cfg.reward, cfg.features);
    if (model_in) trainer.import_model(*model_in);
    if (!f.resume.empty()) {
      trainer.load_checkpoint(f.resume);
      spdlog::info("resumed from {}: {} of {} steps taken, {} episodes", f.resume,
                   trainer.env_steps(), cfg.steps, trainer.episodes());
    }
    const char* kind = model_kind_name(cfg.dqn.kind);
    spdlog::info("training {} on {} agents, {} edges, {} steps (seed {}, {} thread{})", kind,
                 graph.num_agents(), graph.num_edges(), cfg.steps, cfg.dqn.seed, cfg.dqn.threads,
                 cfg.dqn.threads > 1 ? "s" : "");
    double window = 0.0;
    int64_t in_window = 0;
    // Per episode: the curve's row and, on the network, a progress line. A resumed run keeps
    // the rows up to its checkpoint and continues the wall-time column from the last one.
    std::FILE* curve = nullptr;
    double wall_offset_s = 0.0;
    if (!f.curve.empty()) {
      std::string kept = "episode,steps,epsilon,mean_reward,mean_queue,loss,wall_s\n";
      if (!f.resume.empty()) kept += kept_curve_rows(f.curve, trainer.episodes(), &wall_offset_s);
      curve = std::fopen(f.curve.c_str(), "w");
      if (!curve) throw std::runtime_error("cannot write " + f.curve);
      std::fputs(kept.c_str(), curve);
    }
    const int64_t steps_left = cfg.steps - trainer.env_steps();
    const auto wall0 = std::chrono::steady_clock::now();
    double ep_reward = 0.0, ep_queue = 0.0;
    int64_t ep_steps = 0, episode = trainer.episodes();
    const auto end_episode = [&](const StepLog& s) {
      if (ep_steps == 0) return;
      ++episode;
      const double run_wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
      const double wall_s = wall_offset_s + run_wall_s;
      if (curve)
        std::fprintf(curve, "%lld,%lld,%.4f,%.6f,%.6f,%.6f,%.3f\n", static_cast<long long>(episode),
                     static_cast<long long>(s.step), s.epsilon, ep_reward / ep_steps,
                     ep_queue / ep_steps, s.loss, wall_s);
      if (curve) std::fflush(curve);
      if (!f.checkpoint.empty() && s.episode_done && episode % f.checkpoint_every == 0)
        trainer.save_checkpoint(f.checkpoint);
      if (net_env) {
        const int64_t done_here = s.step - (cfg.steps - steps_left);
        const double eta =
            done_here > 0 ? run_wall_s / static_cast<double>(done_here) * (cfg.steps - s.step) : 0;
        spdlog::info(
            "episode {:>4}: {} steps, epsilon {:.3f}, mean reward {:.4f}, mean queue {:.4f}, "
            "{} flows done, ETA {:.0f} s",
            episode, ep_steps, s.epsilon, ep_reward / ep_steps, ep_queue / ep_steps,
            net_env->flows_finished(), eta);
      }
      ep_reward = ep_queue = 0.0;
      ep_steps = 0;
    };
    StepLog last_log;
    if (steps_left <= 0) spdlog::info("the checkpoint has all {} steps: no training", cfg.steps);
    const auto stats = trainer.train(
        env, static_cast<int>(std::max<int64_t>(0, steps_left)), [&](const StepLog& s) {
          ep_reward += s.mean_reward;
          ep_queue += s.mean_queue;
          ++ep_steps;
          last_log = s;
          if (s.episode_done) end_episode(s);
          window += s.mean_reward;
          ++in_window;
          if (f.log_every > 0 && s.step % f.log_every == 0) {
            spdlog::info("step {:>7}  epsilon {:.3f}  mean reward {:.4f}  loss {:.5f}", s.step,
                         s.epsilon, window / in_window, s.loss);
            window = 0.0;
            in_window = 0;
          }
        });
    end_episode(last_log);  // the last, unfinished episode (no checkpoint: not between episodes)
    if (curve) {
      std::fclose(curve);
      std::printf("training curve written to %s\n", f.curve.c_str());
    }
    spdlog::info("done: {} steps, {} gradient steps, last loss {:.5f}", stats.env_steps,
                 stats.gradient_steps, stats.last_loss);
    if (cfg.eval_steps > 0) {
      const uint64_t eval_seed = cfg.dqn.seed ^ 0x5eed;
      const double greedy = trainer.evaluate(env, cfg.eval_steps, eval_seed);
      if (queue_env) {
        const double optimum = queue_env->optimal_mean_reward(cfg.reward, cfg.features);
        std::printf("greedy mean reward %.4f, best table action per port %.4f (%.1f%%)\n", greedy,
                    optimum, optimum > 0 ? 100.0 * greedy / optimum : 0.0);
      } else {
        std::printf("greedy mean reward %.4f over %d steps of the network\n", greedy,
                    cfg.eval_steps);
      }
    }
    if (net_env) {
      const auto& st = net_env->stats();
      std::printf(
          "network environment: %llu episodes, %llu steps of %.0f us, %.2f ms wall per step, "
          "%.2f M engine events/s\n",
          static_cast<unsigned long long>(st.episodes), static_cast<unsigned long long>(st.steps),
          static_cast<double>(net_env->interval_ns()) / 1e3,
          st.steps ? static_cast<double>(st.step_wall_ns) / 1e6 / static_cast<double>(st.steps)
                   : 0.0,
          st.step_wall_ns > 0
              ? static_cast<double>(st.events) * 1e3 / static_cast<double>(st.step_wall_ns)
              : 0.0);
    }
    if (!f.model_out.empty()) {
      save_model(f.model_out, trainer.export_model());
      std::printf("model written to %s\n", f.model_out.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rocemu-train: %s\n", e.what());
    return 1;
  }
  if (run) fabric::eal_stop();
  return 0;
}
