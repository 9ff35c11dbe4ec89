// event_sim.h — a tiny deterministic discrete-event driver for switch scenario tests
// (test-only; fabric/ owns the real virtual-time engine).
//
// Wires every port of a Topology to its peer: a packet a node returns from tx(port, now)
// occupies the wire for serialization_ns(frame bytes, link rate) (no preamble/IFG) and
// arrives at the peer after the link delay. The driver asks every free port for a packet
// after each event instant, and calls on_timer() at each node's next_deadline(). Events
// at equal times run in insertion order, so a run is a pure function of its inputs.
// Units: ns, bytes, bps.
#pragma once

#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <stdexcept>
#include <vector>

#include "common/node.h"
#include "common/time_ns.h"
#include "common/topology.h"

namespace rocemu::test {

class EventSim {
 public:
  /// Called for every packet a node puts on a wire (before it travels), e.g. to capture.
  using TxTap = std::function<void(uint32_t node, uint16_t port, rte_mbuf* m, TimeNs now)>;
  using Probe = std::function<void(TimeNs now)>;

  explicit EventSim(const Topology& topo) : topo_(topo), nodes_(topo.nodes().size(), nullptr) {
    for (const auto& n : topo.nodes()) wire_free_.emplace_back(n.ports.size(), TimeNs{0});
  }
  ~EventSim() {
    while (!events_.empty()) {
      if (events_.top().m) rte_pktmbuf_free(events_.top().m);
      events_.pop();
    }
  }

  void attach(uint32_t node, Node* n) { nodes_.at(node) = n; }
  void set_tx_tap(TxTap tap) { tap_ = std::move(tap); }
  /// Calls `probe(now)` every `interval_ns` from time 0.
  void set_probe(TimeNs interval_ns, Probe probe) {
    probe_interval_ = interval_ns;
    probe_ = std::move(probe);
    next_probe_ = 0;
  }

  /// Runs until no event is left or the next one is later than `end`.
  void run_until(TimeNs end) {
    for (Node* n : nodes_)
      if (!n) throw std::logic_error("EventSim: every topology node needs a Node");
    kick();  // nodes with something to send at the start
    while (true) {
      TimeNs t = events_.empty() ? kNever : events_.top().t;
      for (Node* n : nodes_) t = std::min(t, n->next_deadline());
      if (t == kNever) break;  // nothing left to do (probes alone do not keep it running)
      if (probe_) t = std::min(t, next_probe_);
      if (t > end) break;
      now_ = std::max(now_, t);
      while (!events_.empty() && events_.top().t <= now_) {
        Event e = events_.top();
        events_.pop();
        ++events_run_;
        if (e.m) nodes_[e.node]->rx(e.port, &e.m, 1, now_);
      }
      for (Node* n : nodes_)
        if (n->next_deadline() <= now_) n->on_timer(now_);
      if (probe_ && next_probe_ <= now_) {
        probe_(now_);
        next_probe_ = now_ + probe_interval_;
      }
      kick();
    }
  }

  TimeNs now() const noexcept { return now_; }
  uint64_t events_run() const noexcept { return events_run_; }

 private:
  struct Event {
    TimeNs t;
    uint64_t seq;
    uint32_t node;
    uint16_t port;
    rte_mbuf* m;  // nullptr: the wire of (node, port) became free
    bool operator>(const Event& o) const noexcept { return t != o.t ? t > o.t : seq > o.seq; }
  };

  void kick() {
    for (uint32_t i = 0; i < nodes_.size(); ++i) {
      const auto& ports = topo_.node(i).ports;
      for (uint16_t p = 0; p < ports.size(); ++p) {
        if (wire_free_[i][p] > now_) continue;
        rte_mbuf* m = nodes_[i]->tx(p, now_);
        if (!m) continue;
        const TopoLink& l = topo_.links()[ports[p].link];
        const TimeNs ser = serialization_ns(rte_pktmbuf_pkt_len(m), l.rate_bps);
        if (tap_) tap_(i, p, m, now_);
        wire_free_[i][p] = now_ + ser;
        events_.push(Event{now_ + ser, seq_++, i, p, nullptr});
        events_.push(Event{now_ + ser + l.delay_ns, seq_++, ports[p].peer.node, ports[p].peer.port, m});
      }
    }
  }

  const Topology& topo_;
  std::vector<Node*> nodes_;
  std::vector<std::vector<TimeNs>> wire_free_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  TxTap tap_;
  Probe probe_;
  TimeNs probe_interval_ = 0;
  TimeNs next_probe_ = kNever;
  TimeNs now_ = 0;
  uint64_t seq_ = 0;
  uint64_t events_run_ = 0;
};

}  // namespace rocemu::test
