// uc.cc — the UC transport (IBTA Vol. 1 9.8): SEND and RDMA WRITE (with immediate) as RC
// segments them (requester.cc, opcodes 0x20-0x2b), but nothing is acknowledged or resent.
// The requester completes a WQE once its last packet left. The responder executes packets
// in PSN order through RC's SEND/WRITE execution (responder.cc, which queues no NAK for a
// UC QP); a PSN gap, a packet out of its message's sequence, a missing receive WQE or a
// failed R_Key check drops the rest of the message silently, until a FIRST or ONLY packet
// starts the next one (9.8.3.2, as rxe_resp.c's drop_msg). A FIRST or ONLY abandons a
// message in progress (its receive WQE is used for the new message).
#include "nic/opcode_table.h"
#include "nic/psn.h"
#include "nic/roce_host.h"

namespace rocemu::nic {

void RoceHost::complete_unacked(Qp& qp) noexcept {
  complete_send_wqe(qp, qp.sq.at(qp.sq.head), IBV_WC_SUCCESS);
  ++qp.sq.head;
}

void RoceHost::uc_respond(Qp& qp, const RocePacket& p) noexcept {
  const uint32_t f = p.op_flags;
  const auto drop = [&](RxDrop why) noexcept {
    ++counters_.drops[static_cast<int>(why)];
    qp.uc_drop_msg = true;
    qp.prev_opcode = 0xff;
  };
  if (f & kOpFirst) {
    qp.uc_drop_msg = false;  // a new message, whatever came before
    qp.prev_opcode = 0xff;
  } else if (qp.uc_drop_msg || p.psn != qp.epsn) {
    drop(RxDrop::kUcMessageDropped);
    return;
  } else if (!op_sequence_ok(qp.prev_opcode, p.opcode)) {
    drop(RxDrop::kOpSequence);
    return;
  }
  const bool needs_wqe = (f & kOpSend) ? (f & kOpFirst) : (f & kOpLast) && (f & kOpImm);
  if (needs_wqe && qp.rq.empty()) {
    drop(RxDrop::kNoRecvWqe);
    return;
  }
  // respond_send/respond_write count their own reason when they refuse a packet.
  const bool ok = (f & kOpSend) ? respond_send(qp, p) : respond_write(qp, p);
  if (!ok) {
    qp.uc_drop_msg = true;
    qp.prev_opcode = 0xff;
    return;
  }
  qp.prev_opcode = p.opcode;
  qp.epsn = psn_add(p.psn, 1);
}

}  // namespace rocemu::nic
