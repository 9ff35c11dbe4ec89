// switch_job.cc — the testbed's switch process: plan, run with external hosts, summary.
#include "fabric/switch_job.h"

#include <rte_lcore.h>

#include <algorithm>
#include <cstdio>

#include "fabric/run_taps.h"
#include "fabric/switch_nodes.h"
#include "switchsw/soft_switch.h"

namespace rocemu::fabric {

namespace {

constexpr TimeNs kStopPollNs = kNsPerMs;

/// Device of port `p`'s link end: the link's a_dev/b_dev, default re<link>a / re<link>b.
std::string port_dev(const RunConfig& cfg, PortRef p) {
  const Topology& t = cfg.topology.topology;
  const uint32_t li = t.node(p.node).ports.at(p.port).link;
  const bool end_b = t.links().at(li).b == p;
  const LinkOptions lo = li < cfg.topology.links.size() ? cfg.topology.links[li] : LinkOptions{};
  const std::string& dev = end_b ? lo.b_dev : lo.a_dev;
  return dev.empty() ? default_iface(li, end_b) : dev;
}

}  // namespace

std::vector<HostPlanRow> host_plan(const RunConfig& cfg) {
  const Topology& t = cfg.topology.topology;
  std::vector<HostPlanRow> rows;
  ConfigErrors errors;
  for (uint32_t h : t.hosts()) {
    const TopoNode& n = t.node(h);
    if (n.ports.size() != 1) {
      errors.add("topology.nodes." + n.name, "", "a testbed host needs exactly one link");
      continue;
    }
    const TopoPort& hp = n.ports[0];
    if (t.node(hp.peer.node).kind != NodeKind::kSwitch) {
      errors.add("topology.nodes." + n.name, "",
                 "is linked to host " + t.node(hp.peer.node).name +
                     ": rocemu-switch needs every host linked to a switch");
      continue;
    }
    HostPlanRow r;
    r.host = n.name;
    r.ipv4 = n.ipv4;
    r.host_mac = hp.mac;
    r.gateway_mac = t.node(hp.peer.node).ports.at(hp.peer.port).mac;
    r.switch_dev = port_dev(cfg, hp.peer);
    r.host_dev = port_dev(cfg, PortRef{h, 0});
    r.rate_bps = t.links().at(hp.link).rate_bps;
    rows.push_back(r);
  }
  if (!errors.empty()) throw ConfigError(errors.format(cfg.source));
  return rows;
}

std::string plan_tsv(const std::vector<HostPlanRow>& rows) {
  std::string s = "host\tipv4\thost_mac\tgateway_mac\tswitch_dev\thost_dev\trate_bps\n";
  for (const auto& r : rows)
    s += r.host + "\t" + ipv4_to_string(r.ipv4) + "\t" + mac_to_string(r.host_mac) + "\t" +
         mac_to_string(r.gateway_mac) + "\t" + r.switch_dev + "\t" + r.host_dev + "\t" +
         std::to_string(r.rate_bps) + "\n";
  return s;
}

std::vector<SwitchLinkRow> switch_links(const RunConfig& cfg) {
  const Topology& t = cfg.topology.topology;
  std::vector<SwitchLinkRow> rows;
  for (uint32_t li = 0; li < t.links().size(); ++li) {
    const TopoLink& l = t.links()[li];
    if (t.node(l.a.node).kind != NodeKind::kSwitch || t.node(l.b.node).kind != NodeKind::kSwitch)
      continue;
    rows.push_back(SwitchLinkRow{li, t.node(l.a.node).name, t.node(l.b.node).name,
                                 port_dev(cfg, l.a), port_dev(cfg, l.b), l.rate_bps});
  }
  return rows;
}

std::string switch_links_tsv(const std::vector<SwitchLinkRow>& rows) {
  std::string s = "link\ta_node\tb_node\ta_dev\tb_dev\trate_bps\n";
  for (const auto& r : rows)
    s += std::to_string(r.link) + "\t" + r.a_node + "\t" + r.b_node + "\t" + r.a_dev + "\t" +
         r.b_dev + "\t" + std::to_string(r.rate_bps) + "\n";
  return s;
}

SwitchRunResult run_switches_realtime(const RunConfig& cfg, const SwitchRunOptions& opt) {
  const Topology& t = cfg.topology.topology;
  RealtimeOptions ro = realtime_options(cfg);
  ro.idle_sleep_ns = opt.idle_sleep_ns.value_or(cfg.testbed.idle_sleep_ns);
  ro.external_nodes.assign(t.nodes().size(), false);
  for (uint32_t h : t.hosts()) ro.external_nodes[h] = true;
  if (!cfg.testbed.placement.empty()) {
    ro.node_lcore.assign(t.nodes().size(), rte_get_main_lcore());
    for (const auto& [name, lc] : cfg.testbed.placement)
      if (t.node(static_cast<uint32_t>(t.find(name))).kind == NodeKind::kSwitch)
        ro.node_lcore[static_cast<size_t>(t.find(name))] = lc;
  }
  RealtimeEngine e(t, cfg.topology.links, ro);
  // rate_gbps = "port": the switches are built with the rates the ports reported.
  const RunConfig run = with_link_rates(cfg, e.link_rates_bps());
  SwitchRunResult r;
  {
    auto switches = build_switches(run, e.pool());
    std::vector<const sw::SoftSwitch*> view;
    for (uint32_t i = 0; i < switches.size(); ++i) {
      view.push_back(switches[i].get());
      if (switches[i]) e.attach(i, switches[i].get());
    }
    std::vector<sw::SoftSwitch*> controlled;
    for (const auto& s : switches) controlled.push_back(s.get());
    RunTaps taps(cfg, controlled, opt.out_dir, ro.node_lcore, rte_get_main_lcore());
    taps.attach(e);
    if (opt.stop)
      e.every(kStopPollNs, [&](TimeNs) {
        if (opt.stop->load(std::memory_order_relaxed)) e.stop();
      });
    if (opt.on_ready) opt.on_ready();
    taps.begin();
    r.elapsed_ns = e.run_for(opt.duration_ns > 0 ? opt.duration_ns : kNever);
    taps.end();
    r.agent = taps.agent_stats();
    r.engine = e.stats();
    for (uint32_t n = 0; n < t.nodes().size(); ++n) {
      if (!switches[n]) continue;
      const SwitchSnapshot snap = switches[n]->snapshot(r.elapsed_ns);
      for (uint16_t p = 0; p < t.node(n).ports.size(); ++p) {
        SwitchPortStats s;
        s.node = t.node(n).name;
        s.port = p;
        s.peer = t.node(t.node(n).ports[p].peer.node).name;
        s.dev = port_dev(cfg, PortRef{n, p});
        const WireCounters& w = e.counters(PortRef{n, p});
        s.rx_packets = w.rx_packets;
        s.rx_bytes = w.rx_bytes;
        s.tx_packets = w.tx_packets;
        s.tx_bytes = w.tx_bytes;
        s.wire_drops = w.dropped + w.rx_no_mbuf + w.rx_missed;
        for (int d = 0; d < sw::kNumRxDrops; ++d)
          s.drops[d] = switches[n]->drops(p, static_cast<sw::RxDrop>(d));
        if (p < snap.ports.size()) {
          const PortCounters& c = snap.ports[p];
          s.peak_queue_bytes =
              *std::max_element(c.peak_queue_bytes.begin(), c.peak_queue_bytes.end());
          s.ecn_marked_packets = c.ecn_marked_packets;
          for (auto v : c.pfc_pauses_sent) s.pfc_pauses_sent += v;
          for (auto v : c.pfc_pauses_received) s.pfc_pauses_received += v;
          for (auto v : c.pfc_storms) s.pfc_storms += v;
          s.mbuf_alloc_failures = c.mbuf_alloc_failures;
        }
        r.ports.push_back(s);
      }
    }
  }
  return r;
}

std::string switch_summary_text(const SwitchRunResult& r) {
  char line[512];
  std::string s;
  std::snprintf(line, sizeof line,
                "rocemu-switch: ran %.3f s, %llu poll iterations, %llu idle sleeps\n",
                static_cast<double>(r.elapsed_ns) / static_cast<double>(kNsPerSec),
                static_cast<unsigned long long>(r.engine.iterations),
                static_cast<unsigned long long>(r.engine.idle_sleeps));
  s += line;
  s += agent_text(r.agent);
  std::snprintf(line, sizeof line, "%-12s %-10s %-8s %10s %12s %10s %12s %10s %8s %8s %8s  %s\n",
                "port", "dev", "peer", "rx_pkts", "rx_bytes", "tx_pkts", "tx_bytes", "peak_q_B",
                "ecn", "pfc_tx", "pfc_rx", "drops");
  s += line;
  for (const auto& p : r.ports) {
    std::string drops;
    for (int d = 0; d < sw::kNumRxDrops; ++d)
      if (p.drops[d] > 0)
        drops += std::string(drops.empty() ? "" : " ") +
                 sw::rx_drop_name(static_cast<sw::RxDrop>(d)) + "=" + std::to_string(p.drops[d]);
    if (p.wire_drops > 0)
      drops += std::string(drops.empty() ? "" : " ") + "wire=" + std::to_string(p.wire_drops);
    if (drops.empty()) drops = "0";
    if (p.pfc_storms > 0) drops += " pfc_watchdog_storms=" + std::to_string(p.pfc_storms);
    if (p.mbuf_alloc_failures > 0)
      drops += " mbuf_alloc_failures=" + std::to_string(p.mbuf_alloc_failures);
    const std::string name = p.node + ":" + std::to_string(p.port);
    std::snprintf(
        line, sizeof line,
        "%-12s %-10s %-8s %10llu %12llu %10llu %12llu %10llu %8llu %8llu %8llu  %s\n", name.c_str(),
        p.dev.c_str(), p.peer.c_str(), static_cast<unsigned long long>(p.rx_packets),
        static_cast<unsigned long long>(p.rx_bytes), static_cast<unsigned long long>(p.tx_packets),
        static_cast<unsigned long long>(p.tx_bytes),
        static_cast<unsigned long long>(p.peak_queue_bytes),
        static_cast<unsigned long long>(p.ecn_marked_packets),
        static_cast<unsigned long long>(p.pfc_pauses_sent),
        static_cast<unsigned long long>(p.pfc_pauses_received), drops.c_str());
    s += line;
  }
  return s;
}

std::string switch_summary_csv(const SwitchRunResult& r) {
  std::string s =
      "node,port,peer,dev,rx_packets,rx_bytes,tx_packets,tx_bytes,wire_drops,peak_queue_bytes,"
      "ecn_marked_packets,pfc_pauses_sent,pfc_pauses_received";
  for (int d = 0; d < sw::kNumRxDrops; ++d)
    s += std::string(",drop_") + sw::rx_drop_name(static_cast<sw::RxDrop>(d));
  s += ",pfc_storms,mbuf_alloc_failures,elapsed_ns\n";
  for (const auto& p : r.ports) {
    s += p.node + "," + std::to_string(p.port) + "," + p.peer + "," + p.dev;
    for (uint64_t v :
         {p.rx_packets, p.rx_bytes, p.tx_packets, p.tx_bytes, p.wire_drops, p.peak_queue_bytes,
          p.ecn_marked_packets, p.pfc_pauses_sent, p.pfc_pauses_received})
      s += "," + std::to_string(v);
    for (uint64_t v : p.drops) s += "," + std::to_string(v);
    s += "," + std::to_string(p.pfc_storms) + "," + std::to_string(p.mbuf_alloc_failures);
    s += "," + std::to_string(r.elapsed_ns) + "\n";
  }
  return s;
}

}  // namespace rocemu::fabric
