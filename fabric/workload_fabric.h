// workload_fabric.h — a workload run's fabric (docs/workload_runs.md): the nodes and the
// parts that drive the flows, composed for the in-process job (workload_job.h: every host
// and switch in one engine), the agent's NetworkEnv and the per-host process (apps/host: one
// host on its own port, the other hosts replicas).
//
// One part per concern; WorkloadFabric builds the nodes and wires the parts together:
//   workload::StartQueue     (fabric/workload/start_queue.h): generator -> per-host FIFOs
//                            in engine time, until each flow's start;
//   workload::LaneScheduler  (fabric/workload/lane_scheduler.h): which QP of the pair
//                            carries a flow, the per-pair FIFO, posting waiting flows when a
//                            lane frees, failures;
//   WorkloadQpPlan           (workload_qp_plan.h): the deterministic QP plan and every verbs
//                            call (the scheduler's transport);
//   workload::FctRecorder    (fabric/workload/fct.h): FCT records against each pair's ideal
//                            (workload_topology.h: ideal_fct_table);
//   WorkloadRegions          (workload_sink.h): the source and sink regions, and the shared
//                            sink mapping of per-host processes.
// The fabric/workload parts are pure logic (common/ only). Transport mapping and the FCT
// definition: workload_job.h. Units: ns, bytes, bps.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/node.h"
#include "fabric/cc/dcqcn_hooks.h"
#include "fabric/run_config.h"
#include "fabric/workload/fct.h"
#include "fabric/workload/flow_generator.h"
#include "fabric/workload/lane_scheduler.h"
#include "fabric/workload/start_queue.h"
#include "fabric/workload/workload_sizes.h"
#include "fabric/workload_job.h"
#include "fabric/workload_qp_plan.h"
#include "fabric/workload_sink.h"
#include "nic/roce_host.h"
#include "switchsw/soft_switch.h"

struct rte_mempool;

namespace rocemu::fabric {

/// cfg.workload validated against cfg's topology; cdf_file relative to the working directory,
/// else to the run file's directory. Throws ConfigError.
workload::WorkloadConfig make_workload_config_of(const RunConfig& cfg);

// The FCT size bins of a workload and the bytes of its source and sink regions
// (fabric/workload/workload_sizes.h), under the names the tools use.
using workload::workload_region_bytes;
using workload::workload_size_bins;

/// Which part of the run one WorkloadFabric drives.
struct WorkloadFabricOptions {
  /// -1: every host and switch (the in-process job). Else the index in wcfg.hosts of the one
  /// host this process runs: no switch is built, the other hosts are replicas (plan only),
  /// only this host's flows are started and recorded, and for SEND flows its responder QPs
  /// keep receives posted (the sender's process posts nothing here).
  int32_t local_host = -1;
  /// Local mode: the sink region (workload_region_bytes), at the same virtual address in
  /// every process of the run (map_shared_sink_region). Null: a private buffer (in-process).
  uint8_t* sink = nullptr;
  /// The hosts' frames carry their payload's length, not its bytes (NicParams::elide_payload):
  /// for in-process virtual-time runs, whose frames nobody captures. Not with local_host.
  bool elide_payload = false;
};

class WorkloadFabric;

/// A RoceHost plus its part of the workload, as an engine sees it: every Node call is
/// forwarded, and in the same call the host's due flows are posted (next_deadline() includes
/// the next start) and its completions reaped.
class WorkloadHostNode final : public Node {
 public:
  WorkloadHostNode(WorkloadFabric& f, nic::RoceHost& host, uint32_t host_index)
      : f_(f), host_(host), index_(host_index) {}
  uint16_t num_ports() const noexcept override { return host_.num_ports(); }
  void rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept override;
  rte_mbuf* tx(uint16_t port, TimeNs now) noexcept override { return host_.tx(port, now); }
  TimeNs next_deadline() const noexcept override;
  void on_timer(TimeNs now) noexcept override;

 private:
  WorkloadFabric& f_;
  nic::RoceHost& host_;
  uint32_t index_;
};

/// The nodes and the parts of a workload run. Single-threaded: the engine thread.
class WorkloadFabric {
 public:
  /// Builds the nodes and the QP plan (WorkloadQpPlan::build). `cfg`, `wcfg` and `pool`
  /// must outlive the fabric. Throws std::runtime_error on setup failures,
  /// std::invalid_argument for options that do not fit the run.
  WorkloadFabric(const RunConfig& cfg, const workload::WorkloadConfig& wcfg, rte_mempool* pool,
                 uint32_t qps_per_pair, const WorkloadFabricOptions& opt = {});
  ~WorkloadFabric();
  WorkloadFabric(const WorkloadFabric&) = delete;
  WorkloadFabric& operator=(const WorkloadFabric&) = delete;

  /// The engine's node for topology node i (nullptr in local mode for every node but the
  /// local host's).
  Node* node(uint32_t i) const { return nodes_[i]; }
  size_t num_nodes() const { return nodes_.size(); }
  uint64_t flows_finished() const { return rec_.stats().records().size(); }
  /// Every (local) flow generated, started, posted and completed (successfully or not).
  bool done() const {
    return starts_.exhausted() && starts_.pulled() == lanes_.started() && rec_.in_flight() == 0 &&
           lanes_.waiting() == 0;
  }
  /// Like done(), but a flow the NIC refused to post (its QP in error) also counts as over:
  /// nothing of this host's is left at the NIC or waiting.
  bool settled() const {
    return starts_.exhausted() && starts_.pulled() == lanes_.started() && lanes_.in_nic() == 0 &&
           lanes_.waiting() == 0;
  }
  /// Start time (engine time) of the workload's last flow, any host; valid once the
  /// generator is exhausted (kNever before).
  TimeNs last_start_ns() const noexcept { return starts_.last_start_ns(); }

  /// Moves every flow starting before now + lookahead_ns from the generator into its source
  /// host's FIFO (local mode: flows of other hosts are dropped). The first call fixes the
  /// workload's time origin at `now` and every start_ns is shifted by it.
  void pull(TimeNs now, TimeNs lookahead_ns) { starts_.pull(now, lookahead_ns); }
  /// Start time of host h's next flow not yet started.
  TimeNs next_start(uint32_t h) const noexcept { return starts_.next_start(h); }
  /// Inside a node call of host h at `now`: start its due flows.
  void start_due(uint32_t h, TimeNs now) noexcept;
  /// Inside a node call of host h at `now`: record its completions; a completion frees a
  /// slot on the pair's QP, so the pair's next waiting flow is posted.
  void reap(uint32_t h, TimeNs now) noexcept;
  /// The DCQCN hooks of the hosts this fabric runs (empty without [dcqcn]).
  std::vector<const DcqcnHooks*> dcqcn_hooks() const { return hooks_view(cc_); }
  /// The switches, indexed by topology node (nullptr at hosts and in local-host mode).
  std::vector<sw::SoftSwitch*> switch_ptrs() const {
    std::vector<sw::SoftSwitch*> v;
    for (const auto& s : switches_) v.push_back(s.get());
    return v;
  }
  /// Adds every switch port's egress queue (all priorities) as one sample.
  void sample_queues(TimeNs now);
  /// The run's result at engine time `end` (records sorted by flow id).
  WorkloadResult result(const char* engine, TimeNs end);

  /// The first failed flows (at most kMaxFailures are kept), in completion order.
  const std::vector<FlowFailure>& failures() const noexcept { return lanes_.failures(); }
  static constexpr size_t kMaxFailures = workload::LaneScheduler::kMaxFailures;
  /// qp_per_flow: QP pairs connected so far (one per flow that got one).
  uint64_t qps_connected() const noexcept { return lanes_.lanes_connected(); }
  /// The RoceHost of topology node i (replicas included).
  const nic::RoceHost& host(uint32_t i) const { return *hosts_[i]; }

 private:
  bool is_local(size_t h) const noexcept { return local_ < 0 || static_cast<size_t>(local_) == h; }

  bool per_flow_;  // [workload] qp_per_flow: one QP pair per flow, connected on demand
  int32_t local_;  // WorkloadFabricOptions::local_host
  const RunConfig& cfg_;
  const workload::WorkloadConfig& wcfg_;
  std::vector<Node*> nodes_;
  std::vector<std::unique_ptr<sw::SoftSwitch>> switches_;
  std::vector<std::unique_ptr<nic::RoceHost>> hosts_;
  std::vector<std::unique_ptr<DcqcnHooks>> cc_;
  std::vector<DcqcnHooks*> cc_of_;   // per topology node (nullptr: no DCQCN there)
  std::vector<int32_t> host_index_;  // topology node -> index in wcfg_.hosts, -1 for switches
  WorkloadRegions regions_;
  WorkloadQpPlan plan_;                                      // the verbs calls; lanes_' transport
  workload::LaneScheduler lanes_;                            // flows -> QPs of their pair
  workload::StartQueue starts_;                              // generator -> per-host FIFOs
  workload::FctRecorder rec_;                                // FCT records
  std::vector<workload::IdealFctParams> ideal_;              // per ordered host pair
  std::vector<std::unique_ptr<WorkloadHostNode>> wrappers_;  // the engine's host nodes
};

}  // namespace rocemu::fabric
