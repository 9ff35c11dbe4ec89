// datagram.cc — the UD transport (IBTA Vol. 1 9.8, as Linux rxe does it for RoCEv2): address
// handles (ibv_create_ah), the post_send checks of UC and UD work requests, the one-packet
// UD SEND with its DETH (Q_Key, source QPN; 9.3.2), and UD receive: Q_Key check (a mismatch
// is a silent drop, 9.6.2), no receive WQE is a silent drop, the 40-byte GRH space at the
// start of the receive buffer filled as rxe_resp.c does for RoCEv2 over IPv4 (20 zero bytes,
// then the IPv4 header), IBV_WC_GRH and the source QPN in the completion. No ACKs, no PSN
// checks, no retransmission: a UD send completes when its packet leaves.
#include <rte_mbuf.h>

#include <cstring>

#include "nic/opcode_table.h"
#include "nic/psn.h"
#include "nic/roce_host.h"

namespace rocemu::nic {

using namespace wire;

namespace {
constexpr uint32_t kGrhBytes = 40;         // struct ibv_grh, ahead of every UD receive
constexpr uint32_t kIpv4HeaderBytes = 20;  // written into the GRH's last 20 bytes (rxe)
constexpr uint32_t kDethBytes = 8;
constexpr uint32_t kQkeyUseQp = 0x80000000u;  // remote_qkey bit 31: the QP's own Q_Key (10.2.5)
}  // namespace

ibv_ah* RoceHost::create_ah(uint32_t pd, const ibv_ah_attr& attr) {
  if (pd == 0 || pd > num_pds_ || !attr.is_global) return nullptr;
  const uint8_t* g = attr.grh.dgid.raw;
  const uint32_t ip = uint32_t{g[12]} << 24 | uint32_t{g[13]} << 16 | uint32_t{g[14]} << 8 | g[15];
  if (std::memcmp(ipv4_mapped_gid(ip).raw, g, 12) != 0) return nullptr;  // RoCEv2 over IPv4 only
  auto ah = std::make_unique<AddressHandle>();
  ah->ah.handle = static_cast<uint32_t>(ahs_.size());
  ah->pd = pd;
  ah->dest_ip = ip;
  const uint8_t tclass = attr.grh.traffic_class;
  const uint8_t dscp = tclass != 0 ? static_cast<uint8_t>(tclass >> 2) : params_.data_dscp;
  ah->tos = static_cast<uint8_t>(dscp << 2 | (params_.ecn_capable ? kEcnEct0 : 0));
  ah->valid = true;
  ahs_.push_back(std::move(ah));
  return &ahs_.back()->ah;
}

int RoceHost::destroy_ah(ibv_ah* ah) {
  if (!find_ah(ah)) return EINVAL;
  ahs_[ah->handle]->valid = false;
  return 0;
}

const RoceHost::AddressHandle* RoceHost::find_ah(const ibv_ah* ah) const noexcept {
  if (!ah || ah->handle >= ahs_.size()) return nullptr;
  const AddressHandle& a = *ahs_[ah->handle];
  return &a.ah == ah && a.valid ? &a : nullptr;
}

bool RoceHost::unreliable_wr_ok(const Qp& qp, const ibv_send_wr& wr, uint64_t total_bytes,
                                SendWqe& w) const noexcept {
  const bool send = wr.opcode == IBV_WR_SEND || wr.opcode == IBV_WR_SEND_WITH_IMM;
  if (qp.qp_type == IBV_QPT_UC)  // UC: SEND and WRITE (9.8.2), no READ or atomics
    return send || wr.opcode == IBV_WR_RDMA_WRITE || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  // UD: SEND only, one packet (a datagram is never segmented, 9.8.3.1), to an address handle
  // of the QP's protection domain.
  const AddressHandle* ah = find_ah(wr.wr.ud.ah);
  if (!send || !ah || ah->pd != qp.pd || total_bytes > qp.mtu_bytes) return false;
  w.ud_dest_ip = ah->dest_ip;
  w.ud_tos = ah->tos;
  w.ud_dest_qpn = wr.wr.ud.remote_qpn & kPsnMask;  // 24 bits, as PSNs
  w.ud_qkey = (wr.wr.ud.remote_qkey & kQkeyUseQp) ? qp.qkey : wr.wr.ud.remote_qkey;
  return true;
}

rte_mbuf* RoceHost::ud_next(Qp& qp) noexcept {
  SendWqe& w = qp.sq.at(qp.sq_send);
  const uint8_t opcode = w.opcode == IBV_WR_SEND_WITH_IMM ? kUdSendOnlyImm : kUdSendOnly;
  const uint32_t ext = op_info(opcode).ext_bytes;
  uint8_t* f = nullptr;
  rte_mbuf* m = alloc_frame(frame_bytes(ext, w.length), f);
  if (!m) [[unlikely]]
    return nullptr;
  const bool solicited = w.send_flags & IBV_SEND_SOLICITED;
  // AckReq clear: nothing acknowledges a datagram (rxe sends it so), except from QP1, whose
  // MADs rxe sends with AckReq set (golden capture 13).
  uint32_t at =
      write_headers(f, make_template(frame_address(qp.qpn, w.ud_dest_ip, w.ud_dest_qpn, w.ud_tos)),
                    opcode, qp.sq_psn, qp.qpn == 1, solicited, ext, w.length, ip_id_++);
  detail::put32(f + at, w.ud_qkey);
  f[at + 4] = 0;  // reserved
  detail::put24(f + at + 5, qp.qpn);
  at += kDethBytes;
  if (op_info(opcode).flags & kOpImm) {
    std::memcpy(f + at, &w.imm_be, 4);
    at += 4;
  }
  seal_end(f, sge_gather(w.sge.data(), w.num_sge, 0, f + at, w.length, seal_begin(f, at)));
  ++counters_.data_packets_sent;
  qp.sq_psn = psn_add(qp.sq_psn, 1);
  qp.una_psn = qp.sq_psn;
  ++qp.sq_send;
  complete_unacked(qp);
  return m;
}

void RoceHost::ud_receive(Qp& qp, const RocePacket& p) noexcept {
  if (p.qkey != qp.qkey) {
    ++counters_.drops[static_cast<int>(RxDrop::kQkeyMismatch)];
    return;
  }
  if (p.payload_len > qp.mtu_bytes) {
    ++counters_.drops[static_cast<int>(RxDrop::kInvalidRequest)];
    return;
  }
  if (qp.rq.empty()) {
    ++counters_.drops[static_cast<int>(RxDrop::kNoRecvWqe)];
    return;
  }
  RecvWqe& r = qp.rq.at(qp.rq.head);
  ibv_wc wc{};
  wc.wr_id = r.wr_id;
  wc.opcode = IBV_WC_RECV;
  wc.qp_num = qp.qpn;
  wc.src_qp = p.src_qpn;
  wc.wc_flags = IBV_WC_GRH;
  if (kGrhBytes + p.payload_len > r.length) {
    // Does not fit: the WQE completes with a local length error (rxe: UD class D error).
    ++counters_.drops[static_cast<int>(RxDrop::kInvalidRequest)];
    wc.status = IBV_WC_LOC_LEN_ERR;
  } else {
    uint8_t grh[kGrhBytes] = {};
    std::memcpy(grh + kGrhBytes - kIpv4HeaderBytes, p.frame + p.ip_off, kIpv4HeaderBytes);
    sge_scatter(r.sge.data(), r.num_sge, 0, grh, kGrhBytes);
    sge_scatter(r.sge.data(), r.num_sge, kGrhBytes, p.frame + p.payload_off, p.payload_len);
    wc.status = IBV_WC_SUCCESS;
    wc.byte_len = kGrhBytes + p.payload_len;
    if (p.op_flags & kOpImm) {
      wc.wc_flags |= IBV_WC_WITH_IMM;
      wc.imm_data = p.imm_be;
    }
  }
  push_wc(qp.recv_cq, wc);
  ++qp.rq.head;
}

}  // namespace rocemu::nic
