// network_env.h — the virtual-time network as the agent's training environment
// (agent::Environment): the very switch, NIC and DCQCN code of rocemu-sim, driven one control
// interval at a time.
//
// reset(seed) builds an episode from the run file: a fresh VirtualEngine and WorkloadFabric
// (topology, [switch], [nic], [dcqcn], [workload] with its incast) under `seed`, every port at
// the [switch.ecn] setting, and returns each switch's snapshot at time 0. step(settings) puts
// the settings that differ from those in force on their ports (SoftSwitch::set_ecn), runs
// one interval of engine time and returns the snapshots at its end; the episode is done when
// every flow finished or the run's [sim] until_us is reached. Deterministic: one seed and
// one sequence of settings give the same snapshots (tested). The wall-clock cost of the
// steps is measured (stats()); it is never fed back into the model. EAL must be running.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "agent/environment.h"
#include "fabric/run_config.h"
#include "fabric/workload/flow_generator.h"

struct rte_mempool;

namespace rocemu::fabric {

class VirtualEngine;
class WorkloadFabric;
class RunPool;

struct NetworkEnvStats {
  uint64_t episodes = 0, steps = 0;
  int64_t step_wall_ns = 0;   // total wall time inside step()
  int64_t reset_wall_ns = 0;  // total wall time inside reset()
  uint64_t events = 0;        // engine events of every episode
};

class NetworkEnv final : public agent::Environment {
 public:
  /// `cfg` must have a [workload] (throws std::invalid_argument otherwise). One step is
  /// `interval_ns` of engine time (cfg.agent.interval_ns by default).
  explicit NetworkEnv(RunConfig cfg, TimeNs interval_ns = 0);
  ~NetworkEnv() override;
  NetworkEnv(const NetworkEnv&) = delete;
  NetworkEnv& operator=(const NetworkEnv&) = delete;

  const Topology& topology() const override { return cfg_.topology.topology; }
  std::vector<SwitchSnapshot> reset(uint64_t seed) override;
  agent::StepResult step(const std::vector<agent::SwitchEcn>& settings) override;

  TimeNs now() const noexcept;
  TimeNs interval_ns() const noexcept { return interval_ns_; }
  const NetworkEnvStats& stats() const noexcept { return stats_; }
  /// The episodes' mbuf pool (one for the environment's life; nullptr before reset()).
  rte_mempool* pool() const noexcept;
  /// Flows finished in the current episode.
  uint64_t flows_finished() const;

 private:
  std::vector<SwitchSnapshot> snapshots(TimeNs now) const;
  void teardown();

  RunConfig cfg_;
  TimeNs interval_ns_;
  std::unique_ptr<RunPool> pool_;
  std::unique_ptr<workload::WorkloadConfig> wcfg_;
  std::unique_ptr<WorkloadFabric> fabric_;
  std::unique_ptr<VirtualEngine> engine_;
  bool done_ = true;
  NetworkEnvStats stats_;
};

}  // namespace rocemu::fabric
