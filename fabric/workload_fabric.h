// workload_fabric.h — the nodes, the QP plan and the flow bookkeeping of a workload run
// (docs/workload_runs.md), shared by the in-process job (workload_job.h: every host and
// switch in one engine) and the per-host process (apps/host: one host on its own port).
//
// The QP plan is DETERMINISTIC: connect_mesh() creates, in one fixed order, on every host a
// PD, two CQs, a source and a sink region, then for every ordered host pair (a, b) and lane
// a QP on a and one on b, and connects them. QPNs are sequential per host (rxe style, from
// 0x11), initial PSNs and MR keys come from each host's own seeded Rng (seed, "nic/<node>"),
// so every host's values depend only on the run config and the sequence of verbs calls made
// on that host. A per-host process therefore builds the same RoceHost for EVERY host (the
// others are replicas that never touch a port), replays the same plan, and so knows its
// peers' QPNs, PSNs and rkeys without exchanging anything. The only process-dependent value,
// the sink region's virtual address (the RDMA WRITE target), is made equal in every process
// by mapping the sink at a fixed address (workload_sink.h). See the file comment of
// workload_job.h for the transport mapping and the FCT definition. Units: ns, bytes, bps.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "common/node.h"
#include "fabric/cc/dcqcn_hooks.h"
#include "fabric/run_config.h"
#include "fabric/workload/fct.h"
#include "fabric/workload/flow_generator.h"
#include "fabric/workload/start_queue.h"
#include "fabric/workload_job.h"
#include "fabric/workload_sink.h"
#include "nic/roce_host.h"
#include "switchsw/soft_switch.h"

struct rte_mempool;

namespace rocemu::fabric {

/// cfg.workload validated against cfg's topology; cdf_file relative to the working directory,
/// else to the run file's directory. Throws ConfigError.
workload::WorkloadConfig make_workload_config_of(const RunConfig& cfg);

/// The FCT size bins of a workload (deciles of its CDF, or the incast size alone).
workload::SizeBins workload_size_bins(const workload::WorkloadConfig& wcfg);

/// Bytes of the source and of the sink region (the largest flow + 1).
uint64_t workload_region_bytes(const workload::WorkloadConfig& wcfg);

/// Which part of the run one WorkloadFabric drives.
struct WorkloadFabricOptions {
  /// -1: every host and switch (the in-process job). Else the index in wcfg.hosts of the one
  /// host this process runs: no switch is built, the other hosts are replicas (plan only),
  /// only this host's flows are started and recorded, and for SEND flows its responder QPs
  /// keep receives posted (the sender's process posts nothing here).
  int32_t local_host = -1;
  /// Local mode: the sink region (workload_region_bytes), at the same virtual address in
  /// every process of the run. Null: a private buffer (in-process job).
  uint8_t* sink = nullptr;
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

/// The nodes, the QP mesh and the job's state. Single-threaded: the engine thread.
class WorkloadFabric {
 public:
  /// Builds the nodes and connects the mesh (see the file comment). `cfg`, `wcfg` and
  /// `pool` must outlive the fabric. Throws std::runtime_error on setup failures.
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
    return starts_.exhausted() && starts_.pulled() == started_ && rec_.in_flight() == 0 &&
           waiting_ == 0;
  }
  /// Like done(), but a flow the NIC refused to post (its QP in error) also counts as over:
  /// nothing of this host's is left at the NIC or waiting.
  bool settled() const {
    return starts_.exhausted() && starts_.pulled() == started_ && posted_flows_.empty() &&
           waiting_ == 0;
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
  /// The switches, indexed by topology node (nullptr at hosts and in local-host mode).
  /// The DCQCN hooks of the hosts this fabric runs (empty without [dcqcn]).
  std::vector<const DcqcnHooks*> dcqcn_hooks() const { return hooks_view(cc_); }
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
  const std::vector<FlowFailure>& failures() const noexcept { return failures_; }
  static constexpr size_t kMaxFailures = 64;
  /// qp_per_flow: QP pairs connected so far (one per flow that got one).
  uint64_t qps_connected() const noexcept { return qps_connected_; }
  /// The RoceHost of topology node i (replicas included).
  const nic::RoceHost& host(uint32_t i) const { return *hosts_[i]; }

 private:
  /// One RC QP of a pair (requester side src_qpn, responder side dst_qpn).
  struct Lane {
    uint32_t src_qpn = 0, dst_qpn = 0;
    uint32_t outstanding = 0;  // posted, not completed
    uint64_t outstanding_bytes = 0;
  };
  struct Pair {
    std::vector<Lane> lanes;                 // qps_per_pair QPs
    std::deque<workload::FlowSpec> waiting;  // started, no lane free yet (FIFO)
    workload::IdealFctParams ideal;
  };
  struct Posted {
    uint32_t pair = 0, lane = 0;
    uint64_t bytes = 0;
  };
  struct HostSide {
    uint32_t pd = 0, send_cq = 0, recv_cq = 0;
    nic::MrInfo src, dst;
  };

  static int pick_lane(const Pair& p) noexcept;
  /// A QP of host h's PD and CQs with `max_wr` send and receive work requests.
  nic::QpInitAttr qp_attr(size_t h, uint32_t max_wr) const noexcept;
  // qp_per_flow: a new QP pair for a flow (-1 if max_qps QPs live), destroyed when it ends.
  int flow_lane(uint32_t a, uint32_t b, Pair& p) noexcept;
  void release_flow_lane(uint32_t a, uint32_t b, Lane& l) noexcept;
  void retry_waiting() noexcept;
  size_t pair_index(uint32_t src_h, uint32_t dst_h) const {
    return src_h * wcfg_.hosts.size() + dst_h;
  }
  bool is_local(size_t h) const noexcept { return local_ < 0 || static_cast<size_t>(local_) == h; }
  void connect_mesh();
  void prepost_receives();
  void repost_receive(uint32_t h, uint32_t qpn) noexcept;
  void start_flow(const workload::FlowSpec& f) noexcept;
  void note_failure(uint64_t id, uint32_t a, uint32_t b, uint64_t bytes, int status) noexcept;
  void post(const workload::FlowSpec& f, uint32_t a, uint32_t b, Pair& p, uint32_t lane) noexcept;

  uint32_t lanes_;  // QPs per ordered host pair
  bool per_flow_;   // [workload] qp_per_flow: one QP pair per flow, connected on demand
  int32_t local_;   // WorkloadFabricOptions::local_host
  const RunConfig& cfg_;
  const workload::WorkloadConfig& wcfg_;
  workload::StartQueue starts_;  // generator -> per-host FIFOs until each flow's start
  workload::FctRecorder rec_;
  std::vector<Node*> nodes_;
  std::vector<std::unique_ptr<sw::SoftSwitch>> switches_;
  std::vector<std::unique_ptr<nic::RoceHost>> hosts_;
  std::vector<std::unique_ptr<DcqcnHooks>> cc_;
  std::vector<DcqcnHooks*> cc_of_;   // per topology node (nullptr: no DCQCN there)
  std::vector<int32_t> host_index_;  // topology node -> index in wcfg_.hosts, -1 for switches
  std::vector<HostSide> side_;
  std::vector<Pair> pairs_;                            // [src host index * hosts + dst host index]
  std::unordered_map<uint64_t, Posted> posted_flows_;  // by flow id
  WorkloadRegions regions_;  // the source and the sink (private, or the shared mapping)
  std::vector<std::unique_ptr<WorkloadHostNode>> wrappers_;  // the engine's host nodes
  std::vector<FlowFailure> failures_;                        // reserved kMaxFailures
  uint64_t started_ = 0, posted_ = 0, failed_ = 0, waiting_ = 0;
  uint64_t qps_connected_ = 0;
};

}  // namespace rocemu::fabric
