// icrc.cc — RoCEv2 ICRC: the masked headers from a copy, the rest from the frame, by
// crc32_update (common/crc32.cc).
#include "common/icrc.h"

#include <array>
#include <cstring>


// rte_vect.h of DPDK 22.11 declares this without C linkage in C++; declare it ourselves.
extern "C" uint16_t rte_vect_get_max_simd_bitwidth(void);

namespace rocemu {

void icrc_select_fastest() noexcept {
  // 512-bit lanes only where EAL's SIMD limit allows them (DPDK's rule for every library).
  if (rte_vect_get_max_simd_bitwidth() >= 512 && crc32_use(Crc32Impl::kAvx512)) return;
  if (!crc32_use(Crc32Impl::kPclmul)) crc32_use(Crc32Impl::kTables);
}

namespace {

constexpr uint32_t kHeadMax = 128;  // bytes of pseudo-packet a head may span
using OrMask = std::array<uint8_t, kHeadMax>;

/// The bytes ORed into the pseudo-packet's start (from 8 bytes before the IP header): all
/// ones over the LRH and every variant field. IPv4 with `ihl` words of header.
constexpr OrMask ipv4_mask(uint32_t ihl) {
  OrMask m{};
  for (int i = 0; i < 8; ++i) m[i] = 0xff;
  const uint32_t ip = 8, udp = ip + ihl * 4;
  m[ip + 1] = 0xff;                   // TOS (DSCP + ECN)
  m[ip + 8] = 0xff;                   // TTL
  m[ip + 10] = m[ip + 11] = 0xff;     // header checksum
  m[udp + 6] = m[udp + 7] = 0xff;     // UDP checksum
  m[udp + 8 + 4] = 0xff;              // BTH resv8a
  return m;
}
constexpr OrMask ipv6_mask() {
  OrMask m{};
  for (int i = 0; i < 8; ++i) m[i] = 0xff;
  const uint32_t ip = 8, udp = ip + 40;
  // Traffic class (low nibble of byte 0, high nibble of byte 1) and flow label (low nibble
  // of byte 1, bytes 2-3) all ones; hop limit (byte 7) all ones.
  m[ip + 0] = 0x0f;
  m[ip + 1] = m[ip + 2] = m[ip + 3] = 0xff;
  m[ip + 7] = 0xff;
  m[udp + 6] = m[udp + 7] = 0xff;     // UDP checksum
  m[udp + 8 + 4] = 0xff;              // BTH resv8a
  return m;
}
constexpr auto kIpv4Masks = [] {
  std::array<OrMask, 16> a{};
  for (uint32_t ihl = 5; ihl < 16; ++ihl) a[ihl] = ipv4_mask(ihl);
  return a;
}();
constexpr OrMask kIpv6Mask = ipv6_mask();

}  // namespace

bool icrc_begin(const uint8_t* frame, uint32_t ip_off, uint32_t end_off, IcrcHead& head) noexcept {
  if (ip_off < 8 || end_off <= ip_off) return false;
  const uint8_t* ip = frame + ip_off;
  uint32_t udp_off;
  const uint8_t version = ip[0] >> 4;
  if (version == 4) {
    const uint32_t ihl = ip[0] & 0x0f;
    if (ihl < 5) return false;
    udp_off = ihl * 4;
    head.or_mask = kIpv4Masks[ihl].data();
  } else if (version == 6) {
    udp_off = 40;
    head.or_mask = kIpv6Mask.data();
  } else {
    return false;
  }
  head.start = ip - 8;
  head.len = end_off - ip_off + 8;
  // The head spans the masked part (through the BTH) and fits the mask.
  return udp_off + 8 + 12 <= end_off - ip_off && head.len <= kHeadMax;
}

uint32_t icrc_compute(const uint8_t* frame, uint32_t ip_off, uint32_t icrc_off) noexcept {
  if (ip_off < 8 || icrc_off <= ip_off) return 0;
  // The head ends with the BTH (the shortest that covers every masked field), the rest is
  // plain frame.
  const uint8_t* ip = frame + ip_off;
  const uint32_t version = ip[0] >> 4;
  const uint32_t bth_end = (version == 4 ? (ip[0] & 0x0f) * 4u : 40u) + 8 + 12;
  IcrcHead head;
  if (bth_end > icrc_off - ip_off || !icrc_begin(frame, ip_off, ip_off + bth_end, head)) return 0;
  return head.crc_with(nullptr, ip + bth_end, icrc_off - ip_off - bth_end);
}

void icrc_store(uint8_t* frame, uint32_t icrc_off, uint32_t icrc) noexcept {
  uint8_t* p = frame + icrc_off;
  p[0] = static_cast<uint8_t>(icrc);
  p[1] = static_cast<uint8_t>(icrc >> 8);
  p[2] = static_cast<uint8_t>(icrc >> 16);
  p[3] = static_cast<uint8_t>(icrc >> 24);
}

uint32_t icrc_load(const uint8_t* frame, uint32_t icrc_off) noexcept {
  const uint8_t* p = frame + icrc_off;
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

uint32_t crc32_reference(uint32_t crc, const uint8_t* data, uint32_t len) noexcept {
  crc = ~crc;
  for (uint32_t i = 0; i < len; ++i) {
    crc ^= data[i];
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

}  // namespace rocemu
