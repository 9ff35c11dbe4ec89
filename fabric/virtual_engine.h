// virtual_engine.h — the deterministic discrete-event engine (virtual time).
//
// Model (per link direction): a port's wire is free or busy. When free, the engine asks the
// node for a packet (Node::tx); a frame of B bytes then occupies the wire for
// serialization_ns(B, rate) and reaches the peer port serialisation + propagation delay
// after it started (a 1000-byte frame at 10 Gbps with 1 us delay arrives 1.8 us later).
// After every rx or on_timer of a node, the engine asks each of its idle ports for a packet;
// when a wire becomes free it asks that port again. Timers: the engine keeps one pending
// timer event per node at max(next_deadline(), now) and ignores stale ones (lazy deletion).
// Ties are broken by (time, insertion sequence), so a run is a pure function of the
// topology, the nodes and the seed. Per-link seeded impairments (loss, reorder, duplicate)
// exist for transport tests. Single-threaded; nothing here reads a clock except run()'s
// wall-time measurement for events/second (reported, never fed back into the model).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/node.h"
#include "common/rng.h"
#include "fabric/engine_types.h"
#include "fabric/event_heap.h"
#include "fabric/topology_config.h"

namespace rocemu::fabric {

struct VirtualStats {
  uint64_t events = 0;             // events popped (including stale timers)
  uint64_t packets_delivered = 0;  // arrivals handed to Node::rx
  uint64_t lost = 0;               // impairment loss + down links
  uint64_t duplicated = 0;
  uint64_t reordered = 0;
  uint64_t timer_calls = 0;
  uint64_t stale_timers = 0;
  uint64_t deferred_timers = 0;    // deadlines already served at this time, moved later
  int64_t wall_ns = 0;             // wall time spent inside run_until (stdout only)
  double events_per_sec() const noexcept {
    return wall_ns > 0 ? static_cast<double>(events) * 1e9 / static_cast<double>(wall_ns) : 0.0;
  }
};

class VirtualEngine {
 public:
  /// `links` parallel to topo.links() (or empty: no impairments). `seed` seeds impairments.
  VirtualEngine(const Topology& topo, std::vector<LinkOptions> links, uint64_t seed);
  /// Frees every packet still on a wire.
  ~VirtualEngine();
  VirtualEngine(const VirtualEngine&) = delete;
  VirtualEngine& operator=(const VirtualEngine&) = delete;

  /// Binds topology node `index` to `node` (not owned; must outlive the engine and have
  /// exactly as many ports as the topology gives it). Throws std::invalid_argument otherwise.
  void attach(uint32_t index, Node* node);
  /// Calls tap->on_packet for every packet sent or received on `port` (not owned).
  void set_tap(PortRef port, PortTap* tap);
  /// Calls `fn(now)` at first_ns, first_ns + period_ns, ... (period_ns > 0).
  void every(TimeNs period_ns, PeriodicFn fn, TimeNs first_ns = 0);
  /// Ends run_until() after the current event (callable from a periodic callback).
  void stop() noexcept { stop_ = true; }

  /// Processes events in (time, sequence) order until none is left at or before `until_ns`,
  /// or stop(). Every node must be attached. Returns the engine time reached. May be called
  /// again to continue.
  TimeNs run_until(TimeNs until_ns);

  TimeNs now() const noexcept { return now_; }
  bool stopped() const noexcept { return stop_; }
  const VirtualStats& stats() const noexcept { return stats_; }
  const WireCounters& counters(PortRef p) const { return ports_.at(port_base_.at(p.node) + p.port).wire; }
  /// Number of events waiting (packets in flight, wire-free marks, timers, periodic calls).
  size_t pending_events() const noexcept { return heap_.size() + flight_waiting_; }

 private:
  // kArrival: a packet for port (node, port), in the event. kFlight: the head of the
  // in-flight queue of sending port (node, port) arrives at its peer (see Port::flight);
  // the event holds a copy of the head's mbuf pointer (owned by the queue) for prefetch_top.
  // kWireFree: the event's m is the node's tx_next_hint() (owned by the node, or stale),
  // only for prefetch_top: the frame the wire will most likely be given when free.
  enum class Kind : uint8_t { kArrival, kWireFree, kTimer, kPeriodic, kFlight };
  struct Event {
    TimeNs t;
    uint64_t seq;
    rte_mbuf* m;
    uint32_t node;  // kPeriodic: index into periodic_
    uint16_t port;
    Kind kind;
  };
  // Line 0 holds what asking a port for a frame, launching it and taking the head of its
  // wire read; line 1 what a launch and an arrival count; the rest is cold. An arrival then
  // touches one line of the receiving port. At K=16 (7,168 ports) a frame's hop touched ~4
  // lines of the old 208-byte Port.
  struct alignas(64) Port {
    // Frames on this wire, in launch order. Without impairments they also arrive in that
    // order (arrival = wire free + a fixed delay), so only the head is an event in the
    // heap (kFlight, with the head's own time and sequence): the heap holds one arrival
    // per busy link instead of one per frame in flight, and pops in the same order.
    struct InFlight {
      TimeNs t;
      uint64_t seq;
      rte_mbuf* m;
    };
    uint32_t node = 0;
    uint16_t index = 0;
    bool up = true;
    bool impaired = false;  // impairment.any()
    PortRef peer;
    uint64_t rate_bps = 0;
    TimeNs delay_ns = 0;
    TimeNs busy_until = 0;
    std::unique_ptr<InFlight[]> flight;  // ring buffer of flight_cap (a power of two, or 0)
    uint32_t flight_head = 0, flight_n = 0;
    uint32_t flight_cap = 0;
    uint32_t global = 0;  // index in ports_ (and busy_)
    PortTap* tap = nullptr;
    WireCounters wire;
    LinkImpairment impairment;
    Rng rng{0};
  };
  struct Periodic {
    TimeNs period_ns;
    PeriodicFn fn;
  };

  void push(TimeNs t, Kind kind, uint32_t node, uint16_t port, rte_mbuf* m);
  /// Puts `m`, arriving at `t`, on port p's in-flight queue (an event if it is the head).
  void fly(Port& p, TimeNs t, rte_mbuf* m);
  void send(Port& p, TimeNs now);       // asks the node for one packet on an idle port
  void after_call(uint32_t node, TimeNs now);  // kicks idle ports, re-arms the timer
  void arm_timer(uint32_t node, TimeNs now);
  void launch(Port& p, rte_mbuf* m, TimeNs now);
  /// Starts loading the next event's frame (mbuf header, first data line) and the first
  /// lines of the node it calls into the cache: by the time it is popped, the current
  /// event's node call has hidden the misses.
  void prefetch_top() const noexcept;
  /// Starts loading an mbuf's header lines and its frame's first line (frame_offset_).
  void prefetch_frame(const rte_mbuf* m) const noexcept;

  std::vector<Node*> nodes_;
  std::vector<const uint64_t*> tx_ready_;  // per node: Node::tx_ready_ports()
  std::vector<uint32_t> port_base_;  // first Port of each node in ports_
  std::vector<uint32_t> peer_node_;  // per port in ports_: the node at the wire's far end
  // Bytes from an mbuf to its frame as launch() last saw (prefetch_top's guess; every frame
  // in flight was launched).
  uint32_t frame_offset_ = 0;
  std::vector<Port> ports_;
  // Bit i: ports_[i]'s wire is serialising a frame (a kWireFree event is pending). Dense, so
  // finding a node's free ports reads a word, not a line per port.
  std::vector<uint64_t> busy_;
  bool busy(uint32_t global) const noexcept { return (busy_[global >> 6] >> (global & 63)) & 1; }
  std::vector<TimeNs> timer_at_;     // the pending timer event's time per node, kNever if none
  std::vector<TimeNs> fired_at_;     // when on_timer last ran per node
  std::vector<Periodic> periodic_;
  CalendarQueue<Event> heap_;  // pops the minimum (t, seq)
  size_t flight_waiting_ = 0;  // in-flight frames behind a queue's head (not in heap_)
  uint64_t seq_ = 0;
  TimeNs now_ = 0;
  bool started_ = false;
  bool stop_ = false;
  VirtualStats stats_;
};

}  // namespace rocemu::fabric
