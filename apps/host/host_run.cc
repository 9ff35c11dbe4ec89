// host_run.cc — rocemu-host's checks, start instant and poll loop (see host_run.h).
#include "apps/host/host_run.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "fabric/eal.h"
#include "fabric/kernel_iface.h"
#include "fabric/realtime_engine.h"
#include "fabric/workload/progress.h"
#include "fabric/workload_fabric.h"
#include "nic/packet.h"
#include "nic/roce_host.h"

namespace rocemu::apps {

namespace {

constexpr TimeNs kPullIntervalNs = 10 * kNsPerUs;  // as the engines' queue_sample_ns
constexpr uint32_t kMaxPoolMbufs = 8191;           // the host's own frames
constexpr uint32_t kRxRingMbufs = 4096;            // and the port's receive ring
constexpr uint32_t kMbufDataBytes = 2048;          // af_packet's default frames: IB MTU 1024
constexpr int64_t kStartFileWaitNs = 60'000'000'000;  // --start-file: give up after 60 s

/// Sleeps until CLOCK_REALTIME reaches `at_ns` (the last 2 ms spinning, for precision).
void wait_until(int64_t at_ns) {
  const int64_t spin_ns = 2'000'000;
  if (at_ns - realtime_ns() > spin_ns) {
    const int64_t wake = at_ns - spin_ns;
    timespec ts{static_cast<time_t>(wake / 1'000'000'000), static_cast<long>(wake % 1'000'000'000)};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
  }
  while (realtime_ns() < at_ns) {
  }
}

/// --start-file: polls `path` every millisecond until it holds the start instant (the
/// script writes it with a rename, so a partial file is never seen). Throws
/// std::runtime_error after kStartFileWaitNs.
int64_t wait_for_start_file(const std::string& path) {
  const int64_t give_up = realtime_ns() + kStartFileWaitNs;
  while (true) {
    if (auto at = read_start_file(path)) return *at;
    if (realtime_ns() > give_up)
      throw std::runtime_error("--start-file " + path + ": no start instant after " +
                               std::to_string(kStartFileWaitNs / 1'000'000'000) +
                               " s (workload.sh writes it once every host is ready)");
    const timespec ms{0, 1'000'000};
    nanosleep(&ms, nullptr);
  }
}

}  // namespace

int64_t realtime_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::vector<std::string> check_host_run(const fabric::RunConfig& cfg, const HostOptions& o,
                                        int64_t now_ns, std::vector<std::string>& warnings) {
  std::vector<std::string> err;
  const Topology& t = cfg.topology.topology;
  if (!cfg.workload) err.push_back(cfg.source + ": the run has no [workload] table");
  const int64_t node = t.find(o.host);
  std::string hosts;
  for (uint32_t h : t.hosts()) hosts += (hosts.empty() ? "" : ", ") + t.node(h).name;
  if (node < 0 || t.node(static_cast<uint32_t>(node)).kind != NodeKind::kHost) {
    err.push_back("--host=" + o.host + ": not a host of the topology (hosts: " + hosts + ")");
  }
  const std::optional<MacAddr> own_mac = fabric::iface_mac(o.iface);
  const bool has_mac = own_mac.has_value();
  const MacAddr mac = own_mac.value_or(MacAddr{});
  const uint32_t ip = has_mac ? fabric::iface_ipv4(o.iface).value_or(0) : 0;
  if (!has_mac) {
    err.push_back("-d " + o.iface +
                  ": no such interface with a MAC address (in this network namespace)");
  } else if (ip == 0) {
    err.push_back("-d " + o.iface +
                  ": the interface has no IPv4 address (the testbed gives it the host's)");
  } else if (node >= 0 && t.node(static_cast<uint32_t>(node)).kind == NodeKind::kHost) {
    const TopoNode& n = t.node(static_cast<uint32_t>(node));
    if (ip != n.ipv4)
      err.push_back("-d " + o.iface + ": has IPv4 " + ipv4_to_string(ip) + " but host " + o.host +
                    " is " + ipv4_to_string(n.ipv4) + " in the topology");
    if (!n.ports.empty() && mac != n.ports[0].mac)
      warnings.push_back("-d " + o.iface + ": MAC " + mac_to_string(mac) +
                         " differs from the topology's " + mac_to_string(n.ports[0].mac) + " for " +
                         o.host + " (frames carry the topology's)");
  }
  if (has_mac) {
    // The largest frame's IP packet: payload + IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ICRC 4.
    const uint32_t ip_bytes = cfg.nic_params.mtu_bytes + 60;
    const uint32_t iface_mtu = fabric::iface_mtu(o.iface).value_or(ip_bytes);
    if (iface_mtu < ip_bytes)
      err.push_back("-d " + o.iface + ": MTU " + std::to_string(iface_mtu) + " is below the " +
                    std::to_string(ip_bytes) + "-byte packets of [nic] mtu_bytes = " +
                    std::to_string(cfg.nic_params.mtu_bytes) + " (ip link set " + o.iface +
                    " mtu " + std::to_string(ip_bytes) + ")");
  }
  if (o.start_at_ns && now_ns - *o.start_at_ns > o.max_start_lag_ns) {
    err.push_back("--start-at=" + std::to_string(*o.start_at_ns) + ": " +
                  std::to_string((now_ns - *o.start_at_ns) / 1'000'000) +
                  " ms in the past (more than --max-start-lag-ms=" +
                  std::to_string(o.max_start_lag_ns / 1'000'000) + "); pass now + a few seconds");
  }
  return err;
}

/// One line of the local NIC's packet counters and, when any, its receive drops by reason.
void print_nic_counters(const std::string& host, const nic::RoceHost& nic, TimeNs now) {
  const nic::NicCounters& c = nic.counters();
  std::printf("rocemu-host: %s nic: rx %llu tx %llu packets, %llu retransmitted, %llu timeouts,"
              " %llu NAKs sent, %llu received; rx drops %llu",
              host.c_str(), static_cast<unsigned long long>(c.rx_packets),
              static_cast<unsigned long long>(c.tx_packets),
              static_cast<unsigned long long>(c.retransmitted_packets),
              static_cast<unsigned long long>(c.timeouts),
              static_cast<unsigned long long>(c.naks_sent),
              static_cast<unsigned long long>(c.naks_received),
              static_cast<unsigned long long>(c.drops_total()));
  for (size_t i = 0; i < c.drops.size(); ++i)
    if (c.drops[i] > 0)
      std::printf(" %s=%llu", nic::rx_drop_name(static_cast<nic::RxDrop>(i)),
                  static_cast<unsigned long long>(c.drops[i]));
  std::printf("\nrocemu-host: %s nic: %s\n", host.c_str(),
              nic::pfc_and_pool_text(c, nic.paused_ns_total(now)).c_str());
}

int run_host(const fabric::RunConfig& cfg, const HostOptions& o) {
  const Topology& t = cfg.topology.topology;
  const workload::WorkloadConfig wcfg = fabric::make_workload_config_of(cfg);
  const auto node = static_cast<uint32_t>(t.find(o.host));
  int32_t local = -1;
  for (size_t h = 0; h < wcfg.hosts.size(); ++h)
    if (wcfg.hosts[h].id == node) local = static_cast<int32_t>(h);
  if (local < 0) throw std::invalid_argument("host " + o.host + " takes no part in the workload");

  fabric::EalOptions eo;  // the engine opens the port
  eo.program = "rocemu-host";
  eo.user_args = {"--log-level", "lib.eal:error"};
  eo.user_args.insert(eo.user_args.end(), o.eal_args.begin(), o.eal_args.end());
  fabric::eal_start(eo);

  const uint64_t region = fabric::workload_region_bytes(wcfg);
  uint8_t* sink = fabric::map_shared_sink_region(region);
  fabric::WorkloadResult r;
  std::vector<fabric::FlowFailure> failures;
  {
    // The real-time engine with every other node external: this host's one link end is an
    // af_packet port on -d, the rest of the network lives in other processes.
    fabric::RealtimeOptions ro;
    ro.backend = fabric::PortBackend::kAfPacket;
    ro.external_nodes.assign(t.nodes().size(), true);
    ro.external_nodes[node] = false;
    ro.pool_mbufs = std::min(cfg.testbed.pool_mbufs, kMaxPoolMbufs) + kRxRingMbufs;
    ro.mbuf_data_bytes = kMbufDataBytes;
    ro.af_packet = fabric::AfPacketRing{4096, 0};
    ro.idle_sleep_ns = o.idle_sleep_ns.value_or(cfg.testbed.idle_sleep_ns);
    std::vector<fabric::LinkOptions> links = cfg.topology.links;
    links.resize(t.links().size());
    const TopoLink& own = t.links().at(t.node(node).ports.at(0).link);
    (own.a.node == node ? links[t.node(node).ports[0].link].a_dev
                        : links[t.node(node).ports[0].link].b_dev) = o.iface;
    const uint32_t frame_bytes = cfg.nic_params.mtu_bytes + 74 + 4;  // + VLAN slack
    if (frame_bytes > kMbufDataBytes)
      throw std::runtime_error("[nic] mtu_bytes = " + std::to_string(cfg.nic_params.mtu_bytes) +
                               ": frames of " + std::to_string(frame_bytes) +
                               " bytes do not fit the port's " + std::to_string(kMbufDataBytes) +
                               "-byte receive buffers (use mtu_bytes <= 1024)");
    fabric::RealtimeEngine e(t, links, ro);
    fabric::WorkloadFabricOptions fo;
    fo.local_host = local;
    fo.sink = sink;
    fabric::WorkloadFabric f(cfg, wcfg, e.pool(), cfg.workload_qps_per_pair, fo);
    e.attach(node, f.node(node));
    const TimeNs limit_ns = o.time_limit_ns.value_or(cfg.testbed.time_limit_ns);
    // Ready: the port receives and every QP is connected, so a peer's frames from now on are
    // queued on the port, not lost. With --start-file the start instant is set only once
    // every host said so (a slow setup delays the run instead of failing its flows).
    int64_t start_at = 0;
    if (!o.start_file.empty()) {
      std::printf("rocemu-host: %s ready\n", o.host.c_str());
      std::fflush(stdout);
      start_at = wait_for_start_file(o.start_file);
    } else {
      start_at = o.start_at_ns.value_or(realtime_ns());
    }
    std::printf("rocemu-host: %s (%s) on %s, %llu hosts, start in %.3f s\n", o.host.c_str(),
                ipv4_to_string(t.node(node).ipv4).c_str(), o.iface.c_str(),
                static_cast<unsigned long long>(wcfg.hosts.size()),
                static_cast<double>(start_at - realtime_ns()) / 1e9);
    std::fflush(stdout);
    wait_until(start_at);
    e.reset_clock();  // workload time 0 = engine time 0 = the start instant
    f.pull(0, 2 * kPullIntervalNs);
    // In real time, workload time is wall time: "sim" in the line is the workload clock.
    workload::Progress progress(wcfg.params.start_ns, std::min(limit_ns, wcfg.params.stop_ns()));
    bool hit_limit = false;
    e.every(kPullIntervalNs, [&](TimeNs now) {
      f.pull(now, 2 * kPullIntervalNs);
      if (auto line = progress.update(now, f.flows_finished(), now))
        std::fprintf(stderr, "rocemu-host %s: %s\n", o.host.c_str(), line->c_str());
      if (now >= limit_ns) {
        hit_limit = true;
        e.stop();
      }
      // This host's flows are over and the workload's last start + grace has passed: the
      // peers' flows to us are done, or have had their time.
      const TimeNs last = f.last_start_ns();
      if (f.settled() && last != kNever && now >= std::max<TimeNs>(last, 0) + o.grace_ns) e.stop();
    });
    const TimeNs now = e.run_for(kNever);
    r = f.result(("host:" + o.host).c_str(), now);
    r.wall_ns = now;  // the loop ran in real time: engine time is wall time since the start
    failures = f.failures();
    print_nic_counters(o.host, f.host(node), now);
    std::printf("rocemu-host: %s stopped at %.3f ms of workload time%s\n", o.host.c_str(),
                static_cast<double>(now) / 1e6, hit_limit ? " (time limit)" : "");
  }
  fabric::unmap_shared_sink_region(sink, region);
  for (const fabric::FlowFailure& ff : failures) {
    const std::string dst = t.node(ff.flow.dst).name, ip = ipv4_to_string(t.node(ff.flow.dst).ipv4);
    const bool timeout = ff.status == IBV_WC_RETRY_EXC_ERR;
    std::fprintf(stderr, "rocemu-host: flow %llu %s -> %s (%s, %llu bytes) failed: %s%s\n",
                 static_cast<unsigned long long>(ff.flow.id), o.host.c_str(), dst.c_str(),
                 ip.c_str(), static_cast<unsigned long long>(ff.flow.size_bytes),
                 nic::wc_status_name(ff.status),
                 timeout ? (" (timeout: no answer from " + ip + "; is rocemu-host running for " +
                            dst + " and the link up?)")
                               .c_str()
                         : "");
  }
  if (r.flows_failed > failures.size())
    std::fprintf(stderr, "rocemu-host: %llu flows failed in all\n",
                 static_cast<unsigned long long>(r.flows_failed));
  std::fputs(fabric::workload_text(r).c_str(), stdout);
  fabric::write_workload_files(r, o.out_dir);
  std::fputs(fabric::workload_files_line(r, o.out_dir).c_str(), stdout);
  if (!r.all_finished)
    std::fprintf(stderr, "rocemu-host: %s: %llu flows unfinished, %llu failed\n", o.host.c_str(),
                 static_cast<unsigned long long>(r.summary.flows_unfinished),
                 static_cast<unsigned long long>(r.flows_failed));
  fabric::eal_stop();
  return fabric::workload_exit_status(r);
}

}  // namespace rocemu::apps
