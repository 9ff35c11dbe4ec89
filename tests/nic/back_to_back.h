// back_to_back.h — a tiny virtual-time test driver: two Nodes joined by one full-duplex link
// (rate, propagation delay) with optional seeded loss, reordering and duplication, and a
// hook that sees every frame put on the wire. Not an engine (fabric/ has those): just enough
// to run RoCE hosts against each other deterministically in a test or benchmark.
#pragma once

#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "common/icrc.h"
#include "common/node.h"
#include "common/rng.h"
#include "common/time_ns.h"
#include "common/wire.h"

namespace rocemu::test {

struct WireFaults {
  double loss = 0, reorder = 0, duplicate = 0;
};

class BackToBack {
 public:
  BackToBack(Node& a, Node& b, uint64_t rate_bps, TimeNs delay_ns, uint64_t seed,
             rte_mempool* pool)
      : nodes_{&a, &b}, rate_bps_(rate_bps), delay_ns_(delay_ns), rng_(seed, "wire"),
        pool_(pool) {}
  ~BackToBack() {
    while (!flight_.empty()) {
      rte_pktmbuf_free(flight_.top().m);
      flight_.pop();
    }
  }

  void set_faults(WireFaults f) { faults_ = f; }
  /// Called with (from_side, frame, len) for every frame a node transmits.
  void set_inspector(std::function<void(int, const uint8_t*, uint32_t)> f) { inspect_ = std::move(f); }
  /// May rewrite every frame a node transmits (e.g. set CE), after the inspector.
  void set_mutator(std::function<void(int, uint8_t*, uint32_t)> f) { mutate_ = std::move(f); }
  /// Drops every frame for which `f(from_side, frame, len)` returns true (before faults).
  void set_filter(std::function<bool(int, const uint8_t*, uint32_t)> f) { filter_ = std::move(f); }

  TimeNs now() const { return now_; }
  uint64_t frames() const { return frames_; }

  /// Runs the two nodes until `done()` is true (checked every step) or `limit_ns` of virtual
  /// time pass. Returns whether `done()` became true.
  bool run_until(const std::function<bool()>& done, TimeNs limit_ns) {
    const TimeNs end = now_ + limit_ns;
    while (now_ <= end) {
      if (done()) return true;
      while (!flight_.empty() && flight_.top().at <= now_) {
        Flight f = flight_.top();
        flight_.pop();
        nodes_[f.to]->rx(0, &f.m, 1, now_);
      }
      for (Node* n : nodes_)
        if (n->next_deadline() <= now_) n->on_timer(now_);
      for (int s = 0; s < 2; ++s) {
        if (busy_until_[s] > now_) continue;
        rte_mbuf* m = nodes_[s]->tx(0, now_);
        if (m) send(s, m);
      }
      TimeNs next = kNever;
      if (!flight_.empty()) next = flight_.top().at;
      for (int s = 0; s < 2; ++s) {
        if (busy_until_[s] > now_) next = std::min(next, busy_until_[s]);
        next = std::min(next, nodes_[s]->next_deadline());
      }
      if (next == kNever) return done();
      now_ = std::max(next, now_ + 1);
    }
    return done();
  }

 private:
  struct Flight {
    TimeNs at;
    uint64_t seq;
    int to;
    rte_mbuf* m;
    bool operator>(const Flight& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  void send(int s, rte_mbuf* m) {
    const uint32_t len = rte_pktmbuf_pkt_len(m);
    ++frames_;
    const TimeNs ser = serialization_ns(len + 24, rate_bps_);  // + preamble, FCS, IFG
    busy_until_[s] = now_ + ser;
    if (inspect_) inspect_(s, rte_pktmbuf_mtod(m, const uint8_t*), len);
    if (mutate_) mutate_(s, rte_pktmbuf_mtod(m, uint8_t*), len);
    if ((filter_ && filter_(s, rte_pktmbuf_mtod(m, const uint8_t*), len)) ||
        rng_.uniform() < faults_.loss) {
      rte_pktmbuf_free(m);
      return;
    }
    TimeNs at = busy_until_[s] + delay_ns_;
    if (rng_.uniform() < faults_.duplicate) {
      if (rte_mbuf* c = rte_pktmbuf_copy(m, pool_, 0, UINT32_MAX))
        flight_.push({at + ser, seq_++, 1 - s, c});
    }
    if (rng_.uniform() < faults_.reorder) at += 3 * ser + static_cast<TimeNs>(rng_.below(4)) * ser;
    flight_.push({at, seq_++, 1 - s, m});
  }

  Node* nodes_[2];
  uint64_t rate_bps_;
  TimeNs delay_ns_;
  Rng rng_;
  rte_mempool* pool_;
  WireFaults faults_;
  std::function<void(int, const uint8_t*, uint32_t)> inspect_;
  std::function<bool(int, const uint8_t*, uint32_t)> filter_;
  std::function<void(int, uint8_t*, uint32_t)> mutate_;
  TimeNs now_ = 0;
  TimeNs busy_until_[2] = {0, 0};
  uint64_t seq_ = 0, frames_ = 0;
  std::priority_queue<Flight, std::vector<Flight>, std::greater<Flight>> flight_;
};

/// True when `frame` is RoCEv2 over IPv4 or IPv6 and its stored ICRC matches the computed
/// one; also true (nothing to check) for frames that are not RoCEv2.
inline bool roce_icrc_valid(const uint8_t* frame, uint32_t len) {
  using namespace wire;
  if (len < kRoceHeadersBytes + kIcrcBytes) return true;
  const uint16_t type = reinterpret_cast<const Ethernet*>(frame)->ethertype();
  uint32_t udp_off, end;
  if (type == kEtherTypeIpv4) {
    const auto* ip = reinterpret_cast<const Ipv4*>(frame + kIpOff);
    if (ip->protocol != kIpProtoUdp) return true;
    udp_off = kUdpOff;
    end = kIpOff + ip->total_length();
  } else if (type == kEtherTypeIpv6 && len >= kRoce6HeadersBytes + kIcrcBytes) {
    const auto* ip = reinterpret_cast<const Ipv6*>(frame + kIpOff);
    if (ip->next_header != kIpProtoUdp) return true;
    udp_off = kUdp6Off;
    end = kUdp6Off + ip->payload_length();
  } else {
    return true;
  }
  if (reinterpret_cast<const Udp*>(frame + udp_off)->dst_port() != kRoceV2Port) return true;
  if (end > len) return false;
  std::vector<uint8_t> copy(frame, frame + len);
  const uint32_t icrc_off = end - kIcrcBytes;
  return icrc_compute(copy.data(), kIpOff, icrc_off) == icrc_load(copy.data(), icrc_off);
}

}  // namespace rocemu::test
