// soft_switch.h — the soft switch node: L3 forwarding with ECMP, shared-buffer MMU, PFC,
// RED-ECN at dequeue, strict priority + DWRR egress scheduling, and counters.
//
// Packet walk (ARCHITECTURE.md): rx parses and validates the frame (drops counted per
// RxDrop), routes it (static routes, ECMP on the 5-tuple), classifies it (DSCP map; RoCEv2
// CNPs, optionally ACKs, to the control priority), runs ingress then egress admission of the
// SharedBuffer, rewrites MACs and TTL, and appends it to the egress FIFO of (port, priority).
// An ingress queue crossing its PFC threshold sends XOFF (802.1Qbb) out of its port, ahead of
// data, refreshed at half the pause time while congested, XON once below the resume offset.
// PFC frames received pause the port's egress queues (PfcPauseState). tx picks control
// queues by strict priority, then data queues by DWRR (or RR), skips paused queues, marks CE
// per RedEcn on the queue bytes left behind, and updates counters.
// The engine serialises at link rate and calls tx() when the wire is free (node.h).
// Threads: everything runs on the node's lcore except set_ecn() and board().read(), which
// any thread may call.
// Units: bytes, ns, bps.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "common/node.h"
#include "common/pfc_state.h"
#include "common/rng.h"
#include "common/telemetry.h"
#include "common/topology.h"
#include "switchsw/forwarding.h"
#include "switchsw/red_ecn.h"
#include "switchsw/shared_buffer.h"
#include "switchsw/snapshot_board.h"
#include "switchsw/switch_params.h"

struct rte_mempool;

namespace rocemu::sw {

/// The shared-buffer configuration of switch `node_index` of `topo` under `params` (headroom
/// per port: [switch] headroom_kb, else 2 x rate x delay + slack). Its validate() says whether
/// the buffer holds every headroom and reserve; run files are checked with it at load time.
SharedBufferConfig shared_buffer_config(const SwitchParams& params, const Topology& topo,
                                        uint32_t node_index);

class SoftSwitch final : public rocemu::Node {
 public:
  /// Builds the switch for topology node `node_index` (must be a switch). `pool` supplies the
  /// mbufs of PFC frames. Throws std::invalid_argument on inconsistent params (reasons
  /// listed) and std::runtime_error if the mbuf dynamic field cannot be registered.
  SoftSwitch(const SwitchParams& params, const Topology& topo, uint32_t node_index,
             rte_mempool* pool, uint64_t seed);
  ~SoftSwitch() override;
  SoftSwitch(const SoftSwitch&) = delete;
  SoftSwitch& operator=(const SoftSwitch&) = delete;

  // Node interface (node.h); the node's lcore only.
  uint16_t num_ports() const noexcept override { return static_cast<uint16_t>(ports_.size()); }
  void rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept override;
  rte_mbuf* tx(uint16_t port, TimeNs now) noexcept override;
  TimeNs next_deadline() const noexcept override;
  void on_timer(TimeNs now) noexcept override;
  /// Bit p: port p has a PFC frame to send or a queued packet (tx() of a port whose bit is
  /// clear returns nullptr). Kept current by every call; fixed address.
  const uint64_t* tx_ready_ports() const noexcept override { return tx_ready_.data(); }
  /// The new head of the queue the last tx() served (nullptr after a PFC frame or an empty
  /// queue). With deep queues that head was enqueued long before and has left the cache.
  const rte_mbuf* tx_next_hint(uint16_t) const noexcept override { return next_hint_; }

  /// "" if the switch's derived state is consistent (each port's tx_ready_ports() bit is set
  /// exactly when it has PFC to send or a non-empty queue), else what is not. For tests.
  std::string check_invariants() const;

  /// A consistent copy of all counters at `now`. Call from the node's lcore (between bursts).
  SwitchSnapshot snapshot(TimeNs now) const;
  /// Real time: from now on the switch's own lcore publishes a snapshot into board() every
  /// `interval_ns` of engine time (0: stop), as one of its timers. Call before the run.
  void publish_every(TimeNs interval_ns) noexcept;
  /// The published snapshots, readable from any thread (snapshot_board.h).
  const SnapshotBoard& board() const noexcept { return board_; }
  /// Requests new RED-ECN thresholds for `port`: "" if accepted (applied before the next
  /// dequeue), else the reason. Thread-safe; never blocks the data path.
  std::string set_ecn(uint16_t port, const EcnSetting& s);
  /// Thresholds in force on `port` (node's lcore).
  const EcnSetting& ecn(uint16_t port) const noexcept { return ports_[port].red.setting(); }

  /// Instantaneous bytes of egress queue (port, prio).
  uint32_t queue_bytes(uint16_t port, int prio) const noexcept {
    return mmu_.egress_bytes(port, prio);
  }
  /// Frames refused on `port` for `why` (rx-side reasons on the ingress port, admission
  /// drops on the egress port).
  uint64_t drops(uint16_t port, RxDrop why) const noexcept {
    return ports_[port].drops[static_cast<int>(why)];
  }
  uint64_t total_drops() const noexcept;
  const SharedBuffer& mmu() const noexcept { return mmu_; }
  const RouteTable& routes() const noexcept { return routes_; }
  uint32_t node_index() const noexcept { return node_; }
  /// Priority a packet with `dscp` gets (data path classification, before CNP/ACK rules).
  uint8_t priority_of_dscp(uint8_t dscp) const noexcept { return dscp_map_[dscp & 63]; }

 private:
  struct Fifo {
    rte_mbuf* head = nullptr;
    rte_mbuf* tail = nullptr;
  };
  // Line 0 holds what every packet in or out of the port reads or writes, line 1 what every
  // enqueue and ECN-marked dequeue does; the FIFOs follow (a packet uses one of their lines)
  // and the rest is cold. At K=16 (5,120 switch ports) the old order put a packet's accesses
  // on ~7 lines of the 1.2 KB state.
  struct alignas(64) PortState {
    uint8_t nonempty = 0;      // bit i: fifo[i] holds packets
    uint8_t pending_xoff = 0;  // PFC to send on this port (for its ingress queues)
    uint8_t pending_xon = 0;
    uint8_t xoff_active = 0;  // ingress queues of this port we have paused upstream
    uint8_t rr_cur = 0;       // DWRR position in data_prios_
    bool rr_credited = false;
    bool lone_served = false;  // the last data dequeue bypassed DRR (one eligible queue)
    bool drr_ran = false;      // DRR has credited a queue (else every deficit is 0)
    MacAddr mac{};
    MacAddr peer_mac{};
    bool watchdog_on = false;    // pause.watchdog().on()
    bool watchdog_drop = false;  // pause.watchdog().drop
    // At or after every priority's pause end in `pause` (PFC received): from then on nothing
    // is paused, which the data path checks without reading `pause`.
    TimeNs paused_until = 0;
    // The counters every packet updates (ctr holds the rest; the snapshot joins them).
    uint64_t tx_bytes = 0, tx_packets = 0, rx_bytes = 0, rx_packets = 0;
    std::array<uint32_t, kNumPriorities> peak_queue_bytes{};
    RedEcn red;
    alignas(64) std::array<Fifo, kNumPriorities> fifo{};
    std::array<int32_t, kNumPriorities> deficit{};
    PfcPauseState pause;  // PFC received on this port: pauses its egress
    std::array<TimeNs, kNumPriorities> xoff_refresh_at{};
    uint64_t rate_bps = 0;
    TimeNs pause_ns = 0;  // duration of our XOFF on this port's link
    PortCounters ctr;
    std::array<uint64_t, kNumRxDrops> drops{};
  };

  void drop(rte_mbuf* m, uint16_t count_port, RxDrop why) noexcept;
  void forward(uint16_t in_port, rte_mbuf* m, TimeNs now) noexcept;
  void forward_ipv6(uint16_t in_port, rte_mbuf* m, TimeNs now) noexcept;
  /// Shared-buffer admission of a packet for (in_port, prio) -> (out_port, prio); false if
  /// refused (the packet is then dropped and counted).
  bool admit(uint16_t in_port, uint16_t out_port, uint8_t prio, uint32_t pkt_len,
             rte_mbuf* m) noexcept;
  /// L2 rewrite, buffer accounting, the egress FIFO, PFC XOFF (after admit()).
  void enqueue(uint16_t in_port, uint16_t out_port, uint8_t prio, uint32_t pkt_len, rte_mbuf* m,
               TimeNs now) noexcept;
  void handle_mac_control(uint16_t port, rte_mbuf* m, TimeNs now) noexcept;
  rte_mbuf* build_pfc(uint16_t port) noexcept;
  rte_mbuf* dequeue(uint16_t port, TimeNs now) noexcept;
  rte_mbuf* dequeue_one(uint16_t port, TimeNs now, int& prio) noexcept;
  int pick_data_queue(PortState& p, uint8_t eligible) noexcept;
  void start_xoff(uint16_t port, int prio, TimeNs now) noexcept;
  void apply_pending_ecn() noexcept;
  void fill_snapshot(TimeNs now, uint64_t* rate_bps, EcnSetting* ecn,
                     PortCounters* ctr) const noexcept;
  TimeNs compute_deadline(TimeNs now) const noexcept;
  /// Recomputes port's tx_ready_ bit; after every change of its nonempty or pending PFC.
  void note_ready(uint16_t port) noexcept {
    const PortState& p = ports_[port];
    const uint64_t bit = uint64_t{1} << (port & 63);
    if ((p.nonempty | p.pending_xoff | p.pending_xon) != 0)
      tx_ready_[port >> 6] |= bit;
    else
      tx_ready_[port >> 6] &= ~bit;
  }

  // Hot state.
  std::vector<PortState> ports_;
  std::vector<uint64_t> tx_ready_;  // tx_ready_ports()
  SharedBuffer mmu_;
  RouteTable routes_;
  std::array<uint8_t, 64> dscp_map_{};
  std::array<uint8_t, kNumPriorities> data_prios_{};
  std::array<int32_t, kNumPriorities> quantum_bytes_{};  // per data_prios_ index
  std::array<uint8_t, kNumPriorities> data_index_{};     // priority -> data_prios_ index
  uint8_t num_data_prios_ = 0;
  uint8_t control_mask_ = 0;
  uint8_t lossless_mask_ = 0;
  uint8_t cnp_priority_ = 6;
  bool acks_to_control_ = false;
  bool ecn_enabled_ = true;
  bool dwrr_ = true;
  int dynfield_off_ = -1;
  uint16_t pause_quanta_ = 0xffff;
  Rng rng_;
  rte_mempool* pool_;
  std::atomic<bool> ecn_dirty_{false};
  mutable bool deadline_dirty_ = true;
  mutable TimeNs deadline_ = kNever;
  TimeNs last_now_ = 0;
  rte_mbuf* next_hint_ = nullptr;  // tx_next_hint()

  TimeNs publish_ns_ = 0, next_publish_ = kNever;
  SnapshotBoard board_;

  // Cold state.
  uint32_t node_;
  std::mutex ecn_mu_;
  std::vector<EcnSetting> ecn_pending_;
  std::vector<uint8_t> ecn_pending_set_;
};

}  // namespace rocemu::sw
