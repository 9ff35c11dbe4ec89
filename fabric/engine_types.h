// engine_types.h — what both engines (virtual time, real time) share: per-port wire
// counters, the packet tap used for pcapng capture, and the periodic callback that lets
// telemetry sampling and the GraphCC agent run between bursts.
//
// Units: bytes are frame bytes as the node produced them (rte_pktmbuf_pkt_len, no
// preamble/IFG/FCS); times in ns of the engine's clock (virtual or TSC-derived).
#pragma once

#include <cstdint>
#include <functional>

#include "common/time_ns.h"
#include "common/topology.h"

struct rte_mbuf;

namespace rocemu::fabric {

/// Counters the engine keeps for one node port (what crossed its wire).
struct WireCounters {
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;
  uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t dropped = 0;  // lost on the wire: impairment, link down, full ring, tx refused
  // Real time, read from the ethdev when the run ends: frames the port could not receive
  // for want of an mbuf (mbuf pool exhausted), and frames it missed (rx queue full).
  uint64_t rx_no_mbuf = 0, rx_missed = 0;
};

/// Sees every packet crossing a tapped port (pcapng capture). `m` is borrowed for the call
/// only. `tx` is true for packets leaving the node through the port, false for arrivals.
/// Called on the engine's thread; must not block or keep the mbuf.
class PortTap {
 public:
  virtual ~PortTap() = default;
  virtual void on_packet(PortRef port, bool tx, const rte_mbuf* m, TimeNs now) noexcept = 0;
};

/// Called every `period_ns` of engine time, between packet events (never inside a node
/// call). May read node counters, change switch settings, or ask the engine to stop.
using PeriodicFn = std::function<void(TimeNs now)>;

}  // namespace rocemu::fabric
