// run_taps.h — what every job puts around its nodes, in either engine, in one place: the
// [capture] pcapng tap, the [telemetry] queue and DCQCN series and the [agent] ECN controller
// (switch_nodes.h, ecn_controller.h). A job builds its nodes, attaches them to the engine,
// then: RunTaps taps(cfg, switches, out_dir, node_lcore); taps.attach(engine); taps.begin();
// engine.run...(); taps.end(). In virtual time the agent runs from the engine's periodic
// callback; in real time on its own thread (begin() starts it, end() stops it). Telemetry in
// real time samples the switches polled by the main lcore (others would race).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fabric/cc/dcqcn_hooks.h"
#include "fabric/ecn_controller.h"
#include "fabric/run_config.h"
#include "fabric/switch_nodes.h"

namespace rocemu::fabric {

class VirtualEngine;
class RealtimeEngine;

class RunTaps {
 public:
  /// `switches` indexed by topology node (nullptr at hosts), not owned. `node_lcore`: the
  /// real-time placement (empty: every node on `main_lcore`). Throws std::runtime_error if
  /// an output file cannot be opened.
  RunTaps(const RunConfig& cfg, std::vector<sw::SoftSwitch*> switches, const std::string& out_dir,
          const std::vector<uint32_t>& node_lcore = {}, uint32_t main_lcore = 0);
  ~RunTaps();
  RunTaps(const RunTaps&) = delete;
  RunTaps& operator=(const RunTaps&) = delete;

  /// [telemetry] dcqcn_interval_us: the job's DCQCN hooks to trace (any order, not owned).
  /// Call before attach(); nothing happens without the key.
  void trace_dcqcn(const std::vector<const DcqcnHooks*>& hooks);
  void attach(VirtualEngine& e);
  void attach(RealtimeEngine& e);
  /// Right before the engine runs / right after it returned.
  void begin();
  void end();

  AgentStats agent_stats() const { return agent_.stats(); }
  uint64_t captured() const noexcept { return capture_ ? capture_->captured() : 0; }

 private:
  const RunConfig& cfg_;
  std::unique_ptr<CaptureTap> capture_;
  std::string out_dir_;
  std::vector<uint32_t> node_lcore_;
  uint32_t main_lcore_;
  QueueTelemetry telemetry_;
  std::unique_ptr<DcqcnTelemetry> dcqcn_;
  EcnController agent_;
  bool realtime_ = false;
};

}  // namespace rocemu::fabric
