// icrc.h — the RoCEv2 invariant CRC (IBTA annex A17.3.3 / 9.8.2.4).
//
// ICRC = CRC-32 (the Ethernet/zlib polynomial, reflected, init and final XOR 0xFFFFFFFF)
// over a pseudo-packet: 8 bytes of 0xFF standing for the masked LRH, then the IP header
// with the variant fields set to all ones (IPv4: TOS, TTL, header checksum; IPv6: traffic
// class, flow label, hop limit), the UDP header with its checksum set to 0xFFFF, the BTH
// with resv8a set to 0xFF, and the rest of the transport packet up to (not including) the
// ICRC. The 4-byte ICRC is stored least significant byte first (as Linux rxe writes it).
//
// The fast path uses DPDK's rte_net_crc (CRC32_ETH; not rte_hash_crc, which is CRC32C) on
// the frame itself: the 8 bytes before the IP header (the end of the Ethernet header) and
// the variant fields are masked in place for the computation and restored before return,
// so the frame is left byte-for-byte unchanged.
#pragma once

#include <cstdint>

namespace rocemu {

/// Enables the fastest CRC implementation the CPU and EAL allow (AVX-512 if
/// --force-max-simd-bitwidth=512 was given, else SSE4.2). Call once after EAL init; without
/// it the SSE4.2 (or scalar) path is used.
void icrc_select_fastest() noexcept;

/// ICRC of the RoCEv2 packet in `frame`: the IP header starts at `ip_off` (>= 8) and the
/// ICRC field at `icrc_off` (the CRC covers [ip_off, icrc_off) masked as above). IPv4
/// (version 4, any IHL) and IPv6 (version 6, next header UDP) are recognised from the IP
/// version nibble. The frame is modified during the call and restored; it must not be read
/// concurrently. Returns 0 when the layout is not one of those.
uint32_t icrc_compute(uint8_t* frame, uint32_t ip_off, uint32_t icrc_off) noexcept;

/// Writes the ICRC into frame[icrc_off..icrc_off+4).
void icrc_store(uint8_t* frame, uint32_t icrc_off, uint32_t icrc) noexcept;
/// Reads the ICRC stored at frame[icrc_off..icrc_off+4).
uint32_t icrc_load(const uint8_t* frame, uint32_t icrc_off) noexcept;

/// Bit-by-bit reference CRC-32 (zlib's crc32 with `crc` as the running value, 0 to start).
/// Slow; for tests and cross-checks.
uint32_t crc32_reference(uint32_t crc, const uint8_t* data, uint32_t len) noexcept;

}  // namespace rocemu
