// workload_job.cc — drives a WorkloadFabric (workload_fabric.h: SoftSwitch per switch,
// RoceHost per host, the deterministic QP plan of workload_qp_plan.h) in one engine. Each
// RoceHost is attached to the engine through a WorkloadHostNode that forwards every Node
// call and, in the same call, posts the host's flows whose start time has come (its
// next_deadline() includes the next start) and reaps its completions (so a flow's finish is
// the engine time of the rx that completed it, exact in virtual time). A periodic callback
// every queue_sample_ns pulls flows from the generator into per-host FIFOs one lookahead
// ahead, samples switch queues and prints progress. Transport mapping and FCT definition:
// workload_job.h.
#include "fabric/workload_job.h"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "fabric/realtime_engine.h"
#include "fabric/run_taps.h"
#include "fabric/virtual_engine.h"
#include "fabric/workload/progress.h"
#include "fabric/workload_fabric.h"
#include "nic/nic_params.h"

namespace rocemu::fabric {

namespace {

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
                          std::chrono::steady_clock::now() - wall0_)
                          .count();
    if (auto line = progress_.update(now, flows_done, wall))
      std::fprintf(out_, "%s\n", line->c_str());
  }

 private:
  workload::Progress progress_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point wall0_;
};

// Link-hops: every frame a port of this engine sent crossed one link.
template <class Engine>
uint64_t total_tx_packets(const Topology& t, const Engine& e) {
  uint64_t n = 0;
  for (uint32_t node = 0; node < t.nodes().size(); ++node)
    for (uint16_t p = 0; p < t.node(node).ports.size(); ++p)
      n += e.counters(PortRef{node, p}).tx_packets;
  return n;
}

}  // namespace

WorkloadResult run_workload_virtual(const RunConfig& cfg, const WorkloadRunOptions& opt) {
  if (!cfg.workload) throw std::invalid_argument("run_workload_virtual: the run has no [workload]");
  const workload::WorkloadConfig wcfg = make_workload_config_of(cfg);
  // Nobody reads the frames' payload bytes unless a capture writes them: elide them, and
  // the mbufs need room for headers only (NicParams::elide_payload).
  const bool elide = cfg.capture.ports.empty();
  static_assert(nic::kElidedFrameRoomBytes <= kHeaderOnlyRoomBytes,
                "an eliding host's pool is a compact header-only one");
  const uint32_t pool_mbufs = elide ? virtual_pool_mbufs(cfg) : cfg.testbed.pool_mbufs;
  RunPool pool(pool_mbufs, elide ? nic::kElidedFrameRoomBytes : kPoolDataBytes,
               RunPool::Fault::kLazy);
  WorkloadResult r;
  {
    VirtualEngine e(cfg.topology.topology, cfg.topology.links, cfg.seed);
    WorkloadFabricOptions fo;
    fo.elide_payload = elide;
    WorkloadFabric f(cfg, wcfg, pool.get(), cfg.workload_qps_per_pair, fo);
    ProgressPrinter progress(wcfg.params, cfg.sim.until_ns, opt);
    for (uint32_t i = 0; i < f.num_nodes(); ++i) e.attach(i, f.node(i));
    e.every(opt.queue_sample_ns, [&](TimeNs now) {
      f.pull(now, 2 * opt.queue_sample_ns);
      f.sample_queues(now);
      progress.update(now, f.flows_finished());
      if (f.done()) e.stop();
    });
    RunTaps taps(cfg, f.switch_ptrs(), opt.out_dir);
    taps.trace_dcqcn(f.dcqcn_hooks());
    taps.attach(e);
    taps.begin();
    const TimeNs end = e.run_until(cfg.sim.until_ns);
    taps.end();
    r = f.result("virtual", end);
    r.pool_mbufs = pool_mbufs;
    r.link_hops = total_tx_packets(cfg.topology.topology, e);
    r.agent = taps.agent_stats();
    r.wall_ns = e.stats().wall_ns;
    r.events = e.stats().events;
  }
  return r;
}

WorkloadResult run_workload_realtime(const RunConfig& cfg, const WorkloadRunOptions& opt) {
  if (!cfg.workload)
    throw std::invalid_argument("run_workload_realtime: the run has no [workload]");
  RealtimeOptions ro = realtime_options(cfg);
  const Topology& t = cfg.topology.topology;
  if (!cfg.testbed.placement.empty()) {
    ro.node_lcore.assign(t.nodes().size(), rte_get_main_lcore());
    for (const auto& [name, lc] : cfg.testbed.placement)
      ro.node_lcore[static_cast<size_t>(t.find(name))] = lc;
  }
  RealtimeEngine e(t, cfg.topology.links, ro);
  // rate_gbps = "port": the nodes are built with the rates the ports reported.
  const RunConfig run = with_link_rates(cfg, e.link_rates_bps());
  const workload::WorkloadConfig wcfg = make_workload_config_of(run);  // loads use host rates
  WorkloadResult r;
  {
    WorkloadFabric f(run, wcfg, e.pool(), cfg.workload_qps_per_pair);
    ProgressPrinter progress(wcfg.params, cfg.testbed.time_limit_ns, opt);
    for (uint32_t i = 0; i < f.num_nodes(); ++i) e.attach(i, f.node(i));
    e.every(opt.queue_sample_ns, [&](TimeNs now) {
      f.pull(now, 2 * opt.queue_sample_ns);
      f.sample_queues(now);
      progress.update(now, f.flows_finished());
      if (f.done()) e.stop();
    });
    RunTaps taps(cfg, f.switch_ptrs(), opt.out_dir, ro.node_lcore, rte_get_main_lcore());
    taps.trace_dcqcn(f.dcqcn_hooks());
    taps.attach(e);
    const auto wall0 = std::chrono::steady_clock::now();
    taps.begin();
    const TimeNs end = e.run_for(cfg.testbed.time_limit_ns);
    taps.end();
    r = f.result("realtime", end);
    r.link_hops = total_tx_packets(t, e);
    for (const auto& p : e.pci_ports()) r.pci_ports.push_back(describe_port(p));
    r.agent = taps.agent_stats();
    r.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now() - wall0)
                    .count();
  }
  return r;
}

}  // namespace rocemu::fabric
