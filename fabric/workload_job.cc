// workload_job.cc — builds the nodes of a run (SoftSwitch per switch, RoceHost per host),
// one RC QP per ordered host pair, and drives the workload generator from the engine's
// periodic callbacks: post due flows, reap completions into the FctRecorder, sample switch
// queues, print progress. Transport mapping and FCT definition: workload_job.h.
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

/// The nodes, the QP mesh and the job's state.
class WorkloadFabric {
 public:
  WorkloadFabric(const RunConfig& cfg, const workload::WorkloadConfig& wcfg, rte_mempool* pool)
      : cfg_(cfg),
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
      const auto qps = static_cast<uint32_t>(std::max<size_t>(16, 2 * (wcfg.hosts.size() - 1)));
      cc_ = install_dcqcn(cfg.dcqcn, t, hosts, qps);
    }
    uint64_t largest = 1;
    if (wcfg.cdf) largest = static_cast<uint64_t>(std::ceil(wcfg.cdf->max_bytes())) + 1;
    if (wcfg.params.incast) largest = std::max(largest, wcfg.params.incast->size_bytes);
    src_buf_.assign(largest, 0x5a);
    dst_buf_.assign(largest, 0);
    connect_mesh();
  }

  Node* node(uint32_t i) const { return nodes_[i]; }
  size_t num_nodes() const { return nodes_.size(); }
  uint64_t flows_finished() const { return rec_.stats().records().size(); }
  /// Every flow generated, posted and completed (successfully or not).
  bool done() const { return gen_.next_deadline() == kNever && rec_.in_flight() == 0 && waiting_ == 0; }

  /// The periodic step: reap completions (which may release queued flows), then post every
  /// flow whose start time has come.
  void step(TimeNs now) {
    reap(now);
    workload::FlowSpec due[kDueBatch];
    size_t got;
    do {
      got = gen_.due(now, due, kDueBatch);
      for (size_t k = 0; k < got; ++k) start_flow(due[k], now);
    } while (got == kDueBatch);
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
    r.flows_generated = gen_.flows_generated();
    r.flows_posted = posted_;
    r.flows_failed = failed_;
    r.all_finished = done() && failed_ == 0;
    return r;
  }

 private:
  struct Pair {
    uint32_t src_qpn = 0, dst_qpn = 0;
    uint32_t outstanding = 0;
    std::deque<workload::FlowSpec> waiting;
    workload::IdealFctParams ideal;
  };
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
        p.src_qpn = ha.create_qp(qa);
        p.dst_qpn = hb.create_qp(qb);
        if (p.src_qpn == 0 || p.dst_qpn == 0)
          throw std::runtime_error("workload job: create_qp failed (one QP per ordered host pair needs " +
                                   std::to_string(2 * (hn - 1)) + " QPs per host; [nic] max_qps = " +
                                   std::to_string(cfg_.nic_params.max_qps) + ")");
        if (nic::connect_rc(ha, p.src_qpn, hb.local_info(p.dst_qpn), opt) != 0 ||
            nic::connect_rc(hb, p.dst_qpn, ha.local_info(p.src_qpn), opt) != 0)
          throw std::runtime_error("workload job: connecting an RC QP failed");
        p.ideal = workload::ideal_fct_params(t, wcfg_.hosts[a].id, wcfg_.hosts[b].id,
                                             cfg_.nic_params.mtu_bytes);
      }
    }
  }

  void start_flow(const workload::FlowSpec& f, TimeNs now) {
    const uint32_t a = static_cast<uint32_t>(host_index_[f.src]);
    const uint32_t b = static_cast<uint32_t>(host_index_[f.dst]);
    Pair& p = pairs_[pair_index(a, b)];
    rec_.on_start(f, workload::ideal_fct_ns(f.size_bytes, f.op, p.ideal));
    if (p.outstanding < kMaxOutstandingPerQp && p.waiting.empty()) {
      post(f, a, b, p);
    } else {
      p.waiting.push_back(f);
      ++waiting_;
    }
    (void)now;
  }

  void post(const workload::FlowSpec& f, uint32_t a, uint32_t b, Pair& p) {
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
      if (hb.post_recv(p.dst_qpn, &rwr, &rbad) != 0) {
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
    if (ha.post_send(p.src_qpn, &wr, &bad) != 0) {
      ++failed_;  // stays in flight in the recorder: reported as unfinished
      return;
    }
    ++p.outstanding;
    ++posted_;
    flow_pair_.emplace(f.id, static_cast<uint32_t>(pair_index(a, b)));
  }

  void reap(TimeNs now) {
    ibv_wc wc[32];
    for (size_t h = 0; h < side_.size(); ++h) {
      nic::RoceHost& host = *hosts_[wcfg_.hosts[h].id];
      int got;
      while ((got = host.poll_cq(side_[h].recv_cq, 32, wc)) > 0) {
      }
      while ((got = host.poll_cq(side_[h].send_cq, 32, wc)) > 0) {
        for (int k = 0; k < got; ++k) {
          auto it = flow_pair_.find(wc[k].wr_id);
          if (it == flow_pair_.end()) continue;
          const uint32_t pi = it->second;
          flow_pair_.erase(it);
          if (wc[k].status == IBV_WC_SUCCESS)
            rec_.on_finish(wc[k].wr_id, now);
          else
            ++failed_;
          Pair& p = pairs_[pi];
          --p.outstanding;
          const uint32_t a = pi / static_cast<uint32_t>(side_.size());
          const uint32_t b = pi % static_cast<uint32_t>(side_.size());
          while (p.outstanding < kMaxOutstandingPerQp && !p.waiting.empty()) {
            const workload::FlowSpec f = p.waiting.front();
            p.waiting.pop_front();
            --waiting_;
            post(f, a, b, p);
          }
        }
      }
    }
  }

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
  std::unordered_map<uint64_t, uint32_t> flow_pair_;  // posted flow id -> pair
  std::vector<uint8_t> src_buf_, dst_buf_;
  uint64_t posted_ = 0, failed_ = 0, waiting_ = 0;
};

/// A run-private mbuf pool (freed when the run ends, after its nodes).
struct PoolGuard {
  rte_mempool* pool = nullptr;
  explicit PoolGuard(uint32_t n) {
    static std::atomic<uint32_t> counter{0};
    const std::string name = "rocemu_wl_" + std::to_string(counter.fetch_add(1));
    pool = rte_pktmbuf_pool_create(name.c_str(), n, 256, 0, RTE_PKTMBUF_HEADROOM + 9216,
                                   static_cast<int>(rte_socket_id()));
    if (!pool) throw std::runtime_error("mbuf pool: " + std::string(rte_strerror(rte_errno)));
  }
  ~PoolGuard() { rte_mempool_free(pool); }
};

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
  PoolGuard pool(cfg.testbed.pool_mbufs);
  WorkloadResult r;
  {
    VirtualEngine e(cfg.topology.topology, cfg.topology.links, cfg.seed);
    WorkloadFabric f(cfg, wcfg, pool.pool);
    ProgressPrinter progress(wcfg.params, cfg.sim.until_ns, opt);
    for (uint32_t i = 0; i < f.num_nodes(); ++i) e.attach(i, f.node(i));
    e.every(opt.poll_ns, [&](TimeNs now) {
      f.step(now);
      if (f.done()) e.stop();
    });
    e.every(opt.queue_sample_ns, [&](TimeNs now) {
      f.sample_queues(now);
      progress.update(now, f.flows_finished());
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
    WorkloadFabric f(cfg, wcfg, e.pool());
    ProgressPrinter progress(wcfg.params, cfg.testbed.time_limit_ns, opt);
    for (uint32_t i = 0; i < f.num_nodes(); ++i) e.attach(i, f.node(i));
    e.every(opt.realtime_poll_ns, [&](TimeNs now) {
      f.step(now);
      if (f.done()) e.stop();
    });
    e.every(opt.queue_sample_ns, [&](TimeNs now) {
      f.sample_queues(now);
      progress.update(now, f.flows_finished());
    });
    const auto wall0 = std::chrono::steady_clock::now();
    const TimeNs end = e.run_for(cfg.testbed.time_limit_ns);
    r = f.result("realtime", end);
    r.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - wall0).count();
  }
  return r;
}

}  // namespace rocemu::fabric
