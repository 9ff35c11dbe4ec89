// environment.h — what the agent trains against: a network that takes ECN settings and
// answers with counter snapshots.
//
// GraphCC trains in a network simulator (Bernardez et al., Sec. 5): every control interval
// the agents observe counters, choose settings, the network runs one interval. This is that
// loop's contract, so that the virtual-time engine (fabric/) can implement it later; the
// agent's own QueueEnv (queue_env.h) is a closed-form stand-in for tests. Rewards are
// computed by the agent from the snapshots (reward.h), so every environment is scored the
// same way.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "agent/port_graph.h"
#include "common/telemetry.h"
#include "common/topology.h"

namespace rocemu::agent {

/// The ECN settings of every port of one switch (index = port).
struct SwitchEcn {
  uint32_t node = 0;
  std::vector<EcnSetting> ecn;
};

struct StepResult {
  std::vector<SwitchSnapshot> snapshots;  // one per switch, at the end of the interval
  bool done = false;                      // episode over: the trainer calls reset() next
};

class Environment {
 public:
  virtual ~Environment() = default;
  /// The network; the agent builds its PortGraph from it once.
  virtual const Topology& topology() const = 0;
  /// Starts an episode (deterministic for `seed`); returns a snapshot per switch.
  virtual std::vector<SwitchSnapshot> reset(uint64_t seed) = 0;
  /// Puts `settings` in force (switches or ports not listed keep theirs), runs one control
  /// interval, and returns the snapshots at its end.
  virtual StepResult step(const std::vector<SwitchEcn>& settings) = 0;
};

/// One SwitchEcn per switch of `graph`, every port at `initial`.
std::vector<SwitchEcn> make_switch_settings(const PortGraph& graph, const EcnSetting& initial = {});

/// Writes the setting of action actions[v] to agent v's port in `settings` (built by
/// make_switch_settings for the same graph); other ports are left alone. noexcept, no
/// allocation.
void apply_actions(const PortGraph& graph, std::span<const uint16_t> actions,
                   std::vector<SwitchEcn>& settings) noexcept;

}  // namespace rocemu::agent
