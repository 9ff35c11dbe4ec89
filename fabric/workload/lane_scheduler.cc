// lane_scheduler.cc — flows onto the lanes of their host pair (see lane_scheduler.h).
#include "fabric/workload/lane_scheduler.h"

#include <utility>

#include "fabric/workload/workload_topology.h"

namespace rocemu::workload {

LaneScheduler::LaneScheduler(const std::vector<HostSpec>& hosts, size_t num_nodes,
                             bool lane_per_flow, LaneTransport& transport)
    : host_of_node_(host_index_by_node(hosts, num_nodes)),
      per_flow_(lane_per_flow),
      transport_(transport) {
  for (const HostSpec& h : hosts) hosts_.push_back(h.id);
  failures_.reserve(kMaxFailures);
}

const std::vector<LaneScheduler::Lane>& LaneScheduler::lanes(uint32_t a,
                                                             uint32_t b) const noexcept {
  static const std::vector<Lane> kNone;
  const auto it = slot_of_pair_.find(pair_index(a, b));
  return it == slot_of_pair_.end() ? kNone : pairs_[it->second].lanes;
}

uint32_t LaneScheduler::slot(uint32_t a, uint32_t b) {
  const uint64_t index = pair_index(a, b);
  const auto [it, made] = slot_of_pair_.try_emplace(index, static_cast<uint32_t>(pairs_.size()));
  if (made) pairs_.push_back(Pair{index, {}, {}});
  return it->second;
}

void LaneScheduler::enqueue(Pair& p, const FlowSpec& f) {
  if (p.waiting.empty()) waiting_pairs_.insert(p.index);
  p.waiting.push_back(f);
  ++waiting_;
}

void LaneScheduler::dequeue(Pair& p) noexcept {
  p.waiting.pop_front();
  --waiting_;
  if (p.waiting.empty()) waiting_pairs_.erase(p.index);
}

void LaneScheduler::add_lane(uint32_t a, uint32_t b, uint32_t src_qpn, uint32_t dst_qpn) {
  pairs_[slot(a, b)].lanes.push_back(Lane{src_qpn, dst_qpn, 0, 0});
}

void LaneScheduler::start(const FlowSpec& f) noexcept {
  const auto a = static_cast<uint32_t>(host_of_node_[f.src]);
  const auto b = static_cast<uint32_t>(host_of_node_[f.dst]);
  Pair& p = pairs_[slot(a, b)];
  const int lane = !p.waiting.empty() ? -1 : per_flow_ ? open_lane(a, b, p) : pick_lane(p);
  if (lane >= 0) {
    post(f, a, b, p, static_cast<uint32_t>(lane));
  } else {
    enqueue(p, f);
  }
  ++started_;
}

bool LaneScheduler::on_completion(uint64_t flow_id, int status) noexcept {
  auto it = posted_flows_.find(flow_id);
  if (it == posted_flows_.end()) return false;
  const Posted done = it->second;
  posted_flows_.erase(it);
  Pair& p = pairs_[done.pair];
  const auto a = static_cast<uint32_t>(p.index / hosts_.size());
  const auto b = static_cast<uint32_t>(p.index % hosts_.size());
  if (status != 0) {
    ++failed_;
    note_failure(flow_id, a, b, done.bytes, status);
  }
  Lane& l = p.lanes[done.lane];
  --l.outstanding;
  l.outstanding_bytes -= done.bytes;
  if (per_flow_) {
    close_lane(a, b, l);
    if (waiting_ > 0) retry_waiting();
    return status == 0;
  }
  int lane;
  while (!p.waiting.empty() && (lane = pick_lane(p)) >= 0) {
    const FlowSpec f = p.waiting.front();
    dequeue(p);
    post(f, a, b, p, static_cast<uint32_t>(lane));
  }
  return status == 0;
}

/// The lane with the fewest outstanding bytes that can take another work request (ties:
/// the lowest index), or -1.
int LaneScheduler::pick_lane(const Pair& p) noexcept {
  int best = -1;
  for (size_t i = 0; i < p.lanes.size(); ++i) {
    const Lane& l = p.lanes[i];
    if (l.outstanding >= kMaxOutstandingPerLane) continue;
    if (best < 0 || l.outstanding_bytes < p.lanes[static_cast<size_t>(best)].outstanding_bytes)
      best = static_cast<int>(i);
  }
  return best;
}

int LaneScheduler::open_lane(uint32_t a, uint32_t b, Pair& p) noexcept {
  uint32_t src = 0, dst = 0;
  if (!transport_.connect(a, b, src, dst)) return -1;
  ++lanes_connected_;
  size_t i = 0;
  while (i < p.lanes.size() && p.lanes[i].src_qpn != 0) ++i;
  if (i == p.lanes.size()) p.lanes.emplace_back();
  p.lanes[i] = Lane{src, dst, 0, 0};
  return static_cast<int>(i);
}

void LaneScheduler::close_lane(uint32_t a, uint32_t b, Lane& l) noexcept {
  transport_.disconnect(a, b, l.src_qpn, l.dst_qpn);
  l = Lane{};
}

void LaneScheduler::retry_waiting() noexcept {
  // The pairs with waiting flows in (a, b) order; a pair leaves the set when its last flow
  // is posted, so step past it before that.
  for (auto it = waiting_pairs_.begin(); it != waiting_pairs_.end() && waiting_ > 0;) {
    const uint64_t index = *it++;
    Pair& p = pairs_[slot_of_pair_.find(index)->second];
    const auto a = static_cast<uint32_t>(index / hosts_.size());
    const auto b = static_cast<uint32_t>(index % hosts_.size());
    int lane;
    while (!p.waiting.empty() && (lane = open_lane(a, b, p)) >= 0) {
      const FlowSpec f = p.waiting.front();
      dequeue(p);
      post(f, a, b, p, static_cast<uint32_t>(lane));
    }
  }
}

void LaneScheduler::post(const FlowSpec& f, uint32_t a, uint32_t b, Pair& p,
                         uint32_t lane) noexcept {
  Lane& l = p.lanes[lane];
  if (!transport_.post(f, a, b, l.src_qpn, l.dst_qpn)) {
    ++failed_;  // the flow stays in flight in the FCT recorder: reported as unfinished
    note_failure(f.id, a, b, f.size_bytes, -1);
    return;
  }
  ++l.outstanding;
  l.outstanding_bytes += f.size_bytes;
  ++posted_;
  posted_flows_.emplace(f.id,
                        Posted{static_cast<uint32_t>(&p - pairs_.data()), lane, f.size_bytes});
}

void LaneScheduler::note_failure(uint64_t id, uint32_t a, uint32_t b, uint64_t bytes,
                                 int status) noexcept {
  if (failures_.size() >= kMaxFailures) return;  // reserved: no allocation here
  FlowFailure ff;
  ff.flow.id = id;
  ff.flow.src = hosts_[a];
  ff.flow.dst = hosts_[b];
  ff.flow.size_bytes = bytes;
  ff.status = status;
  failures_.push_back(std::move(ff));
}

}  // namespace rocemu::workload
