// workload_job.cc — builds the nodes of a run (SoftSwitch per switch, RoceHost per host),
// one RC QP per ordered host pair, and drives the workload. Each RoceHost is attached to the
// engine through a WorkloadHostNode that forwards every Node call and, in the same call,
// posts the host's flows whose start time has come (its next_deadline() includes the next
// start) and reaps its completions (so a flow's finish is the engine time of the rx that
// completed it, exact in virtual time). A periodic callback every queue_sample_ns pulls
// flows from the generator into per-host FIFOs one lookahead ahead, samples switch queues
// and prints progress. Transport mapping and FCT definition: workload_job.h.
#include "fabric/workload_job.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "fabric/cc/dcqcn_hooks.h"
#include "fabric/realtime_engine.h"
#include "fabric/virtual_engine.h"
#include "fabric/workload/flow_generator.h"
#include "fabric/workload/progress.h"
#include "fabric/workload/workload_topology.h"
#include "nic/roce_host.h"
#include "switchsw/soft_switch.h"

namespace rocemu::fabric {

namespace {

constexpr uint32_t kMaxOutstandingPerQp = 32;
constexpr size_t kDueBatch = 64;

/// cdf_file relative to the working directory, else to the run file's directory.
workload::WorkloadConfig make_config(const RunConfig& cfg) {
  workload::WorkloadParams p = *cfg.workload;
  namespace fs = std::filesystem;
  if (!p.cdf_file.empty() && !fs::exists(p.cdf_file) && fs::path(p.cdf_file).is_relative()) {
    const fs::path beside = fs::path(cfg.source).parent_path() / p.cdf_file;
    if (fs::exists(beside)) p.cdf_file = beside.string();
  }
  return workload::make_workload_config(p, workload::hosts_from_topology(cfg.topology.topology));
}

class WorkloadFabric;

/// A RoceHost plus its part of the workload, as the engine sees it (see the file comment).
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

/// The nodes, the QP mesh and the job's state.
class WorkloadFabric {
 public:
  WorkloadFabric(const RunConfig& cfg, const workload::WorkloadConfig& wcfg, rte_mempool* pool,
                 uint32_t qps_per_pair)
      : lanes_(std::max<uint32_t>(1, qps_per_pair)),
        cfg_(cfg),
        wcfg_(wcfg),
        gen_(wcfg, cfg.seed),
        rec_(wcfg.cdf ? workload::SizeBins::from_quantiles(*wcfg.cdf)
                      : workload::SizeBins::fixed({wcfg.params.incast ? wcfg.params.incast->size_bytes : 1})) {
    const Topology& t = cfg.topology.topology;
    const size_t n = t.nodes().size();
    nodes_.resize(n);
    switches_.resize(n);
    hosts_.resize(n);
    host_index_.assign(n, -1);
    for (uint32_t i = 0; i < n; ++i) {
      if (t.node(i).kind == NodeKind::kSwitch) {
        switches_[i] = std::make_unique<sw::SoftSwitch>(cfg.switch_params, t, i, pool, cfg.seed);
        nodes_[i] = switches_[i].get();
      } else {
        hosts_[i] = std::make_unique<nic::RoceHost>(cfg.nic_params, t, i, pool, cfg.seed);
        nodes_[i] = hosts_[i].get();
      }
    }
    for (size_t h = 0; h < wcfg.hosts.size(); ++h) host_index_[wcfg.hosts[h].id] = static_cast<int32_t>(h);
    if (cfg.dcqcn_enabled) {
      std::vector<nic::RoceHost*> hosts(n);
      for (size_t i = 0; i < n; ++i) hosts[i] = hosts_[i].get();
      // RP slots are indexed by QPN offset: each host creates 2 (hosts - 1) QPs (the mesh).
      const auto qps = static_cast<uint32_t>(std::max<size_t>(16, 2 * (wcfg.hosts.size() - 1) * lanes_));
      cc_ = install_dcqcn(cfg.dcqcn, t, hosts, qps);
    }
    uint64_t largest = 1;
    if (wcfg.cdf) largest = static_cast<uint64_t>(std::ceil(wcfg.cdf->max_bytes())) + 1;
    if (wcfg.params.incast) largest = std::max(largest, wcfg.params.incast->size_bytes);
    src_buf_.assign(largest, 0x5a);
    dst_buf_.assign(largest, 0);
    connect_mesh();
    due_.resize(wcfg.hosts.size());
    for (size_t h = 0; h < wcfg.hosts.size(); ++h) {
      wrappers_.push_back(std::make_unique<WorkloadHostNode>(*this, *hosts_[wcfg.hosts[h].id],
                                                             static_cast<uint32_t>(h)));
      nodes_[wcfg.hosts[h].id] = wrappers_.back().get();
    }
  }

  Node* node(uint32_t i) const { return nodes_[i]; }
  size_t num_nodes() const { return nodes_.size(); }
  uint64_t flows_finished() const { return rec_.stats().records().size(); }
  /// Every flow generated, started, posted and completed (successfully or not).
  bool done() const {
    return gen_.next_deadline() == kNever && pulled_ == started_ && rec_.in_flight() == 0 && waiting_ == 0;
  }

  /// Moves every flow starting before now + lookahead_ns from the generator into its
  /// source host's FIFO (called between node calls; the engine then re-arms host timers).
  /// The first call fixes the workload's time origin at `now` (0 in virtual time; in real
  /// time the engine clock has run while the fabric was built), and every flow's start_ns
  /// is shifted by it.
  void pull(TimeNs now, TimeNs lookahead_ns) {
    if (origin_ns_ < 0) origin_ns_ = now;
    workload::FlowSpec f;
    while (gen_.next_deadline() != kNever && gen_.next_deadline() + origin_ns_ < now + lookahead_ns &&
           gen_.next(f)) {
      f.start_ns += origin_ns_;
      due_[static_cast<size_t>(host_index_[f.src])].push_back(f);
      ++pulled_;
    }
  }
  /// Start time of host h's next flow not yet started.
  TimeNs next_start(uint32_t h) const noexcept { return due_[h].empty() ? kNever : due_[h].front().start_ns; }

  /// Inside a node call of host h at `now`: start its due flows.
  void start_due(uint32_t h, TimeNs now) noexcept {
    auto& q = due_[h];
    while (!q.empty() && q.front().start_ns <= now) {
      start_flow(q.front());
      q.pop_front();
    }
  }

  /// Inside a node call of host h at `now`: record its completions; a completion frees a
  /// slot on the pair's QP, so the pair's next waiting flow is posted.
  void reap(uint32_t h, TimeNs now) noexcept {
    ibv_wc wc[32];
    nic::RoceHost& host = *hosts_[wcfg_.hosts[h].id];
    int got;
    while ((got = host.poll_cq(side_[h].recv_cq, 32, wc)) > 0) {
    }
    while ((got = host.poll_cq(side_[h].send_cq, 32, wc)) > 0) {
      for (int k = 0; k < got; ++k) {
        auto it = posted_flows_.find(wc[k].wr_id);
        if (it == posted_flows_.end()) continue;
        const Posted done = it->second;
        posted_flows_.erase(it);
        if (wc[k].status == IBV_WC_SUCCESS)
          rec_.on_finish(wc[k].wr_id, now);
        else
          ++failed_;
        Pair& p = pairs_[done.pair];
        Lane& l = p.lanes[done.lane];
        --l.outstanding;
        l.outstanding_bytes -= done.bytes;
        const uint32_t a = done.pair / static_cast<uint32_t>(side_.size());
        const uint32_t b = done.pair % static_cast<uint32_t>(side_.size());
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

  /// Adds every switch port's egress queue (all priorities) as one sample.
  void sample_queues(TimeNs now) {
    for (const auto& s : switches_) {
      if (!s) continue;
      const SwitchSnapshot snap = s->snapshot(now);
      for (const PortCounters& c : snap.ports) rec_.stats().add_queue_sample(c.total_queue_bytes());
    }
  }

  WorkloadResult result(const char* engine, TimeNs end) {
    WorkloadResult r;
    r.engine = engine;
    r.seed = cfg_.seed;
    r.end_ns = end;
    for (uint32_t i = 0; i < switches_.size(); ++i) {
      if (!switches_[i]) continue;
      const SwitchSnapshot snap = switches_[i]->snapshot(end);
      for (const PortCounters& c : snap.ports) {
        for (auto v : c.pfc_pauses_sent) r.summary.pfc_pauses += v;
        r.switch_drops += c.total_drops();
        r.ecn_marked_packets += c.ecn_marked_packets;
      }
    }
    uint64_t cnps = 0;
    for (const auto& h : hosts_) {
      if (!h) continue;
      cnps += h->counters().cnps_sent;
      r.retransmitted_packets += h->counters().retransmitted_packets;
      r.timeouts += h->counters().timeouts;
    }
    rec_.stats().add_cnps(cnps);
    rec_.stats().add_pfc_pauses(r.summary.pfc_pauses);
    r.summary = rec_.summarize();
    r.records = rec_.stats().records();
    std::sort(r.records.begin(), r.records.end(),
              [](const workload::FlowRecord& a, const workload::FlowRecord& b) { return a.flow.id < b.flow.id; });
    r.flows_generated = started_;
    r.flows_posted = posted_;
    r.flows_failed = failed_;
    r.all_finished = done() && failed_ == 0;
    return r;
  }

 private:
  /// One RC QP of a pair (requester side src_qpn, responder side dst_qpn).
  struct Lane {
    uint32_t src_qpn = 0, dst_qpn = 0;
    uint32_t outstanding = 0;        // posted, not completed
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

  /// The lane with the fewest outstanding bytes that can take another work request (ties:
  /// the lowest index), or -1.
  static int pick_lane(const Pair& p) noexcept {
    int best = -1;
    for (size_t i = 0; i < p.lanes.size(); ++i) {
      const Lane& l = p.lanes[i];
      if (l.outstanding >= kMaxOutstandingPerQp) continue;
      if (best < 0 || l.outstanding_bytes < p.lanes[static_cast<size_t>(best)].outstanding_bytes)
        best = static_cast<int>(i);
    }
    return best;
  }
  struct HostSide {
    uint32_t pd = 0, send_cq = 0, recv_cq = 0;
    nic::MrInfo src, dst;
  };

  size_t pair_index(uint32_t src_h, uint32_t dst_h) const { return src_h * wcfg_.hosts.size() + dst_h; }

  void connect_mesh() {
    const size_t hn = wcfg_.hosts.size();
    const uint32_t max_send = kMaxOutstandingPerQp;
    side_.resize(hn);
    for (size_t h = 0; h < hn; ++h) {
      nic::RoceHost& host = *hosts_[wcfg_.hosts[h].id];
      HostSide& s = side_[h];
      s.pd = host.alloc_pd();
      s.send_cq = host.create_cq(static_cast<uint32_t>(2 * hn * max_send));
      s.recv_cq = host.create_cq(static_cast<uint32_t>(2 * hn * max_send));
      s.src = host.reg_mr(s.pd, src_buf_.data(), src_buf_.size(), IBV_ACCESS_LOCAL_WRITE);
      s.dst = host.reg_mr(s.pd, dst_buf_.data(), dst_buf_.size(),
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
        p.lanes.resize(lanes_);
        nic::RoceHost& ha = *hosts_[wcfg_.hosts[a].id];
        nic::RoceHost& hb = *hosts_[wcfg_.hosts[b].id];
        nic::QpInitAttr qa;
        qa.pd = side_[a].pd;
        qa.send_cq = side_[a].send_cq;
        qa.recv_cq = side_[a].recv_cq;
        qa.max_send_wr = qa.max_recv_wr = max_send;
        nic::QpInitAttr qb = qa;
        qb.pd = side_[b].pd;
        qb.send_cq = side_[b].send_cq;
        qb.recv_cq = side_[b].recv_cq;
        for (Lane& l : p.lanes) {
          l.src_qpn = ha.create_qp(qa);
          l.dst_qpn = hb.create_qp(qb);
          if (l.src_qpn == 0 || l.dst_qpn == 0)
            throw std::runtime_error("workload job: create_qp failed (" + std::to_string(lanes_) +
                                     " QPs per ordered host pair need " +
                                     std::to_string(2 * (hn - 1) * lanes_) + " QPs per host; [nic] max_qps = " +
                                     std::to_string(cfg_.nic_params.max_qps) + ")");
          if (nic::connect_rc(ha, l.src_qpn, hb.local_info(l.dst_qpn), opt) != 0 ||
              nic::connect_rc(hb, l.dst_qpn, ha.local_info(l.src_qpn), opt) != 0)
            throw std::runtime_error("workload job: connecting an RC QP failed");
        }
        p.ideal = workload::ideal_fct_params(t, wcfg_.hosts[a].id, wcfg_.hosts[b].id,
                                             cfg_.nic_params.mtu_bytes);
      }
    }
  }

  void start_flow(const workload::FlowSpec& f) noexcept {
    const uint32_t a = static_cast<uint32_t>(host_index_[f.src]);
    const uint32_t b = static_cast<uint32_t>(host_index_[f.dst]);
    Pair& p = pairs_[pair_index(a, b)];
    rec_.on_start(f, workload::ideal_fct_ns(f.size_bytes, f.op, p.ideal));
    const int lane = p.waiting.empty() ? pick_lane(p) : -1;
    if (lane >= 0) {
      post(f, a, b, p, static_cast<uint32_t>(lane));
    } else {
      p.waiting.push_back(f);
      ++waiting_;
    }
    ++started_;
  }

  void post(const workload::FlowSpec& f, uint32_t a, uint32_t b, Pair& p, uint32_t lane) noexcept {
    Lane& l = p.lanes[lane];
    nic::RoceHost& ha = *hosts_[wcfg_.hosts[a].id];
    const auto len = static_cast<uint32_t>(f.size_bytes);
    if (f.op == workload::FlowOp::kSend) {
      nic::RoceHost& hb = *hosts_[wcfg_.hosts[b].id];
      ibv_sge rsge{side_[b].dst.addr, static_cast<uint32_t>(dst_buf_.size()), side_[b].dst.lkey};
      ibv_recv_wr rwr{};
      rwr.wr_id = f.id;
      rwr.sg_list = &rsge;
      rwr.num_sge = 1;
      const ibv_recv_wr* rbad = nullptr;
      if (hb.post_recv(l.dst_qpn, &rwr, &rbad) != 0) {
        ++failed_;
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
      return;
    }
    ++l.outstanding;
    l.outstanding_bytes += f.size_bytes;
    ++posted_;
    posted_flows_.emplace(f.id, Posted{static_cast<uint32_t>(pair_index(a, b)), lane, f.size_bytes});
  }

  uint32_t lanes_;  // QPs per ordered host pair
  const RunConfig& cfg_;
  const workload::WorkloadConfig& wcfg_;
  workload::WorkloadGenerator gen_;
  workload::FctRecorder rec_;
  std::vector<Node*> nodes_;
  std::vector<std::unique_ptr<sw::SoftSwitch>> switches_;
  std::vector<std::unique_ptr<nic::RoceHost>> hosts_;
  std::vector<std::unique_ptr<DcqcnHooks>> cc_;
  std::vector<int32_t> host_index_;  // topology node -> index in wcfg_.hosts, -1 for switches
  std::vector<HostSide> side_;
  std::vector<Pair> pairs_;          // [src host index * hosts + dst host index]
  std::unordered_map<uint64_t, Posted> posted_flows_;  // by flow id
  std::vector<uint8_t> src_buf_, dst_buf_;
  std::vector<std::unique_ptr<WorkloadHostNode>> wrappers_;  // the engine's host nodes
  std::vector<std::deque<workload::FlowSpec>> due_;  // per host: pulled, not yet started
  TimeNs origin_ns_ = -1;  // engine time of workload time 0 (set by the first pull)
  uint64_t pulled_ = 0, started_ = 0, posted_ = 0, failed_ = 0, waiting_ = 0;
};

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


/// Progress lines against wall time (the only clock read here; never fed into the model).
class ProgressPrinter {
 public:
  ProgressPrinter(const workload::WorkloadParams& p, TimeNs until_ns, const WorkloadRunOptions& opt)
      : progress_(p.start_ns, std::min(until_ns, p.stop_ns()), opt.progress_interval_ns),
        out_(opt.progress_out),
        wall0_(std::chrono::steady_clock::now()) {}
  void update(TimeNs now, uint64_t flows_done) {
    if (!out_) return;
    const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - wall0_).count();
    if (auto line = progress_.update(now, flows_done, wall)) std::fprintf(out_, "%s\n", line->c_str());
  }

 private:
  workload::Progress progress_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point wall0_;
};

}  // namespace

WorkloadResult run_workload_virtual(const RunConfig& cfg, const WorkloadRunOptions& opt) {
  if (!cfg.workload) throw std::invalid_argument("run_workload_virtual: the run has no [workload]");
  const workload::WorkloadConfig wcfg = make_config(cfg);
  RunPool pool(cfg.testbed.pool_mbufs);
  WorkloadResult r;
  {
    VirtualEngine e(cfg.topology.topology, cfg.topology.links, cfg.seed);
    WorkloadFabric f(cfg, wcfg, pool.get(), cfg.workload_qps_per_pair);
    ProgressPrinter progress(wcfg.params, cfg.sim.until_ns, opt);
    for (uint32_t i = 0; i < f.num_nodes(); ++i) e.attach(i, f.node(i));
    e.every(opt.queue_sample_ns, [&](TimeNs now) {
      f.pull(now, 2 * opt.queue_sample_ns);
      f.sample_queues(now);
      progress.update(now, f.flows_finished());
      if (f.done()) e.stop();
    });
    const TimeNs end = e.run_until(cfg.sim.until_ns);
    r = f.result("virtual", end);
    r.wall_ns = e.stats().wall_ns;
    r.events = e.stats().events;
  }
  return r;
}

WorkloadResult run_workload_realtime(const RunConfig& cfg, const WorkloadRunOptions& opt) {
  if (!cfg.workload) throw std::invalid_argument("run_workload_realtime: the run has no [workload]");
  const workload::WorkloadConfig wcfg = make_config(cfg);
  RealtimeOptions ro;
  ro.backend = cfg.testbed.backend;
  ro.pool_mbufs = cfg.testbed.pool_mbufs;
  const Topology& t = cfg.topology.topology;
  if (!cfg.testbed.placement.empty()) {
    ro.node_lcore.assign(t.nodes().size(), rte_get_main_lcore());
    for (const auto& [name, lc] : cfg.testbed.placement) ro.node_lcore[static_cast<size_t>(t.find(name))] = lc;
  }
  RealtimeEngine e(t, cfg.topology.links, ro);
  WorkloadResult r;
  {
    WorkloadFabric f(cfg, wcfg, e.pool(), cfg.workload_qps_per_pair);
    ProgressPrinter progress(wcfg.params, cfg.testbed.time_limit_ns, opt);
    for (uint32_t i = 0; i < f.num_nodes(); ++i) e.attach(i, f.node(i));
    e.every(opt.queue_sample_ns, [&](TimeNs now) {
      f.pull(now, 2 * opt.queue_sample_ns);
      f.sample_queues(now);
      progress.update(now, f.flows_finished());
      if (f.done()) e.stop();
    });
    const auto wall0 = std::chrono::steady_clock::now();
    const TimeNs end = e.run_for(cfg.testbed.time_limit_ns);
    r = f.result("realtime", end);
    r.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - wall0).count();
  }
  return r;
}

}  // namespace rocemu::fabric
