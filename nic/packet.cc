// packet.cc — RoCEv2 frame parsing and building (IBTA Vol. 1 ch. 9, annex A17.4; the field
// values Linux rxe uses, see packet.h).
#include "nic/packet.h"

#include <cstring>

#include "common/icrc.h"
#include "nic/opcode_table.h"

namespace rocemu::nic {

using namespace wire;

const char* rx_drop_name(RxDrop r) noexcept {
  static constexpr const char* kNames[kNumRxDrops] = {"none",
                                                      "truncated",
                                                      "non_contiguous",
                                                      "not_ipv4",
                                                      "ip_header",
                                                      "not_for_me",
                                                      "not_roce",
                                                      "udp_length",
                                                      "bth_version",
                                                      "bad_pkey",
                                                      "bad_opcode",
                                                      "pad_count",
                                                      "icrc",
                                                      "unknown_qp",
                                                      "wrong_source",
                                                      "qp_state",
                                                      "op_sequence",
                                                      "psn_out_of_seq",
                                                      "duplicate",
                                                      "remote_access",
                                                      "invalid_request",
                                                      "rnr",
                                                      "stale_response",
                                                      "mac_control",
                                                      "unsupported_transport",
                                                      "wrong_transport",
                                                      "qkey_mismatch",
                                                      "no_recv_wqe",
                                                      "uc_message_dropped"};
  const auto i = static_cast<int>(r);
  return i < kNumRxDrops ? kNames[i] : "?";
}

RxDrop parse_roce(uint8_t* frame, uint32_t len, RocePacket& p) noexcept {
  p.frame = frame;
  if (len < sizeof(Ethernet)) [[unlikely]] return RxDrop::kTruncated;
  const auto* eth = reinterpret_cast<const Ethernet*>(frame);
  if (eth->ethertype() != kEtherTypeIpv4) return RxDrop::kNotIpv4;
  if (len < kIpOff + sizeof(Ipv4)) [[unlikely]] return RxDrop::kTruncated;
  const auto* ip = reinterpret_cast<const Ipv4*>(frame + kIpOff);
  if (ip->version() != 4 || ip->ihl_bytes() != sizeof(Ipv4)) [[unlikely]] return RxDrop::kIpHeader;
  const uint32_t ip_len = ip->total_length();
  // More-fragments set or a fragment offset: RoCE never fragments (DF).
  if ((ip->frag() & 0x3fff) != 0 || ip_len < sizeof(Ipv4)) [[unlikely]] return RxDrop::kIpHeader;
  if (kIpOff + ip_len > len) [[unlikely]] return RxDrop::kTruncated;
  if (ip->protocol != kIpProtoUdp) return RxDrop::kNotRoce;
  if (ip_len < sizeof(Ipv4) + sizeof(Udp) + sizeof(Bth) + kIcrcBytes) [[unlikely]]
    return RxDrop::kTruncated;
  const auto* udp = reinterpret_cast<const Udp*>(frame + kUdpOff);
  if (udp->dst_port() != kRoceV2Port) return RxDrop::kNotRoce;
  if (udp->length() != ip_len - sizeof(Ipv4)) [[unlikely]] return RxDrop::kUdpLength;
  const auto* bth = reinterpret_cast<const Bth*>(frame + kBthOff);
  if (bth->tver() != 0) [[unlikely]] return RxDrop::kBthVersion;

  std::memcpy(p.dst_mac.data(), eth->dst, 6);
  std::memcpy(p.src_mac.data(), eth->src, 6);
  p.ttl = ip->ttl;
  p.ip_frag = ip->frag();
  p.mig_req = bth->mig_req();
  p.resv8a = bth->resv8a;
  p.src_ip = ip->src();
  p.dst_ip = ip->dst();
  p.ip_id = ip->id();
  p.tos = ip->tos;
  p.udp_sport = udp->src_port();
  p.opcode = bth->opcode;
  p.solicited = bth->solicited();
  p.ack_req = bth->ack_req();
  p.pad = bth->pad_count();
  p.pkey = bth->pkey();
  p.dqpn = bth->dqpn();
  p.psn = bth->psn();
  const OpInfo& op = op_info(p.opcode);
  p.op_flags = op.flags;
  if (!(op.flags & kOpValid)) [[unlikely]] return RxDrop::kBadOpcode;

  const uint32_t end = kIpOff + ip_len;  // end of the RoCE packet (Ethernet pad excluded)
  p.icrc_off = end - kIcrcBytes;
  const uint32_t ext_off = kRoceHeadersBytes;
  if (ext_off + op.ext_bytes > p.icrc_off) [[unlikely]] return RxDrop::kTruncated;
  const uint8_t* ext = frame + ext_off;
  uint32_t at = 0;
  if (op.flags & kOpDeth) {
    p.qkey = detail::get32(ext);
    p.src_qpn = detail::get24(ext + 5);
    at += 8;
  }
  if (op.flags & kOpReth) {
    const auto* r = reinterpret_cast<const Reth*>(ext + at);
    p.va = r->va();
    p.rkey = r->rkey();
    p.dma_len = r->dma_len();
    at += sizeof(Reth);
  }
  if (op.flags & kOpAtomicEth) {
    const auto* a = reinterpret_cast<const AtomicEth*>(ext + at);
    p.va = a->va();
    p.rkey = a->rkey();
    p.atomic_swap_add = a->swap_add();
    p.atomic_compare = a->compare();
    at += sizeof(AtomicEth);
  }
  if (op.flags & kOpAeth) {
    const auto* a = reinterpret_cast<const Aeth*>(ext + at);
    p.syndrome = a->syndrome;
    p.msn = a->msn();
    at += sizeof(Aeth);
  }
  if (op.flags & kOpAtomicAckEth) {
    p.atomic_orig = reinterpret_cast<const AtomicAckEth*>(ext + at)->orig();
    at += sizeof(AtomicAckEth);
  }
  if (op.flags & (kOpImm | kOpIeth)) {
    std::memcpy(&p.imm_be, ext + at, 4);
    at += 4;
  }
  if (op.flags & kOpCnpPad) at += 16;
  p.payload_off = ext_off + at;
  const uint32_t body = p.icrc_off - p.payload_off;
  if (body < p.pad) [[unlikely]] return RxDrop::kPadCount;
  p.payload_len = body - p.pad;
  if (!(op.flags & kOpPayload) && body != 0) [[unlikely]] return RxDrop::kPadCount;
  return RxDrop::kNone;
}

uint32_t encode_roce(const RocePacket& p, const uint8_t* payload, uint8_t* out) noexcept {
  FrameAddress a;
  a.dst_mac = p.dst_mac;
  a.src_mac = p.src_mac;
  a.src_ip = p.src_ip;
  a.dst_ip = p.dst_ip;
  a.tos = p.tos;
  a.udp_sport = p.udp_sport;
  a.pkey = p.pkey;
  a.dqpn = p.dqpn;
  const OpInfo& op = op_info(p.opcode);
  const FrameTemplate t = make_template(a);
  uint32_t at = write_headers(out, t, p.opcode, p.psn, p.ack_req, p.solicited, op.ext_bytes,
                              p.payload_len, p.ip_id);
  auto* ip = reinterpret_cast<Ipv4*>(out + kIpOff);
  if (ip->ttl != p.ttl || ip->frag() != p.ip_frag) {
    ip->ttl = p.ttl;
    ip->set_frag(p.ip_frag);
    ip->set_checksum(ip->compute_checksum());
  }
  reinterpret_cast<Bth*>(out + kBthOff)->set_flags(p.solicited, p.mig_req, p.pad & 3);
  reinterpret_cast<Bth*>(out + kBthOff)->resv8a = p.resv8a;
  uint8_t* ext = out + at;
  std::memset(ext, 0, op.ext_bytes);
  uint32_t k = 0;
  if (op.flags & kOpDeth) {
    detail::put32(ext, p.qkey);
    detail::put24(ext + 5, p.src_qpn);
    k += 8;
  }
  if (op.flags & kOpReth) {
    auto* r = reinterpret_cast<Reth*>(ext + k);
    r->set_va(p.va);
    r->set_rkey(p.rkey);
    r->set_dma_len(p.dma_len);
    k += sizeof(Reth);
  }
  if (op.flags & kOpAtomicEth) {
    auto* a = reinterpret_cast<AtomicEth*>(ext + k);
    a->set_va(p.va);
    a->set_rkey(p.rkey);
    a->set_swap_add(p.atomic_swap_add);
    a->set_compare(p.atomic_compare);
    k += sizeof(AtomicEth);
  }
  if (op.flags & kOpAeth) {
    auto* ae = reinterpret_cast<Aeth*>(ext + k);
    ae->syndrome = p.syndrome;
    ae->set_msn(p.msn);
    k += sizeof(Aeth);
  }
  if (op.flags & kOpAtomicAckEth) {
    reinterpret_cast<AtomicAckEth*>(ext + k)->set_orig(p.atomic_orig);
    k += sizeof(AtomicAckEth);
  }
  if (op.flags & (kOpImm | kOpIeth)) std::memcpy(ext + k, &p.imm_be, 4);
  if (p.payload_len) std::memcpy(out + at + op.ext_bytes, payload, p.payload_len);
  // Pad as the sender declared it (rxe pads to 4 bytes; the count is in the BTH).
  const uint32_t len = kRoceHeadersBytes + op.ext_bytes + p.payload_len + p.pad + kIcrcBytes;
  ip->set_total_length(static_cast<uint16_t>(len - kIpOff));
  ip->set_checksum(ip->compute_checksum());
  reinterpret_cast<Udp*>(out + kUdpOff)->set_length(static_cast<uint16_t>(len - kUdpOff));
  seal_frame(out);
  return len;
}

bool icrc_ok(const RocePacket& p) noexcept {
  return icrc_compute(p.frame, p.ip_off, p.icrc_off) == icrc_load(p.frame, p.icrc_off);
}

FrameTemplate make_template(const FrameAddress& a) noexcept {
  FrameTemplate t;
  uint8_t* f = t.bytes.data();
  auto* eth = reinterpret_cast<Ethernet*>(f);
  std::memcpy(eth->dst, a.dst_mac.data(), 6);
  std::memcpy(eth->src, a.src_mac.data(), 6);
  eth->set_ethertype(kEtherTypeIpv4);
  auto* ip = reinterpret_cast<Ipv4*>(f + kIpOff);
  ip->ver_ihl = 0x45;
  ip->tos = a.tos;
  ip->set_frag(0x4000);  // DF
  ip->ttl = 64;
  ip->protocol = kIpProtoUdp;
  ip->set_src(a.src_ip);
  ip->set_dst(a.dst_ip);
  auto* udp = reinterpret_cast<Udp*>(f + kUdpOff);
  udp->set_src_port(a.udp_sport);
  udp->set_dst_port(kRoceV2Port);
  udp->set_checksum(0);
  auto* bth = reinterpret_cast<Bth*>(f + kBthOff);
  bth->set_pkey(a.pkey);
  bth->set_dqpn(a.dqpn);
  return t;
}

uint32_t write_headers(uint8_t* frame, const FrameTemplate& t, uint8_t opcode, uint32_t psn,
                       bool ack_req, bool solicited, uint32_t ext_bytes, uint32_t payload_len,
                       uint16_t ip_id) noexcept {
  std::memcpy(frame, t.bytes.data(), kRoceHeadersBytes);
  const uint32_t pad = (4 - (payload_len & 3)) & 3;
  const uint32_t ip_len = frame_bytes(ext_bytes, payload_len) - kIpOff;
  auto* ip = reinterpret_cast<Ipv4*>(frame + kIpOff);
  ip->set_total_length(static_cast<uint16_t>(ip_len));
  ip->set_id(ip_id);
  ip->set_checksum(ip->compute_checksum());
  reinterpret_cast<Udp*>(frame + kUdpOff)->set_length(static_cast<uint16_t>(ip_len - sizeof(Ipv4)));
  auto* bth = reinterpret_cast<Bth*>(frame + kBthOff);
  bth->opcode = opcode;
  bth->set_flags(solicited, false, static_cast<uint8_t>(pad));
  bth->set_ack_req(ack_req);
  bth->set_psn(psn);
  return kRoceHeadersBytes;
}

void seal_frame(uint8_t* frame) noexcept {
  const auto* ip = reinterpret_cast<const Ipv4*>(frame + kIpOff);
  const uint32_t icrc_off = kIpOff + ip->total_length() - kIcrcBytes;
  const uint32_t pad = reinterpret_cast<const Bth*>(frame + kBthOff)->pad_count();
  std::memset(frame + icrc_off - pad, 0, pad);
  icrc_store(frame, icrc_off, icrc_compute(frame, kIpOff, icrc_off));
}

uint16_t qp_udp_source_port(uint32_t src_qpn, uint32_t dst_qpn) noexcept {
  // A multiplicative hash (Knuth) of both QPNs, folded to 14 bits, in the dynamic range.
  uint32_t h = (src_qpn * 0x9E3779B1u) ^ (dst_qpn * 0x85EBCA77u);
  h ^= h >> 15;
  return static_cast<uint16_t>(0xC000 | (h & 0x3FFF));
}

}  // namespace rocemu::nic
