// recv_checks.cc — validation of every received frame before any role sees it (as rxe_recv.c
// and rxe_hdr checks): Ethernet/IPv4/UDP/BTH lengths and versions (packet.cc), destination
// address, P_Key (IBTA 9.6.1.1: the default partition 0xFFFF), ICRC (annex A17.3.3),
// destination QP, source address, opcode legal in the QP state (10.3.1). A frame failing
// any check is dropped and counted under its reason; dispatch then goes to the completer
// (responses), the responder (requests) or the congestion hooks (CNP).
#include "common/wire.h"
#include "nic/opcode_table.h"
#include "nic/roce_host.h"

namespace rocemu::nic {

void RoceHost::receive(uint8_t* frame, uint32_t len, TimeNs now) noexcept {
  if (len >= sizeof(wire::Ethernet) &&
      reinterpret_cast<const wire::Ethernet*>(frame)->ethertype() == wire::kEtherTypeMacControl) {
    receive_mac_control(frame, len, now);
    return;
  }
  RocePacket p;
  RxDrop why = parse_roce(frame, len, p);
  if (why == RxDrop::kNone && p.dst_ip != ipv4_) why = RxDrop::kNotForMe;
  if (why == RxDrop::kNone && p.pkey != 0xFFFF && p.pkey != 0x7FFF) why = RxDrop::kBadPkey;
  if (why == RxDrop::kNone && !icrc_ok(p)) why = RxDrop::kIcrc;
  if (why != RxDrop::kNone) [[unlikely]] {
    ++counters_.drops[static_cast<int>(why)];
    return;
  }
  Qp* qp = check_packet(p);
  if (!qp) return;
  if (p.op_flags & kOpCnp) {
    ++counters_.cnps_received;
    if (hooks_) hooks_->on_cnp(qp->qpn, now);
  } else if (p.op_flags & kOpReadResp) {
    complete_read_response(*qp, p, now);
  } else if (p.op_flags & kOpAtomicAckEth) {
    complete_atomic_ack(*qp, p, now);
  } else if (p.op_flags & kOpAck) {
    complete_ack(*qp, p, now);
  } else {
    if ((p.tos & 3) == wire::kEcnCe) {
      ++counters_.ce_received;
      if (hooks_ && hooks_->on_ce_marked(qp->qpn, now)) qp->cnp_pending = true;
    }
    respond(*qp, p, now);
  }
}

Qp* RoceHost::check_packet(const RocePacket& p) noexcept {
  Qp* qp = find_qp(p.dqpn);
  RxDrop why = RxDrop::kNone;
  if (!qp) {
    why = RxDrop::kUnknownQp;
  } else if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT ||
             p.src_ip != qp->dest_ip) {
    // A QP that is not connected has no peer yet: nothing may reach it.
    why = qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT ? RxDrop::kQpState
                                                                  : RxDrop::kWrongSource;
  } else if (!opcode_legal_in_state(p.opcode, qp->state)) {
    why = RxDrop::kQpState;
  } else if (!(p.op_flags & (kOpRequest | kOpResponse | kOpCnp))) {
    why = RxDrop::kBadOpcode;
  }
  if (why != RxDrop::kNone) [[unlikely]] {
    ++counters_.drops[static_cast<int>(why)];
    return nullptr;
  }
  return qp;
}

}  // namespace rocemu::nic
