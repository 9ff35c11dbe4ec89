// workload_qp_plan.h — the RoCE side of a workload run: every host's PD, CQs and memory
// regions, the deterministic QP plan, and the verbs calls that post flows and reap their
// completions. It is the LaneScheduler's transport (fabric/workload/lane_scheduler.h): the
// scheduler decides which QP carries a flow, the plan makes the calls.
//
// The plan is DETERMINISTIC: build() creates, in one fixed order, on every host a PD, two
// CQs, a source and a sink region, then for every ordered host pair (a, b) and lane a QP on
// a and one on b, and connects them. QPNs are sequential per host (rxe style, from 0x11),
// initial PSNs and MR keys come from each host's own seeded Rng (seed, "nic/<node>"), so
// every host's values depend only on the run config and the sequence of verbs calls made on
// that host. A per-host process therefore builds the same RoceHost for EVERY host (the
// others are replicas that never touch a port), replays the same plan, and so knows its
// peers' QPNs, PSNs and rkeys without exchanging anything. The only process-dependent
// value, the sink region's virtual address (the RDMA WRITE target), is made equal in every
// process by mapping the sink at a fixed address (workload_sink.h). Any change of the order
// here changes QPNs/PSNs/rkeys consistently in all processes of one build, but processes of
// different builds must not be mixed. With one QP pair per flow the mesh is not built:
// connect() makes a flow's pair at its start (in-process runs only).
// Transport mapping (one RDMA WRITE or SEND per flow): workload_job.h. Hosts are indices
// into the workload's host list. Units: bytes. Single-threaded: the engine thread.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "fabric/cc/dcqcn_hooks.h"
#include "fabric/run_config.h"
#include "fabric/workload/flow_generator.h"
#include "fabric/workload/lane_scheduler.h"
#include "fabric/workload_sink.h"
#include "nic/roce_host.h"

namespace rocemu::fabric {

class WorkloadQpPlan final : public workload::LaneTransport {
 public:
  /// `hosts` and `cc_of` are indexed by topology node (`cc_of` empty without DCQCN, else
  /// nullptr where a host has none); every argument must outlive the plan. `local_host` is
  /// WorkloadFabricOptions::local_host (-1: every host is driven here).
  WorkloadQpPlan(const RunConfig& cfg, const workload::WorkloadConfig& wcfg,
                 const std::vector<std::unique_ptr<nic::RoceHost>>& hosts,
                 const std::vector<DcqcnHooks*>& cc_of, WorkloadRegions& regions,
                 int32_t local_host);

  /// The plan (see the file comment): every host's PD, CQs and regions, then, unless
  /// `lane_per_flow`, `lanes_per_pair` connected QP pairs per ordered host pair, handed to
  /// `sched`. Setup time. Throws std::runtime_error naming what failed.
  void build(workload::LaneScheduler& sched, uint32_t lanes_per_pair, bool lane_per_flow);
  /// Local host, SEND flows: the receiver cannot know which lane a sender picks, so every
  /// responder QP of the local host gets a full receive queue of whole-sink receives
  /// (drain_receives keeps it full). Setup time, after build().
  void prepost_receives(const workload::LaneScheduler& sched);

  /// Polls host h's receive CQ empty; in local SEND mode every successful receive is
  /// posted again on its QP.
  void drain_receives(uint32_t h) noexcept;
  /// Up to `n` requester completions of host h into `wc`; returns how many.
  int poll_completions(uint32_t h, ibv_wc* wc, int n) noexcept;
  /// Completions waiting in host h's CQs (0: drain_receives and poll_completions find none).
  uint32_t completions_waiting(uint32_t h) const noexcept { return host(h).completions_waiting(); }

  // workload::LaneTransport
  bool post(const workload::FlowSpec& f, uint32_t a, uint32_t b, uint32_t src_qpn,
            uint32_t dst_qpn) noexcept override;
  bool connect(uint32_t a, uint32_t b, uint32_t& src_qpn, uint32_t& dst_qpn) noexcept override;
  void disconnect(uint32_t a, uint32_t b, uint32_t src_qpn, uint32_t dst_qpn) noexcept override;

 private:
  struct HostSide {
    uint32_t pd = 0, send_cq = 0, recv_cq = 0;
    nic::MrInfo src, dst;
  };
  nic::RoceHost& host(uint32_t h) const noexcept { return *hosts_[wcfg_.hosts[h].id]; }
  /// A QP of host h's PD and CQs with `max_wr` send and receive work requests.
  nic::QpInitAttr qp_attr(size_t h, uint32_t max_wr) const noexcept;
  nic::ConnectOptions connect_options() const noexcept;
  /// One whole-sink receive on host h's QP `qpn`; false if the NIC refused it.
  bool post_receive(uint32_t h, uint32_t qpn, uint64_t wr_id) noexcept;

  const RunConfig& cfg_;
  const workload::WorkloadConfig& wcfg_;
  const std::vector<std::unique_ptr<nic::RoceHost>>& hosts_;
  const std::vector<DcqcnHooks*>& cc_of_;
  WorkloadRegions& regions_;
  int32_t local_;
  bool repost_;  // local host, SEND flows: receives are kept posted (prepost_receives)
  std::vector<HostSide> side_;
};

}  // namespace rocemu::fabric
