// soft_switch_tx.cc — the transmit side of the soft switch: PFC frames first, then strict
// priority over control queues, DWRR (Shreedhar & Varghese, 1995) or RR over data queues,
// RED-ECN marking at dequeue, PFC resume (XON) and refresh, counters, snapshots, set_ecn.
#include <rte_mbuf.h>

#include <algorithm>
#include <bit>

#include "switchsw/soft_switch.h"
#include "switchsw/queue_meta.h"

namespace rocemu::sw {

namespace {
using detail::meta;
using detail::QueueMeta;

/// The round-robin position after queue `qi` of `n` (qi < n): a compare, not a division per
/// packet.
inline uint8_t next_rr(int qi, int n) noexcept {
  return static_cast<uint8_t>(qi + 1 == n ? 0 : qi + 1);
}
}  // namespace

rte_mbuf* SoftSwitch::tx(uint16_t port, TimeNs now) noexcept {
  last_now_ = now;
  next_hint_ = nullptr;
  if (ecn_dirty_.load(std::memory_order_acquire)) [[unlikely]]
    apply_pending_ecn();
  PortState& p = ports_[port];
  if ((p.pending_xoff | p.pending_xon) != 0) [[unlikely]] {
    if (rte_mbuf* f = build_pfc(port)) return f;
  }
  if (p.nonempty == 0) return nullptr;
  return dequeue(port, now);
}

int SoftSwitch::pick_data_queue(PortState& p, uint8_t eligible) noexcept {
  // A lone backlogged data queue is simply served (what DRR would do after crediting it);
  // its DRR state restarts, as for a queue that has just become active.
  if (std::has_single_bit(eligible)) {
    const int prio = std::countr_zero(eligible);
    const uint8_t qi = data_index_[prio];
    p.rr_cur = next_rr(qi, num_data_prios_);
    p.rr_credited = false;
    if (p.drr_ran) p.deficit[qi] = 0;
    p.lone_served = true;
    return prio;
  }
  p.lone_served = false;
  // Deficit round robin over data_prios_. Each visit to an eligible queue credits its
  // quantum once; the head is served when the deficit covers it. A quantum is at least
  // 1518 B, so a 9 KB frame waits at most 7 rounds: the loop bound below covers that.
  const int n = num_data_prios_;
  for (int step = 0; step < 8 * n + 1; ++step) {
    const int qi = p.rr_cur;
    const int prio = data_prios_[qi];
    if ((eligible >> prio) & 1) {
      if (!dwrr_) {
        p.rr_cur = next_rr(qi, n);
        return prio;
      }
      if (!p.rr_credited) {
        p.deficit[qi] += quantum_bytes_[qi];
        p.rr_credited = true;
        p.drr_ran = true;
      }
      if (p.deficit[qi] >= static_cast<int32_t>(rte_pktmbuf_pkt_len(p.fifo[prio].head))) return prio;
    } else {
      p.deficit[qi] = 0;
    }
    p.rr_cur = next_rr(qi, n);
    p.rr_credited = false;
  }
  return -1;
}

rte_mbuf* SoftSwitch::dequeue(uint16_t port, TimeNs now) noexcept {
  PortState& p = ports_[port];
  if (p.watchdog_on && p.nonempty && p.pause.watch(p.nonempty, now)) [[unlikely]]
    deadline_dirty_ = true;  // a storm began: the queue forwards (or drops) from now on
  int prio = -1;
  rte_mbuf* m = dequeue_one(port, now, prio);
  if (p.watchdog_drop) [[unlikely]] {
    // Action "drop": during a storm the queue's packets are discarded as they come up.
    while (m && p.pause.in_storm(prio, now)) {
      drop(m, port, RxDrop::kPfcWatchdog);
      m = p.nonempty ? dequeue_one(port, now, prio) : nullptr;
    }
  }
  if (!m) return nullptr;
  const uint32_t len = rte_pktmbuf_pkt_len(m);
  // RED-ECN on the bytes the packet leaves behind; ECT packets of data queues only.
  if (ecn_enabled_ && !((control_mask_ >> prio) & 1)) {
    auto* eth = rte_pktmbuf_mtod(m, wire::Ethernet*);
    auto* ip = rte_pktmbuf_mtod_offset(m, wire::Ipv4*, wire::kIpOff);
    if (eth->ethertype() == wire::kEtherTypeIpv6) [[unlikely]] {
      // IPv6: ECN is the low 2 bits of the Traffic Class (RFC 3168 5), no header checksum.
      auto* ip6 = reinterpret_cast<wire::Ipv6*>(ip);
      const uint8_t ecn = ip6->ecn();
      if ((ecn == wire::kEcnEct0 || ecn == wire::kEcnEct1) &&
          p.red.mark(mmu_.egress_bytes(port, prio), rng_)) {
        ip6->set_ecn(wire::kEcnCe);
        ++p.ctr.ecn_marked_packets;
        p.ctr.ecn_marked_bytes += len;
      }
    } else {
      const uint8_t ecn = ip->ecn();
      if ((ecn == wire::kEcnEct0 || ecn == wire::kEcnEct1) &&
          p.red.mark(mmu_.egress_bytes(port, prio), rng_)) {
        ip->set_tos_update_checksum(static_cast<uint8_t>((ip->tos & 0xfc) | wire::kEcnCe));
        ++p.ctr.ecn_marked_packets;
        p.ctr.ecn_marked_bytes += len;
      }
    }
  }
  p.tx_bytes += len;
  ++p.tx_packets;
  return m;
}

/// Takes the next packet of `port` from its queues (releasing its buffer, resuming the
/// upstream port if it may) and says which priority it came from; nullptr if none eligible.
rte_mbuf* SoftSwitch::dequeue_one(uint16_t port, TimeNs now, int& prio) noexcept {
  PortState& p = ports_[port];
  const uint8_t paused = now < p.paused_until ? p.pause.paused_mask(now) : 0;
  const uint8_t eligible = static_cast<uint8_t>(p.nonempty & ~paused);
  if (eligible == 0) return nullptr;
  if (const uint8_t ctl = eligible & control_mask_; ctl != 0) {
    prio = 7 - std::countl_zero(static_cast<uint32_t>(ctl) << 24);  // highest control priority
  } else {
    prio = pick_data_queue(p, eligible);
    if (prio < 0) [[unlikely]]
      return nullptr;
  }
  Fifo& f = p.fifo[prio];
  rte_mbuf* m = f.head;
  QueueMeta* qm = meta(m, dynfield_off_);
  f.head = qm->next;
  next_hint_ = f.head;
  const uint32_t len = rte_pktmbuf_pkt_len(m);
  if (!f.head) {
    f.tail = nullptr;
    p.nonempty = static_cast<uint8_t>(p.nonempty & ~(1u << prio));
    note_ready(port);
  }
  if (!((control_mask_ >> prio) & 1) && dwrr_ && !p.lone_served) {
    const int qi = p.rr_cur;  // pick_data_queue left rr_cur on the served queue
    p.deficit[qi] -= static_cast<int32_t>(len);
    if (!f.head) {
      p.deficit[qi] = 0;
      p.rr_cur = next_rr(qi, num_data_prios_);
      p.rr_credited = false;
    }
  }

  const uint16_t in_port = qm->in_port;
  mmu_.egress_release(port, prio, len);
  mmu_.ingress_release(in_port, prio, len);
  PortState& in = ports_[in_port];
  if ((in.xoff_active >> prio) & 1 && mmu_.should_resume(in_port, prio)) [[unlikely]] {
    const auto bit = static_cast<uint8_t>(1u << prio);
    in.xoff_active = static_cast<uint8_t>(in.xoff_active & ~bit);
    in.pending_xoff = static_cast<uint8_t>(in.pending_xoff & ~bit);
    in.pending_xon |= bit;
    note_ready(in_port);
    deadline_dirty_ = true;
  }
  return m;
}

TimeNs SoftSwitch::compute_deadline(TimeNs now) const noexcept {
  TimeNs t = next_publish_;
  for (const PortState& p : ports_) {
    for (int i = 0; i < kNumPriorities; ++i)
      if ((p.xoff_active >> i) & 1) t = std::min(t, p.xoff_refresh_at[i]);
    // next_expiry is kNever once every pause has ended (it skips ended priorities).
    if (p.nonempty && now < p.paused_until) t = std::min(t, p.pause.next_expiry(p.nonempty, now));
  }
  return t;
}

TimeNs SoftSwitch::next_deadline() const noexcept {
  if (deadline_dirty_) {
    deadline_ = compute_deadline(last_now_);
    deadline_dirty_ = false;
  }
  return deadline_;
}

void SoftSwitch::on_timer(TimeNs now) noexcept {
  last_now_ = now;
  if (next_publish_ <= now) {
    board_.publish(now, [&](uint64_t* rate, EcnSetting* ecn, PortCounters* ctr) {
      fill_snapshot(now, rate, ecn, ctr);
    });
    // The next boundary after now (an lcore that fell behind skips, never bursts).
    next_publish_ += publish_ns_ * ((now - next_publish_) / publish_ns_ + 1);
  }
  for (uint16_t port = 0; port < ports_.size(); ++port) {
    PortState& p = ports_[port];
    for (int i = 0; i < kNumPriorities; ++i) {
      if (((p.xoff_active >> i) & 1) && p.xoff_refresh_at[i] <= now) {
        p.pending_xoff = static_cast<uint8_t>(p.pending_xoff | (1u << i));
        p.xoff_refresh_at[i] = now + p.pause_ns / 2;
        note_ready(port);
      }
    }
  }
  deadline_dirty_ = true;
}

std::string SoftSwitch::check_invariants() const {
  for (uint16_t port = 0; port < ports_.size(); ++port) {
    const PortState& p = ports_[port];
    const bool want = (p.nonempty | p.pending_xoff | p.pending_xon) != 0;
    const bool have = (tx_ready_[port >> 6] >> (port & 63)) & 1;
    if (want != have)
      return "node " + std::to_string(node_) + " port " + std::to_string(port) + ": tx-ready bit " +
             (have ? "set" : "clear") + " with nonempty " + std::to_string(p.nonempty) +
             ", pending PFC " + std::to_string(p.pending_xoff | p.pending_xon);
    for (int q = 0; q < kNumPriorities; ++q)
      if (((p.nonempty >> q) & 1) != (p.fifo[q].head != nullptr))
        return "node " + std::to_string(node_) + " port " + std::to_string(port) + " queue " +
               std::to_string(q) + ": nonempty bit disagrees with the FIFO";
  }
  return {};
}

uint64_t SoftSwitch::total_drops() const noexcept {
  uint64_t s = 0;
  for (const auto& p : ports_)
    for (uint64_t d : p.drops) s += d;
  return s;
}

void SoftSwitch::fill_snapshot(TimeNs now, uint64_t* rate_bps, EcnSetting* ecn,
                               PortCounters* ctr) const noexcept {
  for (uint16_t i = 0; i < ports_.size(); ++i) {
    const PortState& p = ports_[i];
    rate_bps[i] = p.rate_bps;
    ecn[i] = p.red.setting();
    PortCounters& c = ctr[i];
    c = p.ctr;
    c.tx_bytes = p.tx_bytes;
    c.tx_packets = p.tx_packets;
    c.rx_bytes = p.rx_bytes;
    c.rx_packets = p.rx_packets;
    c.peak_queue_bytes = p.peak_queue_bytes;
    // A port that never received a PFC frame has no pauses, paused time or storms (its
    // pause state is then not read: at K=16 that was most of a snapshot's cache misses).
    const bool pfc_seen = p.paused_until != 0;
    for (int q = 0; q < kNumPriorities; ++q) {
      c.queue_bytes[q] = mmu_.egress_bytes(i, q);
      c.pfc_pauses_received[q] = pfc_seen ? p.pause.pauses_received(q) : 0;
      c.paused_ns[q] = pfc_seen ? p.pause.paused_ns(q, now) : 0;
      c.pfc_storms[q] = pfc_seen ? p.pause.storms(q) : 0;
    }
  }
}

SwitchSnapshot SoftSwitch::snapshot(TimeNs now) const {
  SwitchSnapshot s;
  s.at_ns = now;
  s.node = node_;
  s.port_rate_bps.resize(ports_.size());
  s.ecn.resize(ports_.size());
  s.ports.resize(ports_.size());
  fill_snapshot(now, s.port_rate_bps.data(), s.ecn.data(), s.ports.data());
  return s;
}

void SoftSwitch::publish_every(TimeNs interval_ns) noexcept {
  publish_ns_ = interval_ns;
  next_publish_ = interval_ns > 0 ? last_now_ : kNever;
  deadline_dirty_ = true;
}

std::string SoftSwitch::set_ecn(uint16_t port, const EcnSetting& s) {
  if (port >= ports_.size())
    return "port " + std::to_string(port) + " beyond the switch's " + std::to_string(ports_.size()) +
           " ports";
  if (auto why = s.validate(); !why.empty()) return why;
  std::lock_guard<std::mutex> lock(ecn_mu_);
  ecn_pending_[port] = s;
  ecn_pending_set_[port] = 1;
  ecn_dirty_.store(true, std::memory_order_release);
  return {};
}

void SoftSwitch::apply_pending_ecn() noexcept {
  // try_lock: if the control thread holds the lock, apply on the next burst instead.
  std::unique_lock<std::mutex> lock(ecn_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  for (size_t i = 0; i < ports_.size(); ++i) {
    if (!ecn_pending_set_[i]) continue;
    ports_[i].red.configure(ecn_pending_[i]);
    ecn_pending_set_[i] = 0;
  }
  ecn_dirty_.store(false, std::memory_order_release);
}

}  // namespace rocemu::sw
