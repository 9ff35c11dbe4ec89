// loopback_bench.cc — both roles of perftest's tests over one net_ring wire (see the header).
#include "apps/perftest/loopback_bench.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "fabric/eal.h"
#include "fabric/realtime_engine.h"

namespace rocemu::perftest {

// A RoceHost as the engine sees it, letting the bench act after every rx burst and once per
// poll iteration before tx.
class LoopbackBench::DrivenNode final : public Node {
 public:
  DrivenNode(LoopbackBench& bench, nic::RoceHost& host) noexcept : bench_(bench), host_(host) {}
  uint16_t num_ports() const noexcept override { return host_.num_ports(); }
  void rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept override {
    host_.rx(port, pkts, n, now);
    bench_.drive(now);
  }
  rte_mbuf* tx(uint16_t port, TimeNs now) noexcept override {
    if (now != last_drive_ns_) {
      last_drive_ns_ = now;
      bench_.drive(now);
    }
    return host_.tx(port, now);
  }
  TimeNs next_deadline() const noexcept override { return host_.next_deadline(); }
  void on_timer(TimeNs now) noexcept override { host_.on_timer(now); }

 private:
  LoopbackBench& bench_;
  nic::RoceHost& host_;
  TimeNs last_drive_ns_ = -1;
};

LoopbackBench::LoopbackBench(const PerftestOptions& opt, uint32_t max_size_bytes) : opt_(opt) {
  fabric::EalOptions eo;
  eo.program = opt.tool;
  eo.user_args = opt.eal_args;
  if (eo.user_args.empty()) eo.user_args = {"--log-level", "lib.eal:error"};
  eo.pci_devices = opt.pci;  // --pci: allow-listed, both ends of the wire
  fabric::eal_start(eo);

  Topology topo;
  const uint32_t a = topo.add_node("client", NodeKind::kHost);
  const uint32_t b = topo.add_node("server", NodeKind::kHost);
  topo.add_link(a, b, static_cast<uint64_t>(opt.link_gbps * 1e9), 0);
  fabric::RealtimeOptions ro;
  ro.pool_mbufs = 8191;
  ro.mbuf_data_bytes = opt.mtu_bytes + 512;
  std::vector<fabric::LinkOptions> links(1);
  if (!opt.pci.empty()) {  // the wire is a cable between two PCI ports (docs/hardware.md)
    ro.backend = fabric::PortBackend::kPci;
    ro.pci_mtu_bytes = fabric::eth_mtu_for_ib_mtu(opt.mtu_bytes);
    links[0].a_dev = opt.pci[0];
    links[0].b_dev = opt.pci[1];
    links[0].rate_from_port = !opt.link_gbps_set;
  }
  engine_ = std::make_unique<fabric::RealtimeEngine>(topo, links, ro);
  topo.mutable_links()[0].rate_bps = engine_->link_rates_bps()[0];  // the hosts' PFC timing

  nic::NicParams np;
  // The responder's READ/atomic resources cover the requests the peer may have outstanding.
  np.max_read_jobs = std::max(np.max_read_jobs, opt.out_reads);
  np.mtu_bytes = opt.mtu_bytes;
  np.max_qps = opt.num_qps + 1;
  const uint32_t half = std::max<uint32_t>(max_size_bytes, 4096);
  for (int i = 0; i < 2; ++i) {
    hosts_[i] = std::make_unique<nic::RoceHost>(np, topo, static_cast<uint32_t>(i), engine_->pool(),
                                                0x5eed + static_cast<uint64_t>(i));
    nodes_[i] = std::make_unique<DrivenNode>(*this, *hosts_[i]);
    engine_->attach(static_cast<uint32_t>(i), nodes_[i].get());
    sides_[i].create(*hosts_[i], opt, half);
  }
  for (int i = 0; i < 2; ++i) {
    sides_[i].peer_mr = sides_[1 - i].mr;
    for (uint32_t q = 0; q < opt.num_qps; ++q)
      sides_[i].connect(q, hosts_[1 - i]->local_info(sides_[1 - i].qpns[q]), opt);
  }
}

LoopbackBench::~LoopbackBench() {
  for (auto& h : hosts_) h.reset();  // hosts hold mbufs of the engine's pool
  engine_.reset();
}

void LoopbackBench::drive(TimeNs now) noexcept {
  if (!running_ || state_.done) return;
  TestState& t = state_;
  if (opt_.metric == Metric::kBandwidth) {
    const int requesters = opt_.bidirectional ? 2 : 1;
    for (int r = 0; r < requesters && !t.failed; ++r)
      side_done_[r] = bw_requester_step(sides_[r], r, t, opt_, now);
    if (opt_.verb == Verb::kSend) {
      int got = 0;
      for (int r = 0; r < 2 && !t.failed; ++r) repost_receives(sides_[r], t, got);
    }
    if (side_done_[0] && (requesters == 1 || side_done_[1])) t.done = true;
  } else {
    lat_client_step(sides_[0], t, opt_, now);
    if (!t.done) lat_server_step(sides_[1], t, opt_, now);
  }
  check_progress(t, now);
  if (t.done) engine_->stop();
}

BwResult LoopbackBench::run_bw(uint32_t size_bytes, TimeNs duration_ns) {
  state_.reset(opt_, size_bytes, duration_ns);
  side_done_[0] = side_done_[1] = false;
  running_ = true;
  engine_->run_for(duration_ns + 3600 * kNsPerSec);
  running_ = false;
  BwResult r;
  r.ok = !state_.failed && state_.done;
  r.error = state_.failed ? state_.error : (state_.done ? "" : "stopped before the end");
  r.messages = state_.messages;
  r.row = bw_summary(state_, opt_);
  return r;
}

LatResult LoopbackBench::run_lat(uint32_t size_bytes, TimeNs duration_ns) {
  state_.reset(opt_, size_bytes, duration_ns);
  for (auto& s : sides_) std::memset(s.recv_buf(0), 0, s.half);
  running_ = true;
  engine_->run_for(duration_ns + 3600 * kNsPerSec);
  running_ = false;
  LatResult r;
  r.ok = !state_.failed && state_.done;
  r.error = state_.failed ? state_.error : (state_.done ? "" : "stopped before the end");
  r.iters = state_.exchanges;
  r.stats = latency_stats(state_.samples_us);
  return r;
}

}  // namespace rocemu::perftest
