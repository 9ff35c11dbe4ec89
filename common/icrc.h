// icrc.h — the RoCEv2 invariant CRC (IBTA annex A17.3.3 / 9.8.2.4).
//
// ICRC = CRC-32 (the Ethernet/zlib polynomial, reflected, init and final XOR 0xFFFFFFFF)
// over a pseudo-packet: 8 bytes of 0xFF standing for the masked LRH, then the IP header
// with the variant fields set to all ones (IPv4: TOS, TTL, header checksum; IPv6: traffic
// class, flow label, hop limit), the UDP header with its checksum set to 0xFFFF, the BTH
// with resv8a set to 0xFF, and the rest of the transport packet up to (not including) the
// ICRC. The 4-byte ICRC is stored least significant byte first (as Linux rxe writes it).
//
// The CRC is crc32_update (common/crc32.cc: carry-less multiplication, AVX-512 where EAL
// allows it). The masked header bytes are copied and masked aside; the frame is only read.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rocemu {

/// Enables the fastest CRC implementation the CPU and EAL allow (512-bit lanes if EAL's SIMD
/// limit is 512, as --force-max-simd-bitwidth=512 sets it, else PCLMULQDQ). Call once after
/// EAL init; without it the PCLMULQDQ (or table) path is used.
void icrc_select_fastest() noexcept;

/// ICRC of the RoCEv2 packet in `frame`: the IP header starts at `ip_off` (>= 8) and the
/// ICRC field at `icrc_off` (the CRC covers [ip_off, icrc_off) masked as above). IPv4
/// (version 4, any IHL) and IPv6 (version 6, next header UDP) are recognised from the IP
/// version nibble. Returns 0 when the layout is not one of those.
uint32_t icrc_compute(const uint8_t* frame, uint32_t ip_off, uint32_t icrc_off) noexcept;

/// Writes the ICRC into frame[icrc_off..icrc_off+4).
void icrc_store(uint8_t* frame, uint32_t icrc_off, uint32_t icrc) noexcept;
/// Reads the ICRC stored at frame[icrc_off..icrc_off+4).
uint32_t icrc_load(const uint8_t* frame, uint32_t icrc_off) noexcept;

/// CRC-32 (zlib's crc32: `crc` is the running value, 0 to start) over `len` more bytes, by
/// carry-less multiplication where the CPU has it (common/crc32.cc).
uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t len) noexcept;
/// crc32_update() over `src` that also copies it to `dst` in the same pass: the payload of
/// a frame is read once for its copy and its ICRC. `dst` and `src` must not overlap.
uint32_t crc32_copy(uint32_t crc, uint8_t* dst, const uint8_t* src, size_t len) noexcept;

/// The CRC of `pre` (pre_len bytes, each ORed with or_mask's byte when or_mask is not null:
/// the ICRC's masked header fields) followed by `src`, which is copied to `dst` in the same
/// pass unless `dst` is null. On 512-bit lanes with pre_len in [4, 128] and a multiple of 4
/// no register is formed between the two (one reduction, not two).
uint32_t crc32_copy_after(uint32_t crc, const uint8_t* pre, size_t pre_len,
                          const uint8_t* or_mask, uint8_t* dst, const uint8_t* src,
                          size_t len) noexcept;

/// The implementations of crc32_update/crc32_copy. All give the same values.
enum class Crc32Impl : uint8_t {
  kTables,  // slicing by 8
  kPclmul,  // 4 x 128-bit lanes, PCLMULQDQ (the default where the CPU has it)
  kAvx512,  // 4 x 512-bit lanes, AVX-512 + VPCLMULQDQ
};
bool crc32_impl_available(Crc32Impl impl) noexcept;
/// Selects `impl` for the whole process; false (and nothing changes) if the CPU lacks it.
bool crc32_use(Crc32Impl impl) noexcept;
Crc32Impl crc32_impl() noexcept;

/// Bit-by-bit reference CRC-32 (zlib's crc32 with `crc` as the running value, 0 to start).
/// Slow; for tests and cross-checks.
uint32_t crc32_reference(uint32_t crc, const uint8_t* data, uint32_t len) noexcept;

/// The pseudo-packet's start as icrc_compute() sees it: the frame from 8 bytes before the IP
/// header (standing for the LRH) up to a point past the BTH, and the bytes to OR into it.
struct IcrcHead {
  const uint8_t* start = nullptr;
  const uint8_t* or_mask = nullptr;
  uint32_t len = 0;
  /// The CRC of the head followed by `src`, copied to `dst` (null: not copied).
  uint32_t crc_with(uint8_t* dst, const uint8_t* src, size_t n) const noexcept {
    return crc32_copy_after(0, start, len, or_mask, dst, src, n);
  }
};
/// The first part of icrc_compute(): the pseudo-packet up to frame[end_off) (past the BTH,
/// at most 120 bytes after the IP header). The caller continues with head.crc_with(), which
/// can write the payload in the same pass. False if the layout is not recognised.
bool icrc_begin(const uint8_t* frame, uint32_t ip_off, uint32_t end_off, IcrcHead& head) noexcept;

}  // namespace rocemu
