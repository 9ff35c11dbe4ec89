// workload_fabric.cc — the workload's nodes, its deterministic QP plan and the per-flow
// bookkeeping (see workload_fabric.h; transport mapping and FCT: workload_job.h).
#include "fabric/workload_fabric.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "fabric/region_iova.h"
#include "fabric/workload/workload_topology.h"

namespace rocemu::fabric {

namespace {
constexpr uint32_t kMaxOutstandingPerQp = 32;
constexpr size_t kMaxCqEntries = 8192;  // per CQ; 2 per host
}  // namespace

workload::WorkloadConfig make_workload_config_of(const RunConfig& cfg) {
  workload::WorkloadParams p = *cfg.workload;
  p.cdf_file = resolve_beside(p.cdf_file, cfg.source);
  return workload::make_workload_config(p, workload::hosts_from_topology(cfg.topology.topology));
}

workload::SizeBins workload_size_bins(const workload::WorkloadConfig& wcfg) {
  if (wcfg.cdf) return workload::SizeBins::from_quantiles(*wcfg.cdf);
  // Fixed sizes only: one bin edge per distinct size (incast, matrix).
  std::vector<uint64_t> edges;
  if (wcfg.params.incast) edges.push_back(wcfg.params.incast->size_bytes);
  if (wcfg.params.matrix) edges.push_back(wcfg.params.matrix->size_bytes);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  return workload::SizeBins::fixed(edges.empty() ? std::vector<uint64_t>{1} : edges);
}

uint64_t workload_region_bytes(const workload::WorkloadConfig& wcfg) {
  uint64_t largest = 1;
  if (wcfg.cdf) largest = static_cast<uint64_t>(std::ceil(wcfg.cdf->max_bytes())) + 1;
  if (wcfg.params.incast) largest = std::max(largest, wcfg.params.incast->size_bytes);
  if (wcfg.params.matrix) largest = std::max(largest, wcfg.params.matrix->size_bytes);
  return largest;
}

WorkloadFabric::WorkloadFabric(const RunConfig& cfg, const workload::WorkloadConfig& wcfg,
                               rte_mempool* pool, uint32_t qps_per_pair,
                               const WorkloadFabricOptions& opt)
    : lanes_(std::max<uint32_t>(1, qps_per_pair)),
      per_flow_(cfg.workload_qp_per_flow),
      local_(opt.local_host),
      cfg_(cfg),
      wcfg_(wcfg),
      starts_(wcfg, cfg.seed, cfg.topology.topology.nodes().size(), opt.local_host),
      rec_(workload_size_bins(wcfg)),
      regions_(workload_region_bytes(wcfg), opt.sink) {
  const Topology& t = cfg.topology.topology;
  const size_t n = t.nodes().size();
  if (local_ >= static_cast<int32_t>(wcfg.hosts.size()))
    throw std::invalid_argument("workload fabric: local host index out of range");
  if (local_ >= 0 && opt.sink == nullptr)
    throw std::invalid_argument("workload fabric: a local host needs the shared sink region");
  if (local_ >= 0 && per_flow_)
    throw std::invalid_argument(
        "[workload] qp_per_flow runs in one process (rocemu-sim, rocemu-testbed): host processes "
        "connect a fixed QP plan; use qps_per_pair");
  nodes_.resize(n);
  switches_.resize(n);
  hosts_.resize(n);
  host_index_.assign(n, -1);
  for (uint32_t i = 0; i < n; ++i) {
    if (t.node(i).kind == NodeKind::kSwitch) {
      if (local_ >= 0) continue;  // the switch runs elsewhere (or a wire stands in for it)
      switches_[i] = std::make_unique<sw::SoftSwitch>(cfg.switch_params, t, i, pool, cfg.seed);
      nodes_[i] = switches_[i].get();
    } else {
      hosts_[i] = std::make_unique<nic::RoceHost>(cfg.nic_params, t, i, pool, cfg.seed);
      if (local_ < 0) nodes_[i] = hosts_[i].get();
    }
  }
  for (size_t h = 0; h < wcfg.hosts.size(); ++h)
    host_index_[wcfg.hosts[h].id] = static_cast<int32_t>(h);
  if (cfg.dcqcn_enabled) {
    std::vector<nic::RoceHost*> hosts(n);
    for (size_t i = 0; i < n; ++i)
      if (host_index_[i] >= 0 && is_local(static_cast<size_t>(host_index_[i])))
        hosts[i] = hosts_[i].get();
    // RP slots are indexed by QPN offset: each host creates 2 (hosts - 1) QPs (the mesh).
    const auto qps =
        per_flow_
            ? cfg.nic_params.max_qps
            : static_cast<uint32_t>(std::max<size_t>(16, 2 * (wcfg.hosts.size() - 1) * lanes_));
    cc_ = install_dcqcn(cfg.dcqcn, t, hosts, qps);
    cc_of_.assign(n, nullptr);
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
      if (hosts[i]) cc_of_[i] = cc_[k++].get();
  }
  failures_.reserve(kMaxFailures);
  connect_mesh();
  if (local_ >= 0 && wcfg.params.op == workload::FlowOp::kSend) prepost_receives();
  for (size_t h = 0; h < wcfg.hosts.size(); ++h) {
    if (!is_local(h)) continue;
    wrappers_.push_back(std::make_unique<WorkloadHostNode>(*this, *hosts_[wcfg.hosts[h].id],
                                                           static_cast<uint32_t>(h)));
    nodes_[wcfg.hosts[h].id] = wrappers_.back().get();
  }
}

WorkloadFabric::~WorkloadFabric() = default;

void WorkloadFabric::start_due(uint32_t h, TimeNs now) noexcept {
  workload::FlowSpec f;
  while (starts_.pop_due(h, now, f)) start_flow(f);
}

void WorkloadFabric::reap(uint32_t h, TimeNs now) noexcept {
  ibv_wc wc[32];
  nic::RoceHost& host = *hosts_[wcfg_.hosts[h].id];
  int got;
  const bool repost = local_ >= 0 && wcfg_.params.op == workload::FlowOp::kSend;
  while ((got = host.poll_cq(side_[h].recv_cq, 32, wc)) > 0) {
    if (!repost) continue;
    for (int k = 0; k < got; ++k)
      if (wc[k].status == IBV_WC_SUCCESS) repost_receive(h, wc[k].qp_num);
  }
  while ((got = host.poll_cq(side_[h].send_cq, 32, wc)) > 0) {
    for (int k = 0; k < got; ++k) {
      auto it = posted_flows_.find(wc[k].wr_id);
      if (it == posted_flows_.end()) continue;
      const Posted done = it->second;
      posted_flows_.erase(it);
      const uint32_t a = done.pair / static_cast<uint32_t>(side_.size());
      const uint32_t b = done.pair % static_cast<uint32_t>(side_.size());
      if (wc[k].status == IBV_WC_SUCCESS) {
        rec_.on_finish(wc[k].wr_id, now);
      } else {
        ++failed_;
        note_failure(wc[k].wr_id, a, b, done.bytes, wc[k].status);
      }
      Pair& p = pairs_[done.pair];
      Lane& l = p.lanes[done.lane];
      --l.outstanding;
      l.outstanding_bytes -= done.bytes;
      if (per_flow_) {
        release_flow_lane(a, b, l);
        if (waiting_ > 0) retry_waiting();
        continue;
      }
      int lane;
      while (!p.waiting.empty() && (lane = pick_lane(p)) >= 0) {
        const workload::FlowSpec f = p.waiting.front();
        p.waiting.pop_front();
        --waiting_;
        post(f, a, b, p, static_cast<uint32_t>(lane));
      }
    }
  }
}

void WorkloadFabric::sample_queues(TimeNs now) {
  for (const auto& s : switches_) {
    if (!s) continue;
    const SwitchSnapshot snap = s->snapshot(now);
    for (const PortCounters& c : snap.ports) rec_.stats().add_queue_sample(c.total_queue_bytes());
  }
}

WorkloadResult WorkloadFabric::result(const char* engine, TimeNs end) {
  WorkloadResult r;
  r.engine = engine;
  r.seed = cfg_.seed;
  r.end_ns = end;
  for (uint32_t i = 0; i < switches_.size(); ++i) {
    if (!switches_[i]) continue;
    const SwitchSnapshot snap = switches_[i]->snapshot(end);
    for (const PortCounters& c : snap.ports) {
      for (auto v : c.pfc_pauses_sent) r.summary.pfc_pauses += v;
      for (auto v : c.pfc_pauses_received) r.pfc.switch_pauses_received += v;
      for (auto v : c.pfc_storms) r.pfc.switch_storms += v;
      r.switch_drops += c.total_drops();
      r.ecn_marked_packets += c.ecn_marked_packets;
    }
  }
  uint64_t cnps = 0;
  for (size_t i = 0; i < hosts_.size(); ++i) {
    if (!hosts_[i] || !is_local(static_cast<size_t>(host_index_[i]))) continue;
    const nic::NicCounters& c = hosts_[i]->counters();
    cnps += c.cnps_sent;
    r.retransmitted_packets += c.retransmitted_packets;
    r.timeouts += c.timeouts;
    for (int prio = 0; prio < kNumPriorities; ++prio) {
      r.pfc.nic_pauses_received += c.pfc_frames_received[prio];
      r.pfc.nic_storms += c.pfc_storms[prio];
      r.pfc.nic_paused_ns += hosts_[i]->paused_ns(static_cast<uint8_t>(prio), end);
    }
  }
  r.failures = failures_;
  for (FlowFailure& ff : r.failures) {
    ff.src = cfg_.topology.topology.node(ff.flow.src).name;
    ff.dst = cfg_.topology.topology.node(ff.flow.dst).name;
  }
  std::sort(r.failures.begin(), r.failures.end(),
            [](const FlowFailure& x, const FlowFailure& y) { return x.flow.id < y.flow.id; });
  rec_.stats().add_cnps(cnps);
  rec_.stats().add_pfc_pauses(r.summary.pfc_pauses);
  r.summary = rec_.summarize();
  r.records = rec_.stats().records();
  std::sort(r.records.begin(), r.records.end(),
            [](const workload::FlowRecord& x, const workload::FlowRecord& y) {
              return x.flow.id < y.flow.id;
            });
  r.qp_per_flow = per_flow_;
  r.qps_connected = qps_connected_;
  for (size_t i = 0; i < hosts_.size(); ++i)
    if (hosts_[i] && host_index_[i] >= 0 && is_local(static_cast<size_t>(host_index_[i])))
      r.qps_live_at_end += hosts_[i]->live_qps();
  r.flows_generated = started_;
  r.flows_posted = posted_;
  r.flows_failed = failed_;
  r.all_finished = done() && failed_ == 0;
  return r;
}

/// The lane with the fewest outstanding bytes that can take another work request (ties:
/// the lowest index), or -1.
int WorkloadFabric::pick_lane(const Pair& p) noexcept {
  int best = -1;
  for (size_t i = 0; i < p.lanes.size(); ++i) {
    const Lane& l = p.lanes[i];
    if (l.outstanding >= kMaxOutstandingPerQp) continue;
    if (best < 0 || l.outstanding_bytes < p.lanes[static_cast<size_t>(best)].outstanding_bytes)
      best = static_cast<int>(i);
  }
  return best;
}

// The plan. Every process of a run executes exactly this sequence of verbs calls on every
// host (replicas included): any change of order here changes QPNs/PSNs/rkeys consistently
// in all processes of one build, but processes of different builds must not be mixed.
void WorkloadFabric::connect_mesh() {
  const size_t hn = wcfg_.hosts.size();
  const uint32_t max_send = kMaxOutstandingPerQp;
  side_.resize(hn);
  for (size_t h = 0; h < hn; ++h) {
    nic::RoceHost& host = *hosts_[wcfg_.hosts[h].id];
    HostSide& s = side_[h];
    s.pd = host.alloc_pd();
    // Every QP's outstanding work fits, up to kMaxCqEntries: the CQs are reaped after every
    // rx burst and timer of the host, so far fewer completions wait at once; without the cap
    // a 1,024-host fabric spent 6.4 GB on CQs (2 x 1,024 hosts x 65,536 x 48 bytes).
    const auto cqe = static_cast<uint32_t>(std::min<size_t>(2 * hn * max_send, kMaxCqEntries));
    s.send_cq = host.create_cq(cqe);
    s.recv_cq = host.create_cq(cqe);
    s.src = host.reg_mr_iova(s.pd, regions_.source(), regions_.bytes(), kSourceRegionIova,
                             IBV_ACCESS_LOCAL_WRITE);
    s.dst = host.reg_mr_iova(s.pd, regions_.sink(), regions_.bytes(), kSinkRegionIova,
                             IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (s.src.lkey == 0 || s.dst.lkey == 0) throw std::runtime_error("workload job: reg_mr failed");
  }
  pairs_.resize(hn * hn);
  nic::ConnectOptions opt;
  opt.path_mtu = nic::mtu_enum(cfg_.nic_params.mtu_bytes);
  const Topology& t = cfg_.topology.topology;
  for (size_t a = 0; a < hn; ++a) {
    for (size_t b = 0; b < hn; ++b) {
      if (a == b) continue;
      Pair& p = pairs_[pair_index(static_cast<uint32_t>(a), static_cast<uint32_t>(b))];
      p.ideal = workload::ideal_fct_params(t, wcfg_.hosts[a].id, wcfg_.hosts[b].id,
                                           cfg_.nic_params.mtu_bytes);
      if (per_flow_) continue;  // QPs are connected per flow (flow_lane)
      p.lanes.resize(lanes_);
      nic::RoceHost& ha = *hosts_[wcfg_.hosts[a].id];
      nic::RoceHost& hb = *hosts_[wcfg_.hosts[b].id];
      const nic::QpInitAttr qa = qp_attr(a, max_send), qb = qp_attr(b, max_send);
      for (Lane& l : p.lanes) {
        l.src_qpn = ha.create_qp(qa);
        l.dst_qpn = hb.create_qp(qb);
        if (l.src_qpn == 0 || l.dst_qpn == 0)
          throw std::runtime_error(
              "workload job: create_qp failed (" + std::to_string(lanes_) +
              " QPs per ordered host pair need " + std::to_string(2 * (hn - 1) * lanes_) +
              " QPs per host; [nic] max_qps = " + std::to_string(cfg_.nic_params.max_qps) + ")");
        if (nic::connect_rc(ha, l.src_qpn, hb.local_info(l.dst_qpn), opt) != 0 ||
            nic::connect_rc(hb, l.dst_qpn, ha.local_info(l.src_qpn), opt) != 0)
          throw std::runtime_error("workload job: connecting an RC QP failed");
      }
    }
  }
}

nic::QpInitAttr WorkloadFabric::qp_attr(size_t h, uint32_t max_wr) const noexcept {
  nic::QpInitAttr q;
  q.pd = side_[h].pd;
  q.send_cq = side_[h].send_cq;
  q.recv_cq = side_[h].recv_cq;
  q.max_send_wr = q.max_recv_wr = max_wr;
  return q;
}

int WorkloadFabric::flow_lane(uint32_t a, uint32_t b, Pair& p) noexcept {
  nic::RoceHost& ha = *hosts_[wcfg_.hosts[a].id];
  nic::RoceHost& hb = *hosts_[wcfg_.hosts[b].id];
  const nic::QpInitAttr qa = qp_attr(a, 2), qb = qp_attr(b, 2);  // one flow each
  const uint32_t src = ha.create_qp(qa);
  const uint32_t dst = src ? hb.create_qp(qb) : 0;
  nic::ConnectOptions opt;
  opt.path_mtu = nic::mtu_enum(cfg_.nic_params.mtu_bytes);
  if (src == 0 || dst == 0 || nic::connect_rc(ha, src, hb.local_info(dst), opt) != 0 ||
      nic::connect_rc(hb, dst, ha.local_info(src), opt) != 0) {
    if (src) (void)ha.destroy_qp(src);
    if (dst) (void)hb.destroy_qp(dst);
    return -1;  // [nic] max_qps QPs live on one of the hosts: the flow waits
  }
  ++qps_connected_;
  size_t i = 0;
  while (i < p.lanes.size() && p.lanes[i].src_qpn != 0) ++i;
  if (i == p.lanes.size()) p.lanes.emplace_back();
  p.lanes[i] = Lane{src, dst, 0, 0};
  return static_cast<int>(i);
}

void WorkloadFabric::release_flow_lane(uint32_t a, uint32_t b, Lane& l) noexcept {
  const uint32_t ha = wcfg_.hosts[a].id, hb = wcfg_.hosts[b].id;
  // The next QP with this number starts with fresh DCQCN state, as a new flow's QP does.
  if (!cc_of_.empty() && cc_of_[ha]) cc_of_[ha]->reset_qp(l.src_qpn);
  if (!cc_of_.empty() && cc_of_[hb]) cc_of_[hb]->reset_qp(l.dst_qpn);
  (void)hosts_[ha]->destroy_qp(l.src_qpn);
  (void)hosts_[hb]->destroy_qp(l.dst_qpn);
  l = Lane{};
}

void WorkloadFabric::retry_waiting() noexcept {
  const auto hn = static_cast<uint32_t>(wcfg_.hosts.size());
  for (uint32_t a = 0; a < hn && waiting_ > 0; ++a) {
    for (uint32_t b = 0; b < hn && waiting_ > 0; ++b) {
      Pair& p = pairs_[pair_index(a, b)];
      int lane;
      while (!p.waiting.empty() && (lane = flow_lane(a, b, p)) >= 0) {
        const workload::FlowSpec f = p.waiting.front();
        p.waiting.pop_front();
        --waiting_;
        post(f, a, b, p, static_cast<uint32_t>(lane));
      }
    }
  }
}

// Local mode, SEND flows: the receiver cannot know which lane a sender picks, so every
// responder QP of the local host keeps a full receive queue of whole-sink receives.
void WorkloadFabric::prepost_receives() {
  const auto me = static_cast<uint32_t>(local_);
  for (size_t a = 0; a < wcfg_.hosts.size(); ++a) {
    if (a == me) continue;
    for (const Lane& l : pairs_[pair_index(static_cast<uint32_t>(a), me)].lanes)
      for (uint32_t k = 0; k < kMaxOutstandingPerQp; ++k) repost_receive(me, l.dst_qpn);
  }
}

void WorkloadFabric::repost_receive(uint32_t h, uint32_t qpn) noexcept {
  nic::RoceHost& host = *hosts_[wcfg_.hosts[h].id];
  ibv_sge sge{side_[h].dst.addr, static_cast<uint32_t>(regions_.bytes()), side_[h].dst.lkey};
  ibv_recv_wr wr{};
  wr.wr_id = qpn;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  const ibv_recv_wr* bad = nullptr;
  (void)host.post_recv(qpn, &wr, &bad);
}

void WorkloadFabric::start_flow(const workload::FlowSpec& f) noexcept {
  const uint32_t a = static_cast<uint32_t>(host_index_[f.src]);
  const uint32_t b = static_cast<uint32_t>(host_index_[f.dst]);
  Pair& p = pairs_[pair_index(a, b)];
  rec_.on_start(f, workload::ideal_fct_ns(f.size_bytes, f.op, p.ideal));
  const int lane = !p.waiting.empty() ? -1 : per_flow_ ? flow_lane(a, b, p) : pick_lane(p);
  if (lane >= 0) {
    post(f, a, b, p, static_cast<uint32_t>(lane));
  } else {
    p.waiting.push_back(f);
    ++waiting_;
  }
  ++started_;
}

void WorkloadFabric::note_failure(uint64_t id, uint32_t a, uint32_t b, uint64_t bytes,
                                  int status) noexcept {
  if (failures_.size() >= kMaxFailures) return;  // reserved: no allocation here
  FlowFailure ff;
  ff.flow.id = id;
  ff.flow.src = wcfg_.hosts[a].id;
  ff.flow.dst = wcfg_.hosts[b].id;
  ff.flow.size_bytes = bytes;
  ff.status = status;
  failures_.push_back(std::move(ff));
}

void WorkloadFabric::post(const workload::FlowSpec& f, uint32_t a, uint32_t b, Pair& p,
                          uint32_t lane) noexcept {
  Lane& l = p.lanes[lane];
  nic::RoceHost& ha = *hosts_[wcfg_.hosts[a].id];
  const auto len = static_cast<uint32_t>(f.size_bytes);
  if (f.op == workload::FlowOp::kSend && local_ < 0) {
    // In-process: the receive is posted at the destination at the same instant. A per-host
    // process keeps receives posted on its responder QPs instead (prepost_receives).
    nic::RoceHost& hb = *hosts_[wcfg_.hosts[b].id];
    ibv_sge rsge{side_[b].dst.addr, static_cast<uint32_t>(regions_.bytes()), side_[b].dst.lkey};
    ibv_recv_wr rwr{};
    rwr.wr_id = f.id;
    rwr.sg_list = &rsge;
    rwr.num_sge = 1;
    const ibv_recv_wr* rbad = nullptr;
    if (hb.post_recv(l.dst_qpn, &rwr, &rbad) != 0) {
      ++failed_;
      note_failure(f.id, a, b, f.size_bytes, -1);
      return;
    }
  }
  ibv_sge sge{side_[a].src.addr, len, side_[a].src.lkey};
  ibv_send_wr wr{};
  wr.wr_id = f.id;
  wr.opcode = f.op == workload::FlowOp::kSend ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = side_[b].dst.addr;
  wr.wr.rdma.rkey = side_[b].dst.rkey;
  const ibv_send_wr* bad = nullptr;
  if (ha.post_send(l.src_qpn, &wr, &bad) != 0) {
    ++failed_;  // stays in flight in the recorder: reported as unfinished
    note_failure(f.id, a, b, f.size_bytes, -1);
    return;
  }
  ++l.outstanding;
  l.outstanding_bytes += f.size_bytes;
  ++posted_;
  posted_flows_.emplace(f.id, Posted{static_cast<uint32_t>(pair_index(a, b)), lane, f.size_bytes});
}

void WorkloadHostNode::rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept {
  host_.rx(port, pkts, n, now);
  f_.reap(index_, now);
}

TimeNs WorkloadHostNode::next_deadline() const noexcept {
  return std::min(host_.next_deadline(), f_.next_start(index_));
}

void WorkloadHostNode::on_timer(TimeNs now) noexcept {
  f_.start_due(index_, now);
  host_.on_timer(now);
  f_.reap(index_, now);
}

}  // namespace rocemu::fabric
