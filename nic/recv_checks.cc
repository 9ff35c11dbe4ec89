// recv_checks.cc — validation of every received frame before any role sees it (as rxe_recv.c
// and rxe_hdr checks): Ethernet/IPv4 or IPv6/UDP/BTH lengths and versions (packet.cc),
// destination address (IPv6: one of the host's GIDs), a non-zero IPv6 UDP checksum, P_Key
// (IBTA 9.6.1.1: the default partition 0xFFFF), ICRC (annex A17.3.3), destination QP, the opcode's
// transport (RC, UC, UD) against the QP's type, source address (not for UD), opcode legal in the QP
// state (10.3.1). A transport rocemu does not implement (RD, XRC, vendor opcodes) or one that is
// not the QP's is counted, and logged rate-limited with its name, so that a peer speaking it is
// told apart from a silent hang. A frame failing any check is dropped and counted under its reason;
// dispatch then goes to the completer (responses), the responder (requests; UC: uc.cc), UD's
// receive (datagram.cc) or the congestion hooks (CNP).
#include <cstdio>

#include "common/icrc.h"
#include "common/log.h"
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
  if (why == RxDrop::kNone && (p.ipv6 ? !has_ipv6(p.dst_ip6) : p.dst_ip != ipv4_)) [[unlikely]]
    why = RxDrop::kNotForMe;
  if (why == RxDrop::kNone && p.pkey != 0xFFFF && p.pkey != 0x7FFF) why = RxDrop::kBadPkey;
  // The destination QP, looked up once for the payload's placement and check_packet().
  Qp* const dest = why == RxDrop::kNone ? find_qp(p.dqpn) : nullptr;
  if (why == RxDrop::kNone && !params_.elide_payload) {
    const Placed placed = place_write_payload(p, dest);
    if (placed == Placed::kNotPlaced ? !icrc_ok(p) : placed == Placed::kIcrcBad)
      why = RxDrop::kIcrc;
  }
  if (why == RxDrop::kNone && p.ipv6 && !udp_checksum_ok(p)) [[unlikely]]
    why = RxDrop::kUdpChecksum;
  if (why == RxDrop::kBadOpcode && !transport_implemented(p.opcode)) [[unlikely]] {
    transport_error(RxDrop::kUnsupportedTransport, p, nullptr, now);
    return;
  }
  if (why != RxDrop::kNone) [[unlikely]] {
    ++counters_.drops[static_cast<int>(why)];
    return;
  }
  Qp* qp = check_packet(p, dest, now);
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
      // A UD QP has no peer QP to send a CNP to.
      if (hooks_ && qp->qp_type != IBV_QPT_UD && hooks_->on_ce_marked(qp->qpn, now))
        qp->cnp_pending = true;
    }
    if (qp->qp_type == IBV_QPT_UD)
      ud_receive(*qp, p);
    else if (qp->qp_type == IBV_QPT_UC)
      uc_respond(*qp, p);
    else
      respond(*qp, p, now);
  }
}

// The payload of a WRITE is read twice on receipt, once for the ICRC and once into memory,
// unless the two are one pass: then the bytes land before the ICRC is known. That is safe
// only where every byte written is written again, by accepted packets, before the WRITE
// completes: a MIDDLE or LAST (no immediate) at the expected PSN, continuing this QP's
// WRITE in progress, within its remaining bytes, from the QP's peer. A frame that turns out
// bad leaves the PSN where it was, so the resent packet, or the ones after it, overwrite
// the same bytes; RDMA gives the contents of a WRITE's target no meaning before its
// completion. Every other packet has its ICRC checked first, as before. respond_write()
// repeats all checks and skips the copy.
RoceHost::Placed RoceHost::place_write_payload(RocePacket& p, const Qp* qp) noexcept {
  if ((p.opcode != wire::kRcWriteMiddle && p.opcode != wire::kRcWriteLast) || p.payload_len == 0)
    return Placed::kNotPlaced;
  if (!qp || qp->qp_type != IBV_QPT_RC || !opcode_legal_in_state(p.opcode, qp->state) ||
      p.ipv6 != qp->ipv6 || (p.ipv6 ? p.src_ip6 != qp->dest_ip6 : p.src_ip != qp->dest_ip) ||
      p.psn != qp->epsn || !op_sequence_ok(qp->prev_opcode, p.opcode) || !qp->write_va ||
      p.payload_len > qp->write_remaining || p.payload_len > qp->mtu_bytes ||
      (p.opcode == wire::kRcWriteMiddle ? p.payload_len != qp->mtu_bytes
                                        : p.payload_len != qp->write_remaining))
    return Placed::kNotPlaced;
  IcrcHead head;
  if (!icrc_begin(p.frame, p.ip_off, p.payload_off, head)) return Placed::kNotPlaced;
  // The next packet's destination (the rest of the WRITE, checked against its region).
  prefetch_payload<1>(reinterpret_cast<const uint8_t*>(qp->write_va) + p.payload_len,
                      qp->write_remaining - p.payload_len);
  uint32_t crc = head.crc_with(reinterpret_cast<uint8_t*>(qp->write_va), p.frame + p.payload_off,
                               p.payload_len);
  const uint32_t end = p.payload_off + p.payload_len;
  crc = crc32_update(crc, p.frame + end, p.icrc_off - end);  // the pad
  if (crc != icrc_load(p.frame, p.icrc_off)) return Placed::kIcrcBad;
  p.payload_placed = true;
  return Placed::kIcrcGood;
}

Qp* RoceHost::check_packet(const RocePacket& p, Qp* qp, TimeNs now) noexcept {
  RxDrop why = RxDrop::kNone;
  // The opcode's transport must be the QP's (rxe_recv.c check_type_state); a CNP goes to
  // any connected QP.
  uint32_t want = 0;  // RC
  if (qp && qp->qp_type == IBV_QPT_UD) want = kOpUd;
  if (qp && qp->qp_type == IBV_QPT_UC) want = kOpUc;
  if (!qp) {
    why = RxDrop::kUnknownQp;
  } else if (!(p.op_flags & kOpCnp) && (p.op_flags & (kOpUc | kOpUd)) != want) {
    transport_error(RxDrop::kWrongTransport, p, qp, now);
    return nullptr;
  } else if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT) {
    why = RxDrop::kQpState;  // a QP that is not connected has no peer yet: nothing may reach it
  } else if (qp->qp_type != IBV_QPT_UD &&
             (p.ipv6 != qp->ipv6 ||
              (p.ipv6 ? p.src_ip6 != qp->dest_ip6 : p.src_ip != qp->dest_ip))) {
    why = RxDrop::kWrongSource;  // (UD takes datagrams from anyone, checked by Q_Key)
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

namespace {
const char* qp_type_name(ibv_qp_type t) noexcept {
  return t == IBV_QPT_UD ? "UD" : t == IBV_QPT_UC ? "UC" : "RC";
}
}  // namespace

void RoceHost::transport_error(RxDrop why, const RocePacket& p, const Qp* qp, TimeNs now) noexcept {
  ++counters_.drops[static_cast<int>(why)];
  last_foreign_opcode_ = p.opcode;
  if (!transport_log_->allow(now)) return;
  const std::string src = p.ipv6 ? ipv6_to_string(p.src_ip6) : ipv4_to_string(p.src_ip);
  const uint64_t more = transport_log_->suppressed();
  if (why == RxDrop::kUnsupportedTransport) {
    spdlog::warn(
        "rocemu: dropped a packet of the {} transport (BTH opcode 0x{:02x}) from {} to QPN "
        "0x{:x}: rocemu implements RC, UC and UD only ({} such drops before not logged)",
        transport_name(p.opcode), p.opcode, src, p.dqpn, more);
  } else {
    spdlog::warn(
        "rocemu: dropped a packet of the {} transport ({}) from {} to QPN 0x{:x}, whose type is "
        "{}: the peer's QP is of another type ({} such drops before not logged)",
        transport_name(p.opcode), op_info(p.opcode).name, src, p.dqpn,
        qp ? qp_type_name(qp->qp_type) : "?", more);
  }
}

const char* RoceHost::last_foreign_transport() const noexcept {
  return last_foreign_opcode_ < 0 ? "none"
                                  : transport_name(static_cast<uint8_t>(last_foreign_opcode_));
}

}  // namespace rocemu::nic
