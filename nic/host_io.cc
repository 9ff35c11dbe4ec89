// host_io.cc — RoceHost as a Node: receive bursts, transmit scheduling, PFC obedience and
// timers. Transmit order when the wire is free: ACK/NAK/CNP (control priority) first, then
// data round-robin over QPs (each QP's pending READ responses before its own requests),
// skipping QPs held by their rate limiter (paced_release.h) or an RNR wait and priorities
// paused by PFC (802.1Qbb: a pause of `quanta` lasts quanta x 512 bit times at the link
// rate; quanta 0 resumes).
// The engine calls next_deadline() after every rx/tx/on_timer, so nothing here scans every
// QP per call: a QP something touched is re-examined (touch), the loops visit only the
// candidate bits in the order a full scan would, and the deadline is a MinTree over QPs.
#include <rte_mbuf.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdio>

#include "nic/paced_release.h"
#include "nic/psn.h"
#include "nic/roce_host.h"

namespace rocemu::nic {

using namespace wire;

namespace {

/// Index of the first set bit of `bits` in [from, end), or `end` if there is none.
[[gnu::always_inline]] inline uint32_t next_bit(const std::vector<uint64_t>& bits, uint32_t from,
                                                uint32_t end) noexcept {
  if (from >= end) return end;
  uint32_t w = from / 64;
  uint64_t word = bits[w] & (~uint64_t{0} << (from % 64));
  const uint32_t last = (end - 1) / 64;
  while (word == 0) {
    if (++w > last) return end;
    word = bits[w];
  }
  return std::min(end, w * 64 + static_cast<uint32_t>(std::countr_zero(word)));
}

/// The earliest of a QP's timers (what on_timer() acts on), kNever if none is set.
TimeNs qp_timer(const Qp& qp) noexcept {
  TimeNs t = qp.retrans_deadline;
  if (qp.rnr_hold_until != 0) t = std::min(t, qp.rnr_hold_until);
  if (qp.next_tx_ns != 0) t = std::min(t, qp.next_tx_ns);
  return t;
}

void clear_bit(std::vector<uint64_t>& bits, uint32_t i) noexcept {
  bits[i / 64] &= ~(uint64_t{1} << (i % 64));
}

}  // namespace

void RoceHost::track_new_qp() {
  const auto n = static_cast<uint32_t>(qps_.size());
  ctl_candidates_.resize((n + 63) / 64, 0);
  data_candidates_.resize((n + 63) / 64, 0);
  qp_deadlines_.grow(n);  // the other QPs' entries stay current: only the new one is stale
  qp_timers_.grow(n);
  dirty_.resize(n, 0);
  // touch() never allocates: room for every QP, grown geometrically (reserve(n) for each new
  // QP reallocated and copied the list every time: O(n) per QP).
  if (dirty_qps_.capacity() < n) dirty_qps_.reserve(std::max<size_t>(n, 2 * dirty_qps_.capacity()));
  touch(n - 1);
}

void RoceHost::touch(uint32_t index) noexcept {
  ctl_candidates_[index / 64] |= uint64_t{1} << (index % 64);
  touch_data(index);
}

void RoceHost::touch_data(uint32_t index) noexcept {
  data_candidates_[index / 64] |= uint64_t{1} << (index % 64);
  if (!dirty_[index]) {
    dirty_[index] = 1;
    dirty_qps_.push_back(index);
  }
}

bool RoceHost::data_work(const Qp& qp) const noexcept {
  return (!qp.reads.empty() && (qp.state == IBV_QPS_RTS || qp.state == IBV_QPS_RTR)) ||
         requester_has_work(qp);
}

void RoceHost::rx(uint16_t /*port*/, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept {
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    ++counters_.rx_packets;
    counters_.rx_bytes += rte_pktmbuf_pkt_len(m);
    if (m->nb_segs != 1) [[unlikely]] {
      ++counters_.drops[static_cast<int>(RxDrop::kNonContiguous)];
    } else if (rte_pktmbuf_data_len(m) != rte_pktmbuf_pkt_len(m) && !params_.elide_payload) {
      // A frame of an eliding sender (headers only) at a host that reads payloads.
      ++counters_.drops[static_cast<int>(RxDrop::kTruncated)];
    } else {
      // With elide_payload the frame's bytes past data_len (its payload, pad and ICRC) may
      // not exist: nothing reads them then (the parser reads headers only).
      receive(rte_pktmbuf_mtod(m, uint8_t*), rte_pktmbuf_pkt_len(m), now);
    }
    rte_pktmbuf_free(m);
  }
}

void RoceHost::receive_mac_control(const uint8_t* frame, uint32_t len, TimeNs now) noexcept {
  if (len < sizeof(Ethernet) + sizeof(PfcFrame) - sizeof(PfcFrame::pad)) [[unlikely]] {
    ++counters_.drops[static_cast<int>(RxDrop::kTruncated)];
    return;
  }
  const auto* pfc = reinterpret_cast<const PfcFrame*>(frame + sizeof(Ethernet));
  if (pfc->opcode() != kPfcOpcode) {
    ++counters_.drops[static_cast<int>(RxDrop::kMacControl)];
    return;
  }
  const uint16_t enable = pfc->class_enable();
  for (int prio = 0; prio < 8; ++prio)
    if (enable & (1u << prio)) ++counters_.pfc_frames_received[prio];
  if (link_rate_bps_ != 0) pause_.on_frame(*pfc, link_rate_bps_, now);
  for (int prio = 0; prio < 8; ++prio) {
    if (!(enable & (1u << prio)) || pause_.in_storm(prio, now)) continue;
    const auto bit = static_cast<uint8_t>(1u << prio);
    if (pfc->quanta(prio) != 0 && link_rate_bps_ != 0)
      pause_armed_ |= bit;
    else
      pause_armed_ = static_cast<uint8_t>(pause_armed_ & ~bit);
  }
  watch_pfc(now);
  all_dirty_ = true;  // QP deadlines include the pause ends
}

void RoceHost::watch_pfc(TimeNs now) noexcept {
  if (!pause_.watchdog().on()) return;
  const uint8_t paused = pause_.paused_mask(now);
  if (paused == 0 && pause_.detection_at(0xff) == kNever) return;
  // Priorities held back by a pause while some QP has something to send on them.
  uint8_t waiting = 0;
  const auto nq = static_cast<uint32_t>(qps_.size());
  for (uint32_t i = next_bit(ctl_candidates_, 0, nq); i < nq;
       i = next_bit(ctl_candidates_, i + 1, nq))
    if (ctl_ready(*qps_[i]))
      waiting = static_cast<uint8_t>(waiting | (1u << qps_[i]->ctl_priority));
  for (uint32_t i = next_bit(data_candidates_, 0, nq); i < nq;
       i = next_bit(data_candidates_, i + 1, nq))
    if (data_work(*qps_[i]))
      waiting = static_cast<uint8_t>(waiting | (1u << qps_[i]->data_priority));
  const uint8_t began = pause_.watch(static_cast<uint8_t>(waiting & paused), now);
  if (began == 0) return;
  for (int prio = 0; prio < 8; ++prio)
    if ((began >> prio) & 1) ++counters_.pfc_storms[prio];
  pause_armed_ = static_cast<uint8_t>(pause_armed_ & ~began);  // the pause in force is dropped
  all_dirty_ = true;
}

rte_mbuf* RoceHost::alloc_payload_frame(const FrameTemplate& t, uint32_t ext, uint32_t payload,
                                        uint8_t*& frame) noexcept {
  if (!params_.elide_payload) return alloc_frame(frame_bytes(t, ext, payload), frame);
  rte_mbuf* m = alloc_frame(frame_bytes(t, ext, 0) - wire::kIcrcBytes, frame);
  if (m) m->pkt_len = frame_bytes(t, ext, payload);  // data_len: the bytes written
  return m;
}

rte_mbuf* RoceHost::alloc_frame(uint32_t bytes, uint8_t*& frame) noexcept {
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  if (!m) [[unlikely]] {
    ++counters_.tx_alloc_failures;
    return nullptr;
  }
  frame = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(bytes)));
  if (!frame) [[unlikely]] {
    rte_pktmbuf_free(m);
    ++counters_.tx_alloc_failures;
    return nullptr;
  }
  return m;
}

void RoceHost::account_tx(rte_mbuf* m) noexcept {
  ++counters_.tx_packets;
  counters_.tx_bytes += rte_pktmbuf_pkt_len(m);
}

rte_mbuf* RoceHost::tx(uint16_t /*port*/, TimeNs now) noexcept {
  if (qps_.empty()) return nullptr;
  if (now < alloc_retry_ns_ && alloc_retry_ns_ != kNever) return nullptr;
  alloc_retry_ns_ = kNever;
  rte_mbuf* m = nullptr;
  bool wanted = false;  // some QP had something to send but allocation failed
  // Control first: ACK/NAK/CNP, in order behind the QP's pending READ responses. Lowest
  // QP index first, as a scan of every QP would visit them.
  const auto nq = static_cast<uint32_t>(qps_.size());
  for (uint32_t i = next_bit(ctl_candidates_, 0, nq); i < nq;
       i = next_bit(ctl_candidates_, i + 1, nq)) {
    Qp& qp = *qps_[i];
    if (!ctl_ready(qp)) {
      clear_bit(ctl_candidates_, i);
      continue;
    }
    if (pause_.paused(qp.ctl_priority, now)) continue;
    wanted = true;
    touch(i);
    if ((m = responder_ctl(qp))) break;
  }
  // Data round-robin from rr_next_: candidates in [rr_next_, nq), then [0, rr_next_).
  const auto try_data = [&](uint32_t i) noexcept {
    Qp& qp = *qps_[i];
    if (pause_.paused(qp.data_priority, now)) return;
    if (pacing_holds(qp.rate_bps, qp.next_tx_ns, now)) return;
    if (!qp.reads.empty() && (qp.state == IBV_QPS_RTS || qp.state == IBV_QPS_RTR)) {
      wanted = true;
      m = responder_read_next(qp);
      touch(i);  // a READ response sent may let the ACK queued behind it go
    } else if (requester_ready(qp, now)) {
      wanted = true;
      m = requester_next(qp, now);
      touch_data(i);  // a request sent changes nothing ctl_ready() reads
    } else {
      if (!data_work(qp)) clear_bit(data_candidates_, i);
      return;
    }
    if (m) {
      rr_next_ = i + 1 == nq ? 0 : i + 1;  // (i < nq; no division per packet)
      const uint32_t bytes = rte_pktmbuf_pkt_len(m);
      qp.next_tx_ns = paced_release_ns(qp.next_tx_ns, now, bytes, qp.rate_bps);
      if (hooks_) hooks_->on_data_sent(qp.qpn, bytes, now);
    }
  };
  const uint32_t start = rr_next_ < nq ? rr_next_ : 0;
  for (uint32_t i = next_bit(data_candidates_, start, nq); !m && i < nq;
       i = next_bit(data_candidates_, i + 1, nq))
    try_data(i);
  for (uint32_t i = next_bit(data_candidates_, 0, start); !m && i < start;
       i = next_bit(data_candidates_, i + 1, start))
    try_data(i);
  if (m) {
    account_tx(m);
  } else if (wanted) {
    alloc_retry_ns_ = now + kNsPerUs;  // pool empty: ask again shortly
  }
  return m;
}

TimeNs RoceHost::qp_deadline(const Qp& qp) const noexcept {
  TimeNs t = qp.retrans_deadline;
  const bool has_data = (qp.state == IBV_QPS_RTS && qp.sq_send != qp.sq.tail) || !qp.reads.empty();
  if (has_data) {
    if (qp.rate_bps != 0 && qp.next_tx_ns > 0) t = std::min(t, qp.next_tx_ns);
    if (qp.rnr_hold_until > 0) t = std::min(t, qp.rnr_hold_until);
    if (const TimeNs p = paused_until(qp.data_priority); p > 0) t = std::min(t, p);
  }
  if (const TimeNs p = paused_until(qp.ctl_priority); ctl_ready(qp) && p > 0) t = std::min(t, p);
  return t;
}

const char* RoceHost::invariant_violation(const Qp& qp) const noexcept {
  if (qp.state != IBV_QPS_RTS) return nullptr;
  if (psn_diff(qp.sq_psn, qp.una_psn) < 0) return "sq_psn behind una_psn";
  if (qp.sq.head == qp.sq.tail) return nullptr;  // nothing outstanding
  if (qp.sq_send < qp.sq.head || qp.sq_send - qp.sq.head > qp.sq.size())
    return "send position outside the send queue";
  // Work to send (perhaps after an RNR wait, which is then a deadline: qp_deadline()).
  if (requester_has_work(qp)) return nullptr;
  if (qp.retrans_deadline != kNever || local_ack_timeout_ns(qp.timeout) == kNever) return nullptr;
  return "outstanding work with nothing to send and no timer armed";
}

std::string RoceHost::check_invariants() const {
  for (const auto& q : qps_) {
    if (const char* why = invariant_violation(*q)) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "QP 0x%x: %s (sq head %u send %u tail %u, sq_psn %u una_psn %u, "
                    "deadline %lld)",
                    q->qpn, why, q->sq.head, q->sq_send, q->sq.tail, q->sq_psn, q->una_psn,
                    static_cast<long long>(q->retrans_deadline));
      return buf;
    }
  }
  return {};
}

void RoceHost::flush_deadlines() const noexcept {
#ifndef NDEBUG
  // Every event ends with the engine asking for the next deadline: the QPs it touched must
  // be live (a QP with outstanding work has a packet ready or a timer armed).
  const auto has_bit = [](const std::vector<uint64_t>& bits, uint32_t i) {
    return (bits[i / 64] >> (i % 64)) & 1;
  };
  for (uint32_t i : dirty_qps_) {
    // The control candidates hold every QP with control work (touch_data() leaves them be).
    assert(!ctl_ready(*qps_[i]) || has_bit(ctl_candidates_, i));
    if (invariant_violation(*qps_[i]) == nullptr) continue;
    std::fprintf(stderr, "rocemu: RC invariant broken: %s\n", check_invariants().c_str());
    assert(!"RC liveness invariant (see the line above)");
  }
#endif
  const auto refresh = [this](uint32_t i) {
    qp_deadlines_.update(i, qp_deadline(*qps_[i]));
    qp_timers_.update(i, qp_timer(*qps_[i]));
  };
  if (all_dirty_) {
    for (uint32_t i = 0; i < qps_.size(); ++i) refresh(i);
    all_dirty_ = false;
  } else {
    for (uint32_t i : dirty_qps_) refresh(i);
  }
  for (uint32_t i : dirty_qps_) dirty_[i] = 0;
  dirty_qps_.clear();
}

TimeNs RoceHost::next_deadline() const noexcept {
  flush_deadlines();
  TimeNs t = hooks_ ? hooks_->next_deadline() : kNever;
  if (alloc_retry_ns_ != kNever) t = std::min(t, alloc_retry_ns_);
  if (pause_armed_ != 0) t = std::min(t, pause_.detection_at(pause_armed_));  // watchdog
  return std::min(t, qp_deadlines_.min());
}

void RoceHost::on_timer(TimeNs now) noexcept {
  if (hooks_ && hooks_->next_deadline() <= now) hooks_->on_timer(now);
  // The QPs with a timer at or before now, in index order (a verbs call since the last
  // next_deadline() may have changed some: flushed first). What a QP's timers do here
  // touches that QP only, so the entries after it stay current while the loop runs.
  flush_deadlines();
  const auto nq = static_cast<uint32_t>(qps_.size());
  for (uint32_t i = qp_timers_.first_due(now, 0); i < nq; i = qp_timers_.first_due(now, i + 1)) {
    Qp& qp = *qps_[i];
    bool changed = false;
    if (qp.retrans_deadline <= now) {
      check_timeouts(qp, now);
      changed = true;
    }
    // Passed deadlines are cleared so next_deadline() never reports a time in the past.
    if (qp.rnr_hold_until != 0 && qp.rnr_hold_until <= now) {
      qp.rnr_hold_until = 0;
      changed = true;
    }
    if (qp.next_tx_ns != 0 && qp.next_tx_ns <= now) {
      qp.next_tx_ns = 0;
      changed = true;
    }
    if (changed) touch(i);
  }
  if (alloc_retry_ns_ != kNever && alloc_retry_ns_ <= now) alloc_retry_ns_ = kNever;
  for (int prio = 0; prio < 8; ++prio) {
    if ((pause_armed_ >> prio) & 1 && pause_.pause_end(prio) <= now) {
      pause_armed_ = static_cast<uint8_t>(pause_armed_ & ~(1u << prio));
      all_dirty_ = true;
    }
  }
  watch_pfc(now);
}

}  // namespace rocemu::nic
