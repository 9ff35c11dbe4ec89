// ecn_controller.h — the [agent] control loop of a run (docs/agent.md "In the loop"): every
// interval_ns of engine time it takes a snapshot of every switch (in topology node order),
// lets the policy choose each egress port's RED-ECN thresholds, and puts those that changed
// in force with SoftSwitch::set_ecn (applied before the port's next dequeue). In virtual time
// it runs from the engine's periodic callback between events, so a run with the agent on is
// as deterministic as one without: same seed, byte-identical result files (ecn.csv included;
// agent.csv holds wall-clock step times and is the one exception).
//
// Policies: "static" (the [agent] profile, else the [switch.ecn] settings, scaled per port
// rate), "graphcc" / "acc" (agent::EcnAgent over a loaded model: the GraphCC MPNN, or one ACC
// network per port), "alternate" (test policy: every port switches between two action-table
// settings each interval). Units: ns, bytes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
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
  /// One control step at engine time `now`.
  void step(TimeNs now);
  AgentStats stats() const;

 private:
  void put(uint32_t node, uint16_t port, const EcnSetting& want, const EcnSetting& have,
           TimeNs now);

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
};

/// The summary lines of `s` for stdout ("" without an agent).
std::string agent_text(const AgentStats& s);

}  // namespace rocemu::fabric
