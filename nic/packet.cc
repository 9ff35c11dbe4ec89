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
                                                      "uc_message_dropped",
                                                      "udp_checksum"};
  const auto i = static_cast<int>(r);
  return i < kNumRxDrops ? kNames[i] : "?";
}

namespace {
// IPv4 layer of parse_roce: sets the IP fields of `p`, `udp_off` and `end` (the end of the
// RoCE packet, Ethernet pad excluded).
RxDrop parse_ipv4(uint8_t* frame, uint32_t len, RocePacket& p, uint32_t& udp_off,
                  uint32_t& end) noexcept {
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
  p.ttl = ip->ttl;
  p.ip_frag = ip->frag();
  p.src_ip = ip->src();
  p.dst_ip = ip->dst();
  p.ip_id = ip->id();
  p.tos = ip->tos;
  udp_off = kUdpOff;
  end = kIpOff + ip_len;
  return RxDrop::kNone;
}

// IPv6 layer (RFC 8200 section 3; no extension headers: rxe sends none, next header UDP).
RxDrop parse_ipv6(uint8_t* frame, uint32_t len, RocePacket& p, uint32_t& udp_off,
                  uint32_t& end) noexcept {
  if (len < kIpOff + sizeof(Ipv6)) [[unlikely]]
    return RxDrop::kTruncated;
  const auto* ip = reinterpret_cast<const Ipv6*>(frame + kIpOff);
  if (ip->version() != 6) [[unlikely]]
    return RxDrop::kIpHeader;
  const uint32_t pl_len = ip->payload_length();
  if (kIpOff + sizeof(Ipv6) + pl_len > len) [[unlikely]]
    return RxDrop::kTruncated;
  if (ip->next_header != kIpProtoUdp) return RxDrop::kNotRoce;
  if (pl_len < sizeof(Udp) + sizeof(Bth) + kIcrcBytes) [[unlikely]]
    return RxDrop::kTruncated;
  p.ipv6 = true;
  p.ttl = ip->hop_limit;
  p.tos = ip->traffic_class();
  p.flow_label = ip->flow_label();
  std::memcpy(p.src_ip6.data(), ip->src, 16);
  std::memcpy(p.dst_ip6.data(), ip->dst, 16);
  udp_off = kUdp6Off;
  end = kUdp6Off + pl_len;
  return RxDrop::kNone;
}
}  // namespace

RxDrop parse_roce(uint8_t* frame, uint32_t len, RocePacket& p) noexcept {
  p.frame = frame;
  if (len < sizeof(Ethernet)) [[unlikely]]
    return RxDrop::kTruncated;
  const auto* eth = reinterpret_cast<const Ethernet*>(frame);
  uint32_t udp_off = 0, end = 0;
  RxDrop why;
  if (eth->ethertype() == kEtherTypeIpv4)
    why = parse_ipv4(frame, len, p, udp_off, end);
  else if (eth->ethertype() == kEtherTypeIpv6)
    why = parse_ipv6(frame, len, p, udp_off, end);
  else
    return RxDrop::kNotIpv4;
  if (why != RxDrop::kNone) return why;
  const auto* udp = reinterpret_cast<const Udp*>(frame + udp_off);
  if (udp->dst_port() != kRoceV2Port) return RxDrop::kNotRoce;
  if (udp->length() != end - udp_off) [[unlikely]]
    return RxDrop::kUdpLength;
  const uint32_t bth_off = udp_off + sizeof(Udp);
  const auto* bth = reinterpret_cast<const Bth*>(frame + bth_off);
  if (bth->tver() != 0) [[unlikely]] return RxDrop::kBthVersion;

  std::memcpy(p.dst_mac.data(), eth->dst, 6);
  std::memcpy(p.src_mac.data(), eth->src, 6);
  p.mig_req = bth->mig_req();
  p.resv8a = bth->resv8a;
  p.udp_sport = udp->src_port();
  p.udp_checksum = udp->checksum();
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

  p.icrc_off = end - kIcrcBytes;
  const uint32_t ext_off = bth_off + sizeof(Bth);
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
  a.ipv6 = p.ipv6;
  a.src_ip6 = p.src_ip6;
  a.dst_ip6 = p.dst_ip6;
  a.flow_label = p.flow_label;
  a.hop_limit = p.ttl;
  a.tos = p.tos;
  a.udp_sport = p.udp_sport;
  a.pkey = p.pkey;
  a.dqpn = p.dqpn;
  const OpInfo& op = op_info(p.opcode);
  const FrameTemplate t = make_template(a);
  uint32_t at = write_headers(out, t, p.opcode, p.psn, p.ack_req, p.solicited, op.ext_bytes,
                              p.payload_len, p.ip_id);
  auto* ip = reinterpret_cast<Ipv4*>(out + kIpOff);
  if (!p.ipv6 && (ip->ttl != p.ttl || ip->frag() != p.ip_frag)) {
    ip->ttl = p.ttl;
    ip->set_frag(p.ip_frag);
    ip->set_checksum(ip->compute_checksum());
  }
  auto* bth = reinterpret_cast<Bth*>(out + at - sizeof(Bth));
  bth->set_flags(p.solicited, p.mig_req, p.pad & 3);
  bth->resv8a = p.resv8a;
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
  const uint32_t len = t.header_bytes + op.ext_bytes + p.payload_len + p.pad + kIcrcBytes;
  const uint32_t udp_off = p.ipv6 ? kUdp6Off : kUdpOff;
  if (p.ipv6) {
    reinterpret_cast<Ipv6*>(out + kIpOff)->set_payload_length(static_cast<uint16_t>(len - udp_off));
  } else {
    ip->set_total_length(static_cast<uint16_t>(len - kIpOff));
    ip->set_checksum(ip->compute_checksum());
  }
  reinterpret_cast<Udp*>(out + udp_off)->set_length(static_cast<uint16_t>(len - udp_off));
  seal_frame(out);
  if (p.ipv6 && p.udp_checksum != 0) {
    // A sender that fills the checksum in (rxe does not): computed over the sealed frame.
    auto* udp = reinterpret_cast<Udp*>(out + udp_off);
    udp->set_checksum(udp_checksum_ipv6(out));
    if (udp->checksum() == 0) udp->set_checksum(0xffff);
  }
  return len;
}

bool icrc_ok(const RocePacket& p) noexcept {
  return icrc_compute(p.frame, p.ip_off, p.icrc_off) == icrc_load(p.frame, p.icrc_off);
}

uint16_t udp_checksum_ipv6(const uint8_t* frame) noexcept {
  const auto& ip = *reinterpret_cast<const Ipv6*>(frame + kIpOff);
  return ipv6_l4_checksum(ip, frame + kUdp6Off, ip.payload_length(), kIpProtoUdp, 6);
}

bool udp_checksum_ok(const RocePacket& p) noexcept {
  if (!p.ipv6 || p.udp_checksum == 0) return true;
  const uint16_t c = udp_checksum_ipv6(p.frame);
  return c == p.udp_checksum || (c == 0 && p.udp_checksum == 0xffff);
}

FrameTemplate make_template(const FrameAddress& a) noexcept {
  FrameTemplate t;
  uint8_t* f = t.bytes.data();
  auto* eth = reinterpret_cast<Ethernet*>(f);
  std::memcpy(eth->dst, a.dst_mac.data(), 6);
  std::memcpy(eth->src, a.src_mac.data(), 6);
  uint32_t udp_off = kUdpOff;
  if (a.ipv6) {
    eth->set_ethertype(kEtherTypeIpv6);
    auto* ip = reinterpret_cast<Ipv6*>(f + kIpOff);
    ip->set_vtcfl(a.tos, a.flow_label);
    ip->next_header = kIpProtoUdp;
    ip->hop_limit = a.hop_limit;
    std::memcpy(ip->src, a.src_ip6.data(), 16);
    std::memcpy(ip->dst, a.dst_ip6.data(), 16);
    udp_off = kUdp6Off;
    t.header_bytes = kRoce6HeadersBytes;
  } else {
    eth->set_ethertype(kEtherTypeIpv4);
    auto* ip = reinterpret_cast<Ipv4*>(f + kIpOff);
    ip->ver_ihl = 0x45;
    ip->tos = a.tos;
    ip->set_frag(0x4000);  // DF
    ip->ttl = 64;
    ip->protocol = kIpProtoUdp;
    ip->set_src(a.src_ip);
    ip->set_dst(a.dst_ip);
    t.header_bytes = kRoceHeadersBytes;
    t.ip_sum = static_cast<uint16_t>(~ip->compute_checksum());  // length, id, checksum: 0
  }
  auto* udp = reinterpret_cast<Udp*>(f + udp_off);
  udp->set_src_port(a.udp_sport);
  udp->set_dst_port(kRoceV2Port);
  udp->set_checksum(0);
  auto* bth = reinterpret_cast<Bth*>(f + udp_off + sizeof(Udp));
  bth->set_pkey(a.pkey);
  bth->set_dqpn(a.dqpn);
  return t;
}

uint32_t write_headers(uint8_t* frame, const FrameTemplate& t, uint8_t opcode, uint32_t psn,
                       bool ack_req, bool solicited, uint32_t ext_bytes, uint32_t payload_len,
                       uint16_t ip_id) noexcept {
  const uint32_t hdr = t.header_bytes;
  std::memcpy(frame, t.bytes.data(), hdr);
  const uint32_t pad = (4 - (payload_len & 3)) & 3;
  const uint32_t len = frame_bytes(t, ext_bytes, payload_len);
  uint32_t udp_off;
  if (hdr == kRoceHeadersBytes) [[likely]] {
    auto* ip = reinterpret_cast<Ipv4*>(frame + kIpOff);
    const auto total_length = static_cast<uint16_t>(len - kIpOff);
    ip->set_total_length(total_length);
    ip->set_id(ip_id);
    // compute_checksum() of the header just written, from the template's sum plus the two
    // fields (reading the frame back would wait for the stores just made to it).
    uint32_t sum = uint32_t{t.ip_sum} + total_length + ip_id;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    ip->set_checksum(static_cast<uint16_t>(~sum));
    udp_off = kUdpOff;
  } else {
    udp_off = kUdp6Off;
    reinterpret_cast<Ipv6*>(frame + kIpOff)
        ->set_payload_length(static_cast<uint16_t>(len - udp_off));
  }
  reinterpret_cast<Udp*>(frame + udp_off)->set_length(static_cast<uint16_t>(len - udp_off));
  auto* bth = reinterpret_cast<Bth*>(frame + udp_off + sizeof(Udp));
  bth->opcode = opcode;
  bth->set_flags(solicited, false, static_cast<uint8_t>(pad));
  bth->set_ack_req(ack_req);
  bth->set_psn(psn);
  return hdr;
}

namespace {

/// Where write_headers() put the ICRC (from the IPv4 total length or the IPv6 payload
/// length) and how many pad bytes come before it (from the BTH).
struct IcrcPlace {
  uint32_t icrc_off, pad;
};
IcrcPlace icrc_place(const uint8_t* frame) noexcept {
  uint32_t icrc_off, bth_off;
  if (reinterpret_cast<const Ethernet*>(frame)->ethertype() == kEtherTypeIpv6) [[unlikely]] {
    icrc_off =
        kUdp6Off + reinterpret_cast<const Ipv6*>(frame + kIpOff)->payload_length() - kIcrcBytes;
    bth_off = kBth6Off;
  } else {
    icrc_off = kIpOff + reinterpret_cast<const Ipv4*>(frame + kIpOff)->total_length() - kIcrcBytes;
    bth_off = kBthOff;
  }
  return {icrc_off, reinterpret_cast<const Bth*>(frame + bth_off)->pad_count()};
}

}  // namespace

IcrcHead seal_begin(const uint8_t* frame, uint32_t payload_off) noexcept {
  IcrcHead head;
  icrc_begin(frame, kIpOff, payload_off, head);  // write_headers' layouts are always known
  return head;
}

void seal_end(uint8_t* frame, uint32_t crc) noexcept {
  const IcrcPlace at = icrc_place(frame);
  uint8_t* pad = frame + at.icrc_off - at.pad;
  std::memset(pad, 0, at.pad);
  icrc_store(frame, at.icrc_off, crc32_update(crc, pad, at.pad));
}

void seal_frame(uint8_t* frame) noexcept {
  const IcrcPlace at = icrc_place(frame);
  seal_end(frame, icrc_compute(frame, kIpOff, at.icrc_off - at.pad));
}

uint16_t qp_udp_source_port(uint32_t src_qpn, uint32_t dst_qpn) noexcept {
  // A multiplicative hash (Knuth) of both QPNs, folded to 14 bits, in the dynamic range.
  uint32_t h = (src_qpn * 0x9E3779B1u) ^ (dst_qpn * 0x85EBCA77u);
  h ^= h >> 15;
  return static_cast<uint16_t>(0xC000 | (h & 0x3FFF));
}

}  // namespace rocemu::nic
