// dqn_trainer.cc — the multi-agent DQN loop, written once against QNetwork (q_network.h).
//
// Acting: epsilon-greedy per agent over the torch-free greedy policy (policy.h) of the online
// network's weights, re-exported after every gradient step. Learning: transitions of whole
// graphs from the replay buffer; target y = r + gamma * max_a Q_target(s', a); Huber loss on
// Q(s, a_taken) averaged over every agent of every graph in the batch; Adam; gradient-norm
// clipping; the target network copied from the online one every target_sync_steps. Which
// network (GraphCC's MPNN, ACC's per-port nets) is make_q_network's choice alone.
#include "agent/dqn_trainer.h"

#include <dlfcn.h>
#include <torch/torch.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>

#include "agent/policy.h"
#include "agent/port_features.h"
#include "agent/torch/q_network.h"
#include "common/file_write.h"
#include "common/icrc.h"

namespace rocemu::agent {

namespace {

// One persistent thread that runs a job while the caller does something else (the learner
// of DqnConfig::threads = 2). run() then wait(); wait() rethrows the job's exception.
class Worker {
 public:
  Worker() : thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard lk(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void run(std::function<void()> job) {
    {
      std::lock_guard lk(mu_);
      job_ = std::move(job);
      busy_ = true;
    }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [this] { return !busy_; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void loop() {
    std::unique_lock lk(mu_);
    for (;;) {
      cv_.wait(lk, [this] { return quit_ || busy_; });
      if (quit_) return;
      auto job = std::move(job_);
      lk.unlock();
      std::exception_ptr err;
      try {
        job();
      } catch (...) {
        err = std::current_exception();
      }
      lk.lock();
      error_ = err;
      busy_ = false;
      cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  std::exception_ptr error_;
  bool busy_ = false, quit_ = false;
  std::thread thread_;
};

// What load_checkpoint finds wrong with a file (LibTorch throws std::runtime_error of its own
// too, which it reports with the file's name).
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Checkpoint layout version; a mismatch is refused rather than misread. 2: with a CRC-32.
constexpr int64_t kCheckpointVersion = 2;
// The episodes whose mean reward TrainStats averages (the last ones).
constexpr int64_t kRecentEpisodes = 100;

// A checkpoint's CRC-32 (common/icrc.h) runs over the bytes of every tensor it holds, in the
// order written, then the optimiser's state: LibTorch's archive reads back a flipped bit in a
// tensor's data without a word, and a weight made 1e30 by one is finite yet ruins training.
uint32_t crc_of(uint32_t crc, const void* p, size_t bytes) noexcept {
  return crc32_update(crc, static_cast<const uint8_t*>(p), bytes);
}
uint32_t crc_of(uint32_t crc, const torch::Tensor& t) {
  const auto c = t.contiguous();
  return crc_of(crc, c.data_ptr(), static_cast<size_t>(c.numel()) * c.element_size());
}
uint32_t crc_of(uint32_t crc, const std::vector<uint64_t>& v) noexcept {
  return crc_of(crc, v.data(), v.size() * sizeof(uint64_t));
}
// Per parameter (in the optimiser's order): a 0 byte if it has no state yet, else 1, its step
// count and its two moments.
uint32_t crc_of(uint32_t crc, torch::optim::Adam& o) {
  for (const auto& group : o.param_groups()) {
    for (const auto& p : group.params()) {
      const auto it = o.state().find(c10::guts::to_string(p.unsafeGetTensorImpl()));
      const auto* st = it == o.state().end()
                           ? nullptr
                           : dynamic_cast<const torch::optim::AdamParamState*>(it->second.get());
      const uint8_t has = st ? 1 : 0;
      crc = crc_of(crc, &has, 1);
      if (!st) continue;
      const int64_t step = st->step();
      crc = crc_of(crc, &step, sizeof(step));
      crc = crc_of(crc, st->exp_avg());
      crc = crc_of(crc, st->exp_avg_sq());
    }
  }
  return crc;
}

torch::Tensor u64_tensor(const std::vector<uint64_t>& v) {
  auto t = torch::empty({static_cast<int64_t>(v.size())}, torch::kInt64);
  std::memcpy(t.data_ptr<int64_t>(), v.data(), v.size() * sizeof(uint64_t));
  return t;
}

}  // namespace

void init_torch_threads() {
  static std::once_flag once;
  std::call_once(once, [] {
    at::set_num_threads(1);
    // LibTorch's BLAS on Debian is OpenBLAS, whose worker threads spin on sched_yield
    // between calls unless told to use one thread (measured: 6.6 s of system time in 500
    // training steps, and a core taken from the environment). Looked up at run time: it is
    // there only when libtorch was built against OpenBLAS.
    using SetThreads = void (*)(int);
    if (auto* set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
      set(1);
    try {
      at::set_num_interop_threads(1);
    } catch (const std::exception&) {
      // Already fixed by someone else in this process (it may only be set once).
    }
  });
}

struct DqnTrainer::Impl {
  Impl(const PortGraph& g, DqnConfig d, RewardConfig r, FeatureConfig f)
      : graph(g),
        cfg(d),
        reward(r),
        features(f),
        n(g.num_agents()),
        replay(g.num_agents(), d.replay_capacity),
        explore_rng(d.seed, "dqn-explore"),
        sample_rng(d.seed, "dqn-replay"),
        tracker(graph, f) {
    init_torch_threads();
    torch::manual_seed(cfg.seed);
    // The online network draws its initial weights first, then the target.
    online = make_q_network(cfg.kind, graph);
    target = make_q_network(cfg.kind, graph);
    optimizer = std::make_unique<torch::optim::Adam>(online->parameters(),
                                                     torch::optim::AdamOptions(cfg.learning_rate));
    sync_target();
    refresh_fast();
  }

  void sync_target() {
    torch::NoGradGuard ng;
    auto src = online->parameters();
    auto dst = target->parameters();
    for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
  }

  Model export_model() const { return online->export_model(); }

  void import_model(const Model& m) {
    if (m.kind != cfg.kind)
      throw std::invalid_argument(std::string("a ") + model_kind_name(m.kind) +
                                  " model given to a trainer of " + model_kind_name(cfg.kind));
    online->import_model(m);
    sync_target();
    refresh_fast();
  }

  // The acting policy follows the online network after every gradient step.
  void refresh_fast() { acting = make_policy(export_model(), graph); }

  void greedy_fast(const FeatureTracker& t, uint16_t* out) {
    acting->act(t, std::span<uint16_t>(out, static_cast<size_t>(n)));
  }

  // Q-values [B*N, A] of a batch of observations [B*N, kObsDim].
  torch::Tensor forward(bool use_target, const torch::Tensor& obs, int batch) {
    return (use_target ? target : online)->q_values(obs, batch);
  }

  double train_batch() {
    if (replay.size() == 0) return 0.0;
    const int b = cfg.batch_graphs;
    replay.sample(sample_rng, b, idx);
    const int64_t rows = static_cast<int64_t>(b) * n;
    auto obs = torch::empty({rows, kObsDim});
    auto next = torch::empty({rows, kObsDim});
    auto act = torch::empty({rows}, torch::kInt64);
    auto rew = torch::empty({rows});
    float* po = obs.data_ptr<float>();
    float* pn = next.data_ptr<float>();
    int64_t* pa = act.data_ptr<int64_t>();
    float* pr = rew.data_ptr<float>();
    const size_t per = static_cast<size_t>(n) * kObsDim;
    for (int i = 0; i < b; ++i) {
      std::memcpy(po + i * per, replay.obs(idx[i]), per * sizeof(float));
      std::memcpy(pn + i * per, replay.next_obs(idx[i]), per * sizeof(float));
      const uint16_t* a = replay.actions(idx[i]);
      for (int v = 0; v < n; ++v) pa[static_cast<int64_t>(i) * n + v] = a[v];
      std::memcpy(pr + static_cast<size_t>(i) * n, replay.rewards(idx[i]), n * sizeof(float));
    }
    torch::Tensor y;
    {
      torch::NoGradGuard ng;
      y = rew + cfg.gamma * std::get<0>(forward(true, next, b).max(1));
    }
    const auto q = forward(false, obs, b).gather(1, act.unsqueeze(1)).squeeze(1);
    auto loss = torch::huber_loss(q, y, at::Reduction::Mean, cfg.huber_delta);
    optimizer->zero_grad();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(online->parameters(), cfg.grad_clip_norm);
    optimizer->step();
    ++gradient_steps;
    last_loss = loss.item<double>();
    return last_loss;
  }

  void begin_episode(Environment& env) {
    const auto snaps = env.reset(cfg.seed * 1'000'003ULL + static_cast<uint64_t>(episodes++));
    tracker.reset();
    tracker.update(snaps);
    settings = make_switch_settings(graph);
    need_reset = false;
  }

  TrainStats train(Environment& env, int steps,
                   const std::function<void(const StepLog&)>& on_step) {
    std::vector<uint16_t> actions(static_cast<size_t>(n));
    std::vector<float> obs, next_obs, rewards(static_cast<size_t>(n));
    if (cfg.threads > 1 && !worker) worker = std::make_unique<Worker>();
    for (int i = 0; i < steps; ++i) {
      // Whether this interval ends with a gradient step: from the replay before its push
      // when the learner overlaps the step (threads = 2), after it otherwise.
      const bool overlap = worker != nullptr;
      const bool learn_early =
          overlap && replay.size() >= cfg.warmup_steps && (env_steps + 1) % cfg.train_every == 0;
      if (learn_early) worker->run([this] { train_batch(); });
      StepResult res;
      double eps = 0.0;
      try {
        if (need_reset) begin_episode(env);
        observation(tracker, obs);
        eps = cfg.epsilon(env_steps);
        greedy_fast(tracker, actions.data());
        for (auto& a : actions)
          if (explore_rng.uniform() < eps)
            a = static_cast<uint16_t>(explore_rng.below(kNumActions));
        apply_actions(graph, actions, settings);
        res = env.step(settings);
        tracker.update(res.snapshots);
        observation(tracker, next_obs);
      } catch (...) {
        if (learn_early) worker->wait();  // never leave the learner running on our state
        throw;
      }
      if (learn_early) worker->wait();
      double sum = 0.0, qsum = 0.0;
      for (int v = 0; v < n; ++v) {
        rewards[v] = static_cast<float>(reward.reward(tracker.utilisation(v), tracker.queue(v)));
        sum += rewards[v];
        qsum += tracker.queue(v);
      }
      replay.push(obs, actions, rewards, next_obs);
      ++env_steps;
      if (learn_early) {
        refresh_fast();
      } else if (!overlap && replay.size() >= cfg.warmup_steps &&
                 env_steps % cfg.train_every == 0) {
        train_batch();
        refresh_fast();
      }
      if (env_steps % cfg.target_sync_steps == 0) sync_target();
      if (res.done) need_reset = true;
      const double mean = n > 0 ? sum / n : 0.0;
      recent.push_back(mean);
      if (static_cast<int64_t>(recent.size()) > kRecentEpisodes) recent.pop_front();
      if (on_step)
        on_step(StepLog{env_steps, eps, mean, last_loss, n > 0 ? qsum / n : 0.0, res.done});
    }
    TrainStats s;
    s.env_steps = env_steps;
    s.gradient_steps = gradient_steps;
    s.last_loss = last_loss;
    s.mean_reward_last_100 =
        recent.empty() ? 0.0 : std::accumulate(recent.begin(), recent.end(), 0.0) / recent.size();
    return s;
  }

  // What a checkpoint must match to be resumed by this trainer.
  std::vector<uint64_t> fingerprint() const {
    return {static_cast<uint64_t>(kCheckpointVersion),
            static_cast<uint64_t>(cfg.kind),
            static_cast<uint64_t>(n),
            static_cast<uint64_t>(graph.num_edges()),
            static_cast<uint64_t>(replay.capacity()),
            static_cast<uint64_t>(kObsDim),
            cfg.seed,
            static_cast<uint64_t>(cfg.threads),
            static_cast<uint64_t>(cfg.batch_graphs)};
  }

  void save_checkpoint(const std::string& path) {
    if (!need_reset && env_steps > 0)
      throw std::logic_error("a checkpoint is taken between episodes only");
    if (const std::string why = output_file_problem(path, false); !why.empty())
      throw std::runtime_error("checkpoint " + path + ": " + why);
    torch::NoGradGuard ng;
    torch::serialize::OutputArchive ar;
    uint32_t crc = 0;
    const auto put = [&](const std::string& key, const torch::Tensor& t) {
      ar.write(key, t);
      crc = crc_of(crc, t);
    };
    put("fingerprint", u64_tensor(fingerprint()));
    put("counters",
        u64_tensor({static_cast<uint64_t>(env_steps), static_cast<uint64_t>(gradient_steps),
                    static_cast<uint64_t>(episodes), static_cast<uint64_t>(replay.size()),
                    static_cast<uint64_t>(replay.head())}));
    std::vector<uint64_t> rng;
    for (const Rng* r : {&explore_rng, &sample_rng})
      for (uint64_t w : r->state()) rng.push_back(w);
    put("rng", u64_tensor(rng));
    put("last_loss", torch::tensor({last_loss}, torch::kFloat64));
    put("recent", torch::tensor(std::vector<double>(recent.begin(), recent.end()), torch::kFloat64));
    const auto floats = [](std::span<float> v) {
      return torch::from_blob(v.data(), {static_cast<int64_t>(v.size())}, torch::kFloat32);
    };
    put("replay_obs", floats(replay.obs_storage()));
    put("replay_next_obs", floats(replay.next_obs_storage()));
    put("replay_rewards", floats(replay.rewards_storage()));
    const auto acts = replay.actions_storage();
    put("replay_actions",
        torch::from_blob(acts.data(), {static_cast<int64_t>(acts.size())}, torch::kInt16));
    for (const auto& p : online->named_parameters()) put("online." + p.key(), p.value());
    for (const auto& p : target->named_parameters()) put("target." + p.key(), p.value());
    torch::serialize::OutputArchive opt;
    optimizer->save(opt);
    ar.write("optimizer", opt);
    crc = crc_of(crc, *optimizer);
    ar.write("crc32", u64_tensor({crc}));
    const std::string tmp = path + ".tmp";
    try {
      ar.save_to(tmp);
    } catch (const c10::Error& e) {
      throw std::runtime_error("cannot write checkpoint " + tmp + ": " +
                               e.what_without_backtrace());
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw std::runtime_error("cannot rename " + tmp + " to " + path);
  }

  // Restores a checkpoint, or throws std::runtime_error (naming the file and what is wrong)
  // and changes nothing. Whatever LibTorch throws while reading a damaged file (c10::Error,
  // std::out_of_range from its archive's maps) is reported the same way.
  void load_checkpoint(const std::string& path) {
    const auto fail = [&](const std::string& why) { return Refused(path + ": " + why); };
    try {
      load_checkpoint_or_throw(path, fail);
    } catch (const Refused&) {
      throw;
    } catch (const c10::Error& e) {
      throw fail(std::string("corrupt checkpoint (") + e.what_without_backtrace() + ")");
    } catch (const std::exception& e) {
      throw fail(std::string("corrupt checkpoint (") + e.what() + ")");
    }
  }

  using Fail = std::function<Refused(const std::string&)>;
  void load_checkpoint_or_throw(const std::string& path, const Fail& fail) {
    torch::serialize::InputArchive ar;
    try {
      ar.load_from(path);
    } catch (const c10::Error& e) {
      throw fail(std::string("not a readable rocemu-train checkpoint (") +
                 e.what_without_backtrace() + ")");
    }
    const auto read = [&](const std::string& key, torch::Tensor& t) {
      if (!ar.try_read(key, t)) throw fail("not a rocemu-train checkpoint (no '" + key + "')");
    };
    const auto read_u64 = [&](const std::string& key, size_t count) {
      torch::Tensor t;
      read(key, t);
      if (t.scalar_type() != torch::kInt64 || t.dim() != 1 ||
          static_cast<size_t>(t.numel()) != count)
        throw fail("corrupt checkpoint ('" + key + "' has the wrong shape)");
      std::vector<uint64_t> v(count);
      std::memcpy(v.data(), t.contiguous().data_ptr<int64_t>(), count * sizeof(uint64_t));
      return v;
    };
    const auto want = fingerprint();
    const auto got = read_u64("fingerprint", want.size());
    uint32_t crc = crc_of(0, got);
    static const char* kWhat[] = {
        "layout version",   "model kind", "number of agents", "number of edges", "replay capacity",
        "observation size", "seed",       "threads",          "batch_graphs"};
    const auto value_name = [](size_t i, uint64_t v) {
      if (i == 1) return std::string(model_kind_name(static_cast<ModelKind>(v)));
      return std::to_string(v);
    };
    for (size_t i = 0; i < want.size(); ++i)
      if (got[i] != want[i])
        throw fail("checkpoint of another run: its " + std::string(kWhat[i]) + " is " +
                   value_name(i, got[i]) + ", this one's is " + value_name(i, want[i]));
    const auto counters = read_u64("counters", 5);
    for (size_t i = 0; i < 3; ++i)  // env steps, gradient steps, episodes: int64 counts
      if (counters[i] > static_cast<uint64_t>(INT64_MAX))
        throw fail("corrupt checkpoint (a step counter out of range)");
    const auto rng = read_u64("rng", 8);
    crc = crc_of(crc_of(crc, counters), rng);
    // Read and check everything into temporaries first: a failure below leaves the trainer
    // unchanged.
    const auto storage = [&](const std::string& key, size_t count, torch::ScalarType type) {
      torch::Tensor t;
      read(key, t);
      if (t.scalar_type() != type || static_cast<size_t>(t.numel()) != count)
        throw fail("corrupt checkpoint ('" + key + "' has the wrong size)");
      t = t.contiguous();
      // Training on a NaN or an infinity would make every weight NaN a few steps later.
      if (type == torch::kFloat32 && !finite(t))
        throw fail("corrupt checkpoint ('" + key + "' holds a value that is not finite)");
      return t;
    };
    const auto r_obs = storage("replay_obs", replay.obs_storage().size(), torch::kFloat32);
    const auto r_next =
        storage("replay_next_obs", replay.next_obs_storage().size(), torch::kFloat32);
    const auto r_rew = storage("replay_rewards", replay.rewards_storage().size(), torch::kFloat32);
    const auto r_act = storage("replay_actions", replay.actions_storage().size(), torch::kInt16);
    if (r_act.numel() > 0) {
      const auto [lo, hi] = torch::aminmax(r_act.to(torch::kInt32));
      if (lo.item<int32_t>() < 0 || hi.item<int32_t>() >= kNumActions)
        throw fail("corrupt checkpoint (a replayed action outside 0.." +
                   std::to_string(kNumActions - 1) + ")");
    }
    torch::Tensor loss_t, recent_t;
    read("last_loss", loss_t);
    read("recent", recent_t);
    crc = crc_of(crc_of(crc, loss_t), recent_t);
    for (const auto* t : {&r_obs, &r_next, &r_rew, &r_act}) crc = crc_of(crc, *t);
    if (loss_t.scalar_type() != torch::kFloat64 || loss_t.numel() != 1 || !finite(loss_t))
      throw fail("corrupt checkpoint ('last_loss' is not one finite number)");
    if (recent_t.scalar_type() != torch::kFloat64 || recent_t.dim() != 1 ||
        recent_t.numel() > kRecentEpisodes || !finite(recent_t))
      throw fail("corrupt checkpoint ('recent' is not up to " + std::to_string(kRecentEpisodes) +
                 " finite numbers)");
    std::vector<std::pair<torch::Tensor, torch::Tensor>> params;  // (destination, value)
    for (const char* which : {"online.", "target."}) {
      QNetwork& net = std::string(which) == "online." ? *online : *target;
      for (auto& p : net.named_parameters()) {
        torch::Tensor v;
        read(which + p.key(), v);
        if (!v.sizes().equals(p.value().sizes()) || v.scalar_type() != torch::kFloat32)
          throw fail("corrupt checkpoint ('" + std::string(which) + p.key() +
                     "' has the wrong shape)");
        if (!finite(v))
          throw fail("corrupt checkpoint ('" + std::string(which) + p.key() +
                     "' holds a weight that is not finite)");
        params.emplace_back(p.value(), v);
        crc = crc_of(crc, v);
      }
    }
    torch::serialize::InputArchive opt;
    if (!ar.try_read("optimizer", opt)) throw fail("not a rocemu-train checkpoint (no optimiser)");
    const int64_t size = static_cast<int64_t>(counters[3]),
                  head = static_cast<int64_t>(counters[4]);
    if (counters[3] > static_cast<uint64_t>(replay.capacity()) ||
        counters[4] > static_cast<uint64_t>(replay.capacity()) ||
        !replay.fill_ok(static_cast<int>(size), static_cast<int>(head)))
      throw fail("corrupt checkpoint (replay fill out of range)");
    // The optimiser's state goes into a new one over the same parameters, checked, and
    // replaces the trainer's only then.
    auto loaded = std::make_unique<torch::optim::Adam>(online->parameters(),
                                                       torch::optim::AdamOptions(cfg.learning_rate));
    try {
      loaded->load(opt);
    } catch (const c10::Error& e) {
      throw fail(std::string("corrupt checkpoint (optimiser: ") + e.what_without_backtrace() + ")");
    }
    if (read_u64("crc32", 1)[0] != crc_of(crc, *loaded))
      throw fail("corrupt checkpoint (its CRC-32 does not match its contents)");
    check_optimizer_state(*loaded, fail);
    // Nothing below throws for a checked file.
    optimizer = std::move(loaded);
    {
      torch::NoGradGuard ng;
      for (auto& [dst, v] : params) dst.copy_(v);
    }
    std::memcpy(replay.obs_storage().data(), r_obs.data_ptr<float>(),
                r_obs.numel() * sizeof(float));
    std::memcpy(replay.next_obs_storage().data(), r_next.data_ptr<float>(),
                r_next.numel() * sizeof(float));
    std::memcpy(replay.rewards_storage().data(), r_rew.data_ptr<float>(),
                r_rew.numel() * sizeof(float));
    std::memcpy(replay.actions_storage().data(), r_act.data_ptr<int16_t>(),
                r_act.numel() * sizeof(int16_t));
    replay.set_fill(static_cast<int>(size), static_cast<int>(head));
    env_steps = static_cast<int64_t>(counters[0]);
    gradient_steps = static_cast<int64_t>(counters[1]);
    episodes = static_cast<int64_t>(counters[2]);
    explore_rng.set_state({rng[0], rng[1], rng[2], rng[3]});
    sample_rng.set_state({rng[4], rng[5], rng[6], rng[7]});
    last_loss = loss_t.item<double>();
    recent.clear();
    const auto rc = recent_t.contiguous();
    for (int64_t i = 0; i < rc.numel(); ++i) recent.push_back(rc.data_ptr<double>()[i]);
    need_reset = true;
    refresh_fast();
  }

  // Every parameter's Adam state (when it has one) matches the parameter's shape, its moments
  // are finite (the second >= 0) and its step count >= 0.
  static bool finite(const torch::Tensor& t) {
    return t.numel() == 0 || torch::isfinite(t).all().item<bool>();
  }

  static void check_optimizer_state(torch::optim::Adam& o, const Fail& fail) {
    for (const auto& group : o.param_groups()) {
      for (const auto& p : group.params()) {
        const auto it = o.state().find(c10::guts::to_string(p.unsafeGetTensorImpl()));
        if (it == o.state().end()) continue;
        const auto* st = dynamic_cast<const torch::optim::AdamParamState*>(it->second.get());
        if (!st) throw fail("corrupt checkpoint (optimiser: a state of another kind)");
        const auto& m = st->exp_avg();
        const auto& v = st->exp_avg_sq();
        if (!m.defined() || !v.defined() || !m.sizes().equals(p.sizes()) ||
            !v.sizes().equals(p.sizes()) || m.scalar_type() != p.scalar_type() ||
            v.scalar_type() != p.scalar_type())
          throw fail("corrupt checkpoint (optimiser: a moment of the wrong shape)");
        if (!finite(m) || !finite(v) || (v.numel() > 0 && (v < 0).any().item<bool>()) ||
            st->step() < 0)
          throw fail("corrupt checkpoint (optimiser: a moment that is not finite, or negative)");
      }
    }
  }

  double evaluate(Environment& env, int steps, uint64_t seed) {
    FeatureTracker t(graph, features);
    auto s = make_switch_settings(graph);
    std::vector<uint16_t> actions(static_cast<size_t>(n));
    t.update(env.reset(seed));
    double sum = 0.0;
    for (int i = 0; i < steps; ++i) {
      greedy_fast(t, actions.data());
      apply_actions(graph, actions, s);
      const StepResult res = env.step(s);
      t.update(res.snapshots);
      for (int v = 0; v < n; ++v) sum += reward.reward(t.utilisation(v), t.queue(v));
      if (res.done && i + 1 < steps) {
        t.reset();
        t.update(env.reset(seed + static_cast<uint64_t>(i) + 1));
      }
    }
    need_reset = true;  // the environment no longer holds the training episode
    return steps > 0 && n > 0 ? sum / (static_cast<double>(steps) * n) : 0.0;
  }

  torch::Tensor single_obs(const float* f, const float* s) const {
    auto obs = torch::empty({n, kObsDim});
    float* p = obs.data_ptr<float>();
    for (int v = 0; v < n; ++v) {
      std::memcpy(p + v * kObsDim, f + v * kNumFeatures, kNumFeatures * sizeof(float));
      if (s)
        std::memcpy(p + v * kObsDim + kNumFeatures, s + v * kNumSettingFeatures,
                    kNumSettingFeatures * sizeof(float));
      else
        std::fill(p + v * kObsDim + kNumFeatures, p + (v + 1) * kObsDim, 0.0f);
    }
    return obs;
  }

  PortGraph graph;
  DqnConfig cfg;
  RewardConfig reward;
  FeatureConfig features;
  int n;
  ReplayBuffer replay;
  Rng explore_rng, sample_rng;
  FeatureTracker tracker;
  std::shared_ptr<QNetwork> online, target;
  std::unique_ptr<torch::optim::Adam> optimizer;
  std::unique_ptr<EcnPolicy> acting;  // greedy over the online network's exported weights
  std::vector<SwitchEcn> settings;
  std::vector<int> idx;
  std::deque<double> recent;
  bool need_reset = true;
  int64_t env_steps = 0, gradient_steps = 0, episodes = 0;
  double last_loss = 0.0;
  std::unique_ptr<Worker> worker;  // the learner thread of cfg.threads = 2
};

DqnTrainer::DqnTrainer(const PortGraph& graph, DqnConfig dqn, RewardConfig reward,
                       FeatureConfig features)
    : impl_(std::make_unique<Impl>(graph, dqn, reward, features)) {}
DqnTrainer::~DqnTrainer() = default;

TrainStats DqnTrainer::train(Environment& env, int steps,
                             const std::function<void(const StepLog&)>& on_step) {
  return impl_->train(env, steps, on_step);
}
double DqnTrainer::evaluate(Environment& env, int steps, uint64_t seed) {
  return impl_->evaluate(env, steps, seed);
}
double DqnTrainer::train_batch() { return impl_->train_batch(); }
void DqnTrainer::sync_target() { impl_->sync_target(); }
Model DqnTrainer::export_model() const { return impl_->export_model(); }
void DqnTrainer::import_model(const Model& model) { impl_->import_model(model); }
void DqnTrainer::save_checkpoint(const std::string& path) const { impl_->save_checkpoint(path); }
void DqnTrainer::load_checkpoint(const std::string& path) { impl_->load_checkpoint(path); }
int64_t DqnTrainer::env_steps() const noexcept { return impl_->env_steps; }
int64_t DqnTrainer::episodes() const noexcept { return impl_->episodes; }
ReplayBuffer& DqnTrainer::replay() noexcept { return impl_->replay; }
const PortGraph& DqnTrainer::graph() const noexcept { return impl_->graph; }

std::vector<float> DqnTrainer::torch_q_values(const float* features, const float* settings) const {
  c10::InferenceMode guard;
  const auto q = impl_->forward(false, impl_->single_obs(features, settings), 1).contiguous();
  return std::vector<float>(q.data_ptr<float>(), q.data_ptr<float>() + q.numel());
}

void DqnTrainer::torch_greedy(const float* features, const float* settings,
                              uint16_t* actions) const {
  c10::InferenceMode guard;
  const auto a =
      impl_->forward(false, impl_->single_obs(features, settings), 1).argmax(1).contiguous();
  const int64_t* p = a.data_ptr<int64_t>();
  for (int v = 0; v < impl_->n; ++v) actions[v] = static_cast<uint16_t>(p[v]);
}

}  // namespace rocemu::agent
