// realtime_engine.cc — ports, wire-time emulation and the poll loop of the real-time engine.
#include "fabric/realtime_engine.h"

#include <net/if.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <spdlog/spdlog.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>

#include "fabric/idle_backoff.h"
#include "fabric/kernel_neighbours.h"
#include "fabric/lazy_pool.h"

namespace rocemu::fabric {

namespace {
std::atomic<uint32_t> g_instances{0};

[[noreturn]] void fail(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + rte_strerror(err < 0 ? -err : err));
}
}  // namespace

const char* backend_name(PortBackend b) noexcept {
  switch (b) {
    case PortBackend::kRing: return "ring";
    case PortBackend::kAfPacket: return "af_packet";
    case PortBackend::kAfXdp: return "af_xdp";
    case PortBackend::kTap: return "tap";
    case PortBackend::kMemif: return "memif";
    case PortBackend::kPci: return "pci";
  }
  return "?";
}

bool parse_backend(const std::string& s, PortBackend& out) noexcept {
  for (auto b : {PortBackend::kRing, PortBackend::kAfPacket, PortBackend::kAfXdp, PortBackend::kTap,
                 PortBackend::kMemif, PortBackend::kPci})
    if (s == backend_name(b)) {
      out = b;
      return true;
    }
  return false;
}

void prefault_pool(rte_mempool* pool) noexcept {
  rte_mempool_mem_iter(
      pool,
      [](rte_mempool*, void*, rte_mempool_memhdr* memhdr, unsigned) {
        // One write per 4 KB page; the pool holds no packets yet.
        auto* p = static_cast<volatile uint8_t*>(memhdr->addr);
        for (size_t off = 0; off < memhdr->len; off += 4096) p[off] = p[off];
      },
      nullptr);
}

RunPool::RunPool(uint32_t n, uint32_t data_bytes, Fault fault) {
  static std::atomic<uint32_t> counter{0};
  const std::string name = "rocemu_run_" + std::to_string(counter.fetch_add(1));
  const auto data_room = static_cast<uint16_t>(RTE_PKTMBUF_HEADROOM + data_bytes);
  lazy_ = fault == Fault::kLazy;
  if (lazy_ && !lazy_pool_ops_registered())
    throw std::runtime_error(
        "mbuf pool of " + std::to_string(n) + " mbufs: DPDK's table of mempool drivers is full (" +
        std::to_string(RTE_MEMPOOL_MAX_OPS_IDX) +
        " slots, taken by the drivers EAL loaded): the virtual-time pool needs one of its own");
  pool_ = lazy_ ? create_lazy_pool(name, n, data_room)
                : rte_pktmbuf_pool_create(name.c_str(), n, 256, 0, data_room,
                                          static_cast<int>(rte_socket_id()));
  if (!pool_)
    throw std::runtime_error("mbuf pool of " + std::to_string(n) +
                             " mbufs: " + std::string(rte_strerror(rte_errno)));
  if (fault == Fault::kPrefault) prefault_pool(pool_);
}

RunPool::~RunPool() {
  if (lazy_) {
    free_lazy_pool(pool_);
  } else {
    rte_mempool_free(pool_);
  }
}

std::string default_iface(uint32_t link, bool end_b) {
  return "re" + std::to_string(link) + (end_b ? "b" : "a");
}

std::string vdev_args(PortBackend b, uint32_t unique, uint32_t link, bool end_b,
                      const std::string& dev, const std::string& memif_socket,
                      const AfPacketRing& af_packet) {
  const std::string iface = dev.empty() ? default_iface(link, end_b) : dev;
  const std::string n = std::to_string(unique);
  switch (b) {
    case PortBackend::kAfPacket: {
      std::string args = "net_af_packet" + n + ",iface=" + iface +
                         ",framecnt=" + std::to_string(af_packet.frames) + ",qdisc_bypass=1";
      if (af_packet.frame_bytes != 0) {  // a block must hold a frame
        const std::string bytes = std::to_string(af_packet.frame_bytes);
        args += ",framesz=" + bytes + ",blocksz=" + bytes;
      }
      return args;
    }
    case PortBackend::kAfXdp:
      return "net_af_xdp" + n + ",iface=" + iface + ",start_queue=0,queue_count=1";
    case PortBackend::kTap:
      return "net_tap" + n + ",iface=" + iface;
    case PortBackend::kMemif:
      // The a end serves, the b end connects; the link index is the memif id.
      return "net_memif" + n + ",role=" + (end_b ? "client" : "server") + ",id=" +
             std::to_string(link) + ",socket=" + memif_socket;
    case PortBackend::kRing:
    case PortBackend::kPci:
      break;
  }
  return {};
}

std::string check_external_nodes(const Topology& topo, const RealtimeOptions& opt) {
  if (opt.external_nodes.empty()) return {};
  if (opt.external_nodes.size() != topo.nodes().size())
    return "external_nodes has " + std::to_string(opt.external_nodes.size()) +
           " entries, the topology " + std::to_string(topo.nodes().size()) + " nodes";
  for (uint32_t n = 0; n < topo.nodes().size(); ++n) {
    if (!opt.external_nodes[n]) continue;
    if (opt.backend == PortBackend::kRing || opt.backend == PortBackend::kMemif)
      return std::string("node ") + topo.node(n).name + " is external (hosted by another process), but " +
             backend_name(opt.backend) +
             " ports create both ends of a link in this process: use af_packet, af_xdp, tap or pci";
  }
  return {};
}

uint32_t max_ethdev_ports() noexcept { return RTE_MAX_ETHPORTS; }

std::string check_port_count(const Topology& topo, const RealtimeOptions& opt) {
  const auto external = [&](uint32_t node) {
    return node < opt.external_nodes.size() && opt.external_nodes[node];
  };
  uint32_t ends = 0;
  for (const auto& l : topo.links()) ends += (external(l.a.node) ? 0 : 1) + (external(l.b.node) ? 0 : 1);
  if (ends <= max_ethdev_ports()) return {};
  return "the topology's " + std::to_string(topo.links().size()) + " links need " +
         std::to_string(ends) + " DPDK ports in this process (one per link end), and this DPDK "
         "build allows " + std::to_string(max_ethdev_ports()) +
         " (RTE_MAX_ETHPORTS): run it in virtual time (rocemu-sim), or put hosts in their own "
         "processes (rocemu-host with rocemu-switch, docs/testbed.md)";
}

RealtimeEngine::RealtimeEngine(const Topology& topo, const std::vector<LinkOptions>& links,
                               const RealtimeOptions& opt)
    : instance_(g_instances.fetch_add(1)) {
  if (const std::string why = check_external_nodes(topo, opt); !why.empty())
    throw std::invalid_argument("real-time engine: " + why);
  if (const std::string why = check_port_count(topo, opt); !why.empty())
    throw std::invalid_argument("real-time engine: " + why);
  for (uint32_t li = 0; li < links.size(); ++li)
    if (links[li].rate_from_port && opt.backend != PortBackend::kPci)
      throw std::invalid_argument("real-time engine: link " + std::to_string(li) +
                                  " has rate_gbps = \"port\", which needs ports = \"pci\"");
  external_ = opt.external_nodes;
  external_.resize(topo.nodes().size(), false);
  // The PMDs report a missing interface as EPERM; say what is wrong, before anything is made.
  if (opt.backend == PortBackend::kAfPacket || opt.backend == PortBackend::kAfXdp) {
    for (uint32_t li = 0; li < topo.links().size(); ++li) {
      const auto& l = topo.links()[li];
      const LinkOptions lo = li < links.size() ? links[li] : LinkOptions{};
      for (bool end_b : {false, true}) {
        if (external_[end_b ? l.b.node : l.a.node]) continue;
        const std::string& dev = end_b ? lo.b_dev : lo.a_dev;
        const std::string iface = dev.empty() ? default_iface(li, end_b) : dev;
        if (if_nametoindex(iface.c_str()) == 0)
          throw std::runtime_error("link " + std::to_string(li) + ": no network interface '" + iface +
                                   "' in this network namespace (" + backend_name(opt.backend) +
                                   " opens an existing one; see docs/testbed.md)");
      }
    }
  }
  const std::string tag = "re" + std::to_string(getpid() % 100000) + "_" + std::to_string(instance_);
  // AF_XDP shares the pool's memory as its umem, whose chunks (one mbuf each) must fit a
  // 4 KB page: 9 KB data rooms make the PMD fail with "Failed to create umem".
  mbuf_data_bytes_ = opt.backend == PortBackend::kAfXdp ? std::min(opt.mbuf_data_bytes, kAfXdpMbufDataBytes)
                                                        : opt.mbuf_data_bytes;
  pool_ = std::make_unique<RunPool>(opt.pool_mbufs, mbuf_data_bytes_);

  const auto& tn = topo.nodes();
  nodes_.assign(tn.size(), nullptr);
  node_lcore_ = opt.node_lcore;
  idle_sleep_ns_ = opt.idle_sleep_ns;
  if (!node_lcore_.empty() && node_lcore_.size() != tn.size())
    throw std::invalid_argument("node_lcore must name one lcore per node");
  for (uint32_t n = 0; n < tn.size(); ++n) {
    port_base_.push_back(static_cast<uint32_t>(ports_.size()));
    for (uint16_t i = 0; i < tn[n].ports.size(); ++i) {
      Port p;
      p.node = n;
      p.index = i;
      p.rate_bps = topo.links().at(tn[n].ports[i].link).rate_bps;
      ports_.push_back(p);
      pci_dev_.emplace_back();
    }
  }
  const std::string memif_socket = opt.memif_socket.empty()
                                       ? "/tmp/rocemu-memif-" + std::to_string(getpid()) + ".sock"
                                       : opt.memif_socket;
  uint32_t unique = instance_ * 1000;
  for (uint32_t li = 0; li < topo.links().size(); ++li) {
    const auto& l = topo.links()[li];
    const LinkOptions lo = li < links.size() ? links[li] : LinkOptions{};
    Port& pa = ports_[port_base_[l.a.node] + l.a.port];
    Port& pb = ports_[port_base_[l.b.node] + l.b.port];
    if (opt.backend == PortBackend::kRing) {
      const std::string base = tag + "_l" + std::to_string(li);
      const unsigned flags = RING_F_SP_ENQ | RING_F_SC_DEQ;
      rte_ring* ab = rte_ring_create((base + "ab").c_str(), opt.ring_size, SOCKET_ID_ANY, flags);
      rte_ring* ba = rte_ring_create((base + "ba").c_str(), opt.ring_size, SOCKET_ID_ANY, flags);
      if (!ab || !ba) fail("ring wire of link " + std::to_string(li), rte_errno);
      rings_.push_back(ab);
      rings_.push_back(ba);
      const int a = rte_eth_from_rings((base + "a").c_str(), &ba, 1, &ab, 1, SOCKET_ID_ANY);
      const int b = rte_eth_from_rings((base + "b").c_str(), &ab, 1, &ba, 1, SOCKET_ID_ANY);
      if (a < 0 || b < 0) fail("rte_eth_from_rings for link " + std::to_string(li), rte_errno);
      pa.ethdev = static_cast<uint16_t>(a);
      pb.ethdev = static_cast<uint16_t>(b);
    } else if (opt.backend == PortBackend::kPci) {
      for (auto [p, dev] : {std::pair{&pa, lo.a_dev}, std::pair{&pb, lo.b_dev}}) {
        if (external_[p == &pa ? l.a.node : l.b.node]) continue;  // the other process's end
        uint16_t id = 0;
        if (dev.empty() || rte_eth_dev_get_port_by_name(dev.c_str(), &id) != 0)
          throw std::runtime_error("link " + std::to_string(li) + ": PCI device '" + dev +
                                   "' not found (set a_dev/b_dev and pass it to EAL)");
        p->ethdev = id;
        pci_dev_[static_cast<size_t>(p - ports_.data())] = dev;
      }
    } else {
      for (bool end_b : {false, true}) {
        if (external_[end_b ? l.b.node : l.a.node]) continue;  // the other process's end
        const std::string args =
            vdev_args(opt.backend, unique++, li, end_b, end_b ? lo.b_dev : lo.a_dev, memif_socket,
                      opt.af_packet);
        const std::string name = args.substr(0, args.find(','));
        const int rc = rte_dev_probe(args.c_str());
        if (rc < 0) fail("vdev " + args, rc);
        uint16_t id = 0;
        if (rte_eth_dev_get_port_by_name(name.c_str(), &id) != 0)
          throw std::runtime_error("vdev " + name + " created no ethdev port");
        (end_b ? pb : pa).ethdev = id;
      }
    }
  }
  // Configure and start every port: one rx and one tx queue.
  for (auto& p : ports_) {
    if (external_[p.node]) continue;
    rte_eth_conf conf{};
    const uint16_t id = p.ethdev;
    const std::string what = "ethdev port " + std::to_string(id);
    int rc = rte_eth_dev_configure(id, 1, 1, &conf);
    if (rc < 0) fail(what + " configure", rc);
    if (opt.backend == PortBackend::kPci && opt.pci_mtu_bytes != 0) {
      // A limit below it is refused with the port's details after start (check_pci_ports).
      rte_eth_dev_info info{};
      if (rte_eth_dev_info_get(id, &info) == 0 && info.max_mtu >= opt.pci_mtu_bytes) {
        rc = rte_eth_dev_set_mtu(id, static_cast<uint16_t>(opt.pci_mtu_bytes));
        if (rc < 0) fail(what + " MTU " + std::to_string(opt.pci_mtu_bytes), rc);
      }
    }
    uint16_t rxd = static_cast<uint16_t>(opt.ring_size), txd = static_cast<uint16_t>(opt.ring_size);
    rte_eth_dev_adjust_nb_rx_tx_desc(id, &rxd, &txd);
    rc = rte_eth_rx_queue_setup(id, 0, rxd, rte_eth_dev_socket_id(id), nullptr, pool_->get());
    if (rc < 0) fail(what + " rx queue", rc);
    rc = rte_eth_tx_queue_setup(id, 0, txd, rte_eth_dev_socket_id(id), nullptr);
    if (rc < 0) fail(what + " tx queue", rc);
    // A plain start would flush a kernel interface's neighbour entries (kernel_neighbours.h).
    rc = start_port_keeping_neighbours(id);
    if (rc < 0) fail(what + " start", rc);
    rte_eth_promiscuous_enable(id);  // not every PMD supports it; harmless if not
  }
  link_rate_bps_.clear();
  for (const auto& l : topo.links()) link_rate_bps_.push_back(l.rate_bps);
  if (opt.backend == PortBackend::kPci) check_pci_ports(topo, links, opt);
  tsc_hz_ = rte_get_tsc_hz();
  // 1e9 * 2^32 < 2^63, so the quotient fits; the relative error is below 2^-32 * tsc_hz.
  ns_per_tsc_q32_ = static_cast<uint64_t>((static_cast<unsigned __int128>(kNsPerSec) << 32) / tsc_hz_);
  reset_clock();
  spdlog::debug("real-time engine: {} ports over {}, TSC {} Hz", ports_.size(), backend_name(opt.backend),
                tsc_hz_);
}

RealtimeEngine::~RealtimeEngine() {
  close_ports();
}  // pool_ goes after, once no port holds its mbufs

std::string set_hardware_pfc(uint16_t port_id, const RealtimeOptions& opt) {
  rte_eth_fc_conf fc{};
  (void)rte_eth_dev_flow_ctrl_get(port_id, &fc);  // the PMD's water marks, if it has any
  std::string prios;
  for (uint8_t prio = 0; prio < 8; ++prio) {
    if ((opt.pfc_priorities & (1u << prio)) == 0) continue;
    rte_eth_pfc_conf pfc{};
    pfc.fc = fc;
    pfc.fc.mode = RTE_ETH_FC_FULL;
    pfc.fc.pause_time = opt.pfc_pause_quanta;
    pfc.fc.send_xon = 1;
    pfc.priority = prio;
    const int rc = rte_eth_dev_priority_flow_ctrl_set(port_id, &pfc);
    if (rc != 0)
      return "software (hardware PFC on priority " + std::to_string(prio) +
             " refused by the PMD: " + rte_strerror(-rc) + ")";
    prios += (prios.empty() ? "" : ",") + std::to_string(prio);
  }
  if (prios.empty()) return "software (no lossless priority)";
  return "hardware (priorities " + prios + ")";
}

void RealtimeEngine::check_pci_ports(const Topology& topo, const std::vector<LinkOptions>& links,
                                     const RealtimeOptions& opt) {
  // Link comes up some time after start (autonegotiation: up to seconds on real NICs).
  const uint64_t hz = rte_get_tsc_hz();
  const uint64_t deadline =
      rte_rdtsc() +
      static_cast<uint64_t>(static_cast<double>(opt.link_wait_ns) / 1e9 * static_cast<double>(hz));
  for (;;) {
    bool all_up = true;
    for (uint32_t i = 0; i < ports_.size(); ++i) {
      if (pci_dev_[i].empty()) continue;
      rte_eth_link link{};
      all_up = all_up && rte_eth_link_get_nowait(ports_[i].ethdev, &link) == 0 &&
               link.link_status == RTE_ETH_LINK_UP;
    }
    if (all_up || rte_rdtsc() >= deadline) break;
    rte_delay_us_sleep(100 * 1000);
  }
  std::string refused;
  std::vector<uint64_t> reported(topo.links().size(), 0);  // lowest rate of a link's ends
  for (uint32_t i = 0; i < ports_.size(); ++i) {
    if (pci_dev_[i].empty()) continue;
    const Port& p = ports_[i];
    const uint32_t li = topo.node(p.node).ports[p.index].link;
    const bool from_port = li < links.size() && links[li].rate_from_port;
    PortInfo info = query_port_info(p.ethdev, pci_dev_[i]);
    info.pfc = opt.hardware_pfc ? set_hardware_pfc(p.ethdev, opt) : "software";
    spdlog::info("{}", describe_port(info));
    if (const std::string why = check_port(info, opt.pci_mtu_bytes, from_port); !why.empty())
      refused += (refused.empty() ? "" : "; ") + why;
    const uint64_t r = port_rate_bps(info);
    if (r != 0 && (reported[li] == 0 || r < reported[li])) reported[li] = r;
    pci_info_.push_back(std::move(info));
  }
  if (!refused.empty()) {
    close_ports();
    ports_.clear();
    rings_.clear();
    throw std::runtime_error("real-time engine refuses to run: " + refused);
  }
  for (uint32_t li = 0; li < topo.links().size(); ++li) {
    if (li >= links.size() || !links[li].rate_from_port || reported[li] == 0) continue;
    link_rate_bps_[li] = reported[li];
    const auto& l = topo.links()[li];
    ports_[port_base_[l.a.node] + l.a.port].rate_bps = reported[li];
    ports_[port_base_[l.b.node] + l.b.port].rate_bps = reported[li];
  }
}

void RealtimeEngine::close_ports() noexcept {
  rte_mbuf* pkts[kBurst];
  for (auto& p : ports_) {
    if (external_[p.node]) continue;
    if (p.pending_n > 0) rte_pktmbuf_free_bulk(p.pending.data(), p.pending_n);
    for (int i = 0; i < 1024; ++i) {
      const uint16_t n = rte_eth_rx_burst(p.ethdev, 0, pkts, kBurst);
      if (n == 0) break;
      rte_pktmbuf_free_bulk(pkts, n);
    }
    rte_eth_dev_stop(p.ethdev);
    rte_eth_dev_close(p.ethdev);
  }
  for (rte_ring* r : rings_) {
    void* obj = nullptr;
    while (rte_ring_dequeue(r, &obj) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(obj));
    rte_ring_free(r);
  }
}

void RealtimeEngine::attach(uint32_t index, Node* node) {
  if (index >= nodes_.size()) throw std::invalid_argument("attach: no topology node " + std::to_string(index));
  if (external_[index])
    throw std::invalid_argument("attach: node " + std::to_string(index) + " is external (hosted by another process)");
  const uint32_t end = index + 1 < port_base_.size() ? port_base_[index + 1] : static_cast<uint32_t>(ports_.size());
  if (!node || node->num_ports() != end - port_base_[index])
    throw std::invalid_argument("attach: node " + std::to_string(index) + " must have " +
                                std::to_string(end - port_base_[index]) + " ports");
  nodes_[index] = node;
}

uint16_t RealtimeEngine::ethdev_port(PortRef p) const {
  if (external_.at(p.node))
    throw std::invalid_argument("ethdev_port: node " + std::to_string(p.node) + " is external and has no ethdev");
  return ports_.at(port_base_.at(p.node) + p.port).ethdev;
}

void RealtimeEngine::set_tap(PortRef port, PortTap* tap) {
  ports_.at(port_base_.at(port.node) + port.port).tap = tap;
}

void RealtimeEngine::every(TimeNs period_ns, PeriodicFn fn) {
  if (period_ns <= 0) throw std::invalid_argument("every: period_ns must be positive");
  periodic_.push_back(Periodic{period_ns, clock_ns(), std::move(fn)});
}

TimeNs RealtimeEngine::clock_ns() const noexcept {
  // Once per poll iteration: a multiply and a shift instead of a 128-bit division.
  const uint64_t dt = rte_rdtsc() - tsc0_;
  return static_cast<TimeNs>((static_cast<unsigned __int128>(dt) * ns_per_tsc_q32_) >> 32);
}

TimeNs RealtimeEngine::poll_once(Lcore& lc, TimeNs now) noexcept {
  rte_mbuf* pkts[kBurst];
  TimeNs next_event = kNever;  // `now` once anything happened
  for (uint32_t n : lc.nodes) {
    Node* node = nodes_[n];
    const uint32_t end = n + 1 < port_base_.size() ? port_base_[n + 1] : static_cast<uint32_t>(ports_.size());
    for (uint32_t i = port_base_[n]; i < end; ++i) {
      Port& p = ports_[i];
      const uint16_t got = rte_eth_rx_burst(p.ethdev, 0, pkts, kBurst);
      if (got == 0) continue;
      next_event = now;
      lc.rx_bursts++;
      p.wire.rx_packets += got;
      for (uint16_t k = 0; k < got; ++k) {
        p.wire.rx_bytes += rte_pktmbuf_pkt_len(pkts[k]);
        if (p.tap) [[unlikely]]
          p.tap->on_packet(PortRef{p.node, p.index}, false, pkts[k], now);
      }
      node->rx(p.index, pkts, got, now);
    }
    const TimeNs deadline = node->next_deadline();
    if (deadline <= now) {
      lc.timer_calls++;
      node->on_timer(now);
      next_event = now;
    } else {
      next_event = std::min(next_event, deadline);
    }
    for (uint32_t i = port_base_[n]; i < end; ++i)
      next_event = std::min(next_event, transmit(lc, *node, ports_[i], now));
  }
  return next_event;
}

TimeNs RealtimeEngine::transmit(Lcore& lc, Node& node, Port& p, TimeNs now) noexcept {
  if (p.pending_n == 0) {
    // Port-rate emulation: a frame may start only when the wire is free.
    while (p.pending_n < kBurst && now >= p.wire_free_at) {
      rte_mbuf* m = node.tx(p.index, now);
      if (!m) break;
      const uint32_t bytes = rte_pktmbuf_pkt_len(m);
      p.wire_free_at = std::max(now, p.wire_free_at) + serialization_ns(bytes, p.rate_bps);
      p.wire.tx_packets++;
      p.wire.tx_bytes += bytes;
      if (p.tap) [[unlikely]]
        p.tap->on_packet(PortRef{p.node, p.index}, true, m, now);
      p.pending[p.pending_n++] = m;
    }
    if (p.pending_n == 0) return now < p.wire_free_at ? p.wire_free_at : kNever;
  }
  const uint16_t sent = rte_eth_tx_burst(p.ethdev, 0, p.pending.data(), p.pending_n);
  if (sent < p.pending_n) [[unlikely]] {
    // The tx ring is full: keep the rest, in order, for the next iteration.
    lc.tx_refused += p.pending_n - sent;
    std::copy(p.pending.begin() + sent, p.pending.begin() + p.pending_n, p.pending.begin());
  }
  p.pending_n = static_cast<uint16_t>(p.pending_n - sent);
  return now;
}

TimeNs RealtimeEngine::run_periodic(TimeNs now, TimeNs next) {
  for (auto& pc : periodic_) {
    if (now >= pc.next_ns) {
      pc.fn(now);
      pc.next_ns = std::max(pc.next_ns + pc.period_ns, now);
    }
    next = std::min(next, pc.next_ns);
  }
  return next;
}

void RealtimeEngine::reset_clock() noexcept {
  tsc0_ = rte_rdtsc();
  timespec wall{};
  clock_gettime(CLOCK_REALTIME, &wall);
  wall0_ns_ = static_cast<TimeNs>(wall.tv_sec) * kNsPerSec + wall.tv_nsec;
  for (auto& pc : periodic_) pc.next_ns = 0;
}

void RealtimeEngine::check_attached() const {
  for (uint32_t n = 0; n < nodes_.size(); ++n)
    if (!nodes_[n] && !external_[n])
      throw std::logic_error("real-time engine: topology node " + std::to_string(n) +
                             " has no Node attached");
}

TimeNs RealtimeEngine::poll() {
  if (!stepper_) {
    check_attached();
    const unsigned self = rte_lcore_id();
    stepper_ = std::make_unique<Stepper>(
        Stepper{Lcore{this, {}}, IdleBackoff({.max_sleep_ns = idle_sleep_ns_})});
    for (uint32_t n = 0; n < nodes_.size(); ++n) {
      if (external_[n]) continue;
      if (!node_lcore_.empty() && node_lcore_[n] != self) {
        stepper_.reset();
        throw std::logic_error("poll: node " + std::to_string(n) +
                               " is placed on another lcore (use run_for)");
      }
      stepper_->lc.nodes.push_back(n);
    }
  }
  const TimeNs now = clock_ns();
  Lcore& lc = stepper_->lc;
  const TimeNs next = run_periodic(now, poll_once(lc, now));
  lc.iterations++;
  stepper_->idle.after_iteration(next <= now, now, next);
  return now;
}

RealtimeStats RealtimeEngine::stats() const noexcept {
  RealtimeStats s = stats_;
  if (stepper_) {
    const Lcore& lc = stepper_->lc;
    s.iterations += lc.iterations;
    s.rx_bursts += lc.rx_bursts;
    s.timer_calls += lc.timer_calls;
    s.tx_refused += lc.tx_refused;
    s.idle_sleeps += stepper_->idle.sleeps();
  }
  return s;
}

int RealtimeEngine::worker_main(void* arg) {
  auto* lc = static_cast<Lcore*>(arg);
  RealtimeEngine* e = lc->engine;
  IdleBackoff idle({.max_sleep_ns = e->idle_sleep_ns_});
  while (!e->stop_.load(std::memory_order_relaxed)) {
    const TimeNs now = e->clock_ns();
    if (now >= e->end_ns_) break;
    const TimeNs next = e->poll_once(*lc, now);
    lc->iterations++;
    idle.after_iteration(next <= now, now, std::min(next, e->end_ns_));
  }
  lc->idle_sleeps = idle.sleeps();
  return 0;
}

TimeNs RealtimeEngine::run_for(TimeNs duration_ns) {
  check_attached();
  stop_.store(false);
  const unsigned self = rte_lcore_id();
  // Group nodes by lcore; the caller's group is polled here, the others on workers.
  std::vector<Lcore> groups;
  std::vector<unsigned> group_lcore;
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    if (external_[n]) continue;  // polled by the process that hosts it
    const unsigned lc = node_lcore_.empty() ? self : node_lcore_[n];
    auto it = std::find(group_lcore.begin(), group_lcore.end(), lc);
    if (it == group_lcore.end()) {
      group_lcore.push_back(lc);
      groups.push_back(Lcore{this, {}});
      it = group_lcore.end() - 1;
    }
    groups[static_cast<size_t>(it - group_lcore.begin())].nodes.push_back(n);
  }
  TimeNs now = clock_ns();
  end_ns_ = duration_ns == kNever ? kNever : now + duration_ns;
  Lcore* mine = nullptr;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (group_lcore[g] == self) {
      mine = &groups[g];
      continue;
    }
    const int rc = rte_eal_remote_launch(&RealtimeEngine::worker_main, &groups[g], group_lcore[g]);
    if (rc != 0) {
      stop();
      rte_eal_mp_wait_lcore();
      fail("launching lcore " + std::to_string(group_lcore[g]) + " (is it in the EAL -l list?)", rc);
    }
  }
  Lcore none{this, {}};
  if (!mine) mine = &none;
  IdleBackoff idle({.max_sleep_ns = idle_sleep_ns_});
  while (!stop_.load(std::memory_order_relaxed) && now < end_ns_) {
    const TimeNs next = run_periodic(now, poll_once(*mine, now));
    mine->iterations++;
    idle.after_iteration(next <= now, now, std::min(next, end_ns_));
    now = clock_ns();
  }
  mine->idle_sleeps = idle.sleeps();
  stop();
  rte_eal_mp_wait_lcore();
  for (Port& p : ports_) {
    if (external_[p.node]) continue;  // no ethdev here: the other process's end
    rte_eth_stats st{};
    if (rte_eth_stats_get(p.ethdev, &st) == 0) {
      p.wire.rx_no_mbuf = st.rx_nombuf;
      p.wire.rx_missed = st.imissed;
    }
  }
  for (auto& g : groups) {
    stats_.iterations += (&g == mine) ? g.iterations : 0;
    stats_.rx_bursts += g.rx_bursts;
    stats_.timer_calls += g.timer_calls;
    stats_.tx_refused += g.tx_refused;
    stats_.idle_sleeps += g.idle_sleeps;
  }
  return now;
}

}  // namespace rocemu::fabric
