// ecn_controller.cc — see ecn_controller.h.
#include "fabric/ecn_controller.h"

#include <pthread.h>
#include <rte_lcore.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "agent/action_table.h"
#include "agent/policy.h"
#include "switchsw/soft_switch.h"

namespace rocemu::fabric {

namespace {
std::FILE* open_csv(const std::string& dir, const char* name, const char* header) {
  std::filesystem::create_directories(dir);
  const std::string path = (std::filesystem::path(dir) / name).string();
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + path);
  std::fputs(header, f);
  return f;
}

int64_t wall_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
      .count();
}

int64_t percentile(std::vector<int64_t> v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}
}  // namespace

EcnController::EcnController(const RunConfig& cfg, std::vector<sw::SoftSwitch*> switches,
                             const std::string& out_dir)
    : on_(cfg.agent.on()),
      policy_(cfg.agent.policy),
      interval_ns_(cfg.agent.interval_ns),
      cfg_(cfg),
      switches_(std::move(switches)) {
  if (!on_) return;
  if (policy_ == "graphcc" || policy_ == "acc") {
    if (!cfg.agent.model)
      throw std::invalid_argument("[agent] policy " + policy_ + " has no model loaded");
    const Topology& t = cfg.topology.topology;
    agent_ = std::make_unique<agent::EcnAgent>(
        t, agent::FeatureConfig{}, agent::make_policy(*cfg.agent.model, agent::PortGraph(t)));
  }
  if (cfg.agent.record) {
    ecn_csv_ = open_csv(out_dir, "ecn.csv", "time_ns,switch,port,kmin_bytes,kmax_bytes,pmax\n");
    agent_csv_ =
        open_csv(out_dir, "agent.csv", "interval,time_ns,step_wall_ns,ports_changed,missed\n");
  }
}

EcnController::~EcnController() {
  stop();
  if (ecn_csv_) std::fclose(ecn_csv_);
  if (agent_csv_) std::fclose(agent_csv_);
}

void EcnController::put(uint32_t node, uint16_t port, const EcnSetting& want,
                        const EcnSetting& have, TimeNs now) {
  if (want == have) return;
  const std::string why = switches_[node]->set_ecn(port, want);
  if (!why.empty()) return;  // the action table and profiles are validated: cannot happen
  ++changed_this_step_;
  if (ecn_csv_)
    std::fprintf(ecn_csv_, "%lld,%s,%u,%u,%u,%.6g\n", static_cast<long long>(now),
                 cfg_.topology.topology.node(node).name.c_str(), port, want.kmin_bytes,
                 want.kmax_bytes, want.pmax);
}

void EcnController::decide_and_apply(TimeNs now) {
  changed_this_step_ = 0;
  if (policy_ == "stall" && intervals_ % 10 == 9)
    std::this_thread::sleep_for(std::chrono::nanoseconds(5 * interval_ns_));
  if (policy_ == "throw" && intervals_ >= 2)
    throw std::runtime_error("test policy 'throw' failed on purpose");
  if (agent_) {
    const std::vector<agent::SwitchEcn>& settings = agent_->decide(snaps_);
    // Both in ascending node order (settings: the agent graph's switches; snaps_: every
    // switch in topology order), so one merge walk pairs them.
    size_t k = 0;
    for (const agent::SwitchEcn& s : settings) {
      while (k < snaps_.size() && snaps_[k].node < s.node) ++k;
      if (k == snaps_.size()) break;
      const SwitchSnapshot& snap = snaps_[k];
      if (snap.node != s.node || !switches_[s.node]) continue;
      for (uint16_t p = 0; p < s.ecn.size() && p < snap.ecn.size(); ++p)
        put(s.node, p, s.ecn[p], snap.ecn[p], now);
    }
    return;
  }
  const bool alternating = policy_ == "alternate" || policy_ == "stall" || policy_ == "throw";
  for (const SwitchSnapshot& sn : snaps_) {
    for (uint16_t p = 0; p < sn.ecn.size(); ++p) {
      EcnSetting want;
      if (alternating) {
        want = agent::action_setting(cfg_.agent.alternate[intervals_ % 2]);
      } else if (cfg_.agent.profile) {
        want = sw::scaled_ecn(*cfg_.agent.profile, sn.port_rate_bps[p]);
      } else {
        want = cfg_.switch_params.ecn_for_port(p, sn.port_rate_bps[p]);
      }
      put(sn.node, p, want, sn.ecn[p], now);
    }
  }
}

void EcnController::on_error(const char* what) noexcept {
  ++errors_;
  if (errors_ == 1 || errors_ % 1000 == 0)
    spdlog::warn("agent ({}): step failed ({} so far): {}; the thresholds in force stay", policy_,
                 errors_, what);
}

void EcnController::finish_step(TimeNs now, int64_t wall_ns, uint64_t missed) {
  changed_ += changed_this_step_;
  missed_ += missed;
  step_ns_.push_back(wall_ns);
  if (agent_csv_)
    std::fprintf(agent_csv_, "%llu,%lld,%lld,%llu,%llu\n",
                 static_cast<unsigned long long>(intervals_), static_cast<long long>(now),
                 static_cast<long long>(wall_ns),
                 static_cast<unsigned long long>(changed_this_step_),
                 static_cast<unsigned long long>(missed));
  // A step that decides nothing (a stale snapshot in real time) must not count the previous
  // step's changes again: it once did, and settings_changed ran ahead of ecn.csv's rows.
  changed_this_step_ = 0;
  ++intervals_;
}

void EcnController::step(TimeNs now) {
  if (!on_) return;
  const auto w0 = std::chrono::steady_clock::now();
  snaps_.clear();
  for (uint32_t i = 0; i < switches_.size(); ++i)
    if (switches_[i]) snaps_.push_back(switches_[i]->snapshot(now));
  try {
    decide_and_apply(now);
  } catch (const std::exception& e) {
    on_error(e.what());
  }
  finish_step(now, wall_since(w0), 0);
}

void EcnController::start() {
  if (!on_ || thread_.joinable()) return;
  realtime_ = true;
  snaps_.clear();
  for (sw::SoftSwitch* s : switches_) {
    if (!s) continue;
    s->publish_every(interval_ns_);
    snaps_.emplace_back();  // sized by the first read; no allocation after that
  }
  step_ns_.reserve(1 << 16);
  stop_.store(false);
  thread_ = std::thread([this] { thread_main(); });
  // A thread started from an EAL lcore inherits its one-core affinity: the agent would then
  // take its time slices from the lcore that forwards. Give it the cores no lcore polls
  // (on a machine with none spare it stays where it is, and shares).
  cpu_set_t spare;
  CPU_ZERO(&spare);
  const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  for (long c = 0; c < ncpu && c < CPU_SETSIZE; ++c) CPU_SET(static_cast<int>(c), &spare);
  for (unsigned lcore = 0; lcore < RTE_MAX_LCORE; ++lcore) {
    if (!rte_lcore_is_enabled(lcore)) continue;
    const int cpu = rte_lcore_to_cpu_id(static_cast<int>(lcore));
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_CLR(cpu, &spare);
  }
  if (CPU_COUNT(&spare) > 0) pthread_setaffinity_np(thread_.native_handle(), sizeof spare, &spare);
}

void EcnController::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  thread_.join();
}

void EcnController::thread_main() {
  using clock = std::chrono::steady_clock;
  const auto interval = std::chrono::nanoseconds(interval_ns_);
  auto next = clock::now() + interval;
  while (!stop_.load(std::memory_order_relaxed)) {
    // Sleep to the boundary in slices, so that stop() is served within a millisecond.
    while (!stop_.load(std::memory_order_relaxed) && clock::now() < next)
      std::this_thread::sleep_until(std::min(next, clock::now() + std::chrono::milliseconds(1)));
    if (stop_.load(std::memory_order_relaxed)) break;
    const auto w0 = clock::now();
    TimeNs at = 0;
    size_t k = 0;
    bool all = true;
    for (sw::SoftSwitch* s : switches_) {
      if (!s) continue;
      if (s->board().read(snaps_[k])) {
        at = std::max(at, snaps_[k].at_ns);
      } else {
        all = false;
      }
      ++k;
    }
    if (!all) {
      ++stale_;  // nothing published yet, or the writer kept overtaking: next interval
    } else {
      try {
        decide_and_apply(at);
      } catch (const std::exception& e) {
        on_error(e.what());
      }
    }
    const int64_t wall = wall_since(w0);
    // Boundaries that passed while this step ran are missed, not made up in a burst.
    uint64_t missed = 0;
    next += interval;
    const auto now = clock::now();
    if (now > next) {
      missed = static_cast<uint64_t>((now - next) / interval) + 1;
      next += interval * static_cast<int64_t>(missed);
    }
    finish_step(at, wall, missed);
  }
}

AgentStats EcnController::stats() const {
  AgentStats s;
  if (!on_) return s;
  s.policy = policy_;
  s.interval_ns = interval_ns_;
  s.intervals = intervals_;
  s.settings_changed = changed_;
  s.missed_intervals = missed_;
  s.errors = errors_;
  s.stale_snapshots = stale_;
  s.realtime = realtime_;
  s.step_p50_ns = percentile(step_ns_, 0.50);
  s.step_p99_ns = percentile(step_ns_, 0.99);
  return s;
}

std::string agent_text(const AgentStats& s) {
  if (s.policy.empty()) return "";
  char line[320];
  std::snprintf(line, sizeof line,
                "agent: policy %s every %.0f us: %llu intervals, %llu port settings changed, "
                "%llu missed, %llu errors; step p50 %.1f us, p99 %.1f us (wall%s)\n",
                s.policy.c_str(), static_cast<double>(s.interval_ns) / 1e3,
                static_cast<unsigned long long>(s.intervals),
                static_cast<unsigned long long>(s.settings_changed),
                static_cast<unsigned long long>(s.missed_intervals),
                static_cast<unsigned long long>(s.errors), static_cast<double>(s.step_p50_ns) / 1e3,
                static_cast<double>(s.step_p99_ns) / 1e3, s.realtime ? ", agent thread" : "");
  return line;
}

}  // namespace rocemu::fabric
