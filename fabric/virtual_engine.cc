// virtual_engine.cc — event loop, link timing and impairments of the virtual-time engine.
#include "fabric/virtual_engine.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <stdexcept>
#include <string>

namespace rocemu::fabric {

VirtualEngine::VirtualEngine(const Topology& topo, std::vector<LinkOptions> links, uint64_t seed) {
  const auto& tn = topo.nodes();
  nodes_.assign(tn.size(), nullptr);
  tx_ready_.assign(tn.size(), nullptr);
  timer_at_.assign(tn.size(), kNever);
  fired_at_.assign(tn.size(), -1);
  for (uint32_t n = 0; n < tn.size(); ++n) {
    port_base_.push_back(static_cast<uint32_t>(ports_.size()));
    for (uint16_t i = 0; i < tn[n].ports.size(); ++i) {
      const auto& tp = tn[n].ports[i];
      const auto& link = topo.links().at(tp.link);
      Port p;
      p.node = n;
      p.index = i;
      p.global = static_cast<uint32_t>(ports_.size());
      p.peer = tp.peer;
      p.rate_bps = link.rate_bps;
      p.delay_ns = link.delay_ns;
      p.up = link.up;
      if (tp.link < links.size()) p.impairment = links[tp.link].impairment;
      p.impaired = p.impairment.any();
      // One stream per link direction, named by the sending end.
      p.rng = Rng(seed, "vlink:" + tn[n].name + ":" + std::to_string(i));
      ports_.push_back(std::move(p));
    }
  }
  busy_.assign((ports_.size() + 63) / 64, 0);
  for (const Port& p : ports_) peer_node_.push_back(p.peer.node);
}

VirtualEngine::~VirtualEngine() {
  heap_.for_each([](const Event& e) {
    // A kFlight's mbuf is the flight queue's; a kWireFree's is a hint (not owned).
    if (e.m && e.kind != Kind::kFlight && e.kind != Kind::kWireFree) rte_pktmbuf_free(e.m);
  });
  for (auto& p : ports_)
    for (uint32_t i = 0; i < p.flight_n; ++i)
      rte_pktmbuf_free(p.flight[(p.flight_head + i) & (p.flight_cap - 1)].m);
}

void VirtualEngine::attach(uint32_t index, Node* node) {
  if (index >= nodes_.size()) throw std::invalid_argument("attach: no topology node " + std::to_string(index));
  const uint32_t want = (index + 1 < port_base_.size() ? port_base_[index + 1]
                                                        : static_cast<uint32_t>(ports_.size())) -
                        port_base_[index];
  if (!node || node->num_ports() != want)
    throw std::invalid_argument("attach: node " + std::to_string(index) + " must have " +
                                std::to_string(want) + " ports");
  nodes_[index] = node;
  tx_ready_[index] = node->tx_ready_ports();
}

void VirtualEngine::set_tap(PortRef port, PortTap* tap) {
  ports_.at(port_base_.at(port.node) + port.port).tap = tap;
}

void VirtualEngine::every(TimeNs period_ns, PeriodicFn fn, TimeNs first_ns) {
  if (period_ns <= 0) throw std::invalid_argument("every: period_ns must be positive");
  periodic_.push_back(Periodic{period_ns, std::move(fn)});
  push(std::max(first_ns, now_), Kind::kPeriodic, static_cast<uint32_t>(periodic_.size() - 1), 0,
       nullptr);
}

void VirtualEngine::push(TimeNs t, Kind kind, uint32_t node, uint16_t port, rte_mbuf* m) {
  heap_.push(Event{t, seq_++, m, node, port, kind});
}

void VirtualEngine::fly(Port& p, TimeNs t, rte_mbuf* m) {
  if (p.flight_n == p.flight_cap) {  // grow (amortised; bounded by the frames in flight)
    const uint32_t cap = p.flight_cap == 0 ? 16 : 2 * p.flight_cap;
    auto bigger = std::make_unique<Port::InFlight[]>(cap);
    for (uint32_t i = 0; i < p.flight_n; ++i)
      bigger[i] = p.flight[(p.flight_head + i) & (p.flight_cap - 1)];
    p.flight = std::move(bigger);
    p.flight_cap = cap;
    p.flight_head = 0;
  }
  const uint64_t seq = seq_++;
  p.flight[(p.flight_head + p.flight_n) & (p.flight_cap - 1)] = Port::InFlight{t, seq, m};
  if (p.flight_n++ == 0) {
    heap_.push(Event{t, seq, m, p.node, p.index, Kind::kFlight});
  } else {
    ++flight_waiting_;
  }
}

void VirtualEngine::launch(Port& p, rte_mbuf* m, TimeNs now) {
  const uint32_t bytes = rte_pktmbuf_pkt_len(m);
  // Where frames start in their mbufs (prefetch_top's guess): the header's line is loaded.
  frame_offset_ = static_cast<uint32_t>(rte_pktmbuf_mtod(m, const char*) -
                                        reinterpret_cast<const char*>(m));
  const TimeNs done = now + serialization_ns(bytes, p.rate_bps);
  busy_[p.global >> 6] |= uint64_t{1} << (p.global & 63);
  p.busy_until = done;
  p.wire.tx_packets++;
  p.wire.tx_bytes += bytes;
  if (p.tap) [[unlikely]]
    p.tap->on_packet(PortRef{p.node, p.index}, true, m, now);
  // The frame this wire will most likely carry next (the head of the queue this one left)
  // has waited in the queue, and its lines are cold: loading them now, one serialisation
  // ahead (hundreds of events), rather than one event ahead (prefetch_top) hides the miss.
  // K=8 without DCQCN (deep queues): +5% link-hops/s; with DCQCN +2.5% (docs/engines.md).
  const rte_mbuf* next = nodes_[p.node]->tx_next_hint(p.index);
  if (next) prefetch_frame(next);
  push(done, Kind::kWireFree, p.node, p.index, const_cast<rte_mbuf*>(next));
  if (!p.up) {
    stats_.lost++;
    p.wire.dropped++;
    rte_pktmbuf_free(m);
    return;
  }
  TimeNs arrive = done + p.delay_ns;
  if (p.impaired) [[unlikely]] {
    const LinkImpairment& im = p.impairment;
    // Draw all three every time so one fault's rate does not shift another's stream.
    const double u_loss = p.rng.uniform(), u_reorder = p.rng.uniform(), u_dup = p.rng.uniform();
    if (u_loss < im.loss) {
      stats_.lost++;
      p.wire.dropped++;
      rte_pktmbuf_free(m);
      return;
    }
    if (u_reorder < im.reorder) {
      stats_.reordered++;
      arrive += im.reorder_delay_ns;
    }
    push(arrive, Kind::kArrival, p.peer.node, p.peer.port, m);  // may overtake: no queue
    if (u_dup < im.duplicate) {
      // A frame whose payload is elided (NicParams::elide_payload) holds only its first
      // data_len bytes: copy those, and give the copy the frame's length.
      const uint32_t held = m->nb_segs == 1 ? rte_pktmbuf_data_len(m) : UINT32_MAX;
      if (rte_mbuf* c = rte_pktmbuf_copy(m, m->pool, 0, held)) {
        c->pkt_len = m->pkt_len;
        stats_.duplicated++;
        push(arrive, Kind::kArrival, p.peer.node, p.peer.port, c);
      }
    }
    return;
  }
  fly(p, arrive, m);
}

void VirtualEngine::prefetch_top() const noexcept {
  if (heap_.empty()) return;
  const Event& top = heap_.top();
  if (top.kind != Kind::kPeriodic) {
    // The node the event calls: its object's first two lines (the vtable pointer the call
    // loads, and the members beside it). No load of the node's own: a kFlight event names
    // the sending port, whose peer comes from a dense array. (Prefetching more, or the
    // lines each node names as its hot state, measured slower at K=8: docs/engines.md.)
    uint32_t n = top.node;
    if (top.kind != Kind::kTimer) {
      // The engine's line of the event's port (a kFlight's sending port: the head of its
      // wire; a wire-free's port; an arrival's receiving port): +1-3% at K=8.
      const uint32_t g = port_base_[n] + top.port;
      __builtin_prefetch(ports_.data() + g);
      if (top.kind == Kind::kFlight) n = peer_node_[g];
    }
    const auto* o = reinterpret_cast<const char*>(nodes_[n]);
    __builtin_prefetch(o);
    __builtin_prefetch(o + 64);
  }
  if (top.m) prefetch_frame(top.m);
}

void VirtualEngine::prefetch_frame(const rte_mbuf* mbuf) const noexcept {
  const auto* m = reinterpret_cast<const char*>(mbuf);
  __builtin_prefetch(m);  // the mbuf header's two cache lines
  __builtin_prefetch(m + 64);
  // The frame's headers without reading the header (which is what is being loaded): where
  // the last frame launched started in its mbuf (every mbuf of a pool has the same layout).
  // A guess for an mbuf whose data was adjusted; a prefetch of a wrong line costs nothing
  // but the load.
  __builtin_prefetch(m + frame_offset_);
}

void VirtualEngine::send(Port& p, TimeNs now) {
  if (busy(p.global)) return;
  if (rte_mbuf* m = nodes_[p.node]->tx(p.index, now)) launch(p, m, now);
}

void VirtualEngine::arm_timer(uint32_t node, TimeNs now) {
  const TimeNs d = nodes_[node]->next_deadline();
  if (d == kNever) {
    timer_at_[node] = kNever;  // any pending timer event is now stale
    return;
  }
  TimeNs at = std::max(d, now);
  if (at <= fired_at_[node]) {
    // on_timer already ran at this time and the node still asks for now (typically: it has
    // a packet ready but its wire is busy). Calling it again at the same instant cannot
    // change anything; the next thing that can is a wire of this node becoming free.
    stats_.deferred_timers++;
    TimeNs next = kNever;
    const uint32_t end = node + 1 < port_base_.size() ? port_base_[node + 1]
                                                       : static_cast<uint32_t>(ports_.size());
    for (uint32_t i = port_base_[node]; i < end; ++i)
      if (busy(i)) next = std::min(next, ports_[i].busy_until);
    at = next == kNever ? fired_at_[node] + 1 : next;
  }
  if (at == timer_at_[node]) return;
  timer_at_[node] = at;
  push(at, Kind::kTimer, node, 0, nullptr);
}

void VirtualEngine::after_call(uint32_t node, TimeNs now) {
  const uint32_t base = port_base_[node];
  const uint32_t end = node + 1 < port_base_.size() ? port_base_[node + 1]
                                                     : static_cast<uint32_t>(ports_.size());
  const uint64_t* ready = tx_ready_[node];
  if (!ready) {
    for (uint32_t i = base; i < end; ++i) send(ports_[i], now);
  } else {
    // The same tx() calls, in the same order, as asking every free port, less those the
    // node says return nothing (node.h): the first free port is asked whatever its bit,
    // then only ports whose bit is set, read afresh after every tx() (a dequeue on one port
    // can give another a PFC frame to send).
    uint32_t i = base;
    while (i < end && busy(i)) ++i;
    if (i < end) send(ports_[i++], now);
    for (uint32_t p = i - base, n = end - base; p < n;) {
      const uint64_t w = ready[p >> 6] >> (p & 63);
      if (w == 0) {
        p = (p | 63) + 1;
        continue;
      }
      p += static_cast<uint32_t>(std::countr_zero(w));
      if (p >= n) break;
      if (!busy(base + p)) send(ports_[base + p], now);
      ++p;
    }
  }
  arm_timer(node, now);
}

TimeNs VirtualEngine::run_until(TimeNs until_ns) {
  for (uint32_t n = 0; n < nodes_.size(); ++n)
    if (!nodes_[n]) throw std::logic_error("run_until: topology node " + std::to_string(n) + " has no Node attached");
  const auto wall0 = std::chrono::steady_clock::now();
  stop_ = false;
  if (!started_) {
    started_ = true;
    for (uint32_t n = 0; n < nodes_.size(); ++n) after_call(n, now_);
  }
  while (!heap_.empty() && !stop_) {
    if (heap_.top().t > until_ns) break;
    Event e = heap_.pop();
    now_ = e.t;
    stats_.events++;
    // A kFlight's sending port whose next frame on the wire is still to be queued (below).
    Port* next_flight = nullptr;
    if (e.kind == Kind::kFlight) {
      // The head of a sending port's queue: it becomes an arrival at the peer, and the next
      // frame on that wire (if any) takes its place in the heap with its own (t, seq).
      Port& s = ports_[port_base_[e.node] + e.port];
      const uint32_t mask = s.flight_cap - 1;
      s.flight_head = (s.flight_head + 1) & mask;
      if (--s.flight_n > 0) {
        // Queued after the arrival's node call, which hides the load of the ring's entry
        // (written a hop ago, often gone from the cache). The order of pops does not move:
        // the queue pops by (t, seq), whatever the order of pushes, and the entry arrives
        // after now (a serialisation later than this frame).
        next_flight = &s;
        __builtin_prefetch(&s.flight[s.flight_head]);
      }
      e.node = s.peer.node;
      e.port = s.peer.port;
      e.kind = Kind::kArrival;
    }
    prefetch_top();
    switch (e.kind) {
      case Kind::kArrival:
      case Kind::kFlight: {
        Port& p = ports_[port_base_[e.node] + e.port];
        p.wire.rx_packets++;
        p.wire.rx_bytes += rte_pktmbuf_pkt_len(e.m);
        if (p.tap) [[unlikely]]
          p.tap->on_packet(PortRef{e.node, e.port}, false, e.m, now_);
        stats_.packets_delivered++;
        nodes_[e.node]->rx(e.port, &e.m, 1, now_);
        after_call(e.node, now_);
        if (next_flight) {
          // The node's call may have launched onto this very wire (a node wired to itself):
          // one frame at most, into the slot the head left, behind the pending one.
          Port& s = *next_flight;
          --flight_waiting_;
          const Port::InFlight& next = s.flight[s.flight_head];
          heap_.push(Event{next.t, next.seq, next.m, s.node, s.index, Kind::kFlight});
        }
        break;
      }
      case Kind::kWireFree: {
        Port& p = ports_[port_base_[e.node] + e.port];
        busy_[p.global >> 6] &= ~(uint64_t{1} << (p.global & 63));
        send(p, now_);
        arm_timer(e.node, now_);
        break;
      }
      case Kind::kTimer:
        if (e.t != timer_at_[e.node]) {
          stats_.stale_timers++;
          break;
        }
        timer_at_[e.node] = kNever;
        fired_at_[e.node] = now_;
        stats_.timer_calls++;
        nodes_[e.node]->on_timer(now_);
        after_call(e.node, now_);
        break;
      case Kind::kPeriodic: {
        Periodic& pc = periodic_[e.node];
        pc.fn(now_);
        push(now_ + pc.period_ns, Kind::kPeriodic, e.node, 0, nullptr);
        // A callback may change node state (ECN thresholds, a posted work request).
        for (uint32_t n = 0; n < nodes_.size(); ++n) after_call(n, now_);
        break;
      }
    }
  }
  if (!stop_ && (heap_.empty() || heap_.top().t > until_ns)) now_ = std::max(now_, until_ns);
  stats_.wall_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - wall0).count();
  return now_;
}

}  // namespace rocemu::fabric
