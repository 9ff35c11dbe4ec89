// responder.cc — the responder role (as rxe_resp.c), IBTA Vol. 1 9.7.4-9.7.5:
// in-sequence requests are executed (SEND into the next receive WQE, WRITE into the region
// named by the RETH after rkey/access/bounds checks, READ queued as a response job, an
// atomic (9.4.5) executed on the 8 bytes at its VA and its ATOMIC_ACKNOWLEDGE queued as a
// response job); a PSN ahead of the expected one gets one PSN-sequence NAK until the gap
// closes; a duplicate is re-ACKed (a READ re-executed: 9.7.5.1.4; an atomic answered from
// its saved result, never executed twice, as rxe's responder resources); an empty receive
// queue gets an RNR NAK; rkey/access/bounds violations a remote access error NAK; malformed
// sequences or lengths and misaligned atomics an invalid request NAK. ACKs are coalesced: one
// pending ACK per QP carries the latest PSN and the MSN (count of completed messages, 9.7.5.1.2),
// sent behind any pending READ responses.
#include <rte_mbuf.h>

#include <cstring>

#include "common/icrc.h"
#include "nic/opcode_table.h"
#include "nic/psn.h"
#include "nic/roce_host.h"

namespace rocemu::nic {

using namespace wire;

namespace {
constexpr uint8_t kSynAck = 0x1f;  // ACK, credit count "invalid" (as rxe sends)
constexpr uint8_t kSynNakPsnSeq = 0x60;
constexpr uint8_t kSynNakInvalid = 0x61;
constexpr uint8_t kSynNakAccess = 0x62;
constexpr uint8_t kSynRnr = 0x20;
}  // namespace

void RoceHost::queue_ack(Qp& qp, uint32_t psn) noexcept {
  // A pending NAK stays unless this ACK reports progress beyond it.
  if (qp.ctl == CtlKind::kNak && psn_diff(psn, qp.ctl_psn) < 0) return;
  qp.ctl = CtlKind::kAck;
  qp.ctl_syndrome = kSynAck;
  qp.ctl_psn = psn;
}

void RoceHost::queue_nak(Qp& qp, uint8_t syndrome, uint32_t psn) noexcept {
  if (qp.qp_type != IBV_QPT_RC) return;  // UC (uc.cc) executes through here: nothing answers
  qp.ctl = CtlKind::kNak;
  qp.ctl_syndrome = syndrome;
  qp.ctl_psn = psn;
}

bool RoceHost::ctl_ready(const Qp& qp) const noexcept {
  if (qp.state != IBV_QPS_RTS && qp.state != IBV_QPS_RTR) return false;
  if (qp.cnp_pending) return true;
  if (qp.ctl == CtlKind::kNone) return false;
  return qp.reads.empty() || psn_diff(qp.ctl_psn, qp.reads.at(qp.reads.head).psn) < 0;
}

rte_mbuf* RoceHost::responder_ctl(Qp& qp) noexcept {
  uint8_t* f = nullptr;
  if (qp.cnp_pending) {
    // RoCEv2 CNP (annex A17.9.3): BTH opcode 0x81 to the requester's QP, 16 reserved bytes.
    rte_mbuf* m = alloc_frame(frame_bytes(qp.ctl_tmpl, 16, 0), f);
    if (!m) [[unlikely]]
      return nullptr;
    const uint32_t at = write_headers(f, qp.ctl_tmpl, kCnp, 0, false, false, 16, 0, ip_id_++);
    std::memset(f + at, 0, 16);
    reinterpret_cast<Bth*>(f + at - sizeof(Bth))->resv8a = 0x40;  // BECN, as CNPs carry
    seal_frame(f);
    qp.cnp_pending = false;
    ++counters_.cnps_sent;
    return m;
  }
  rte_mbuf* m = alloc_frame(frame_bytes(qp.ctl_tmpl, sizeof(Aeth), 0), f);
  if (!m) [[unlikely]]
    return nullptr;
  const uint32_t at = write_headers(f, qp.ctl_tmpl, kRcAcknowledge, qp.ctl_psn, false, false,
                                    sizeof(Aeth), 0, ip_id_++);
  auto* aeth = reinterpret_cast<Aeth*>(f + at);
  aeth->syndrome = qp.ctl_syndrome;
  aeth->set_msn(qp.msn);
  seal_frame(f);
  if (qp.ctl == CtlKind::kAck) {
    ++counters_.acks_sent;
    qp.answered_any = true;
    qp.answered_psn = qp.ctl_psn;
  } else if ((qp.ctl_syndrome >> 5) == 1) {
    ++counters_.rnr_naks_sent;
  } else {
    ++counters_.naks_sent;
  }
  qp.ctl = CtlKind::kNone;
  return m;
}

rte_mbuf* RoceHost::responder_read_next(Qp& qp) noexcept {
  ReadJob& job = qp.reads.at(qp.reads.head);
  const uint32_t k = job.pkts_sent;
  const uint32_t off = k * qp.mtu_bytes;
  const uint32_t n = job.len - off < qp.mtu_bytes ? job.len - off : qp.mtu_bytes;
  const bool first = k == 0, last = k + 1 == job.npkts;
  const uint8_t opcode = first && last ? kRcReadResponseOnly
                         : first       ? kRcReadResponseFirst
                         : last        ? kRcReadResponseLast
                                       : kRcReadResponseMiddle;
  if (job.atomic) return responder_atomic_ack(qp, job);
  const uint32_t ext = (first || last) ? sizeof(Aeth) : 0;
  uint8_t* f = nullptr;
  rte_mbuf* m = alloc_payload_frame(qp.data_tmpl, ext, n, f);
  if (!m) [[unlikely]]
    return nullptr;
  uint32_t at =
      write_headers(f, qp.data_tmpl, opcode, psn_add(job.psn, k), false, false, ext, n, ip_id_++);
  if (ext) {
    auto* aeth = reinterpret_cast<Aeth*>(f + at);
    aeth->syndrome = kSynAck;
    aeth->set_msn(job.msn);
    at += sizeof(Aeth);
  }
  // A zero-length READ names no memory (IBTA C9-88: its R_Key and VA are not checked), so
  // there is nothing to copy and job.addr may be anything, null included.
  if (!params_.elide_payload) {
    const IcrcHead head = seal_begin(f, at);
    seal_end(f, n != 0 ? head.crc_with(f + at, job.addr + off, n) : head.crc_with(nullptr, nullptr, 0));
  }
  ++counters_.read_responses_sent;
  if (last) {
    qp.answered_any = true;
    qp.answered_psn = psn_add(job.psn, k);
  }
  if (++job.pkts_sent == job.npkts) ++qp.reads.head;
  return m;
}

void RoceHost::respond(Qp& qp, const RocePacket& p, TimeNs /*now*/) noexcept {
  const int32_t d = psn_diff(p.psn, qp.epsn);
  if (d > 0) {
    ++counters_.drops[static_cast<int>(RxDrop::kPsnOutOfSeq)];
    if (!qp.nak_sent) {
      queue_nak(qp, kSynNakPsnSeq, qp.epsn);
      qp.nak_sent = true;
    }
    return;
  }
  if (d < 0) {
    ++counters_.drops[static_cast<int>(RxDrop::kDuplicate)];
    respond_duplicate(qp, p);
    return;
  }
  if (!op_sequence_ok(qp.prev_opcode, p.opcode)) {
    ++counters_.drops[static_cast<int>(RxDrop::kOpSequence)];
    queue_nak(qp, kSynNakInvalid, p.psn);
    return;
  }
  const uint32_t f = p.op_flags;
  bool ok = false;
  if (f & kOpSend) {
    ok = respond_send(qp, p);
  } else if (f & kOpWrite) {
    ok = respond_write(qp, p);
  } else if (f & (kOpRead | kOpAtomic)) {
    if (!((f & kOpRead) ? respond_read(qp, p, p.psn) : respond_atomic(qp, p))) return;
    const ReadJob& job = qp.reads.at(qp.reads.tail - 1);
    qp.read_history[qp.read_history_next++ % kReadHistory] = {
        job.psn, job.npkts, p.va, job.len, p.rkey, true, p.opcode, job.atomic_orig};
    qp.epsn = psn_add(p.psn, job.npkts);
    qp.prev_opcode = p.opcode;
    qp.nak_sent = false;
    ++qp.msn;
    return;
  } else {
    ++counters_.drops[static_cast<int>(RxDrop::kInvalidRequest)];
    queue_nak(qp, kSynNakInvalid, p.psn);
    return;
  }
  if (!ok) return;
  qp.nak_sent = false;
  qp.prev_opcode = p.opcode;
  qp.epsn = psn_add(p.psn, 1);
  if (f & kOpLast) qp.msn = psn_add(qp.msn, 1);
  if (p.ack_req) queue_ack(qp, p.psn);
}

void RoceHost::respond_duplicate(Qp& qp, const RocePacket& p) noexcept {
  if (p.op_flags & kOpAtomic) {
    respond_duplicate_atomic(qp, p);
    return;
  }
  if (!(p.op_flags & kOpRead)) {
    queue_ack(qp, psn_add(qp.epsn, kPsnMask));
    return;
  }
  // A duplicate READ (9.7.5.1.4) re-requests an earlier READ from its first PSN or, when the
  // requester lost a response, from inside it: the responder answers again from there, as
  // Linux rxe does, continuing the original response (MIDDLE .. LAST past its first packet:
  // rxe's completer takes FIRST only at a READ's first PSN). The request must name a part
  // of the original (same R_Key, the original's bytes from that PSN on) and still pass the
  // access checks; anything else is dropped (rxe: class D error).
  for (const ReadRecord& r : qp.read_history) {
    if (!r.valid || r.opcode != kRcReadRequest) continue;
    const int32_t at = psn_diff(p.psn, r.psn);
    if (at < 0 || static_cast<uint32_t>(at) >= r.npkts) continue;
    const uint64_t off = uint64_t{static_cast<uint32_t>(at)} * qp.mtu_bytes;
    if (p.rkey != r.rkey || p.va != r.va + off || uint64_t{p.dma_len} + off != r.len ||
        !read_allowed(qp, p.rkey, p.va, p.dma_len)) {
      ++counters_.drops[static_cast<int>(RxDrop::kInvalidRequest)];
      return;
    }
    ReadJob job;
    job.addr = read_source(r.rkey, r.va, r.len);
    job.len = r.len;
    job.psn = r.psn;
    job.npkts = r.npkts;
    job.pkts_sent = static_cast<uint32_t>(at);
    job.msn = psn_add(qp.msn, 1);
    if (!queue_replay(qp, job)) ++counters_.drops[static_cast<int>(RxDrop::kInvalidRequest)];
    return;
  }
  // Older than every READ this QP remembers: answer it as a new request.
  respond_read(qp, p, p.psn);
}

void RoceHost::respond_duplicate_atomic(Qp& qp, const RocePacket& p) noexcept {
  // Answered from the saved result of the original (same PSN, opcode, VA and R_Key), which
  // is never executed again; an atomic this QP no longer remembers is dropped (rxe: class D
  // error, the requester's retries then run out).
  for (const ReadRecord& r : qp.read_history) {
    if (!r.valid || r.psn != p.psn || r.opcode != p.opcode) continue;
    if (r.va != p.va || r.rkey != p.rkey) break;
    ReadJob job;
    job.psn = r.psn;
    job.npkts = 1;
    job.len = 8;
    job.atomic = true;
    job.atomic_orig = r.atomic_orig;
    job.msn = qp.msn;  // as rxe: a replayed atomic ACK carries the current MSN
    if (!queue_replay(qp, job)) break;
    ++counters_.atomic_replays;
    return;
  }
  ++counters_.drops[static_cast<int>(RxDrop::kInvalidRequest)];
}

bool RoceHost::queue_replay(Qp& qp, const ReadJob& replay) noexcept {
  // Still being answered (or queued): restart its response at the requested packet.
  uint32_t pos = qp.reads.head;
  for (; pos != qp.reads.tail; ++pos) {
    ReadJob& job = qp.reads.at(pos);
    if (job.psn == replay.psn) {
      if (job.pkts_sent > replay.pkts_sent) job.pkts_sent = replay.pkts_sent;
      return true;
    }
    if (psn_diff(job.psn, replay.psn) > 0) break;
  }
  if (qp.reads.full()) return false;  // the requester's timer asks again once drained
  // Responses go out in PSN order: the replay goes before the jobs of later READs (also
  // one being answered: the requester, which went back to this PSN, drops their responses
  // until this READ is complete, and re-requests them in turn).
  for (uint32_t i = qp.reads.tail; i != pos; --i) qp.reads.at(i) = qp.reads.at(i - 1);
  qp.reads.at(pos) = replay;
  ++qp.reads.tail;
  return true;
}

bool RoceHost::respond_send(Qp& qp, const RocePacket& p) noexcept {
  const uint32_t f = p.op_flags;
  const uint32_t mtu = qp.mtu_bytes;
  if (qp.rq.empty()) {
    if (f & kOpFirst) {
      ++counters_.drops[static_cast<int>(RxDrop::kRnr)];
      queue_nak(qp, static_cast<uint8_t>(kSynRnr | qp.min_rnr_timer), p.psn);
    } else {
      ++counters_.drops[static_cast<int>(RxDrop::kInvalidRequest)];
      queue_nak(qp, kSynNakInvalid, p.psn);
    }
    return false;
  }
  if (p.payload_len > mtu || (!(f & kOpLast) && p.payload_len != mtu)) {
    ++counters_.drops[static_cast<int>(RxDrop::kInvalidRequest)];
    queue_nak(qp, kSynNakInvalid, p.psn);
    return false;
  }
  if (f & kOpFirst) qp.recv_offset = 0;
  RecvWqe& r = qp.rq.at(qp.rq.head);
  if (qp.recv_offset + p.payload_len > r.length) {
    // The message does not fit the receive buffer: local length error here, invalid
    // request NAK to the requester (IBTA 9.7.5.2.4 / 11.6.2).
    ++counters_.drops[static_cast<int>(RxDrop::kInvalidRequest)];
    ibv_wc wc{};
    wc.wr_id = r.wr_id;
    wc.status = IBV_WC_LOC_LEN_ERR;
    wc.opcode = IBV_WC_RECV;
    wc.qp_num = qp.qpn;
    wc.src_qp = qp.dest_qpn;
    push_wc(qp.recv_cq, wc);
    ++qp.rq.head;
    qp.prev_opcode = 0xff;
    queue_nak(qp, kSynNakInvalid, p.psn);
    return false;
  }
  if (!params_.elide_payload)
    sge_scatter(r.sge.data(), r.num_sge, qp.recv_offset, p.frame + p.payload_off, p.payload_len);
  qp.recv_offset += p.payload_len;
  if (f & kOpLast) {
    ibv_wc wc{};
    wc.wr_id = r.wr_id;
    wc.status = IBV_WC_SUCCESS;
    wc.opcode = IBV_WC_RECV;
    wc.byte_len = qp.recv_offset;
    wc.qp_num = qp.qpn;
    wc.src_qp = qp.dest_qpn;
    if (f & kOpImm) {
      wc.wc_flags = IBV_WC_WITH_IMM;
      wc.imm_data = p.imm_be;
    }
    push_wc(qp.recv_cq, wc);
    ++qp.rq.head;
  }
  return true;
}

bool RoceHost::respond_write(Qp& qp, const RocePacket& p) noexcept {
  const uint32_t f = p.op_flags;
  const uint32_t mtu = qp.mtu_bytes;
  if (f & kOpFirst) {
    const MemoryRegion* mr = find_mr(p.rkey, true);
    const bool allowed =
        p.dma_len == 0 || (mr && mr->pd == qp.pd && (mr->access & IBV_ACCESS_REMOTE_WRITE) &&
                           (qp.access & IBV_ACCESS_REMOTE_WRITE) && mr->contains(p.va, p.dma_len));
    if (!allowed) {
      ++counters_.drops[static_cast<int>(RxDrop::kRemoteAccess)];
      queue_nak(qp, kSynNakAccess, p.psn);
      return false;
    }
    qp.write_mr = mr;
    qp.write_va = p.dma_len == 0 ? 0 : reinterpret_cast<uint64_t>(mr->at(p.va));
    qp.write_remaining = qp.write_len = p.dma_len;
  }
  const bool last = f & kOpLast;
  if (p.payload_len > mtu || (!last && p.payload_len != mtu) ||
      p.payload_len > qp.write_remaining || (last && p.payload_len != qp.write_remaining)) {
    ++counters_.drops[static_cast<int>(RxDrop::kInvalidRequest)];
    queue_nak(qp, kSynNakInvalid, p.psn);
    return false;
  }
  if ((f & kOpImm) && qp.rq.empty()) {
    ++counters_.drops[static_cast<int>(RxDrop::kRnr)];
    queue_nak(qp, static_cast<uint8_t>(kSynRnr | qp.min_rnr_timer), p.psn);
    return false;
  }
  if (p.payload_len != 0 && !params_.elide_payload && !p.payload_placed)
    std::memcpy(reinterpret_cast<uint8_t*>(qp.write_va), p.frame + p.payload_off, p.payload_len);
  qp.write_va += p.payload_len;
  qp.write_remaining -= p.payload_len;
  if (last && (f & kOpImm)) {
    const RecvWqe& r = qp.rq.at(qp.rq.head);
    ibv_wc wc{};
    wc.wr_id = r.wr_id;
    wc.status = IBV_WC_SUCCESS;
    wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
    wc.byte_len = qp.write_len;
    wc.qp_num = qp.qpn;
    wc.src_qp = qp.dest_qpn;
    wc.wc_flags = IBV_WC_WITH_IMM;
    wc.imm_data = p.imm_be;
    push_wc(qp.recv_cq, wc);
    ++qp.rq.head;
  }
  return true;
}

bool RoceHost::read_allowed(const Qp& qp, uint32_t rkey, uint64_t va, uint32_t len) const noexcept {
  if (len == 0) return true;  // IBTA C9-88: a zero-length READ's R_Key and VA are not checked
  const MemoryRegion* mr = find_mr(rkey, true);
  return mr && mr->pd == qp.pd && (mr->access & IBV_ACCESS_REMOTE_READ) &&
         (qp.access & IBV_ACCESS_REMOTE_READ) && mr->contains(va, len);
}

const uint8_t* RoceHost::read_source(uint32_t rkey, uint64_t va, uint32_t len) const noexcept {
  if (len == 0) return nullptr;
  const MemoryRegion* mr = find_mr(rkey, true);
  return mr ? mr->at(va) : nullptr;
}

bool RoceHost::respond_read(Qp& qp, const RocePacket& p, uint32_t psn) noexcept {
  if (!read_allowed(qp, p.rkey, p.va, p.dma_len)) {
    ++counters_.drops[static_cast<int>(RxDrop::kRemoteAccess)];
    queue_nak(qp, kSynNakAccess, psn);
    return false;
  }
  if (qp.reads.full()) {
    // No READ resource free. Re-executed duplicates share the ring with new requests, so a
    // full ring is not proof the requester broke max_dest_rd_atomic: drop without a NAK
    // (the requester's timer resends once responses have drained the ring).
    ++counters_.drops[static_cast<int>(RxDrop::kInvalidRequest)];
    return false;
  }
  ReadJob job;
  job.addr = read_source(p.rkey, p.va, p.dma_len);
  job.len = p.dma_len;
  job.psn = psn;
  job.npkts = p.dma_len == 0 ? 1 : (p.dma_len + qp.mtu_bytes - 1) / qp.mtu_bytes;
  job.msn = psn_add(qp.msn, 1);
  qp.reads.at(qp.reads.tail) = job;
  ++qp.reads.tail;
  return true;
}

bool RoceHost::respond_atomic(Qp& qp, const RocePacket& p) noexcept {
  // As rxe_resp.c: the rkey, access and bounds of the 8 bytes first (remote access error),
  // then their alignment (invalid request, IBTA 9.4.5: atomics need an 8-byte aligned VA).
  const MemoryRegion* mr = find_mr(p.rkey, true);
  if (!mr || mr->pd != qp.pd || !(mr->access & IBV_ACCESS_REMOTE_ATOMIC) ||
      !(qp.access & IBV_ACCESS_REMOTE_ATOMIC) || !mr->contains(p.va, 8)) {
    ++counters_.drops[static_cast<int>(RxDrop::kRemoteAccess)];
    queue_nak(qp, kSynNakAccess, p.psn);
    return false;
  }
  if (p.va % 8 != 0) {
    ++counters_.drops[static_cast<int>(RxDrop::kInvalidRequest)];
    queue_nak(qp, kSynNakInvalid, p.psn);
    return false;
  }
  if (qp.reads.full()) {
    // No responder resource free: dropped unexecuted, as a READ (respond_read).
    ++counters_.drops[static_cast<int>(RxDrop::kInvalidRequest)];
    return false;
  }
  // The target is a host-order uint64 (as rxe's rxe_mr_do_atomic_op); the operands arrive
  // big-endian and were converted by the parser. One thread runs the node, so the
  // read-modify-write is atomic with respect to every other access through this NIC.
  uint8_t* target = mr->at(p.va);
  uint64_t orig;
  std::memcpy(&orig, target, 8);
  const uint64_t now_value =
      atomic_result(p.opcode == kRcCompareSwap, orig, p.atomic_swap_add, p.atomic_compare);
  std::memcpy(target, &now_value, 8);
  ++counters_.atomics_executed;
  ReadJob job;
  job.psn = p.psn;
  job.npkts = 1;
  job.len = 8;
  job.atomic = true;
  job.atomic_orig = orig;
  job.msn = psn_add(qp.msn, 1);
  qp.reads.at(qp.reads.tail) = job;
  ++qp.reads.tail;
  return true;
}

rte_mbuf* RoceHost::responder_atomic_ack(Qp& qp, ReadJob& job) noexcept {
  constexpr uint32_t ext = sizeof(Aeth) + sizeof(AtomicAckEth);
  uint8_t* f = nullptr;
  rte_mbuf* m = alloc_frame(frame_bytes(qp.data_tmpl, ext, 0), f);
  if (!m) [[unlikely]]
    return nullptr;
  // In the stream of response jobs, on the data priority as READ responses.
  const uint32_t at =
      write_headers(f, qp.data_tmpl, kRcAtomicAcknowledge, job.psn, false, false, ext, 0, ip_id_++);
  auto* aeth = reinterpret_cast<Aeth*>(f + at);
  aeth->syndrome = kSynAck;
  aeth->set_msn(job.msn);
  reinterpret_cast<AtomicAckEth*>(f + at + sizeof(Aeth))->set_orig(job.atomic_orig);
  seal_frame(f);
  ++counters_.atomic_acks_sent;
  qp.answered_any = true;
  qp.answered_psn = job.psn;
  ++job.pkts_sent;
  ++qp.reads.head;
  return m;
}

}  // namespace rocemu::nic
