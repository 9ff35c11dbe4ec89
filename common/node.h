// node.h — the interface between an engine and a switch or host.
//
// A node has ports numbered 0..num_ports()-1 (one per link end, in topology order). The
// engine (virtual-time or real-time DPDK, in fabric/) owns the wires: it hands the node the
// packets received on a port, and when a port's wire is free (serialisation at the link rate
// is modelled by the engine, so queues build inside the node) it asks the node for the next
// packet to put on that wire. Timers: the node reports its earliest deadline and the engine
// calls on_timer() at or after it. The node never reads a clock: `now` is always passed in.
//
// Ownership: rx() takes ownership of every mbuf it is given (it frees what it drops);
// tx() hands ownership of the returned mbuf to the engine. All calls come from the one
// thread (lcore) that runs this node; none may block, throw or allocate per packet.
#pragma once

#include <cstdint>

#include "common/time_ns.h"

struct rte_mbuf;

namespace rocemu {

class Node {
 public:
  virtual ~Node() = default;

  virtual uint16_t num_ports() const noexcept = 0;

  /// Packets received on `port` at `now`. Takes ownership of pkts[0..n).
  virtual void rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept = 0;

  /// The wire of `port` is free at `now`: return the next packet to transmit on it, or
  /// nullptr if none may go now (empty, paused by PFC, or held back by a pacer; in the
  /// latter cases next_deadline() says when to ask again). Ownership passes to the caller.
  virtual rte_mbuf* tx(uint16_t port, TimeNs now) noexcept = 0;

  /// Earliest time at which the node wants on_timer() or may have a packet to send that it
  /// refused before (pacing, PFC pause expiry, retransmission timer); kNever if none.
  virtual TimeNs next_deadline() const noexcept = 0;

  /// Called by the engine at or after next_deadline().
  virtual void on_timer(TimeNs now) noexcept = 0;
  /// Optional, for nodes of many ports: a bitmap of the ports whose tx() may return a packet
  /// (bit p % 64 of word p / 64), kept current through every call of the node and at one
  /// address for its lifetime; nullptr (the default) if any port may. A tx() of a port whose
  /// bit is clear returns nullptr and does nothing that a tx() of another port at the same
  /// `now` has not already done, so an engine that has called tx() once at `now` may skip
  /// the ports whose bit is clear.
  virtual const uint64_t* tx_ready_ports() const noexcept { return nullptr; }
  /// Optional: called right after tx(port) returned a packet, the packet that port will
  /// most likely send next (the new head of the queue just served), or nullptr (the
  /// default). A hint only, for an engine to prefetch shortly before that wire is free
  /// again: by then the node may send another packet, and this one may have left (the
  /// address stays mapped: mbufs live in their pool). Never dereferenced.
  virtual const rte_mbuf* tx_next_hint(uint16_t port) const noexcept {
    (void)port;
    return nullptr;
  }
};

}  // namespace rocemu
