// icrc.cc — RoCEv2 ICRC via rte_net_crc with in-place masking.
#include "common/icrc.h"

#include <cstring>

#include <rte_cpuflags.h>
#include <rte_net_crc.h>

// rte_vect.h of DPDK 22.11 declares this without C linkage in C++; declare it ourselves.
extern "C" uint16_t rte_vect_get_max_simd_bitwidth(void);

namespace rocemu {

void icrc_select_fastest() noexcept {
  // rte_net_crc_set_alg falls back by itself, but prints a warning when asked for AVX-512 on
  // a CPU (or EAL SIMD limit) without it: ask only for what is there.
  const bool avx512 = rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512F) > 0 &&
                      rte_cpu_get_flag_enabled(RTE_CPUFLAG_VPCLMULQDQ) > 0 &&
                      rte_vect_get_max_simd_bitwidth() >= 512;
  rte_net_crc_set_alg(avx512 ? RTE_NET_CRC_AVX512 : RTE_NET_CRC_SSE42);
}

uint32_t icrc_compute(uint8_t* frame, uint32_t ip_off, uint32_t icrc_off) noexcept {
  if (ip_off < 8 || icrc_off <= ip_off) return 0;
  uint8_t* ip = frame + ip_off;
  const uint8_t version = ip[0] >> 4;
  uint32_t udp_off;
  // Offsets (relative to the IP header) and saved values of every masked byte.
  uint8_t saved_lrh[8];
  uint8_t saved[16];
  uint32_t at[16];
  int n = 0;
  auto mask = [&](uint32_t off, uint8_t value) {
    at[n] = off;
    saved[n] = ip[off];
    ip[off] = value;
    ++n;
  };
  if (version == 4) {
    const uint32_t ihl = (ip[0] & 0x0f) * 4u;
    udp_off = ihl;
    if (ihl < 20 || udp_off + 8 + 12 > icrc_off - ip_off) return 0;
    mask(1, 0xff);   // TOS (DSCP + ECN)
    mask(8, 0xff);   // TTL
    mask(10, 0xff);  // header checksum
    mask(11, 0xff);
  } else if (version == 6) {
    udp_off = 40;
    if (udp_off + 8 + 12 > icrc_off - ip_off) return 0;
    // Traffic class (low nibble of byte 0, high nibble of byte 1) and flow label
    // (low nibble of byte 1, bytes 2-3) all ones; hop limit (byte 7) all ones.
    mask(0, static_cast<uint8_t>(ip[0] | 0x0f));
    mask(1, 0xff);
    mask(2, 0xff);
    mask(3, 0xff);
    mask(7, 0xff);
  } else {
    return 0;
  }
  mask(udp_off + 6, 0xff);  // UDP checksum
  mask(udp_off + 7, 0xff);
  mask(udp_off + 8 + 4, 0xff);  // BTH resv8a
  std::memcpy(saved_lrh, ip - 8, 8);
  std::memset(ip - 8, 0xff, 8);
  const uint32_t crc = rte_net_crc_calc(ip - 8, icrc_off - ip_off + 8, RTE_NET_CRC32_ETH);
  std::memcpy(ip - 8, saved_lrh, 8);
  while (n-- > 0) ip[at[n]] = saved[n];
  return crc;
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
