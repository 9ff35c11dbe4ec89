// completer.cc — the completer role (as rxe_comp.c): ACKs, NAKs, READ responses and atomic
// ACKs retire send WQEs in order (IBTA Vol. 1 9.7.5.1.6 implicit acknowledgement), write
// READ data and an atomic's original value (AtomicAckETH, big-endian on the wire, host
// order in memory as rxe stores it) into local memory, and drive retries: a PSN-sequence NAK
// rewinds to the NAK's PSN (go-back-N), an RNR NAK waits the advertised RNR timer (table 45) before
// resending, limited by rnr_retry (7 = infinite); the local ACK timer (4.096 us x
// 2^timeout, 9.7.6.1.3) rewinds to the oldest unacknowledged PSN, limited by retry_cnt, then fails
// the WQE with IBV_WC_RETRY_EXC_ERR. NAK remote access / invalid request / remote operation errors
// fail the WQE with the matching status and move the QP to ERR (10.3.1.3).
#include <cstring>

#include "nic/opcode_table.h"
#include "nic/psn.h"
#include "nic/roce_host.h"

namespace rocemu::nic {

namespace {
constexpr uint8_t kAethAck = 0, kAethRnr = 1, kAethNak = 3;
constexpr uint8_t kNakPsnSeq = 0, kNakInvalidRequest = 1, kNakRemoteAccess = 2;
constexpr uint32_t kRecoveryWindowPackets = 16;
}  // namespace

void RoceHost::on_progress(Qp& qp, TimeNs now) noexcept {
  // Never resend what the responder has acknowledged (an ACK or READ response for a first
  // transmission that overtook its resend): resume at una if sending is behind it.
  if (psn_diff(qp.una_psn, qp.sq_psn) > 0) resume_at_una(qp);
  qp.retries_left = qp.retry_cnt;
  qp.rewound_at_una = false;
  // Recovery after a timeout opens the window again, doubling with each acknowledgement
  // that makes progress (as TCP's slow start after an RTO).
  if (qp.recovery_window != 0) {
    qp.recovery_window *= 2;
    if (qp.recovery_window >= params_.max_outstanding_packets) qp.recovery_window = 0;
  }
  const bool outstanding = psn_diff(qp.sq_psn, qp.una_psn) > 0;
  const TimeNs t = local_ack_timeout_ns(qp.timeout);
  qp.retrans_deadline = outstanding && t != kNever ? now + t : kNever;
}

bool RoceHost::ack_up_to(Qp& qp, uint32_t psn, TimeNs now) noexcept {
  bool progress = false;
  uint32_t una = psn_add(psn, 1);
  while (qp.sq.head != qp.sq.tail) {
    SendWqe& w = qp.sq.at(qp.sq.head);
    if (!w.started) break;
    if (is_rd_atomic(w.opcode)) {
      // A READ completes only with its data, an atomic with its ATOMIC_ACKNOWLEDGE. An
      // acknowledgement beyond its first PSN means its responses were lost (the responder
      // sends them before later ACKs): resend (an atomic is then answered from the
      // responder's saved result).
      const uint32_t resume = psn_add(w.first_psn, w.read_pkts_done);
      if (psn_diff(psn, w.first_psn) >= 0) {
        una = resume;
        // A rewind done at an older una (a timeout's) does not resend this READ's missing
        // responses: rewind again whenever una moves.
        const bool moved = psn_diff(una, qp.una_psn) > 0;
        if (moved) {
          qp.una_psn = una;
          progress = true;
        }
        if (moved || !qp.rewound_at_una) rewind_to_una(qp);
      }
      // Before the READ's first PSN, una is psn + 1: every earlier PSN is acknowledged. (It
      // was left behind, so a NAK naming the READ was taken for one after an incomplete READ
      // and ignored, or an RNR NAK there left no timer armed.)
      break;
    }
    if (psn_diff(psn, w.last_psn) < 0) break;
    // Acknowledged in full. After a go-back-N the send position may sit on or before this
    // WQE (the ACK covers packets sent before the rewind): move it past the WQE.
    complete_send_wqe(qp, w, IBV_WC_SUCCESS);
    if (qp.sq.head == qp.sq_send) {
      ++qp.sq_send;
      qp.send_offset = 0;
    }
    ++qp.sq.head;
    progress = true;
  }
  if (psn_diff(una, qp.una_psn) > 0) {
    qp.una_psn = una;
    progress = true;
  }
  if (progress) on_progress(qp, now);
  return progress;
}

void RoceHost::complete_ack(Qp& qp, const RocePacket& p, TimeNs now) noexcept {
  // Valid acknowledgements name a PSN in [una - 1, highest PSN ever sent]. After a
  // go-back-N, sq_psn is behind that highest PSN and ACKs for the earlier transmissions
  // are still valid (they acknowledge data the responder has).
  const uint32_t top = qp.sent_any ? psn_add(qp.max_sent_psn, 1) : qp.sq_psn;
  const uint32_t limit = psn_diff(top, qp.sq_psn) > 0 ? top : qp.sq_psn;
  if (psn_diff(p.psn, limit) >= 0 || psn_diff(p.psn, qp.una_psn) < -1) {
    ++counters_.drops[static_cast<int>(RxDrop::kStaleResponse)];
    return;
  }
  const uint8_t kind = (p.syndrome >> 5) & 3;
  const uint8_t code = p.syndrome & 0x1f;
  if (kind == kAethAck) {
    ++counters_.acks_received;
    ack_up_to(qp, p.psn, now);
    return;
  }
  if (kind != kAethRnr && kind != kAethNak) {
    ++counters_.drops[static_cast<int>(RxDrop::kStaleResponse)];
    return;
  }
  // A NAK names the PSN the responder expects: one before una_psn is older than an ACK
  // already taken (a reordered or duplicated NAK) and must not move una_psn back.
  if (psn_diff(p.psn, qp.una_psn) < 0) {
    ++counters_.drops[static_cast<int>(RxDrop::kStaleResponse)];
    return;
  }
  // A NAK acknowledges every PSN before its own. If that left an incomplete READ before
  // the NAK's PSN, ack_up_to() has already rewound to the READ: resuming at the NAK's PSN
  // would skip the READ's missing responses.
  ack_up_to(qp, psn_add(p.psn, kPsnMask), now);
  if (qp.state != IBV_QPS_RTS) return;
  const bool read_pending = psn_diff(qp.una_psn, p.psn) < 0;
  if (kind == kAethRnr) {
    ++counters_.rnr_naks_received;
    if (qp.rnr_left == 0) {
      enter_error(qp, IBV_WC_RNR_RETRY_EXC_ERR);
      return;
    }
    if (qp.rnr_retry != 7) --qp.rnr_left;
    qp.rnr_hold_until = now + rnr_timer_ns(code);
    if (!read_pending) {
      qp.una_psn = p.psn;
      qp.rewound_at_una = false;
      rewind_to_una(qp);
    }
    // The resend re-arms the timer when it goes out. With nothing to send after the wait
    // (the NAK came after an incomplete READ already resent, or max_rd_atomic holds the
    // next request back), the local ACK timer stays armed: it recovers the READ.
    if (requester_has_work(qp)) qp.retrans_deadline = kNever;
    return;
  }
  ++counters_.naks_received;
  if (code == kNakPsnSeq) {
    if (read_pending) return;
    if (!qp.rewound_at_una || qp.una_psn != p.psn) {
      qp.una_psn = p.psn;
      rewind_to_una(qp);
    }
    return;
  }
  enter_error(qp, code == kNakInvalidRequest ? IBV_WC_REM_INV_REQ_ERR
                  : code == kNakRemoteAccess ? IBV_WC_REM_ACCESS_ERR
                                             : IBV_WC_REM_OP_ERR);
}

SendWqe* RoceHost::response_target(Qp& qp, uint32_t psn) noexcept {
  const auto stale = [&] { ++counters_.drops[static_cast<int>(RxDrop::kStaleResponse)]; };
  // Responses may answer any request sent so far, also one sent before a go-back-N moved
  // sq_psn back: the window is [una, highest PSN ever requested].
  const uint32_t top = qp.sent_any ? psn_add(qp.max_sent_psn, 1) : qp.sq_psn;
  if (psn_diff(psn, qp.una_psn) < 0 || psn_diff(psn, top) >= 0) {
    stale();
    return nullptr;
  }
  // Implicit acknowledgement of the SENDs and WRITEs before the READ or atomic.
  while (qp.sq.head != qp.sq_send) {
    SendWqe& w = qp.sq.at(qp.sq.head);
    if (is_rd_atomic(w.opcode) || psn_diff(psn, w.last_psn) <= 0) break;
    complete_send_wqe(qp, w, IBV_WC_SUCCESS);
    ++qp.sq.head;
  }
  if (qp.sq.head == qp.sq.tail) {
    stale();
    return nullptr;
  }
  SendWqe& w = qp.sq.at(qp.sq.head);
  if (!w.started || !is_rd_atomic(w.opcode) || psn_diff(psn, w.first_psn) < 0) {
    stale();
    return nullptr;
  }
  const uint32_t expected = psn_add(w.first_psn, w.read_pkts_done);
  if (psn != expected) {
    // A gap: an earlier response was lost (of this READ, or this READ or atomic as a whole
    // when the response belongs to a later one). Go back once to the missing PSN.
    stale();
    if (psn_diff(psn, expected) > 0) {
      const bool moved = psn_diff(expected, qp.una_psn) > 0;  // see ack_up_to()
      if (moved) qp.una_psn = expected;
      if (moved || !qp.rewound_at_una) rewind_to_una(qp);
    }
    return nullptr;
  }
  return &w;
}

void RoceHost::complete_read_response(Qp& qp, const RocePacket& p, TimeNs now) noexcept {
  SendWqe* target = response_target(qp, p.psn);
  if (!target) return;
  SendWqe& w = *target;
  const uint32_t k = w.read_pkts_done;
  const uint32_t off = k * qp.mtu_bytes;
  const uint32_t want = w.length - off < qp.mtu_bytes ? w.length - off : qp.mtu_bytes;
  if (w.opcode != IBV_WR_RDMA_READ || !read_response_position_ok(p.op_flags, k, w.npkts) ||
      p.payload_len != want) {
    ++counters_.drops[static_cast<int>(RxDrop::kStaleResponse)];
    return;
  }
  if (!params_.elide_payload)
    sge_scatter(w.sge.data(), w.num_sge, off, p.frame + p.payload_off, want);
  ++w.read_pkts_done;
  qp.una_psn = psn_add(p.psn, 1);
  if (k + 1 == w.npkts) {
    complete_send_wqe(qp, w, IBV_WC_SUCCESS);
    ++qp.sq.head;
    if (qp.sq_send == qp.sq.head - 1) {
      // Sending had been rewound onto this READ (its re-request not yet sent): on_progress
      // moves the send position past it.
      qp.sq_send = qp.sq.head;
    } else if (qp.reads_in_flight > 0) {
      --qp.reads_in_flight;
    }
  }
  ++counters_.acks_received;
  on_progress(qp, now);
}

void RoceHost::complete_atomic_ack(Qp& qp, const RocePacket& p, TimeNs now) noexcept {
  // rocemu and rxe send NAKs as plain ACKNOWLEDGEs: an ATOMIC_ACKNOWLEDGE must say ACK.
  if (((p.syndrome >> 5) & 3) != kAethAck) {
    ++counters_.drops[static_cast<int>(RxDrop::kStaleResponse)];
    return;
  }
  SendWqe* target = response_target(qp, p.psn);
  if (!target) return;
  SendWqe& w = *target;
  if (!is_atomic(w.opcode)) {
    ++counters_.drops[static_cast<int>(RxDrop::kStaleResponse)];
    return;
  }
  // The original value, in host order, into the 8 bytes of the local SGEs.
  const uint64_t orig = p.atomic_orig;
  uint8_t bytes[8];
  std::memcpy(bytes, &orig, 8);
  sge_scatter(w.sge.data(), w.num_sge, 0, bytes, 8);
  w.read_pkts_done = 1;
  qp.una_psn = psn_add(p.psn, 1);
  complete_send_wqe(qp, w, IBV_WC_SUCCESS);
  ++qp.sq.head;
  if (qp.sq_send == qp.sq.head - 1) {
    qp.sq_send = qp.sq.head;  // rewound onto it, the resend not yet gone out
  } else if (qp.reads_in_flight > 0) {
    --qp.reads_in_flight;
  }
  ++counters_.acks_received;
  on_progress(qp, now);
}

void RoceHost::check_timeouts(Qp& qp, TimeNs now) noexcept {
  if (qp.state != IBV_QPS_RTS || psn_diff(qp.sq_psn, qp.una_psn) <= 0) {
    qp.retrans_deadline = kNever;
    return;
  }
  ++counters_.timeouts;
  if (qp.retries_left == 0) {
    enter_error(qp, IBV_WC_RETRY_EXC_ERR);
    return;
  }
  --qp.retries_left;
  qp.rewound_at_una = false;
  // A timeout says the peer or the path is not keeping up: resend a small window first, not
  // the whole of max_outstanding_packets again (against a slow peer every timeout would
  // otherwise queue another full window behind the copies it has not read yet).
  qp.recovery_window = kRecoveryWindowPackets;
  rewind_to_una(qp);
  const TimeNs t = local_ack_timeout_ns(qp.timeout);
  qp.retrans_deadline = t == kNever ? kNever : now + t;
}

}  // namespace rocemu::nic
