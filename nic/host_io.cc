// host_io.cc — RoceHost as a Node: receive bursts, transmit scheduling, PFC obedience and
// timers. Transmit order when the wire is free: ACK/NAK/CNP (control priority) first, then
// data round-robin over QPs (each QP's pending READ responses before its own requests),
// skipping QPs held by their pacer or an RNR wait and priorities paused by PFC (802.1Qbb:
// a pause of `quanta` lasts quanta x 512 bit times at the link rate; quanta 0 resumes).
#include <rte_mbuf.h>

#include <algorithm>

#include "nic/roce_host.h"

namespace rocemu::nic {

using namespace wire;

void RoceHost::rx(uint16_t /*port*/, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept {
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    ++counters_.rx_packets;
    counters_.rx_bytes += rte_pktmbuf_pkt_len(m);
    if (m->nb_segs != 1) [[unlikely]] {
      ++counters_.drops[static_cast<int>(RxDrop::kNonContiguous)];
    } else {
      receive(rte_pktmbuf_mtod(m, uint8_t*), rte_pktmbuf_data_len(m), now);
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
  for (int prio = 0; prio < 8; ++prio) {
    if (!(enable & (1u << prio))) continue;
    ++counters_.pfc_frames_received[prio];
    const uint16_t q = pfc->quanta(prio);
    // One quantum = 512 bit times = 64 bytes at the link rate.
    paused_until_[prio] =
        q == 0 || link_rate_bps_ == 0 ? 0 : now + serialization_ns(uint64_t{q} * 64, link_rate_bps_);
  }
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
  // Control first: ACK/NAK/CNP, in order behind the QP's pending READ responses.
  for (auto& qp_ptr : qps_) {
    Qp& qp = *qp_ptr;
    if (!ctl_ready(qp) || paused_until_[qp.ctl_priority] > now) continue;
    wanted = true;
    if ((m = responder_ctl(qp))) break;
  }
  const auto nq = static_cast<uint32_t>(qps_.size());
  for (uint32_t k = 0; !m && k < nq; ++k) {
    Qp& qp = *qps_[(rr_next_ + k) % nq];
    if (paused_until_[qp.data_priority] > now) continue;
    if (qp.rate_bps != 0 && qp.next_tx_ns > now) continue;
    if (!qp.reads.empty() && (qp.state == IBV_QPS_RTS || qp.state == IBV_QPS_RTR)) {
      wanted = true;
      m = responder_read_next(qp);
    } else if (requester_ready(qp, now)) {
      wanted = true;
      m = requester_next(qp, now);
    }
    if (m) {
      rr_next_ = (rr_next_ + k + 1) % nq;
      const uint32_t bytes = rte_pktmbuf_pkt_len(m);
      if (qp.rate_bps != 0)
        qp.next_tx_ns = std::max(now, qp.next_tx_ns) + serialization_ns(bytes, qp.rate_bps);
      if (hooks_) hooks_->on_data_sent(qp.qpn, bytes, now);
    }
  }
  if (m) {
    account_tx(m);
  } else if (wanted) {
    alloc_retry_ns_ = now + kNsPerUs;  // pool empty: ask again shortly
  }
  return m;
}

TimeNs RoceHost::next_deadline() const noexcept {
  TimeNs t = hooks_ ? hooks_->next_deadline() : kNever;
  if (alloc_retry_ns_ != kNever) t = std::min(t, alloc_retry_ns_);
  for (const auto& qp_ptr : qps_) {
    const Qp& qp = *qp_ptr;
    t = std::min(t, qp.retrans_deadline);
    const bool has_data =
        (qp.state == IBV_QPS_RTS && qp.sq_send != qp.sq.tail) || !qp.reads.empty();
    if (has_data) {
      if (qp.rate_bps != 0 && qp.next_tx_ns > 0) t = std::min(t, qp.next_tx_ns);
      if (qp.rnr_hold_until > 0) t = std::min(t, qp.rnr_hold_until);
      if (paused_until_[qp.data_priority] > 0) t = std::min(t, paused_until_[qp.data_priority]);
    }
    if (ctl_ready(qp) && paused_until_[qp.ctl_priority] > 0)
      t = std::min(t, paused_until_[qp.ctl_priority]);
  }
  return t;
}

void RoceHost::on_timer(TimeNs now) noexcept {
  if (hooks_ && hooks_->next_deadline() <= now) hooks_->on_timer(now);
  for (auto& qp_ptr : qps_) {
    Qp& qp = *qp_ptr;
    if (qp.retrans_deadline <= now) check_timeouts(qp, now);
    // Passed deadlines are cleared so next_deadline() never reports a time in the past.
    if (qp.rnr_hold_until != 0 && qp.rnr_hold_until <= now) qp.rnr_hold_until = 0;
    if (qp.next_tx_ns != 0 && qp.next_tx_ns <= now) qp.next_tx_ns = 0;
  }
  if (alloc_retry_ns_ != kNever && alloc_retry_ns_ <= now) alloc_retry_ns_ = kNever;
  for (auto& p : paused_until_)
    if (p != 0 && p <= now) p = 0;
}

}  // namespace rocemu::nic
