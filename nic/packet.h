// packet.h — parsing and building RoCEv2 frames (Ethernet II / IPv4 or IPv6 / UDP 4791 /
// BTH / ext headers / payload / pad / ICRC), as Linux rxe puts them on the wire (rxe_net.c,
// rxe_hdr.h): IPv4 DF, TTL 64; IPv6 hop limit 64, next header UDP, no extension headers;
// UDP checksum 0 (rxe sends 0 over IPv6 too and accepts it; a non-zero checksum received is
// verified), P_Key 0xFFFF, ICRC stored LSB first (IBTA Vol. 1 ch. 9, annex A17.4). Also the
// reasons a received frame is dropped.
// Sizes in bytes; offsets from the start of the Ethernet header.
#pragma once

#include <array>
#include <cstdint>

#include "common/icrc.h"
#include "common/topology.h"
#include "common/wire.h"

namespace rocemu::nic {

/// Why a received frame was dropped (one counter each). Reasons after kIcrc are decided by
/// the QP roles; some of them are answered with a NAK as well (noted).
enum class RxDrop : uint8_t {
  kNone = 0,
  kTruncated,             // shorter than the headers it claims
  kNonContiguous,         // multi-segment mbuf
  kNotIpv4,               // an ethertype other than IPv4, IPv6 or MAC control
  kIpHeader,              // version/IHL/length/fragment; IPv6: version/payload length
  kNotForMe,              // IP destination is not this host (IPv6: none of its GIDs)
  kNotRoce,               // not UDP to port 4791
  kUdpLength,             // UDP length disagrees with the IP length
  kBthVersion,            // TVer != 0
  kBadPkey,               // P_Key is not the default partition
  kBadOpcode,             // opcode not in the table (see also kUnsupportedTransport)
  kPadCount,              // pad count / length inconsistent
  kIcrc,                  // invariant CRC mismatch
  kUnknownQp,             // destination QPN has no QP
  kWrongSource,           // source IP is not the QP's peer
  kQpState,               // opcode not legal in the QP's state
  kOpSequence,            // MIDDLE/LAST out of its message (NAK invalid request)
  kPsnOutOfSeq,           // PSN ahead of the expected one (NAK sequence error)
  kDuplicate,             // PSN behind the expected one (re-ACKed or READ re-executed)
  kRemoteAccess,          // rkey, access right or bounds (NAK remote access error)
  kInvalidRequest,        // length or unsupported operation (NAK invalid request)
  kRnr,                   // no receive WQE (RNR NAK)
  kStaleResponse,         // response for nothing outstanding, or out of order
  kMacControl,            // MAC control frame other than a valid PFC frame
  kUnsupportedTransport,  // RD, XRC or vendor opcode: a transport rocemu does not implement
  kWrongTransport,        // a UC/UD/RC opcode to a QP of another type
  kQkeyMismatch,          // UD: DETH Q_Key differs from the QP's (silent drop, IBTA 9.6.2)
  kNoRecvWqe,             // UD/UC: no receive WQE posted (silent drop: no RNR NAK without ACKs)
  kUcMessageDropped,      // UC: packet of a message broken by a PSN gap (IBTA 9.8.3 silent drop)
  kUdpChecksum,           // IPv6: a non-zero UDP checksum that is wrong (RFC 8200 8.1)
  kCount
};
inline constexpr int kNumRxDrops = static_cast<int>(RxDrop::kCount);
const char* rx_drop_name(RxDrop r) noexcept;

/// A parsed RoCEv2 packet: views into the frame plus the header fields in host order.
struct RocePacket {
  uint8_t* frame = nullptr;
  std::array<uint8_t, 6> dst_mac{}, src_mac{};
  bool ipv6 = false;  // IPv6 (src_ip6/dst_ip6, flow_label) rather than IPv4
  Ipv6Addr src_ip6{}, dst_ip6{};
  uint32_t flow_label = 0;    // IPv6
  uint16_t udp_checksum = 0;  // as received (0 from rxe)
  uint8_t ttl = 0;            // IPv4 TTL or IPv6 hop limit
  uint16_t ip_frag = 0;  // flags and fragment offset
  bool mig_req = false;
  uint8_t resv8a = 0;  // BTH byte 4: FECN (bit 7) / BECN (bit 6) of the IBA CC annex
  uint32_t ip_off = wire::kIpOff;
  uint32_t payload_off = 0;  // first payload byte
  uint32_t payload_len = 0;  // without pad
  uint32_t icrc_off = 0;
  uint32_t src_ip = 0, dst_ip = 0;  // IPv4 (0 for IPv6)
  uint16_t ip_id = 0;
  uint8_t tos = 0;  // IPv4 TOS or IPv6 Traffic Class: DSCP << 2 | ECN
  uint16_t udp_sport = 0;
  uint8_t opcode = 0;
  uint32_t op_flags = 0;
  bool solicited = false, ack_req = false;
  uint8_t pad = 0;
  /// The payload is already where the responder puts it (RoceHost::place_write_payload()).
  bool payload_placed = false;
  uint16_t pkey = 0;
  uint32_t dqpn = 0, psn = 0;
  // Extended headers (valid when op_flags says so).
  uint64_t va = 0;
  uint32_t rkey = 0, dma_len = 0;
  uint8_t syndrome = 0;
  uint32_t msn = 0;
  uint32_t imm_be = 0;  // immediate data / invalidate rkey, network order as in ibv_wc
  uint64_t atomic_orig = 0;
  uint64_t atomic_swap_add = 0, atomic_compare = 0;
  uint32_t qkey = 0, src_qpn = 0;  // DETH (UD)
};

/// Parses Ethernet/IPv4 or IPv6/UDP/BTH and the opcode's extended headers of `frame[0..len)`.
/// Checks lengths, versions and the opcode table; does not check the ICRC or any QP state.
RxDrop parse_roce(uint8_t* frame, uint32_t len, RocePacket& out) noexcept;

/// Writes the frame `p` describes (every header field as parsed, `p.payload_len` bytes of
/// `payload`, zero pad, a freshly computed ICRC) into `out`, which must hold
/// frame_bytes(op ext bytes, payload_len). Returns the frame length. Re-encoding a parsed
/// Linux rxe frame reproduces it byte for byte.
uint32_t encode_roce(const RocePacket& p, const uint8_t* payload, uint8_t* out) noexcept;

/// True if the ICRC stored in the packet matches the one computed over it.
bool icrc_ok(const RocePacket& p) noexcept;
/// True unless `p` is IPv6 with a non-zero UDP checksum that is wrong (0 means none: rxe
/// sends and accepts it).
bool udp_checksum_ok(const RocePacket& p) noexcept;
/// The UDP checksum (RFC 8200 8.1, checksum field taken as 0) of the IPv6 RoCE frame at
/// `frame`; its payload length must be consistent with the frame.
uint16_t udp_checksum_ipv6(const uint8_t* frame) noexcept;

/// The per-QP constant part of every frame: Ethernet, IPv4, UDP and the BTH fields that do
/// not change per packet (P_Key, destination QPN).
struct FrameTemplate {
  std::array<uint8_t, wire::kRoce6HeadersBytes> bytes{};
  uint8_t header_bytes = wire::kRoceHeadersBytes;  // 54 (IPv4) or 74 (IPv6)
  /// IPv4: the one's complement sum (folded to 16 bits) of the header's words without total
  /// length, identification and checksum (zero in `bytes`): write_headers() adds those two.
  uint16_t ip_sum = 0;
};

struct FrameAddress {
  std::array<uint8_t, 6> dst_mac{}, src_mac{};
  uint32_t src_ip = 0, dst_ip = 0;  // host order (IPv4)
  bool ipv6 = false;                // IPv6 with src_ip6/dst_ip6 instead
  Ipv6Addr src_ip6{}, dst_ip6{};
  uint32_t flow_label = 0;  // IPv6, 20 bits
  uint8_t hop_limit = 64;   // IPv6
  uint8_t tos = 0;          // DSCP << 2 | ECN (IPv6: the Traffic Class)
  uint16_t udp_sport = 0xC000;
  uint16_t pkey = 0xFFFF;
  uint32_t dqpn = 0;
};

FrameTemplate make_template(const FrameAddress& a) noexcept;

/// Headers of one packet. Writes template + lengths + BTH fields + IP checksum into `frame`
/// and returns the offset of the extended headers; the caller then writes the extended
/// headers and `payload_len` bytes of payload and calls seal_frame(). Frame length is
/// frame_bytes(ext, payload).
uint32_t write_headers(uint8_t* frame, const FrameTemplate& t, uint8_t opcode, uint32_t psn,
                       bool ack_req, bool solicited, uint32_t ext_bytes, uint32_t payload_len,
                       uint16_t ip_id) noexcept;

/// Total frame bytes over IPv4 for `ext_bytes` of extended headers and `payload_len` of
/// payload.
constexpr uint32_t frame_bytes(uint32_t ext_bytes, uint32_t payload_len) noexcept {
  return wire::kRoceHeadersBytes + ext_bytes + ((payload_len + 3) & ~3u) + wire::kIcrcBytes;
}
/// The same for frames of template `t` (IPv4 or IPv6).
constexpr uint32_t frame_bytes(const FrameTemplate& t, uint32_t ext_bytes,
                               uint32_t payload_len) noexcept {
  return t.header_bytes + ext_bytes + ((payload_len + 3) & ~3u) + wire::kIcrcBytes;
}

/// Zeroes the pad bytes (count from the BTH) and stores the ICRC (position from the IPv4
/// total length or the IPv6 payload length) of a frame written by write_headers().
void seal_frame(uint8_t* frame) noexcept;
/// seal_frame() in two halves around a payload that is CRC'd as it is written: seal_begin()
/// gives the masked headers before `payload_off`; crc32_copy_after() (sge_gather) copies the
/// payload behind them and returns the CRC; seal_end() takes that, zeroes the pad and stores
/// the ICRC.
IcrcHead seal_begin(const uint8_t* frame, uint32_t payload_off) noexcept;
void seal_end(uint8_t* frame, uint32_t crc) noexcept;

/// UDP source port of a QP (entropy for ECMP): 0xC000 | 14 bits of a hash of both QPNs.
uint16_t qp_udp_source_port(uint32_t src_qpn, uint32_t dst_qpn) noexcept;

}  // namespace rocemu::nic
