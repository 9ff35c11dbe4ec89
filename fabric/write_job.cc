// write_job.cc — builds the nodes of a run (SoftSwitch per switch, RoceHost per host),
// drives the RDMA WRITE job from the engine's periodic callback, verifies and summarises.
#include "fabric/write_job.h"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "common/rng.h"
#include "common/time_ns.h"
#include "fabric/cc/dcqcn_hooks.h"
#include "fabric/realtime_engine.h"
#include "fabric/region_iova.h"
#include "fabric/run_taps.h"
#include "fabric/switch_nodes.h"
#include "fabric/virtual_engine.h"
#include "nic/roce_host.h"
#include "switchsw/soft_switch.h"

namespace rocemu::fabric {

namespace {

constexpr uint32_t kMaxSendWr = 256;

/// The nodes of one run and the job's state.
class Fabric {
 public:
  Fabric(const RunConfig& cfg, rte_mempool* pool) : cfg_(cfg), job_(cfg.job) {
    const Topology& t = cfg.topology.topology;
    nodes_.resize(t.nodes().size());
    switches_ = build_switches(cfg, pool);
    hosts_.resize(t.nodes().size());
    for (uint32_t i = 0; i < t.nodes().size(); ++i) {
      if (switches_[i]) {
        nodes_[i] = switches_[i].get();
      } else {
        hosts_[i] = std::make_unique<nic::RoceHost>(cfg.nic_params, t, i, pool, cfg.seed);
        nodes_[i] = hosts_[i].get();
      }
    }
    if (cfg.dcqcn_enabled) {
      std::vector<nic::RoceHost*> hosts(hosts_.size());
      for (size_t i = 0; i < hosts_.size(); ++i) hosts[i] = hosts_[i].get();
      cc_ = install_dcqcn(cfg.dcqcn, t, hosts);
    }
    from_ = static_cast<uint32_t>(t.find(job_.from));
    to_ = static_cast<uint32_t>(t.find(job_.to));
    src_.resize(job_.bytes);
    Rng r(job_.pattern_seed != 0 ? job_.pattern_seed : cfg.seed, "write-job-pattern");
    for (size_t i = 0; i < src_.size(); i += 8) {
      const uint64_t v = r.next();
      std::memcpy(src_.data() + i, &v, std::min<size_t>(8, src_.size() - i));
    }
    dst_.assign(job_.bytes, 0);
    connect();
  }

  Node* node(uint32_t i) const { return nodes_[i]; }
  size_t num_nodes() const { return nodes_.size(); }
  const sw::SoftSwitch* switch_at(uint32_t i) const { return switches_[i].get(); }
  std::vector<sw::SoftSwitch*> switch_ptrs() const {
    std::vector<sw::SoftSwitch*> v;
    for (const auto& s : switches_) v.push_back(s.get());
    return v;
  }
  std::vector<const DcqcnHooks*> dcqcn_hooks() const { return hooks_view(cc_); }
  std::vector<const sw::SoftSwitch*> switches() const {
    std::vector<const sw::SoftSwitch*> v;
    for (const auto& s : switches_) v.push_back(s.get());
    return v;
  }
  const nic::RoceHost& sender() const { return *hosts_[from_]; }

  /// Called from the engine's periodic callback: posts the first work requests (the job's
  /// start), reaps completions, posts more. Returns true when the job is over.
  bool step(TimeNs now) {
    if (!started_) {
      started_ = true;
      start_ns_ = now;
    }
    nic::RoceHost& h = *hosts_[from_];
    ibv_wc wc[32];
    int got;
    while ((got = h.poll_cq(cq_, 32, wc)) > 0) {
      for (int k = 0; k < got; ++k) {
        ++completed_;
        if (wc[k].status != IBV_WC_SUCCESS && failed_++ == 0) first_failure_ = wc[k];
      }
      done_ns_ = now;
    }
    const uint64_t total = (job_.bytes + job_.message_bytes - 1) / job_.message_bytes;
    while (posted_ < total && posted_ - completed_ < kMaxSendWr && failed_ == 0) {
      const uint64_t off = posted_ * job_.message_bytes;
      const auto len = static_cast<uint32_t>(std::min(job_.message_bytes, job_.bytes - off));
      ibv_sge sge{smr_.addr + off, len, smr_.lkey};
      ibv_send_wr wr{};
      wr.wr_id = posted_;
      wr.opcode = IBV_WR_RDMA_WRITE;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.wr.rdma.remote_addr = dmr_.addr + off;
      wr.wr.rdma.rkey = dmr_.rkey;
      const ibv_send_wr* bad = nullptr;
      if (h.post_send(qpn_[0], &wr, &bad) != 0) break;
      ++posted_;
    }
    return completed_ == total || failed_ > 0;
  }

  JobResult result(const char* engine, TimeNs now,
                   const std::function<const WireCounters&(PortRef)>& wire) const {
    JobResult r;
    r.engine = engine;
    r.seed = cfg_.seed;
    r.bytes = job_.bytes;
    const uint64_t total = (job_.bytes + job_.message_bytes - 1) / job_.message_bytes;
    r.completed = completed_ == total && failed_ == 0;
    r.verified = src_ == dst_;
    r.elapsed_ns = (r.completed ? done_ns_ : now) - start_ns_;
    r.goodput_gbps = r.completed && r.elapsed_ns > 0
                         ? static_cast<double>(job_.bytes) * 8.0 / static_cast<double>(r.elapsed_ns)
                         : 0.0;
    r.retransmitted_packets = sender().counters().retransmitted_packets;
    r.timeouts = sender().counters().timeouts;
    if (!r.completed) {
      char why[320];
      if (failed_ > 0) {
        std::snprintf(
            why, sizeof why, "QP 0x%x: RDMA WRITE %llu of %llu completed with status %d (%s)%s",
            first_failure_.qp_num, static_cast<unsigned long long>(first_failure_.wr_id + 1),
            static_cast<unsigned long long>(total), static_cast<int>(first_failure_.status),
            nic::wc_status_name(first_failure_.status),
            failed_ > 1 ? ", and later ones were flushed" : "");
      } else {
        const std::string inv = sender().check_invariants();
        std::snprintf(why, sizeof why,
                      "QP 0x%x: %llu of %llu RDMA WRITEs completed, %llu posted, no error "
                      "completion when the run ended at %.3f ms%s%s",
                      qpn_[0], static_cast<unsigned long long>(completed_),
                      static_cast<unsigned long long>(total),
                      static_cast<unsigned long long>(posted_), static_cast<double>(now) / 1e6,
                      inv.empty() ? "" : "; ", inv.c_str());
      }
      r.failure = why;
    }
    const Topology& t = cfg_.topology.topology;
    for (uint32_t n = 0; n < t.nodes().size(); ++n) {
      SwitchSnapshot snap;
      if (switches_[n]) snap = switches_[n]->snapshot(now);
      for (uint16_t p = 0; p < t.node(n).ports.size(); ++p) {
        PortSummary s;
        s.node = t.node(n).name;
        s.port = p;
        const WireCounters& w = wire(PortRef{n, p});
        s.tx_packets = w.tx_packets;
        s.tx_bytes = w.tx_bytes;
        s.rx_packets = w.rx_packets;
        s.rx_bytes = w.rx_bytes;
        s.wire_drops = w.dropped + w.rx_no_mbuf + w.rx_missed;
        if (switches_[n] && p < snap.ports.size()) {
          const PortCounters& c = snap.ports[p];
          s.peak_queue_bytes =
              *std::max_element(c.peak_queue_bytes.begin(), c.peak_queue_bytes.end());
          s.switch_drops = c.total_drops();
          s.ecn_marked_packets = c.ecn_marked_packets;
          for (auto v : c.pfc_pauses_sent) s.pfc_pauses_sent += v;
          for (auto v : c.pfc_pauses_received) s.pfc_pauses_received += v;
        }
        if (hosts_[n] && p == 0) {  // a RoceHost uses its node's port 0
          const nic::NicCounters& c = hosts_[n]->counters();
          s.cnps_sent = c.cnps_sent;
          s.cnps_received = c.cnps_received;
          for (auto v : c.pfc_frames_received) s.pfc_pauses_received += v;
        }
        r.ports.push_back(s);
      }
    }
    return r;
  }

 private:
  void connect() {
    nic::RoceHost* side[2] = {hosts_[from_].get(), hosts_[to_].get()};
    uint32_t pd[2], cq[2];
    for (int i = 0; i < 2; ++i) {
      pd[i] = side[i]->alloc_pd();
      cq[i] = side[i]->create_cq(4 * kMaxSendWr);
      nic::QpInitAttr a;
      a.pd = pd[i];
      a.send_cq = a.recv_cq = cq[i];
      a.max_send_wr = a.max_recv_wr = kMaxSendWr;
      qpn_[i] = side[i]->create_qp(a);
      if (qpn_[i] == 0)
        throw std::runtime_error("write job: create_qp failed on " + (i ? job_.to : job_.from));
    }
    cq_ = cq[0];
    nic::ConnectOptions opt;
    opt.path_mtu = nic::mtu_enum(cfg_.nic_params.mtu_bytes);
    for (int i = 0; i < 2; ++i)
      if (nic::connect_rc(*side[i], qpn_[i], side[1 - i]->local_info(qpn_[1 - i]), opt) != 0)
        throw std::runtime_error("write job: connecting the RC QP failed");
    smr_ = side[0]->reg_mr_iova(pd[0], src_.data(), src_.size(), kSourceRegionIova,
                                IBV_ACCESS_LOCAL_WRITE);
    dmr_ = side[1]->reg_mr_iova(pd[1], dst_.data(), dst_.size(), kSinkRegionIova,
                                IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (smr_.lkey == 0 || dmr_.rkey == 0) throw std::runtime_error("write job: reg_mr failed");
  }

  const RunConfig& cfg_;
  const WriteJobParams& job_;
  std::vector<Node*> nodes_;
  std::vector<std::unique_ptr<sw::SoftSwitch>> switches_;
  std::vector<std::unique_ptr<nic::RoceHost>> hosts_;
  std::vector<std::unique_ptr<DcqcnHooks>> cc_;  // [dcqcn]: one per host, installed on it
  uint32_t from_ = 0, to_ = 0;
  uint32_t qpn_[2] = {};
  uint32_t cq_ = 0;
  nic::MrInfo smr_, dmr_;
  std::vector<uint8_t> src_, dst_;
  bool started_ = false;
  TimeNs start_ns_ = 0, done_ns_ = 0;
  uint64_t posted_ = 0, completed_ = 0, failed_ = 0;
  ibv_wc first_failure_{};
};

constexpr TimeNs kVirtualPollNs = kNsPerUs;
constexpr TimeNs kRealtimePollNs = 10 * kNsPerUs;

}  // namespace

JobResult run_write_job_virtual(const RunConfig& cfg, const std::string& out_dir) {
  RunPool pool(cfg.testbed.pool_mbufs, kPoolDataBytes, RunPool::Fault::kLazy);
  JobResult r;
  {
    VirtualEngine e(cfg.topology.topology, cfg.topology.links, cfg.seed);
    Fabric f(cfg, pool.get());
    for (uint32_t i = 0; i < f.num_nodes(); ++i) e.attach(i, f.node(i));
    e.every(kVirtualPollNs, [&](TimeNs now) {
      if (f.step(now)) e.stop();
    });
    RunTaps taps(cfg, f.switch_ptrs(), out_dir);
    taps.trace_dcqcn(f.dcqcn_hooks());
    taps.attach(e);
    const int64_t cpu0 = thread_cpu_ns();
    taps.begin();
    const TimeNs end = e.run_until(cfg.sim.until_ns);
    taps.end();
    const int64_t cpu_ns = thread_cpu_ns() - cpu0;
    r = f.result("virtual", end, [&](PortRef p) -> const WireCounters& { return e.counters(p); });
    r.cpu_ns = cpu_ns;
    r.agent = taps.agent_stats();
    r.wall_ns = e.stats().wall_ns;
    r.events = e.stats().events;
  }
  return r;
}

JobResult run_write_job_realtime(const RunConfig& cfg, const std::string& out_dir) {
  RealtimeOptions opt = realtime_options(cfg);
  const Topology& t = cfg.topology.topology;
  if (!cfg.testbed.placement.empty()) {
    opt.node_lcore.assign(t.nodes().size(), rte_get_main_lcore());
    for (const auto& [name, lc] : cfg.testbed.placement)
      opt.node_lcore[static_cast<size_t>(t.find(name))] = lc;
  }
  RealtimeEngine e(t, cfg.topology.links, opt);
  // rate_gbps = "port": the nodes are built with the rates the ports reported.
  const RunConfig run = with_link_rates(cfg, e.link_rates_bps());
  JobResult r;
  {
    Fabric f(run, e.pool());
    for (uint32_t i = 0; i < f.num_nodes(); ++i) e.attach(i, f.node(i));
    e.every(kRealtimePollNs, [&](TimeNs now) {
      if (f.step(now)) e.stop();
    });
    RunTaps taps(cfg, f.switch_ptrs(), out_dir, opt.node_lcore, rte_get_main_lcore());
    taps.trace_dcqcn(f.dcqcn_hooks());
    taps.attach(e);
    const auto wall0 = std::chrono::steady_clock::now();
    const int64_t cpu0 = thread_cpu_ns();
    taps.begin();
    const TimeNs end = e.run_for(cfg.testbed.time_limit_ns);
    taps.end();
    const int64_t cpu_ns = thread_cpu_ns() - cpu0;
    r.agent = taps.agent_stats();
    const AgentStats agent_stats = r.agent;
    r = f.result("realtime", end, [&](PortRef p) -> const WireCounters& { return e.counters(p); });
    r.agent = agent_stats;
    for (const auto& p : e.pci_ports()) r.pci_ports.push_back(describe_port(p));
    r.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now() - wall0)
                    .count();
    r.cpu_ns = cpu_ns;
  }
  return r;
}

}  // namespace rocemu::fabric
