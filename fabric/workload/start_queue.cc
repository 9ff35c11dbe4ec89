// start_queue.cc — generator flows in per-host FIFOs until they start (see start_queue.h).
#include "fabric/workload/start_queue.h"

#include "fabric/workload/workload_topology.h"

namespace rocemu::workload {

StartQueue::StartQueue(const WorkloadConfig& cfg, uint64_t run_seed, size_t num_nodes,
                       int32_t local_host)
    : gen_(cfg, run_seed),
      host_of_node_(host_index_by_node(cfg.hosts, num_nodes)),
      due_(cfg.hosts.size()),
      head_ns_(cfg.hosts.size(), kNever),
      local_(local_host) {}

void StartQueue::pull(TimeNs now, TimeNs lookahead_ns) {
  if (origin_ns_ < 0) origin_ns_ = now;
  FlowSpec f;
  while (gen_.next_deadline() != kNever && gen_.next_deadline() + origin_ns_ < now + lookahead_ns &&
         gen_.next(f)) {
    f.start_ns += origin_ns_;
    last_start_ns_ = f.start_ns;
    const int32_t h = host_of_node_[f.src];
    if (local_ >= 0 && h != local_) continue;
    auto& q = due_[static_cast<size_t>(h)];
    if (q.empty()) head_ns_[static_cast<size_t>(h)] = f.start_ns;
    q.push_back(f);
    ++pulled_;
  }
}

bool StartQueue::pop_due(uint32_t h, TimeNs now, FlowSpec& out) noexcept {
  auto& q = due_[h];
  if (q.empty() || q.front().start_ns > now) return false;
  out = q.front();
  q.pop_front();
  head_ns_[h] = q.empty() ? kNever : q.front().start_ns;
  return true;
}

}  // namespace rocemu::workload
