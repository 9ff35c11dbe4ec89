// realtime_engine.h — the real-time DPDK engine: ethdev ports from the topology and one
// run-to-completion poll loop per lcore.
//
// Every link end is an ethdev port. Backends: `ring` (the embedded default: each link is a
// pair of rte_rings cross-connected with rte_eth_from_rings, everything in one process),
// `af_packet`, `af_xdp`, `tap` (vdevs on kernel interfaces named by the link's a_dev/b_dev,
// default re<link>a / re<link>b), `memif` (both ends in this process, one socket), `pci`
// (a_dev/b_dev are PCI addresses allow-listed at EAL start). Port-rate emulation: each
// port has a wire-free time; the engine calls Node::tx(port, now) only when
// now >= wire_free_at, then wire_free_at = max(now, wire_free_at) +
// serialization_ns(frame bytes, link rate), so queues build in the node (the switch MMU),
// not in a ring. The TSC is converted to ns once per poll iteration and `now` passed down.
// Bursts of 32 on rx. Default: every node on the calling lcore (handing packets between
// busy-polling lcores performs badly on a 2-core VM, DPDK-NOTES); optionally nodes are
// placed on worker lcores. Periodic callbacks run on the calling lcore between iterations.
//
// External nodes (RealtimeOptions::external_nodes): a node hosted by another process (a
// perftest tool or workload generator in a network namespace, docs/testbed.md). Its ports
// get no ethdev and are never polled, and it needs no attach(); the link end facing it
// opens its vdev on that link's device as usual, so this process sees the far end as a
// kernel interface. Only backends whose link ends are independent devices allow that
// (af_packet, af_xdp, tap, pci); ring and memif create both ends here and refuse.
//
// Two ways to drive it, one loop: run_for() polls until a duration or stop(), with
// periodic callbacks between iterations (the jobs, rocemu-host); poll() is one iteration
// of that same loop for a caller with a loop of its own (the interop and perftest tools,
// which post work and read a side channel between polls). A frame the ethdev refuses
// (its tx ring full) is kept and offered again before anything new, never dropped.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/node.h"
#include "fabric/engine_types.h"
#include "fabric/idle_backoff.h"
#include "fabric/port_info.h"
#include "fabric/topology_config.h"

struct rte_mempool;
struct rte_ring;

namespace rocemu::fabric {

enum class PortBackend : uint8_t { kRing, kAfPacket, kAfXdp, kTap, kMemif, kPci };

/// "ring", "af_packet", "af_xdp", "tap", "memif", "pci".
const char* backend_name(PortBackend b) noexcept;
/// Parses a backend name; false if unknown.
bool parse_backend(const std::string& s, PortBackend& out) noexcept;
inline const std::vector<std::string> kBackendNames = {"ring", "af_packet", "af_xdp", "tap",
                                                       "memif", "pci"};

/// af_xdp's umem chunks (one mbuf each) must fit a 4 KB page: its pool has 2 KB data rooms,
/// so frames up to 2048 bytes ([nic] mtu_bytes <= 1024 for hosts on af_xdp ports).
inline constexpr uint32_t kAfXdpMbufDataBytes = 2048;

/// net_af_packet's ring (DPDK 22.11 devargs framecnt, framesz, blocksz): `frames` frames of
/// `frame_bytes` (0 = the PMD's 2048, which holds frames of IB MTU 1024; MTU 4096 needs
/// 8192, and the mbufs' data room must hold a frame too).
struct AfPacketRing {
  uint32_t frames = 16384;
  uint32_t frame_bytes = 0;
};

struct RealtimeOptions {
  PortBackend backend = PortBackend::kRing;
  uint32_t pool_mbufs = 16383;     // one pool for every port and node
  uint32_t mbuf_data_bytes = 9216; // data room (jumbo frames fit one segment); af_xdp: at most
                                   // kAfXdpMbufDataBytes
  uint32_t ring_size = 1024;       // ring wires and rx/tx descriptors
  std::string memif_socket;        // default /tmp/rocemu-memif-<pid>.sock
  std::vector<uint32_t> node_lcore;  // lcore per topology node; empty = all on the caller
  std::vector<bool> external_nodes;  // per topology node: hosted by another process; empty = none
  /// Idle backoff (fabric/idle_backoff.h): after 256 idle iterations an lcore sleeps until
  /// its next timer/wire event, at most this long. 0 = pure busy polling (the default).
  TimeNs idle_sleep_ns = 0;
  AfPacketRing af_packet;  // backend af_packet only
  // Backend pci only (docs/hardware.md): every PCI port is given this Ethernet MTU
  // (eth_mtu_for_ib_mtu of [nic] mtu_bytes) and refused if its limit is lower; 0 = the
  // port's own MTU, unchecked.
  uint32_t pci_mtu_bytes = 0;
  /// pci: ask each port's PMD for hardware PFC (rte_eth_dev_priority_flow_ctrl_set) on the
  /// priorities of this mask (bit i = priority i), pausing for pfc_pause_quanta; a port whose
  /// PMD refuses keeps the software PFC alone (PortInfo::pfc says which and why).
  bool hardware_pfc = false;
  uint8_t pfc_priorities = 0;
  uint16_t pfc_pause_quanta = 0xffff;
  TimeNs link_wait_ns = 10 * kNsPerSec;  // pci: how long a started port may take to get link
};

/// Empty if `opt` may run `topo` (external_nodes sized to the nodes, and only with a backend
/// whose link ends are separate devices), else the reason. Pure; the constructor throws
/// std::invalid_argument with it.
std::string check_external_nodes(const Topology& topo, const RealtimeOptions& opt);

/// Empty if this process can create the DPDK ports `topo` needs (one ethdev per link end it
/// hosts: both ends of every link, less the ends of external nodes), else the reason: DPDK
/// allows RTE_MAX_ETHPORTS (32 in Debian's build) per process, so 16 links with every end
/// here. Pure; the constructor throws std::invalid_argument with it.
std::string check_port_count(const Topology& topo, const RealtimeOptions& opt);
/// Ethdev ports this DPDK build allows in one process (RTE_MAX_ETHPORTS).
uint32_t max_ethdev_ports() noexcept;

/// The devargs string that creates the vdev of one link end (pure; for tests and logs).
/// `unique` numbers the device; `end_b` is true for the b end of link `link`.
std::string vdev_args(PortBackend b, uint32_t unique, uint32_t link, bool end_b,
                      const std::string& dev, const std::string& memif_socket,
                      const AfPacketRing& af_packet = {});

/// Touches every page of `pool` once, so that page faults (lazily populated --no-huge
/// memory) happen at start-up rather than while packets flow. Set-up only.
void prefault_pool(rte_mempool* pool) noexcept;

/// A run-private mbuf pool of `n` mbufs with `data_bytes` data rooms (beyond the headroom;
/// 9 KB holds a jumbo frame in one segment), freed when the run ends (declare it before the
/// nodes that use it). Throws std::runtime_error with the rte_strerror reason if it cannot
/// be created. The virtual-time jobs' pool, and the real-time engine's. A real-time pool is
/// prefaulted (kPrefault: no page fault while packets flow); a virtual-time one is not
/// (kLazy): there a fault costs no model time, and a run touches only the pages of the most
/// mbufs it held at once (fabric/lazy_pool.h: its mbufs are laid out as the run first needs
/// them; a K=16 fat tree's pool of 1.8 M mbufs took ~2 s to set up whole).
/// A kLazy pool's mbufs live in anonymous memory with no IOVA (nothing DMAs in virtual time):
/// never cleared by DPDK on free, unmapped instead. One thread at a time; never hand a
/// kLazy pool to an ethdev.
/// A kLazy pool of header-only mbufs (`data_bytes` <= kHeaderOnlyRoomBytes) is compact: its
/// headroom overlaps the mbuf header (rte_pktmbuf_headroom() says 128 as ever, but nothing
/// may be prepended: the bytes before a frame's data start are the mbuf's own).
inline constexpr uint32_t kPoolDataBytes = 9216;
inline constexpr uint32_t kHeaderOnlyRoomBytes = 128;
class RunPool {
 public:
  enum class Fault : uint8_t { kPrefault, kLazy };
  explicit RunPool(uint32_t n, uint32_t data_bytes = kPoolDataBytes,
                   Fault fault = Fault::kPrefault);
  ~RunPool();
  RunPool(const RunPool&) = delete;
  RunPool& operator=(const RunPool&) = delete;
  rte_mempool* get() const noexcept { return pool_; }

 private:
  rte_mempool* pool_ = nullptr;
  bool lazy_ = false;
};

/// Sets hardware PFC on ethdev `port_id` for the priorities of opt.pfc_priorities (the
/// water marks the PMD reports for link flow control, rte_eth_dev_flow_ctrl_get). Returns
/// PortInfo::pfc's text: "hardware (priorities ...)" or "software (<the PMD's reason>)".
std::string set_hardware_pfc(uint16_t port_id, const RealtimeOptions& opt);

/// Default kernel interface name of a link end: re<link>a / re<link>b.
std::string default_iface(uint32_t link, bool end_b);

struct RealtimeStats {
  uint64_t iterations = 0;   // poll-loop iterations of the calling lcore
  uint64_t rx_bursts = 0;
  uint64_t timer_calls = 0;
  uint64_t tx_refused = 0;   // frames the ethdev did not take at an attempt (kept and offered
                             // again: a frame refused twice counts twice)
  uint64_t idle_sleeps = 0;  // sleeps of the idle backoff (RealtimeOptions::idle_sleep_ns)
};

class RealtimeEngine {
 public:
  /// Frames per rx and tx burst: a node's rx() is given at most this many at once.
  static constexpr uint16_t kBurst = 32;

  /// Creates the mempool and one started ethdev port per link end. EAL must be running.
  /// Throws std::runtime_error naming the device and rte_strerror's reason on failure.
  RealtimeEngine(const Topology& topo, const std::vector<LinkOptions>& links,
                 const RealtimeOptions& opt);
  /// Drains and frees what is left in the ports, stops and closes them, frees the rings.
  /// Nodes must be destroyed first (they own mbufs from pool()).
  ~RealtimeEngine();
  RealtimeEngine(const RealtimeEngine&) = delete;
  RealtimeEngine& operator=(const RealtimeEngine&) = delete;

  /// The pool nodes allocate packets from.
  rte_mempool* pool() const noexcept { return pool_->get(); }
  /// Its data room per mbuf (RealtimeOptions::mbuf_data_bytes, capped for af_xdp).
  uint32_t mbuf_data_bytes() const noexcept { return mbuf_data_bytes_; }

  /// Binds topology node `index` to `node` (not owned). Throws std::invalid_argument if
  /// the port count differs from the topology's or the node is external.
  void attach(uint32_t index, Node* node);
  void set_tap(PortRef port, PortTap* tap);
  /// Calls fn(now) every period_ns of engine time, on the calling lcore.
  void every(TimeNs period_ns, PeriodicFn fn);
  /// Ends run_for() soon (any thread).
  void stop() noexcept { stop_.store(true, std::memory_order_relaxed); }

  /// Polls until stop() or `duration_ns` of real time has passed; returns the engine time
  /// reached. Engine time is 0 at construction (or reset_clock()). Workers (if placed) run
  /// until it returns.
  TimeNs run_for(TimeNs duration_ns);
  /// One iteration of run_for()'s loop on the calling lcore, for a caller with a loop of its
  /// own: every node (all must be on the caller: no node_lcore placement), the periodic
  /// callbacks, then the idle backoff. Returns the engine time the nodes were given. Throws
  /// std::logic_error (first call) if a node is not attached or placed on another lcore.
  TimeNs poll();
  /// Engine time now (ns since construction or reset_clock(), from the TSC).
  TimeNs now_ns() const noexcept { return clock_ns(); }
  /// Makes engine time 0 now, with the wall clock at zero: for a run whose time 0 is an
  /// instant shared with other processes (rocemu-host waits for --start-at, then resets).
  /// Call before the first run_for()/poll(): nodes keep the times they were given.
  void reset_clock() noexcept;
  /// The wall clock (CLOCK_REALTIME, ns since 1970) at engine time 0: what real-time
  /// captures add to engine time so their packets show the hour they were sent.
  TimeNs wall_clock_at_zero_ns() const noexcept { return wall0_ns_; }

  /// Wire counters of a node port (all zero for the ports of an external node).
  const WireCounters& counters(PortRef p) const { return ports_.at(port_base_.at(p.node) + p.port).wire; }
  /// True if topology node `index` is hosted by another process (no ethdev, never polled).
  bool external(uint32_t index) const { return external_.at(index); }
  /// Counters of run_for() and poll() so far.
  RealtimeStats stats() const noexcept;
  /// The ethdev port id of a node port. Throws std::invalid_argument for an external node.
  uint16_t ethdev_port(PortRef p) const;
  /// Backend pci: what each PCI port of this process reported at start (in link order, a end
  /// first), as printed then. Empty for the other backends.
  const std::vector<PortInfo>& pci_ports() const noexcept { return pci_info_; }
  /// The rate each link runs at (by link index): its rate_gbps, or for rate_gbps = "port"
  /// the lower speed its PCI ends report.
  const std::vector<uint64_t>& link_rates_bps() const noexcept { return link_rate_bps_; }

 private:
  struct alignas(64) Port {
    TimeNs wire_free_at = 0;
    uint16_t pending_n = 0;  // frames the ethdev refused, first in pending[]
    std::array<rte_mbuf*, kBurst> pending{};
    uint64_t rate_bps = 0;
    uint32_t node = 0;
    uint16_t index = 0;
    uint16_t ethdev = 0;
    PortTap* tap = nullptr;
    WireCounters wire;
  };
  struct Periodic {
    TimeNs period_ns;
    TimeNs next_ns;
    PeriodicFn fn;
  };
  // One per polling lcore, each on its own cache lines: its counters are written on every
  // iteration by that lcore alone.
  struct alignas(64) Lcore {
    RealtimeEngine* engine;
    std::vector<uint32_t> nodes;
    uint64_t iterations = 0;
    uint64_t rx_bursts = 0;
    uint64_t timer_calls = 0;
    uint64_t tx_refused = 0;
    uint64_t idle_sleeps = 0;
  };

  TimeNs clock_ns() const noexcept;
  /// One pass over the lcore's nodes; returns `now` if a frame moved or a timer fired,
  /// else the earliest next event (node deadline, wire free) or kNever.
  TimeNs poll_once(Lcore& lc, TimeNs now) noexcept;
  /// Offers port `p`'s frames: the refused ones first, then new ones while its wire is
  /// free. Returns `now` if any moved or some wait, else when its wire is free (or kNever).
  TimeNs transmit(Lcore& lc, Node& node, Port& p, TimeNs now) noexcept;
  /// Runs the periodic callbacks due at `now`; returns min(next, the earliest next one).
  TimeNs run_periodic(TimeNs now, TimeNs next);
  /// The nodes of the calling lcore; throws std::logic_error if any is not attached.
  void check_attached() const;
  static int worker_main(void* arg);
  /// Frees what the started ports hold, stops and closes them, frees the rings.
  void close_ports() noexcept;
  /// Backend pci, after start: waits for link, reads and prints every PCI port, sets
  /// hardware PFC if asked, applies rate_gbps = "port"; throws (closing the ports) with the
  /// reason a port is refused.
  void check_pci_ports(const Topology& topo, const std::vector<LinkOptions>& links,
                       const RealtimeOptions& opt);

  std::vector<Node*> nodes_;
  std::vector<uint32_t> port_base_;
  std::vector<Port> ports_;
  std::vector<rte_ring*> rings_;
  std::vector<Periodic> periodic_;
  std::vector<uint32_t> node_lcore_;
  std::vector<bool> external_;  // per node
  std::vector<std::string> pci_dev_;  // per port: its PCI address (backend pci), else ""
  std::vector<PortInfo> pci_info_;
  std::vector<uint64_t> link_rate_bps_;  // per link
  std::unique_ptr<RunPool> pool_;  // freed after the ports are closed (destructor body)
  uint64_t tsc0_ = 0;
  TimeNs wall0_ns_ = 0;  // CLOCK_REALTIME when tsc0_ was read
  uint64_t tsc_hz_ = 0;
  uint64_t ns_per_tsc_q32_ = 0;  // 1e9 / tsc_hz in 32.32 fixed point: ns = dt * q >> 32
  TimeNs end_ns_ = 0;
  TimeNs idle_sleep_ns_ = 0;
  uint32_t mbuf_data_bytes_ = 0;
  uint32_t instance_ = 0;
  std::atomic<bool> stop_{false};
  RealtimeStats stats_;
  // poll(): the caller's lcore and idle backoff, made at the first call.
  struct Stepper {
    Lcore lc;
    IdleBackoff idle;
  };
  std::unique_ptr<Stepper> stepper_;
};

}  // namespace rocemu::fabric
