// scenario_net.cc — builds the nodes, connects the flows, drives them from the engine's
// periodic callback and measures (see scenario_net.h).
#include "tests/scenarios/scenario_net.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <type_traits>

#include <rte_errno.h>
#include <rte_mbuf.h>

#include "fabric/cc/dcqcn_hooks.h"
#include "fabric/eal.h"
#include "fabric/realtime_engine.h"
#include "fabric/virtual_engine.h"
#include "nic/roce_host.h"
#include "switchsw/queue_series.h"
#include "switchsw/soft_switch.h"

namespace rocemu::scenario {

namespace {

rte_mempool* scenario_pool() {
  static rte_mempool* pool = [] {
    try {
      fabric::EalOptions o;
      o.program = "rocemu-scenarios";
      o.user_args = {"--log-level", "lib.eal:error"};
      fabric::eal_start(o);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "scenario tests: %s\n", e.what());
      std::abort();
    }
    // 2 KB rooms hold a 1024-MTU RoCE frame; 64k mbufs cover 32 MB of switch buffer.
    rte_mempool* p = rte_pktmbuf_pool_create("scenario_pool", 65535, 256, 0,
                                             RTE_PKTMBUF_HEADROOM + 2048, SOCKET_ID_ANY);
    if (!p) {
      std::fprintf(stderr, "scenario tests: mbuf pool: %s\n", rte_strerror(rte_errno));
      std::abort();
    }
    return p;
  }();
  return pool;
}

struct Flow {
  FlowSpec spec;
  uint32_t qpn = 0, cq = 0;
  nic::MrInfo smr, dmr;
  std::vector<uint8_t> src, dst;
  uint64_t posted = 0, completed = 0;  // messages
  uint64_t total = 0;                  // messages (0: long-lived)
  uint64_t bytes_done = 0, bytes_at_warmup = 0, bytes_at_end = 0;
  uint64_t tx_at_warmup = 0, tx_at_end = 0, tx_at_sample = 0;
  TimeNs finish_ns = kNever;
};

}  // namespace

double jain_index(const std::vector<double>& x) {
  double s = 0, s2 = 0;
  for (double v : x) {
    s += v;
    s2 += v * v;
  }
  return s2 > 0 ? s * s / (static_cast<double>(x.size()) * s2) : 1.0;
}

dcqcn::DcqcnParams dcqcn_profile(const std::string& name) {
  return dcqcn::load_dcqcn_profile(std::string(ROCEMU_SOURCE_ROOT) + "/configs/dcqcn/" + name +
                                   ".toml")
      .dcqcn;
}

std::string trace_path(const std::string& name) {
  const char* dir = std::getenv("SCENARIO_TRACE_DIR");
  return dir && *dir ? std::string(dir) + "/" + name : std::string();
}

namespace {

template <class Engine>
ScenarioResult run_on(Engine& eng, rte_mempool* pool, const ScenarioSpec& s) {
  constexpr bool kVirtual = std::is_same_v<Engine, fabric::VirtualEngine>;
  const Topology& t = s.topo;
  nic::NicParams nicp = s.nic;
  if (s.dcqcn) nicp.ecn_capable = true;

  std::vector<std::unique_ptr<sw::SoftSwitch>> switches(t.nodes().size());
  std::vector<std::unique_ptr<nic::RoceHost>> hosts(t.nodes().size());
  std::vector<nic::RoceHost*> host_ptrs(t.nodes().size(), nullptr);
  for (uint32_t i = 0; i < t.nodes().size(); ++i) {
    if (t.node(i).kind == NodeKind::kSwitch) {
      switches[i] = std::make_unique<sw::SoftSwitch>(s.sw, t, i, pool, s.seed);
      eng.attach(i, switches[i].get());
    } else {
      hosts[i] = std::make_unique<nic::RoceHost>(nicp, t, i, pool, s.seed + i);
      host_ptrs[i] = hosts[i].get();
      eng.attach(i, hosts[i].get());
    }
  }
  std::vector<std::unique_ptr<fabric::DcqcnHooks>> cc;
  if (s.dcqcn) cc = fabric::install_dcqcn(s.dcqcn_params, t, host_ptrs, 64);
  std::vector<fabric::DcqcnHooks*> cc_of(t.nodes().size(), nullptr);
  for (uint32_t i = 0, k = 0; i < t.nodes().size(); ++i)
    if (hosts[i] && s.dcqcn) cc_of[i] = cc[k++].get();

  // Connect one QP pair per flow.
  std::vector<Flow> flows(s.flows.size());
  for (size_t f = 0; f < flows.size(); ++f) {
    Flow& fl = flows[f];
    fl.spec = s.flows[f];
    nic::RoceHost* side[2] = {hosts.at(fl.spec.src).get(), hosts.at(fl.spec.dst).get()};
    if (!side[0] || !side[1]) throw std::runtime_error("flow endpoints must be hosts");
    uint32_t pd[2], qpn[2], cq[2];
    for (int i = 0; i < 2; ++i) {
      pd[i] = side[i]->alloc_pd();
      cq[i] = side[i]->create_cq(1024);
      nic::QpInitAttr a;
      a.pd = pd[i];
      a.send_cq = a.recv_cq = cq[i];
      a.max_send_wr = a.max_recv_wr = 256;
      qpn[i] = side[i]->create_qp(a);
      if (qpn[i] == 0) throw std::runtime_error("create_qp failed");
    }
    nic::ConnectOptions opt;
    opt.path_mtu = nic::mtu_enum(nicp.mtu_bytes);
    opt.sgid_index = s.gid_index;
    for (int i = 0; i < 2; ++i) {
      nic::QpInfo peer = side[1 - i]->local_info(qpn[1 - i]);
      ibv_gid g{};
      if (s.gid_index != 1) {
        if (!side[1 - i]->gid(s.gid_index, g)) throw std::runtime_error("no such GID index");
        peer.gid = nic::ipv6_of(g);
      }
      if (nic::connect_rc(*side[i], qpn[i], peer, opt) != 0)
        throw std::runtime_error("connect_rc failed");
    }
    fl.qpn = qpn[0];
    fl.cq = cq[0];
    fl.src.resize(s.message_bytes);  // bytes that differ per flow and position
    for (uint32_t k = 0; k < s.message_bytes; ++k)
      fl.src[k] = static_cast<uint8_t>((k * 2654435761u + f * 97u + 1u) >> 13);
    fl.dst.assign(s.message_bytes, 0);
    fl.smr = side[0]->reg_mr(pd[0], fl.src.data(), fl.src.size(), IBV_ACCESS_LOCAL_WRITE);
    fl.dmr = side[1]->reg_mr(pd[1], fl.dst.data(), fl.dst.size(),
                             IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (fl.smr.lkey == 0 || fl.dmr.rkey == 0) throw std::runtime_error("reg_mr failed");
    fl.total = fl.spec.bytes == 0 ? 0 : (fl.spec.bytes + s.message_bytes - 1) / s.message_bytes;
    if (fl.spec.fixed_rate_bps) side[0]->set_qp_rate_bps(fl.qpn, fl.spec.fixed_rate_bps);
  }

  ScenarioResult res;
  res.ports.resize(s.watch.size());
  std::vector<double> queue_sum(s.watch.size(), 0);
  uint64_t samples = 0;
  std::vector<uint64_t> port_tx_warm(s.watch.size(), 0);
  bool warm = false, ended = false;
  int64_t cpu_at_warmup_ns = 0;
  TimeNs warmup_now_ns = 0;

  std::unique_ptr<std::ofstream> flow_csv;
  std::unique_ptr<sw::QueueSeriesWriter> queue_csv;
  if (!s.trace.empty()) {
    flow_csv = std::make_unique<std::ofstream>(s.trace + "_flows.csv");
    *flow_csv << "time_ns,flow,rate_gbps,throughput_gbps\n";
    if (!s.watch.empty()) {
      std::vector<uint16_t> ports;
      for (const PortRef& p : s.watch)
        if (p.node == s.watch[0].node) ports.push_back(p.port);
      queue_csv = std::make_unique<sw::QueueSeriesWriter>(
          s.trace + "_queue.csv", s.topo.node(s.watch[0].node).name, ports, s.trace_ns);
    }
  }
  TimeNs next_trace = 0;

  auto wire_tx = [&](uint32_t node, uint16_t port) { return eng.counters(PortRef{node, port}).tx_bytes; };

  auto snapshot_window = [&](bool at_warmup, TimeNs now) {
    if (at_warmup) {
      cpu_at_warmup_ns = thread_cpu_ns();
      warmup_now_ns = now;
    } else {
      const TimeNs win_ns = std::max<TimeNs>(1, now - warmup_now_ns);
      res.window_cpu_share =
          static_cast<double>(thread_cpu_ns() - cpu_at_warmup_ns) / static_cast<double>(win_ns);
    }
    for (size_t f = 0; f < flows.size(); ++f) {
      Flow& fl = flows[f];
      (at_warmup ? fl.bytes_at_warmup : fl.bytes_at_end) = fl.bytes_done;
      (at_warmup ? fl.tx_at_warmup : fl.tx_at_end) = wire_tx(fl.spec.src, 0);
    }
    for (size_t i = 0; i < s.watch.size(); ++i) {
      const uint64_t tx = wire_tx(s.watch[i].node, s.watch[i].port);
      if (at_warmup) {
        port_tx_warm[i] = tx;
      } else {
        const double win_s = static_cast<double>(s.duration_ns - s.warmup_ns) / 1e9;
        const uint64_t rate = t.link_of(s.watch[i]).rate_bps;
        res.ports[i].utilisation = static_cast<double>(tx - port_tx_warm[i]) * 8.0 / (rate * win_s);
      }
    }
  };

  auto step = [&](TimeNs now) {
    bool all_done = true;
    for (Flow& fl : flows) {
      nic::RoceHost& h = *hosts[fl.spec.src];
      ibv_wc wc[32];
      int got;
      while ((got = h.poll_cq(fl.cq, 32, wc)) > 0) {
        for (int k = 0; k < got; ++k) {
          if (wc[k].status != IBV_WC_SUCCESS) {
            ++res.wr_errors;
            continue;
          }
          ++fl.completed;
          fl.bytes_done += wc[k].byte_len ? wc[k].byte_len : s.message_bytes;
        }
      }
      if (fl.total && fl.completed == fl.total && fl.finish_ns == kNever) fl.finish_ns = now;
      if (fl.total && fl.finish_ns == kNever) all_done = false;
      if (now < fl.spec.start_ns) continue;
      const uint64_t limit = fl.total ? fl.total : ~0ull;
      while (fl.posted < limit && fl.posted - fl.completed < s.outstanding) {
        const uint64_t left = fl.total ? fl.spec.bytes - fl.posted * s.message_bytes : s.message_bytes;
        const auto len = static_cast<uint32_t>(std::min<uint64_t>(s.message_bytes, left));
        ibv_sge sge{reinterpret_cast<uint64_t>(fl.src.data()), len, fl.smr.lkey};
        ibv_send_wr wr{};
        wr.wr_id = fl.posted;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.rdma.remote_addr = fl.dmr.addr;
        wr.wr.rdma.rkey = fl.dmr.rkey;
        const ibv_send_wr* bad = nullptr;
        if (h.post_send(fl.qpn, &wr, &bad) != 0) break;
        ++fl.posted;
      }
    }
    if (!warm && now >= s.warmup_ns) {
      warm = true;
      snapshot_window(true, now);
    }
    if (warm && !ended && now >= s.duration_ns) {
      ended = true;
      snapshot_window(false, now);
    }
    if (s.stop_when_complete && all_done) eng.stop();
  };

  auto sample = [&](TimeNs now) {
    if (now >= s.warmup_ns && now < s.duration_ns) {
      ++samples;
      for (size_t i = 0; i < s.watch.size(); ++i) {
        const uint64_t q = switches[s.watch[i].node]->queue_bytes(s.watch[i].port, s.data_priority);
        queue_sum[i] += static_cast<double>(q);
        res.ports[i].max_queue_bytes = std::max<uint64_t>(res.ports[i].max_queue_bytes, q);
      }
    }
    if (!s.trace.empty() && now >= next_trace) {
      next_trace = now + s.trace_ns;
      for (size_t f = 0; f < flows.size(); ++f) {
        Flow& fl = flows[f];
        const uint64_t tx = wire_tx(fl.spec.src, 0);
        const double rate = cc_of[fl.spec.src] ? cc_of[fl.spec.src]->rate_bps(fl.qpn)
                                               : static_cast<double>(fabric::host_line_rate_bps(t, fl.spec.src));
        *flow_csv << now << ',' << f << ',' << rate / 1e9 << ','
                  << static_cast<double>(tx - fl.tx_at_sample) * 8.0 / static_cast<double>(s.trace_ns)
                  << '\n';
        fl.tx_at_sample = tx;
      }
      if (queue_csv) queue_csv->sample(*switches[s.watch[0].node], now);
    }
  };

  if constexpr (kVirtual) {
    eng.every(s.poll_ns, step, 0);
    eng.every(s.sample_ns, sample, 0);
    res.end_ns = eng.run_until(s.duration_ns);
  } else {
    eng.every(s.poll_ns, step);
    eng.every(s.sample_ns, sample);
    res.end_ns = eng.run_for(s.duration_ns);
  }
  if (!ended) snapshot_window(false, res.end_ns);  // stopped early (finite flows): window up to now

  const double win_s = static_cast<double>(std::max<TimeNs>(1, (ended ? s.duration_ns : res.end_ns) - s.warmup_ns)) / 1e9;
  for (Flow& fl : flows) {
    res.goodput_bps.push_back(static_cast<double>(fl.bytes_at_end - fl.bytes_at_warmup) * 8.0 / win_s);
    res.sender_tx_bps.push_back(static_cast<double>(fl.tx_at_end - fl.tx_at_warmup) * 8.0 / win_s);
    res.finish_ns.push_back(fl.finish_ns);
    if (fl.total && fl.finish_ns == kNever) res.all_complete = false;
  }
  if (res.wr_errors) res.all_complete = false;
  for (Flow& fl : flows) {
    // Every message WRITEs the start of src to the start of dst (a short last one less).
    const size_t n =
        fl.spec.bytes ? std::min<uint64_t>(s.message_bytes, fl.spec.bytes) : s.message_bytes;
    if (fl.completed > 0 && !std::equal(fl.src.begin(), fl.src.begin() + n, fl.dst.begin()))
      res.data_ok = false;
  }
  for (size_t i = 0; i < s.watch.size(); ++i)
    res.ports[i].mean_queue_bytes = samples ? queue_sum[i] / static_cast<double>(samples) : 0;
  for (uint32_t i = 0; i < t.nodes().size(); ++i) {
    for (uint16_t p = 0; p < t.node(i).ports.size(); ++p) res.wire_drops += eng.counters(PortRef{i, p}).dropped;
    if (switches[i]) {
      const SwitchSnapshot snap = switches[i]->snapshot(res.end_ns);
      for (const PortCounters& c : snap.ports) {
        for (auto v : c.pfc_pauses_sent) res.pfc_pauses_sent += v;
        res.ecn_marked += c.ecn_marked_packets;
      }
      res.switch_drops += switches[i]->total_drops();
    } else if (hosts[i]) {
      const nic::NicCounters& c = hosts[i]->counters();
      res.retransmitted += c.retransmitted_packets;
      res.timeouts += c.timeouts;
      res.cnps_sent += c.cnps_sent;
      res.cnps_received += c.cnps_received;
      res.ce_received += c.ce_received;
      res.nic_drops += c.drops_total();
    }
  }
  if constexpr (kVirtual) res.events = eng.stats().events;
  else res.events = eng.stats().iterations;
  if (flow_csv) flow_csv->flush();
  if (queue_csv) queue_csv->flush();
  return res;
}

}  // namespace

ScenarioResult run_scenario(const ScenarioSpec& s) {
  rte_mempool* pool = scenario_pool();  // starts EAL
  if (!s.realtime) {
    fabric::VirtualEngine eng(s.topo, {}, s.seed);
    return run_on(eng, pool, s);
  }
  fabric::RealtimeOptions opt;
  opt.pool_mbufs = 32767;
  opt.mbuf_data_bytes = 2048;
  // The engine outlives the nodes run_on creates (they hold mbufs of its pool).
  fabric::RealtimeEngine eng(s.topo, std::vector<fabric::LinkOptions>(s.topo.links().size()), opt);
  return run_on(eng, eng.pool(), s);
}

}  // namespace rocemu::scenario
