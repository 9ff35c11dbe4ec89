// wire.h — on-the-wire headers of RoCEv2 and the frames around it.
//
// Ethernet II, 802.1Qbb PFC (MAC control), IPv4 (DSCP/ECN), IPv6 (RFC 8200: Traffic Class
// = DSCP << 2 | ECN, flow label, hop limit), ICMPv6 neighbour discovery (RFC 4861), UDP,
// and the InfiniBand
// transport headers RoCEv2 carries in UDP port 4791 (IBTA Vol. 1 rel. 1.4 ch. 9 and
// RoCEv2 annex A17): BTH (9.2), RETH (9.3.3), AETH (9.3.5), ImmDt (9.3.4).
// Structs are byte arrays in network order with accessors in host order, so they have no
// alignment needs and may overlay any offset of a packet buffer. Sizes are static_asserted.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

namespace rocemu::wire {

namespace detail {
inline uint16_t get16(const uint8_t* p) noexcept { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t get24(const uint8_t* p) noexcept { return uint32_t{p[0]} << 16 | uint32_t{p[1]} << 8 | p[2]; }
inline uint32_t get32(const uint8_t* p) noexcept {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
inline uint64_t get64(const uint8_t* p) noexcept { return uint64_t{get32(p)} << 32 | get32(p + 4); }
inline void put16(uint8_t* p, uint16_t v) noexcept { p[0] = uint8_t(v >> 8); p[1] = uint8_t(v); }
inline void put24(uint8_t* p, uint32_t v) noexcept { p[0] = uint8_t(v >> 16); p[1] = uint8_t(v >> 8); p[2] = uint8_t(v); }
inline void put32(uint8_t* p, uint32_t v) noexcept {
  p[0] = uint8_t(v >> 24); p[1] = uint8_t(v >> 16); p[2] = uint8_t(v >> 8); p[3] = uint8_t(v);
}
inline void put64(uint8_t* p, uint64_t v) noexcept { put32(p, uint32_t(v >> 32)); put32(p + 4, uint32_t(v)); }
}  // namespace detail

inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeArp = 0x0806;
inline constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;
inline constexpr uint16_t kEtherTypeMacControl = 0x8808;
inline constexpr uint16_t kPfcOpcode = 0x0101;
inline constexpr uint8_t kIpProtoUdp = 17;
inline constexpr uint8_t kIpProtoIcmpv6 = 58;
inline constexpr uint16_t kRoceV2Port = 4791;
inline constexpr uint32_t kIcrcBytes = 4;
/// 01:80:C2:00:00:01, the MAC control multicast address PAUSE/PFC frames are sent to.
inline constexpr std::array<uint8_t, 6> kPfcDstMac{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};

struct Ethernet {
  uint8_t dst[6];
  uint8_t src[6];
  uint8_t ethertype_be[2];
  uint16_t ethertype() const noexcept { return detail::get16(ethertype_be); }
  void set_ethertype(uint16_t v) noexcept { detail::put16(ethertype_be, v); }
};
static_assert(sizeof(Ethernet) == 14);

/// 802.1Qbb priority-based flow control frame body (follows an Ethernet header with
/// ethertype 0x8808): opcode 0x0101, class-enable vector (bit i = priority i), then eight
/// pause quanta (one quantum = 512 bit times at the port's speed), padded to 60 bytes.
struct PfcFrame {
  uint8_t opcode_be[2];
  uint8_t class_enable_be[2];
  uint8_t quanta_be[8][2];
  uint8_t pad[26];
  uint16_t opcode() const noexcept { return detail::get16(opcode_be); }
  void set_opcode(uint16_t v) noexcept { detail::put16(opcode_be, v); }
  uint16_t class_enable() const noexcept { return detail::get16(class_enable_be); }
  void set_class_enable(uint16_t v) noexcept { detail::put16(class_enable_be, v); }
  uint16_t quanta(int prio) const noexcept { return detail::get16(quanta_be[prio]); }
  void set_quanta(int prio, uint16_t v) noexcept { detail::put16(quanta_be[prio], v); }
};
static_assert(sizeof(PfcFrame) == 46);  // 14 + 46 = 60-byte minimum frame (without FCS)

struct Ipv4 {
  uint8_t ver_ihl;
  uint8_t tos;  // DSCP (6 bits) | ECN (2 bits)
  uint8_t total_length_be[2];
  uint8_t id_be[2];
  uint8_t frag_be[2];
  uint8_t ttl;
  uint8_t protocol;
  uint8_t checksum_be[2];
  uint8_t src_be[4];
  uint8_t dst_be[4];

  uint8_t ihl_bytes() const noexcept { return static_cast<uint8_t>((ver_ihl & 0x0f) * 4); }
  uint8_t version() const noexcept { return ver_ihl >> 4; }
  uint8_t dscp() const noexcept { return tos >> 2; }
  uint8_t ecn() const noexcept { return tos & 0x3; }
  void set_dscp(uint8_t d) noexcept { tos = static_cast<uint8_t>((d << 2) | (tos & 0x3)); }
  void set_ecn(uint8_t e) noexcept { tos = static_cast<uint8_t>((tos & 0xfc) | (e & 0x3)); }
  uint16_t total_length() const noexcept { return detail::get16(total_length_be); }
  void set_total_length(uint16_t v) noexcept { detail::put16(total_length_be, v); }
  uint16_t id() const noexcept { return detail::get16(id_be); }
  void set_id(uint16_t v) noexcept { detail::put16(id_be, v); }
  uint16_t frag() const noexcept { return detail::get16(frag_be); }
  void set_frag(uint16_t v) noexcept { detail::put16(frag_be, v); }
  uint16_t checksum() const noexcept { return detail::get16(checksum_be); }
  void set_checksum(uint16_t v) noexcept { detail::put16(checksum_be, v); }
  uint32_t src() const noexcept { return detail::get32(src_be); }
  void set_src(uint32_t v) noexcept { detail::put32(src_be, v); }
  uint32_t dst() const noexcept { return detail::get32(dst_be); }
  void set_dst(uint32_t v) noexcept { detail::put32(dst_be, v); }

  /// RFC 791 header checksum over the 20-byte header (checksum field taken as 0): the one's
  /// complement of the one's complement sum of its 16-bit words. Summed 32 bits at a time in
  /// the CPU's byte order and swapped at the end (RFC 1071 2(B), 2(C): the sum does not
  /// depend on byte order, and carries out of 16 bits fold back in the same).
  uint16_t compute_checksum() const noexcept {
    uint32_t w[5];
    std::memcpy(w, this, sizeof w);
    // Bytes 10-11 (the checksum) are the high half of word 2 on a little-endian CPU.
    constexpr uint32_t kNoChecksum =
        std::endian::native == std::endian::little ? 0x0000ffffu : 0xffff0000u;
    uint64_t sum = uint64_t{w[0]} + w[1] + (w[2] & kNoChecksum) + w[3] + w[4];
    sum = (sum & 0xffffffffu) + (sum >> 32);  // <= 2^32 + 3
    sum = (sum & 0xffff) + (sum >> 16);       // < 2^17
    sum = (sum & 0xffff) + (sum >> 16);       // <= 2^16
    sum = (sum & 0xffff) + (sum >> 16);       // < 2^16
    auto folded = static_cast<uint16_t>(sum);
    if constexpr (std::endian::native == std::endian::little) folded = __builtin_bswap16(folded);
    return static_cast<uint16_t>(~folded);
  }
  /// Rewrites the checksum after a change of `tos` (RFC 1624 incremental update).
  void set_tos_update_checksum(uint8_t new_tos) noexcept {
    // The tos byte is the low byte of the first 16-bit word (ver_ihl, tos).
    uint32_t sum = static_cast<uint16_t>(~checksum());
    sum += static_cast<uint16_t>(~((ver_ihl << 8) | tos)) & 0xffff;
    tos = new_tos;
    sum += static_cast<uint16_t>((ver_ihl << 8) | tos);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    set_checksum(static_cast<uint16_t>(~sum));
  }
};
static_assert(sizeof(Ipv4) == 20);

/// IPv6 fixed header (RFC 8200 section 3): version(4) | traffic class(8) | flow label(20),
/// payload length (bytes after this header), next header, hop limit, addresses.
struct Ipv6 {
  uint8_t vtcfl_be[4];
  uint8_t payload_length_be[2];
  uint8_t next_header;
  uint8_t hop_limit;
  uint8_t src[16];
  uint8_t dst[16];

  uint8_t version() const noexcept { return vtcfl_be[0] >> 4; }
  uint8_t traffic_class() const noexcept {
    return static_cast<uint8_t>((vtcfl_be[0] & 0x0f) << 4 | vtcfl_be[1] >> 4);
  }
  void set_traffic_class(uint8_t tc) noexcept {
    vtcfl_be[0] = static_cast<uint8_t>((vtcfl_be[0] & 0xf0) | tc >> 4);
    vtcfl_be[1] = static_cast<uint8_t>((tc & 0x0f) << 4 | (vtcfl_be[1] & 0x0f));
  }
  uint8_t dscp() const noexcept { return traffic_class() >> 2; }
  uint8_t ecn() const noexcept { return traffic_class() & 0x3; }
  void set_ecn(uint8_t e) noexcept {
    set_traffic_class(static_cast<uint8_t>((traffic_class() & 0xfc) | (e & 0x3)));
  }
  uint32_t flow_label() const noexcept { return detail::get24(vtcfl_be + 1) & 0xfffff; }
  /// Version 6, `tc`, `flow_label` (20 bits).
  void set_vtcfl(uint8_t tc, uint32_t flow_label) noexcept {
    detail::put32(vtcfl_be, 6u << 28 | uint32_t{tc} << 20 | (flow_label & 0xfffff));
  }
  uint16_t payload_length() const noexcept { return detail::get16(payload_length_be); }
  void set_payload_length(uint16_t v) noexcept { detail::put16(payload_length_be, v); }
};
static_assert(sizeof(Ipv6) == 40);

/// The 16-bit one's complement sum of `len` bytes (RFC 1071), added to `sum`, unfolded.
inline uint32_t ones_sum(uint32_t sum, const uint8_t* p, uint32_t len) noexcept {
  for (uint32_t i = 0; i + 1 < len; i += 2) sum += detail::get16(p + i);
  if (len & 1) sum += uint32_t{p[len - 1]} << 8;
  return sum;
}
/// The UDP or ICMPv6 checksum over IPv6 (RFC 8200 section 8.1): the pseudo-header (source,
/// destination, upper-layer length, next header) and `len` bytes of the upper-layer packet
/// at `l4`, the 16-bit checksum field at l4 + `checksum_off` taken as zero. (A UDP sender
/// sends 0xFFFF for a computed 0.)
inline uint16_t ipv6_l4_checksum(const Ipv6& ip, const uint8_t* l4, uint32_t len,
                                 uint8_t next_header, uint32_t checksum_off) noexcept {
  uint32_t sum = ones_sum(0, ip.src, 16);
  sum = ones_sum(sum, ip.dst, 16);
  sum += len >> 16;
  sum += len & 0xffff;
  sum += next_header;
  sum = ones_sum(sum, l4, checksum_off);
  sum = ones_sum(sum, l4 + checksum_off + 2, len - checksum_off - 2);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

inline constexpr uint8_t kEcnNotEct = 0;
inline constexpr uint8_t kEcnEct1 = 1;
inline constexpr uint8_t kEcnEct0 = 2;
inline constexpr uint8_t kEcnCe = 3;

struct Udp {
  uint8_t src_port_be[2];
  uint8_t dst_port_be[2];
  uint8_t length_be[2];
  uint8_t checksum_be[2];
  uint16_t src_port() const noexcept { return detail::get16(src_port_be); }
  void set_src_port(uint16_t v) noexcept { detail::put16(src_port_be, v); }
  uint16_t dst_port() const noexcept { return detail::get16(dst_port_be); }
  void set_dst_port(uint16_t v) noexcept { detail::put16(dst_port_be, v); }
  uint16_t length() const noexcept { return detail::get16(length_be); }
  void set_length(uint16_t v) noexcept { detail::put16(length_be, v); }
  uint16_t checksum() const noexcept { return detail::get16(checksum_be); }
  void set_checksum(uint16_t v) noexcept { detail::put16(checksum_be, v); }
};
static_assert(sizeof(Udp) == 8);

/// Base Transport Header (IBTA 9.2): opcode; SE|M|PadCnt(2)|TVer(4); P_Key; resv8a;
/// DestQP(24); A|resv7; PSN(24).
struct Bth {
  uint8_t opcode;
  uint8_t flags;
  uint8_t pkey_be[2];
  uint8_t resv8a;
  uint8_t dqpn_be[3];
  uint8_t ack_resv;
  uint8_t psn_be[3];

  bool solicited() const noexcept { return flags & 0x80; }
  bool mig_req() const noexcept { return flags & 0x40; }
  uint8_t pad_count() const noexcept { return (flags >> 4) & 0x3; }
  uint8_t tver() const noexcept { return flags & 0x0f; }
  void set_flags(bool se, bool m, uint8_t pad, uint8_t tver = 0) noexcept {
    flags = static_cast<uint8_t>((se ? 0x80 : 0) | (m ? 0x40 : 0) | ((pad & 3) << 4) | (tver & 0xf));
  }
  uint16_t pkey() const noexcept { return detail::get16(pkey_be); }
  void set_pkey(uint16_t v) noexcept { detail::put16(pkey_be, v); }
  uint32_t dqpn() const noexcept { return detail::get24(dqpn_be); }
  void set_dqpn(uint32_t v) noexcept { detail::put24(dqpn_be, v); }
  bool ack_req() const noexcept { return ack_resv & 0x80; }
  void set_ack_req(bool a) noexcept { ack_resv = a ? 0x80 : 0; }
  uint32_t psn() const noexcept { return detail::get24(psn_be); }
  void set_psn(uint32_t v) noexcept { detail::put24(psn_be, v); }
};
static_assert(sizeof(Bth) == 12);

/// RDMA Extended Transport Header (9.3.3): VA(64), R_Key(32), DMA length(32).
struct Reth {
  uint8_t va_be[8];
  uint8_t rkey_be[4];
  uint8_t dma_len_be[4];
  uint64_t va() const noexcept { return detail::get64(va_be); }
  void set_va(uint64_t v) noexcept { detail::put64(va_be, v); }
  uint32_t rkey() const noexcept { return detail::get32(rkey_be); }
  void set_rkey(uint32_t v) noexcept { detail::put32(rkey_be, v); }
  uint32_t dma_len() const noexcept { return detail::get32(dma_len_be); }
  void set_dma_len(uint32_t v) noexcept { detail::put32(dma_len_be, v); }
};
static_assert(sizeof(Reth) == 16);

/// ACK Extended Transport Header (9.3.5): syndrome(8), MSN(24).
struct Aeth {
  uint8_t syndrome;
  uint8_t msn_be[3];
  uint32_t msn() const noexcept { return detail::get24(msn_be); }
  void set_msn(uint32_t v) noexcept { detail::put24(msn_be, v); }
};
static_assert(sizeof(Aeth) == 4);

/// Immediate data (9.3.4), carried opaque (network order on the wire and in ibv_wc).
struct ImmDt {
  uint8_t imm_be[4];
  uint32_t imm() const noexcept { return detail::get32(imm_be); }
  void set_imm(uint32_t v) noexcept { detail::put32(imm_be, v); }
};
static_assert(sizeof(ImmDt) == 4);

/// Atomic ETH (9.3.7) of COMPARE_SWAP / FETCH_ADD: VA(64), R_Key(32), swap or add data(64),
/// compare data(64; FETCH_ADD leaves it 0, as rxe does).
struct AtomicEth {
  uint8_t va_be[8];
  uint8_t rkey_be[4];
  uint8_t swap_add_be[8];
  uint8_t compare_be[8];
  uint64_t va() const noexcept { return detail::get64(va_be); }
  void set_va(uint64_t v) noexcept { detail::put64(va_be, v); }
  uint32_t rkey() const noexcept { return detail::get32(rkey_be); }
  void set_rkey(uint32_t v) noexcept { detail::put32(rkey_be, v); }
  uint64_t swap_add() const noexcept { return detail::get64(swap_add_be); }
  void set_swap_add(uint64_t v) noexcept { detail::put64(swap_add_be, v); }
  uint64_t compare() const noexcept { return detail::get64(compare_be); }
  void set_compare(uint64_t v) noexcept { detail::put64(compare_be, v); }
};
static_assert(sizeof(AtomicEth) == 28);

/// Atomic ACK ETH (9.3.7) — original remote data, 64 bits.
struct AtomicAckEth {
  uint8_t orig_be[8];
  uint64_t orig() const noexcept { return detail::get64(orig_be); }
  void set_orig(uint64_t v) noexcept { detail::put64(orig_be, v); }
};
static_assert(sizeof(AtomicAckEth) == 8);

/// RC transport opcodes (IBTA Table 38, RC = 0x00-0x1f) and the RoCEv2 CNP (0x81).
enum Opcode : uint8_t {
  kRcSendFirst = 0x00,
  kRcSendMiddle = 0x01,
  kRcSendLast = 0x02,
  kRcSendLastImm = 0x03,
  kRcSendOnly = 0x04,
  kRcSendOnlyImm = 0x05,
  kRcWriteFirst = 0x06,
  kRcWriteMiddle = 0x07,
  kRcWriteLast = 0x08,
  kRcWriteLastImm = 0x09,
  kRcWriteOnly = 0x0a,
  kRcWriteOnlyImm = 0x0b,
  kRcReadRequest = 0x0c,
  kRcReadResponseFirst = 0x0d,
  kRcReadResponseMiddle = 0x0e,
  kRcReadResponseLast = 0x0f,
  kRcReadResponseOnly = 0x10,
  kRcAcknowledge = 0x11,
  kRcAtomicAcknowledge = 0x12,
  kRcCompareSwap = 0x13,
  kRcFetchAdd = 0x14,
  kRcSendLastInv = 0x16,
  kRcSendOnlyInv = 0x17,
  kCnp = 0x81,
};

/// Frame offsets of a RoCEv2 packet over untagged Ethernet and IPv4 without options.
inline constexpr uint32_t kEthOff = 0;
inline constexpr uint32_t kIpOff = sizeof(Ethernet);
inline constexpr uint32_t kUdpOff = kIpOff + sizeof(Ipv4);
inline constexpr uint32_t kBthOff = kUdpOff + sizeof(Udp);
inline constexpr uint32_t kRoceHeadersBytes = kBthOff + sizeof(Bth);  // 54
/// The same over IPv6 (no extension headers): 20 bytes more.
inline constexpr uint32_t kUdp6Off = kIpOff + sizeof(Ipv6);
inline constexpr uint32_t kBth6Off = kUdp6Off + sizeof(Udp);
inline constexpr uint32_t kRoce6HeadersBytes = kBth6Off + sizeof(Bth);  // 74

}  // namespace rocemu::wire
