// start_queue.h — a workload's flows between the generator and their start: taken from the
// WorkloadGenerator one lookahead ahead of engine time and held in a FIFO per host until
// their start time comes.
//
// The generator counts time from the workload's time 0; the first pull() fixes engine time
// `now` as that origin and every start_ns handed out is shifted by it (in virtual time the
// first pull is at 0; in real time it is the instant the run starts). pull() takes every
// flow starting before now + lookahead, in generator order; a run that drives one host
// (local_host >= 0, a per-host process) keeps only that host's flows and drops the others'.
// Hosts are indices into the workload's host list. Units: ns. Not thread-safe: the engine
// thread (pull from the periodic callback, pop_due inside the host's node call).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "common/time_ns.h"
#include "fabric/workload/flow.h"
#include "fabric/workload/flow_generator.h"

namespace rocemu::workload {

class StartQueue {
 public:
  /// The flows of `cfg` (which must outlive the queue), streams seeded from `run_seed`; the
  /// hosts' ids are node ids below `num_nodes`. Setup time (allocates).
  StartQueue(const WorkloadConfig& cfg, uint64_t run_seed, size_t num_nodes,
             int32_t local_host = -1);

  /// Moves every flow starting before now + lookahead_ns from the generator into its source
  /// host's FIFO (allocates as the FIFOs grow). The first call fixes the time origin at now.
  void pull(TimeNs now, TimeNs lookahead_ns);
  /// Start time of host h's next pulled flow (kNever if none is waiting to start).
  TimeNs next_start(uint32_t h) const noexcept { return head_ns_[h]; }
  /// Takes host h's next flow into `out` if it starts at or before `now`.
  bool pop_due(uint32_t h, TimeNs now, FlowSpec& out) noexcept;

  /// True once the generator has no flow left (all pulled).
  bool exhausted() const noexcept { return gen_.next_deadline() == kNever; }
  /// Start time (engine time) of the workload's last flow, any host; kNever until exhausted.
  TimeNs last_start_ns() const noexcept { return exhausted() ? last_start_ns_ : kNever; }
  /// Flows kept so far (the local host's only, with local_host >= 0).
  uint64_t pulled() const noexcept { return pulled_; }

 private:
  WorkloadGenerator gen_;
  std::vector<int32_t> host_of_node_;      // node id -> host index (-1: not a host)
  std::vector<std::deque<FlowSpec>> due_;  // per host: pulled, not yet started
  // Per host: the start of due_'s front (kNever if empty). Asked after every node call of a
  // host; dense, so it does not read a deque (a cache miss each at 1,024 hosts).
  std::vector<TimeNs> head_ns_;
  int32_t local_;
  TimeNs origin_ns_ = -1;  // engine time of workload time 0 (set by the first pull)
  TimeNs last_start_ns_ = kNever;
  uint64_t pulled_ = 0;
};

}  // namespace rocemu::workload
