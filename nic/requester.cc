// requester.cc — the requester role (as rxe_req.c): turns send WQEs into request packets
// (IBTA Vol. 1 9.7.1-9.7.4): MTU segmentation into FIRST/MIDDLE/LAST/ONLY, one PSN per
// packet (a READ request takes one PSN per expected response packet), RETH on the first
// packet of a WRITE and on every READ request, ImmDt on the last, AtomicETH on a
// COMPARE_SWAP / FETCH_ADD (one PSN, 9.4.5), AckReq on the last packet and at least every
// ack_every_packets; a PSN window of max_outstanding_packets and at most max_rd_atomic
// READs and atomics in flight. Go-back-N (9.7.5.1.1): rewind_to_una() restarts sending at
// the oldest unacknowledged PSN, mid-message if need be.
#include <rte_mbuf.h>

#include <algorithm>

#include "nic/opcode_table.h"
#include "nic/psn.h"
#include "nic/roce_host.h"

namespace rocemu::nic {

using namespace wire;

namespace {

uint8_t request_opcode(const SendWqe& w, bool first, bool last) noexcept {
  const bool imm = w.opcode == IBV_WR_SEND_WITH_IMM || w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  if (w.opcode == IBV_WR_SEND || w.opcode == IBV_WR_SEND_WITH_IMM) {
    if (first && last) return imm ? kRcSendOnlyImm : kRcSendOnly;
    if (first) return kRcSendFirst;
    if (last) return imm ? kRcSendLastImm : kRcSendLast;
    return kRcSendMiddle;
  }
  if (first && last) return imm ? kRcWriteOnlyImm : kRcWriteOnly;
  if (first) return kRcWriteFirst;
  if (last) return imm ? kRcWriteLastImm : kRcWriteLast;
  return kRcWriteMiddle;
}

}  // namespace

uint32_t RoceHost::send_window(const Qp& qp) const noexcept {
  const uint32_t w = params_.max_outstanding_packets;
  return qp.recovery_window != 0 && qp.recovery_window < w ? qp.recovery_window : w;
}

uint64_t RoceHost::inflight_bytes(const Qp& qp) const noexcept {
  // Byte positions in the QP's payload stream: the send position's and una's. Each started
  // WQE knows where it begins (first_byte), a PSN k packets into it is k MTUs further
  // (clipped at its length; a READ's PSNs are its response packets).
  uint64_t at_send = qp.next_wqe_byte;
  if (qp.sq_send != qp.sq.tail && qp.sq.at(qp.sq_send).started)
    at_send = qp.sq.at(qp.sq_send).first_byte + qp.send_offset;
  uint64_t at_una = qp.next_wqe_byte;
  if (qp.sq.head != qp.sq.tail && qp.sq.at(qp.sq.head).started) {
    const SendWqe& h = qp.sq.at(qp.sq.head);
    const int32_t k = psn_diff(qp.una_psn, h.first_psn);
    const uint64_t off =
        k <= 0 ? 0
               : std::min<uint64_t>(uint64_t{static_cast<uint32_t>(k)} * qp.mtu_bytes, h.length);
    at_una = h.first_byte + off;
  }
  return at_send > at_una ? at_send - at_una : 0;
}

bool RoceHost::requester_has_work(const Qp& qp) const noexcept {
  if (qp.state != IBV_QPS_RTS || qp.sq_send == qp.sq.tail) return false;
  if (qp.qp_type != IBV_QPT_RC) return true;  // UC/UD: nothing is acknowledged, no windows
  if (static_cast<uint32_t>(psn_diff(qp.sq_psn, qp.una_psn)) >= send_window(qp)) return false;
  // The byte window: a packet may leave while fewer bytes are in flight (so one may always
  // leave an empty window, and the last may overshoot by under one packet).
  if (qp.window_bytes != 0 && inflight_bytes(qp) >= qp.window_bytes) return false;
  const SendWqe& w = qp.sq.at(qp.sq_send);
  if (is_rd_atomic(w.opcode) && qp.reads_in_flight >= qp.max_rd_atomic) return false;
  return true;
}

bool RoceHost::requester_ready(const Qp& qp, TimeNs now) const noexcept {
  if (qp.rnr_hold_until != 0 && qp.rnr_hold_until > now) return false;
  return requester_has_work(qp);
}

rte_mbuf* RoceHost::requester_next(Qp& qp, TimeNs now) noexcept {
  if (qp.qp_type == IBV_QPT_UD) return ud_next(qp);
  SendWqe& w = qp.sq.at(qp.sq_send);
  const uint32_t mtu = qp.mtu_bytes;
  if (!w.started) {
    w.started = true;
    w.first_psn = qp.sq_psn;
    w.npkts = w.length == 0 ? 1 : (w.length + mtu - 1) / mtu;
    w.last_psn = psn_add(w.first_psn, w.npkts - 1);
    w.read_pkts_done = 0;
    w.first_byte = qp.next_wqe_byte;
    qp.next_wqe_byte += w.length;
    qp.send_offset = 0;
  }
  const uint32_t psn = qp.sq_psn;
  const bool is_read = w.opcode == IBV_WR_RDMA_READ;
  const bool is_atom = is_atomic(w.opcode);
  const bool is_write = w.opcode == IBV_WR_RDMA_WRITE || w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  const bool first = qp.send_offset == 0;
  const uint32_t remaining = w.length - qp.send_offset;
  uint8_t opcode;
  uint32_t payload = 0, ext = 0;
  bool last = true;
  if (is_read) {
    opcode = kRcReadRequest;
    ext = sizeof(Reth);
  } else if (is_atom) {
    opcode = w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? kRcCompareSwap : kRcFetchAdd;
    ext = sizeof(AtomicEth);
  } else {
    last = remaining <= mtu;
    payload = last ? remaining : mtu;
    opcode = request_opcode(w, first, last);
    if (qp.qp_type == IBV_QPT_UC) opcode = uc_opcode(opcode);
    ext = op_info(opcode).ext_bytes;
  }
  // AckReq on the last packet of a message, every ack_every_packets, and on the packet that
  // fills the window (else a window smaller than ack_every_packets waits for the timer).
  const uint32_t top_psn = is_read ? w.last_psn : psn;
  const bool window_full =
      static_cast<uint32_t>(psn_diff(top_psn, qp.una_psn)) + 1 >= send_window(qp) ||
      (qp.window_bytes != 0 &&
       inflight_bytes(qp) + (is_read || is_atom ? remaining : payload) >= qp.window_bytes);
  const bool ack_req =
      qp.qp_type == IBV_QPT_RC &&  // UC: AckReq clear, as rxe sends it
      (last || window_full || qp.pkts_since_ack_req + 1 >= params_.ack_every_packets);
  uint8_t* f = nullptr;
  rte_mbuf* m = alloc_payload_frame(qp.data_tmpl, ext, payload, f);
  if (!m) [[unlikely]]
    return nullptr;
  const bool solicited = last && (w.send_flags & IBV_SEND_SOLICITED);
  uint32_t at =
      write_headers(f, qp.data_tmpl, opcode, psn, ack_req, solicited, ext, payload, ip_id_++);
  if (is_read || (is_write && first)) {
    auto* r = reinterpret_cast<Reth*>(f + at);
    r->set_va(w.remote_addr + qp.send_offset);
    r->set_rkey(w.rkey);
    r->set_dma_len(is_read ? remaining : w.length);
    at += sizeof(Reth);
  }
  if (is_atom) {
    // As rxe_req.c: compare & swap carries swap and compare, fetch & add the addend.
    auto* a = reinterpret_cast<AtomicEth*>(f + at);
    a->set_va(w.remote_addr);
    a->set_rkey(w.rkey);
    const bool cas = w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP;
    a->set_swap_add(cas ? w.swap : w.compare_add);
    a->set_compare(cas ? w.compare_add : 0);
    at += sizeof(AtomicEth);
  }
  if (op_info(opcode).flags & kOpImm) {
    std::memcpy(f + at, &w.imm_be, 4);
    at += 4;
  }
  if (!params_.elide_payload) {
    seal_end(f, sge_gather(w.sge.data(), w.num_sge, qp.send_offset, f + at, payload,
                           seal_begin(f, at)));
  }

  // Retransmission accounting: a PSN at or before the highest one sent is a resend.
  const uint32_t top = is_read ? w.last_psn : psn;
  if (qp.sent_any && psn_diff(psn, qp.max_sent_psn) <= 0) {
    ++counters_.retransmitted_packets;
    if (psn_diff(top, qp.max_sent_psn) > 0) qp.max_sent_psn = top;
  } else {
    qp.max_sent_psn = top;
    qp.sent_any = true;
  }
  ++counters_.data_packets_sent;
  qp.pkts_since_ack_req = ack_req ? 0 : qp.pkts_since_ack_req + 1;
  if (is_read || is_atom) {
    qp.sq_psn = psn_add(w.last_psn, 1);
    qp.send_offset = w.length;
  } else {
    qp.sq_psn = psn_add(psn, 1);
    qp.send_offset += payload;
  }
  if (last) {
    ++qp.sq_send;
    qp.send_offset = 0;
    if (is_read || is_atom) ++qp.reads_in_flight;
  }
  if (qp.qp_type == IBV_QPT_UC) {  // no ACK, no timer: complete once the last packet left
    if (last) complete_unacked(qp);
    qp.una_psn = qp.sq_psn;
    return m;
  }
  // The local ACK timer runs from the oldest unacknowledged send; after a go-back-N it
  // restarts with the first resend, so a rewind does not inherit a deadline that was
  // about to expire (which would spend a retry on data that was just resent).
  if (qp.retrans_deadline == kNever || qp.rearm_on_send) {
    qp.rearm_on_send = false;
    const TimeNs t = local_ack_timeout_ns(qp.timeout);
    qp.retrans_deadline = t == kNever ? kNever : now + t;
  }
  return m;
}

void RoceHost::rewind_to_una(Qp& qp) noexcept {
  resume_at_una(qp);
  qp.rewound_at_una = true;
  qp.rearm_on_send = true;
  ++counters_.rewinds;
}

void RoceHost::resume_at_una(Qp& qp) noexcept {
  // Restart at the first started WQE that still holds an unacknowledged PSN. When every
  // started WQE is acknowledged (an ACK for the first transmission overtook the resend),
  // sending resumes at una_psn with the first WQE not yet started: sq_psn must never stay
  // behind una_psn, or the window test sees 2^32 - 1 PSNs outstanding and nothing is ever
  // sent again while no timer is armed (the go-back-N deadlock).
  uint32_t psn = qp.una_psn;
  uint32_t i = qp.sq.head;
  uint32_t offset = 0;
  for (; i != qp.sq.tail; ++i) {
    const SendWqe& w = qp.sq.at(i);
    if (!w.started) break;
    if (psn_diff(psn, w.last_psn) > 0) continue;
    if (psn_diff(psn, w.first_psn) < 0) psn = w.first_psn;
    if (is_rd_atomic(w.opcode)) {
      const uint32_t resume = psn_add(w.first_psn, w.read_pkts_done);
      if (psn_diff(resume, psn) > 0) psn = resume;
    }
    offset = static_cast<uint32_t>(psn_diff(psn, w.first_psn)) * qp.mtu_bytes;
    break;
  }
  qp.sq_send = i;
  qp.send_offset = offset;
  qp.sq_psn = psn;
  qp.pkts_since_ack_req = 0;
  qp.reads_in_flight = 0;
  for (uint32_t j = qp.sq.head; j != i; ++j)
    if (is_rd_atomic(qp.sq.at(j).opcode)) ++qp.reads_in_flight;
}

}  // namespace rocemu::nic
