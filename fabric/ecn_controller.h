// ecn_controller.h — the [agent] control loop of a run (docs/agent.md "In the loop"): every
// interval_ns of engine time it takes a snapshot of every switch (in topology node order),
// lets the policy choose each egress port's RED-ECN thresholds, and puts those that changed
// in force with SoftSwitch::set_ecn (applied before the port's next dequeue). In virtual time
// it runs from the engine's periodic callback between events, so a run with the agent on is
// as deterministic as one without: same seed, byte-identical result files (ecn.csv included;
// agent.csv holds wall-clock step times and is the one exception).
//
// In real time (start()/stop()) the switches' own lcores publish a snapshot every interval
// into pre-allocated storage (SoftSwitch::publish_every, switchsw/snapshot_board.h), and the
// agent runs on its own thread: it wakes at each interval boundary (wall clock), copies the
// published snapshots, decides and posts settings through set_ecn (never waited for by the
// data path). A step that overruns its interval counts the boundaries it missed; a policy
// that throws is counted and logged (rate-limited), its thresholds stay as they were, and
// forwarding goes on.
//
// Policies: "static" (the [agent] profile, else the [switch.ecn] settings, scaled per port
// rate), "graphcc" / "acc" (agent::EcnAgent over a loaded model: the GraphCC MPNN, or one ACC
// network per port), "alternate" (test policy: every port switches between two action-table
// settings each interval), "stall" and "throw" (fault-test policies: alternate, but every
// 10th step sleeps 5 intervals / from the 3rd step on every step throws). Units: ns, bytes.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/telemetry.h"
#include "fabric/run_config.h"

namespace rocemu::sw {
class SoftSwitch;
}
namespace rocemu::agent {
class EcnAgent;
}

namespace rocemu::fabric {

/// What the controller did during a run (zeros when there is no [agent]).
struct AgentStats {
  std::string policy;  // "" = no [agent]
  TimeNs interval_ns = 0;
  uint64_t intervals = 0;         // control steps run
  uint64_t settings_changed = 0;  // port settings put in force (set_ecn calls)
  uint64_t missed_intervals = 0;  // virtual time: always 0 (the engine waits for the agent)
  uint64_t errors = 0;            // steps whose policy threw (thresholds left as they were)
  uint64_t stale_snapshots = 0;   // real time: a switch's snapshot could not be read
  bool realtime = false;          // the agent ran on its own thread
  // Wall clock, not reproducible (stdout only):
  int64_t step_p50_ns = 0, step_p99_ns = 0;
};

class EcnController {
 public:
  /// `switches` indexed by topology node (nullptr at hosts), not owned. With cfg.agent.record,
  /// ecn.csv and agent.csv are written into `out_dir` (created). Throws std::runtime_error if
  /// a file cannot be opened, std::invalid_argument if the model does not fit the topology.
  EcnController(const RunConfig& cfg, std::vector<sw::SoftSwitch*> switches,
                const std::string& out_dir);
  ~EcnController();
  EcnController(const EcnController&) = delete;
  EcnController& operator=(const EcnController&) = delete;

  bool on() const noexcept { return on_; }
  TimeNs interval_ns() const noexcept { return interval_ns_; }
  /// Virtual time: one control step at engine time `now` (the engine's periodic callback).
  void step(TimeNs now);
  /// Real time: switches publish every interval from their lcores, the agent thread starts.
  /// Call before the engine runs; stop() after it returns (the destructor stops it too).
  void start();
  void stop();
  /// After stop() (or in virtual time).
  AgentStats stats() const;

 private:
  void put(uint32_t node, uint16_t port, const EcnSetting& want, const EcnSetting& have,
           TimeNs now);
  void decide_and_apply(TimeNs now);  // on snaps_; may throw (test policy "throw")
  void finish_step(TimeNs now, int64_t wall_ns, uint64_t missed);
  void on_error(const char* what) noexcept;
  void thread_main();

  bool on_ = false;
  std::string policy_;
  TimeNs interval_ns_ = 0;
  const RunConfig& cfg_;
  std::vector<sw::SoftSwitch*> switches_;
  std::unique_ptr<agent::EcnAgent> agent_;
  std::vector<SwitchSnapshot> snaps_;
  uint64_t intervals_ = 0, changed_ = 0, changed_this_step_ = 0;
  std::vector<int64_t> step_ns_;
  std::FILE* ecn_csv_ = nullptr;
  std::FILE* agent_csv_ = nullptr;
  uint64_t missed_ = 0, errors_ = 0, stale_ = 0;
  bool realtime_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

/// The summary lines of `s` for stdout ("" without an agent).
std::string agent_text(const AgentStats& s);

}  // namespace rocemu::fabric
