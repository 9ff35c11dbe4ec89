// workload_fabric.cc — the workload's nodes and the wiring of its parts (see
// workload_fabric.h; transport mapping and FCT: workload_job.h).
#include "fabric/workload_fabric.h"

#include <algorithm>
#include <stdexcept>

#include "fabric/workload/workload_topology.h"

namespace rocemu::fabric {

workload::WorkloadConfig make_workload_config_of(const RunConfig& cfg) {
  workload::WorkloadParams p = *cfg.workload;
  p.cdf_file = resolve_beside(p.cdf_file, cfg.source);
  return workload::make_workload_config(p, workload::hosts_from_topology(cfg.topology.topology));
}

WorkloadFabric::WorkloadFabric(const RunConfig& cfg, const workload::WorkloadConfig& wcfg,
                               rte_mempool* pool, uint32_t qps_per_pair,
                               const WorkloadFabricOptions& opt)
    : per_flow_(cfg.workload_qp_per_flow),
      local_(opt.local_host),
      cfg_(cfg),
      wcfg_(wcfg),
      host_index_(workload::host_index_by_node(wcfg.hosts, cfg.topology.topology.nodes().size())),
      regions_(workload_region_bytes(wcfg), opt.sink, !opt.elide_payload),
      plan_(cfg, wcfg, hosts_, cc_of_, regions_, opt.local_host),
      lanes_(wcfg.hosts, cfg.topology.topology.nodes().size(), per_flow_, plan_),
      starts_(wcfg, cfg.seed, cfg.topology.topology.nodes().size(), opt.local_host),
      rec_(workload_size_bins(wcfg)),
      ideal_(
          workload::ideal_fct_table(cfg.topology.topology, wcfg.hosts, cfg.nic_params.mtu_bytes)) {
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
  if (local_ >= 0 && opt.elide_payload)
    throw std::invalid_argument(
        "workload fabric: a host process's frames cross a real wire: their payload is not elided");
  nic::NicParams nic_params = cfg.nic_params;
  nic_params.elide_payload = opt.elide_payload;
  const uint32_t lanes = std::max<uint32_t>(1, qps_per_pair);
  nodes_.resize(n);
  switches_.resize(n);
  hosts_.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (t.node(i).kind == NodeKind::kSwitch) {
      if (local_ >= 0) continue;  // the switch runs elsewhere (or a wire stands in for it)
      switches_[i] = std::make_unique<sw::SoftSwitch>(cfg.switch_params, t, i, pool, cfg.seed);
      nodes_[i] = switches_[i].get();
    } else {
      hosts_[i] = std::make_unique<nic::RoceHost>(nic_params, t, i, pool, cfg.seed);
      if (local_ < 0) nodes_[i] = hosts_[i].get();
    }
  }
  if (cfg.dcqcn_enabled) {
    std::vector<nic::RoceHost*> hosts(n);
    for (size_t i = 0; i < n; ++i)
      if (host_index_[i] >= 0 && is_local(static_cast<size_t>(host_index_[i])))
        hosts[i] = hosts_[i].get();
    // RP slots are indexed by QPN offset: each host creates 2 (hosts - 1) QPs (the mesh).
    const auto qps =
        per_flow_
            ? cfg.nic_params.max_qps
            : static_cast<uint32_t>(std::max<size_t>(16, 2 * (wcfg.hosts.size() - 1) * lanes));
    cc_ = install_dcqcn(cfg.dcqcn, t, hosts, qps);
    cc_of_.assign(n, nullptr);
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
      if (hosts[i]) cc_of_[i] = cc_[k++].get();
  }
  plan_.build(lanes_, lanes, per_flow_);
  if (local_ >= 0 && wcfg.params.op == workload::FlowOp::kSend) plan_.prepost_receives(lanes_);
  for (size_t h = 0; h < wcfg.hosts.size(); ++h) {
    if (!is_local(h)) continue;
    wrappers_.push_back(std::make_unique<WorkloadHostNode>(*this, *hosts_[wcfg.hosts[h].id],
                                                           static_cast<uint32_t>(h)));
    nodes_[wcfg.hosts[h].id] = wrappers_.back().get();
  }
}

WorkloadFabric::~WorkloadFabric() = default;

void WorkloadFabric::start_due(uint32_t h, TimeNs now) noexcept {
  const size_t hn = wcfg_.hosts.size();
  workload::FlowSpec f;
  while (starts_.pop_due(h, now, f)) {
    const auto a = static_cast<size_t>(host_index_[f.src]);
    const auto b = static_cast<size_t>(host_index_[f.dst]);
    rec_.on_start(f, workload::ideal_fct_ns(f.size_bytes, f.op, ideal_[a * hn + b]));
    lanes_.start(f);
  }
}

void WorkloadFabric::reap(uint32_t h, TimeNs now) noexcept {
  if (plan_.completions_waiting(h) == 0) return;  // most calls: no CQ to read
  plan_.drain_receives(h);
  ibv_wc wc[32];
  int got;
  while ((got = plan_.poll_completions(h, wc, 32)) > 0)
    for (int k = 0; k < got; ++k)
      if (lanes_.on_completion(wc[k].wr_id, wc[k].status)) rec_.on_finish(wc[k].wr_id, now);
}

void WorkloadFabric::sample_queues(TimeNs /*now*/) {
  // The egress queues' bytes straight from each switch's buffer (what a snapshot's
  // total_queue_bytes() sums), not a snapshot of every counter of every port.
  for (const auto& s : switches_) {
    if (!s) continue;
    for (uint16_t port = 0; port < s->num_ports(); ++port) {
      uint64_t bytes = 0;
      for (int prio = 0; prio < kNumPriorities; ++prio) bytes += s->queue_bytes(port, prio);
      rec_.stats().add_queue_sample(bytes);
    }
  }
}

WorkloadResult WorkloadFabric::result(const char* engine, TimeNs end) {
  WorkloadResult r;
  r.engine = engine;
  r.seed = cfg_.seed;
  r.pool_mbufs = cfg_.testbed.pool_mbufs;
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
      r.switch_alloc_failures += c.mbuf_alloc_failures;
    }
  }
  uint64_t cnps = 0;
  for (size_t i = 0; i < hosts_.size(); ++i) {
    if (!hosts_[i] || !is_local(static_cast<size_t>(host_index_[i]))) continue;
    const nic::NicCounters& c = hosts_[i]->counters();
    cnps += c.cnps_sent;
    r.retransmitted_packets += c.retransmitted_packets;
    r.timeouts += c.timeouts;
    r.nic_alloc_failures += c.tx_alloc_failures;
    for (int prio = 0; prio < kNumPriorities; ++prio) {
      r.pfc.nic_pauses_received += c.pfc_frames_received[prio];
      r.pfc.nic_storms += c.pfc_storms[prio];
      r.pfc.nic_paused_ns += hosts_[i]->paused_ns(static_cast<uint8_t>(prio), end);
    }
  }
  r.failures = lanes_.failures();
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
  r.qps_connected = lanes_.lanes_connected();
  for (size_t i = 0; i < hosts_.size(); ++i)
    if (hosts_[i] && host_index_[i] >= 0 && is_local(static_cast<size_t>(host_index_[i])))
      r.qps_live_at_end += hosts_[i]->live_qps();
  r.flows_generated = lanes_.started();
  r.flows_posted = lanes_.posted();
  r.flows_failed = lanes_.failed();
  r.all_finished = done() && lanes_.failed() == 0;
  return r;
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
