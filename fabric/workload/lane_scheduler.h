// lane_scheduler.h — which RC QP ("lane") of a host pair carries each flow of a workload,
// and when: the bookkeeping between a flow's start and its requester completion.
//
// Every ordered host pair (a, b) has lanes: qps_per_pair QP pairs connected before the run
// (the mesh, add_lane), or, with one lane per flow, a QP pair connected at the flow's start
// and destroyed at its completion (LaneTransport::connect/disconnect; a freed lane slot is
// reused). A flow that starts is posted at once on the lane with the fewest outstanding
// bytes among those with fewer than kMaxOutstandingPerLane work requests (ties: the lowest
// lane); if none can take it, or flows of the pair are already waiting, it waits in the
// pair's FIFO, so a pair's flows are posted in start order. A completion frees its lane and
// the pair's waiting flows are posted while lanes can take them; with one lane per flow,
// every pair's waiting flows are retried, pairs in (a, b) order, while connections can be
// had. A post the NIC refuses and a completion with an error status are failures (counted;
// the first kMaxFailures are kept). Hosts are indices into the workload's host list; QPNs
// are the transport's (0 = none). The transport does the verbs calls: the scheduler only
// decides, so the same decisions, in the same order, give the same run.
// Units: bytes. Not thread-safe: the engine thread, inside the hosts' node calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <unordered_map>
#include <vector>

#include "fabric/workload/flow.h"
#include "fabric/workload/flow_generator.h"

namespace rocemu::workload {

/// The QPs under the scheduler: the fabric's RoCE hosts (fabric/workload_qp_plan.h), or a
/// fake in tests. Called from the scheduler's own calls, on the same thread.
class LaneTransport {
 public:
  virtual ~LaneTransport() = default;
  /// Posts flow `f` from host a to host b on the QP pair (src_qpn on a, dst_qpn on b):
  /// false if the NIC refused it.
  virtual bool post(const FlowSpec& f, uint32_t a, uint32_t b, uint32_t src_qpn,
                    uint32_t dst_qpn) noexcept = 0;
  /// One lane per flow: connects a new QP pair from a to b into src_qpn/dst_qpn; false if
  /// none can be had now (the flow then waits for a completion to free one).
  virtual bool connect(uint32_t a, uint32_t b, uint32_t& src_qpn, uint32_t& dst_qpn) noexcept = 0;
  /// One lane per flow: destroys the pair connect() made (its flow completed).
  virtual void disconnect(uint32_t a, uint32_t b, uint32_t src_qpn, uint32_t dst_qpn) noexcept = 0;
};

class LaneScheduler {
 public:
  static constexpr uint32_t kMaxOutstandingPerLane = 32;  // work requests posted per QP
  static constexpr size_t kMaxFailures = 64;

  struct Lane {
    uint32_t src_qpn = 0, dst_qpn = 0;  // 0: a free slot (one lane per flow)
    uint32_t outstanding = 0;           // posted, not completed
    uint64_t outstanding_bytes = 0;
  };

  /// For the workload's `hosts` (ids: node ids below `num_nodes`, as FlowSpec::src/dst
  /// carry). `transport` must outlive the scheduler. Setup time (allocates).
  LaneScheduler(const std::vector<HostSpec>& hosts, size_t num_nodes, bool lane_per_flow,
                LaneTransport& transport);

  /// The mesh: one more QP pair of (a, b), connected before the run. Setup time.
  void add_lane(uint32_t a, uint32_t b, uint32_t src_qpn, uint32_t dst_qpn);
  /// Flow `f` starts now: posted on a lane (through the transport), or queued behind the
  /// pair's waiting flows.
  void start(const FlowSpec& f) noexcept;
  /// The requester completion of flow `flow_id` with ibv_wc_status `status` (0: success):
  /// frees its lane and posts the waiting flows it can. True if it was a posted flow that
  /// finished successfully; false for an unknown id or an error status (a failure).
  bool on_completion(uint64_t flow_id, int status) noexcept;

  /// The lanes of the ordered pair (a, b) (none if it never had a lane or a flow).
  const std::vector<Lane>& lanes(uint32_t a, uint32_t b) const noexcept;
  /// Host pairs with lanes or flows so far (state is kept only for those: a permutation of
  /// 1,024 hosts has 1,024 of the 1,048,576 ordered pairs).
  size_t pairs_in_use() const noexcept { return pairs_.size(); }
  uint64_t started() const noexcept { return started_; }
  uint64_t posted() const noexcept { return posted_; }  // handed to the NIC
  uint64_t failed() const noexcept { return failed_; }
  uint64_t waiting() const noexcept { return waiting_; }                  // started, not posted
  uint64_t in_nic() const noexcept { return posted_flows_.size(); }       // posted, no completion
  uint64_t lanes_connected() const noexcept { return lanes_connected_; }  // one lane per flow
  /// The first failures (at most kMaxFailures), in the order they happened.
  const std::vector<FlowFailure>& failures() const noexcept { return failures_; }

 private:
  /// Flows started and not posted yet, oldest first; allocates only once a flow waits.
  struct Fifo {
    std::vector<FlowSpec> items;
    size_t head = 0;
    bool empty() const noexcept { return head == items.size(); }
    const FlowSpec& front() const noexcept { return items[head]; }
    void push_back(const FlowSpec& f) { items.push_back(f); }
    void pop_front() noexcept {
      if (++head == items.size()) {
        items.clear();
        head = 0;
      } else if (head >= 64 && 2 * head >= items.size()) {  // keep the dead prefix bounded
        items.erase(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(head));
        head = 0;
      }
    }
  };
  struct Pair {
    uint64_t index = 0;  // a * hosts + b
    std::vector<Lane> lanes;
    Fifo waiting;  // started, no lane free yet
  };
  struct Posted {
    uint32_t pair = 0, lane = 0;  // pair: the slot in pairs_
    uint64_t bytes = 0;
  };

  uint64_t pair_index(uint32_t a, uint32_t b) const noexcept {
    return uint64_t{a} * hosts_.size() + b;
  }
  /// The slot of pair (a, b) in pairs_, made on first use (may reallocate pairs_).
  uint32_t slot(uint32_t a, uint32_t b);
  void enqueue(Pair& p, const FlowSpec& f);
  void dequeue(Pair& p) noexcept;
  static int pick_lane(const Pair& p) noexcept;
  int open_lane(uint32_t a, uint32_t b, Pair& p) noexcept;
  void close_lane(uint32_t a, uint32_t b, Lane& l) noexcept;
  void retry_waiting() noexcept;
  void post(const FlowSpec& f, uint32_t a, uint32_t b, Pair& p, uint32_t lane) noexcept;
  void note_failure(uint64_t id, uint32_t a, uint32_t b, uint64_t bytes, int status) noexcept;

  std::vector<uint32_t> hosts_;        // host index -> node id
  std::vector<int32_t> host_of_node_;  // node id -> host index (-1: not a host)
  bool per_flow_;
  LaneTransport& transport_;
  std::vector<Pair> pairs_;                              // the pairs in use, in first-use order
  std::unordered_map<uint64_t, uint32_t> slot_of_pair_;  // a * hosts + b -> slot in pairs_
  std::set<uint64_t> waiting_pairs_;                   // a * hosts + b of pairs with waiting flows
  std::unordered_map<uint64_t, Posted> posted_flows_;  // by flow id
  std::vector<FlowFailure> failures_;                  // reserved kMaxFailures
  uint64_t started_ = 0, posted_ = 0, failed_ = 0, waiting_ = 0, lanes_connected_ = 0;
};

}  // namespace rocemu::workload
