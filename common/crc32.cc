// crc32.cc — CRC-32 (the Ethernet/zlib polynomial, reflected) by carry-less multiplication,
// with the option of copying the bytes in the same pass.
//
// The folding method of Gopal et al., "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ" (Intel, 2009), derived here for the reflected bit order. A 128-bit lane A
// holds 16 message bytes; loaded little-endian, its low quadword L is the earlier 8 bytes,
// so as a polynomial A = L*x^64 + H (bit i of a quadword is the coefficient of x^(63-i)).
// Carry-less multiplying two such reflected quadwords gives x*a*b in the 128-bit
// reflected form. Moving A forward by D bits (to the lane D bits later, which it is XORed
// into) needs A*x^D mod P = L*x^(64+D) + H*x^D, so
//     A' = clmul(L, rev64(x^(63+D) mod P)) ^ clmul(H, rev64(x^(D-1) mod P)),
// a polynomial of degree <= 95 that fits the lane. The running CRC register enters by
// XOR into the first 4 message bytes. At the end every lane is moved straight to the last
// one's place (all products independent), the lane is folded to 64 bits (reg_of_lane) and
// one slicing-by-8 step gives A*x^32 mod P, the register; the bytes after the last whole
// lane go through the tables. The constants are computed from P at compile time, not
// copied from anywhere. Leading zero bytes leave a zero register zero, so a prefix shorter
// than a block is padded in front (crc32_copy_after) instead of leaving a tail.
//
// Three implementations, picked at run time: 4 x 512-bit lanes (AVX-512 + VPCLMULQDQ,
// 256 bytes per step), 4 x 128-bit lanes (PCLMULQDQ, 64 bytes per step), and
// slicing-by-8 tables. The tests compare all three with crc32_reference().
#include <immintrin.h>

#include <array>
#include <cstring>

#include "common/icrc.h"

namespace rocemu {
namespace {

constexpr uint32_t kPolyReflected = 0xEDB88320u;

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (kPolyReflected & (0u - (c & 1u)));
    t[0][b] = c;
  }
  for (int s = 1; s < 8; ++s)
    for (uint32_t b = 0; b < 256; ++b) t[s][b] = (t[s - 1][b] >> 8) ^ t[0][t[s - 1][b] & 0xff];
  return t;
}

constexpr Tables kTables = make_tables();

uint32_t load32(const uint8_t* p) noexcept {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // x86: little-endian, as the reflected CRC reads bytes
}

/// The register (not inverted) after `n` more bytes, slicing by 8.
uint32_t reg_tables(uint32_t r, const uint8_t* p, size_t n) noexcept {
  const auto& t = kTables;
  for (; n >= 8; p += 8, n -= 8) {
    const uint32_t a = r ^ load32(p), b = load32(p + 4);
    r = t[7][a & 0xff] ^ t[6][(a >> 8) & 0xff] ^ t[5][(a >> 16) & 0xff] ^ t[4][a >> 24] ^
        t[3][b & 0xff] ^ t[2][(b >> 8) & 0xff] ^ t[1][(b >> 16) & 0xff] ^ t[0][b >> 24];
  }
  for (; n > 0; ++p, --n) r = (r >> 8) ^ t[0][(r ^ *p) & 0xff];
  return r;
}

/// x^n mod P (P = the normal, unreflected polynomial 0x104C11DB7), bit j = coefficient of x^j.
constexpr uint32_t xpow_mod(uint32_t n) {
  uint32_t v = 1;  // x^0
  for (uint32_t i = 0; i < n; ++i) v = (v << 1) ^ ((v & 0x80000000u) ? 0x04C11DB7u : 0u);
  return v;
}

constexpr uint64_t rev64(uint64_t v) {
  uint64_t r = 0;
  for (int i = 0; i < 64; ++i) r |= ((v >> i) & 1u) << (63 - i);
  return r;
}

/// The pair of constants that moves a 128-bit lane forward by `d_bits`: {for L, for H}.
struct Fold {
  uint64_t lo, hi;
};
constexpr Fold fold_by(uint32_t d_bits) {
  // x^-1 mod P = (P + 1) / x: moving by 0 bits is x*L*x^63 + x*H*x^-1 = A, mod P.
  constexpr uint32_t kXInverse = 0x82608EDBu;
  return {rev64(xpow_mod(63 + d_bits)), rev64(d_bits == 0 ? kXInverse : xpow_mod(d_bits - 1))};
}

constexpr Fold kFold512 = fold_by(512);
constexpr Fold kFold2048 = fold_by(2048);
/// kLaneFold[i] moves a lane i lanes (i * 128 bits) forward; kLaneFoldDown is the same
/// table backwards (entry j moves by kLanes - 1 - j lanes).
constexpr uint32_t kLanes = 32;
constexpr auto kLaneFold = [] {
  std::array<Fold, kLanes> a{};
  for (uint32_t i = 0; i < kLanes; ++i) a[i] = fold_by(i * 128);
  return a;
}();
alignas(64) constexpr auto kLaneFoldDown = [] {
  std::array<Fold, kLanes> a{};
  for (uint32_t j = 0; j < kLanes; ++j) a[j] = kLaneFold[kLanes - 1 - j];
  return a;
}();

/// The register after the 16 bytes of the last lane, from a zero register: the lane is
/// folded (by 0 bits: x*L*(x^63 mod P) = L*x^64, mod P) into its high quadword in two
/// carry-less products, whose 8 bytes then take one table step.
__attribute__((target("pclmul,sse4.1"))) inline uint32_t reg_of_lane(__m128i a) noexcept {
  const __m128i k = _mm_set_epi64x(0, static_cast<long long>(kLaneFold[0].lo));
  const __m128i w = _mm_clmulepi64_si128(a, k, 0x00);     // degree <= 95: x^95..x^64 in w.lo
  const __m128i w2 = _mm_clmulepi64_si128(w, k, 0x00);    // degree <= 63: all in w2.hi
  const uint64_t v = static_cast<uint64_t>(_mm_extract_epi64(_mm_xor_si128(_mm_xor_si128(a, w), w2), 1));
  const auto& t = kTables;
  const auto lo = static_cast<uint32_t>(v), hi = static_cast<uint32_t>(v >> 32);
  return t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
         t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
}

// ---- 4 x 128-bit lanes (PCLMULQDQ) ----

__attribute__((target("pclmul,sse4.1"))) inline __m128i fold128(__m128i a, __m128i k) noexcept {
  return _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00), _mm_clmulepi64_si128(a, k, 0x11));
}

__attribute__((target("sse4.1"))) inline __m128i lane_fold(uint32_t lanes) noexcept {
  const Fold f = kLaneFold[lanes];
  return _mm_set_epi64x(static_cast<long long>(f.hi), static_cast<long long>(f.lo));
}

/// Loads 16 bytes at src+at (and stores them at dst+at when copying).
template <bool kCopy>
__attribute__((target("pclmul,sse4.1"))) inline __m128i load16(uint8_t* dst, const uint8_t* src,
                                                              size_t at) noexcept {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + at));
  if constexpr (kCopy) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + at), v);
  return v;
}

template <bool kCopy>
__attribute__((target("pclmul,sse4.1"))) uint32_t reg_pclmul(uint32_t r, uint8_t* dst,
                                                              const uint8_t* src,
                                                              size_t n) noexcept {
  if (n < 64) {
    if constexpr (kCopy) {
      if (n != 0) std::memcpy(dst, src, n);  // (both may be null)
    }
    return reg_tables(r, src, n);
  }
  const __m128i k128 = lane_fold(1);
  const __m128i k512 = _mm_set_epi64x(static_cast<long long>(kFold512.hi),
                                      static_cast<long long>(kFold512.lo));
  __m128i a0 = _mm_xor_si128(load16<kCopy>(dst, src, 0), _mm_cvtsi32_si128(static_cast<int>(r)));
  __m128i a1 = load16<kCopy>(dst, src, 16), a2 = load16<kCopy>(dst, src, 32), a3 = load16<kCopy>(dst, src, 48);
  size_t at = 64;
  for (; at + 64 <= n; at += 64) {
    a0 = _mm_xor_si128(fold128(a0, k512), load16<kCopy>(dst, src, at));
    a1 = _mm_xor_si128(fold128(a1, k512), load16<kCopy>(dst, src, at + 16));
    a2 = _mm_xor_si128(fold128(a2, k512), load16<kCopy>(dst, src, at + 32));
    a3 = _mm_xor_si128(fold128(a3, k512), load16<kCopy>(dst, src, at + 48));
  }
  // Each lane straight to the last one's place (the products are independent).
  __m128i a = _mm_xor_si128(_mm_xor_si128(fold128(a0, lane_fold(3)), fold128(a1, lane_fold(2))),
                            _mm_xor_si128(fold128(a2, lane_fold(1)), a3));
  for (; at + 16 <= n; at += 16) a = _mm_xor_si128(fold128(a, k128), load16<kCopy>(dst, src, at));
  if constexpr (kCopy) std::memcpy(dst + at, src + at, n - at);
  return reg_tables(reg_of_lane(a), src + at, n - at);
}

// ---- 4 x 512-bit lanes (AVX-512 + VPCLMULQDQ) ----

#define ROCEMU_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,vpclmulqdq,pclmul,sse4.1")))

ROCEMU_AVX512 inline __m512i fold512(__m512i a, __m512i k) noexcept {
  // a*k.lo (low quadwords) ^ a*k.hi (high quadwords), per 128-bit lane.
  return _mm512_xor_si512(_mm512_clmulepi64_epi128(a, k, 0x00),
                          _mm512_clmulepi64_epi128(a, k, 0x11));
}

template <bool kCopy>
ROCEMU_AVX512 inline __m512i load64(uint8_t* dst, const uint8_t* src, size_t at) noexcept {
  const __m512i v = _mm512_loadu_si512(src + at);
  if constexpr (kCopy) _mm512_storeu_si512(dst + at, v);
  return v;
}

ROCEMU_AVX512 inline __m512i bcast(Fold f) noexcept {
  const auto lo = static_cast<long long>(f.lo), hi = static_cast<long long>(f.hi);
  return _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo);
}

/// Constants that move the 4 lanes of a 512-bit register, the first `first` lanes from the
/// end, the last `first - 3`, to the end.
ROCEMU_AVX512 inline __m512i lanes_fold(uint32_t first) noexcept {
  // kLaneFoldDown holds lanes 31, 30, ..., 0: lanes first..first-3 are 4 consecutive entries.
  return _mm512_loadu_si512(&kLaneFoldDown[kLanes - 1 - first]);
}

/// The register after a stream that starts with `nblocks` (0, 1 or 2) 64-byte blocks already
/// in registers (the register XORed into the stream's first 4 bytes) and goes on with `src`
/// (n bytes, copied to dst when kCopy); with no blocks, from register r. The stream is at
/// least 256 bytes long.
template <bool kCopy>
ROCEMU_AVX512 uint32_t reg_avx512_blocks(uint32_t r, const __m512i* pre, size_t nblocks,
                                         uint8_t* dst, const uint8_t* src, size_t n) noexcept {
  const size_t pre_len = nblocks * 64;
  // The first 256 bytes of the stream: from pre, then from src.
  auto first = [&](size_t at) ROCEMU_AVX512 {
    return at < pre_len ? pre[at / 64] : load64<kCopy>(dst, src, at - pre_len);
  };
  const __m512i k2048 = bcast(kFold2048);
  __m512i z0 = first(0);
  if (nblocks == 0)
    z0 = _mm512_xor_si512(z0, _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(r))));
  __m512i z1 = first(64), z2 = first(128), z3 = first(192);
  // From here on `at` counts src bytes.
  size_t at = 256 - pre_len;
  for (; at + 256 <= n; at += 256) {
    z0 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z0, k2048, 0x00),
                                   _mm512_clmulepi64_epi128(z0, k2048, 0x11),
                                   load64<kCopy>(dst, src, at), 0x96);
    z1 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z1, k2048, 0x00),
                                   _mm512_clmulepi64_epi128(z1, k2048, 0x11),
                                   load64<kCopy>(dst, src, at + 64), 0x96);
    z2 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z2, k2048, 0x00),
                                   _mm512_clmulepi64_epi128(z2, k2048, 0x11),
                                   load64<kCopy>(dst, src, at + 128), 0x96);
    z3 = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z3, k2048, 0x00),
                                   _mm512_clmulepi64_epi128(z3, k2048, 0x11),
                                   load64<kCopy>(dst, src, at + 192), 0x96);
  }
  // Under 256 bytes are left: j whole 64-byte blocks (j <= 3), then m whole 16-byte blocks
  // (m <= 3), then under 16 bytes. The four lanes and the j blocks are each moved straight
  // to the place of the last whole 16-byte block, all products independent (no chain of
  // folds: this tail is a good part of a 1 KB frame's time).
  const auto j = static_cast<uint32_t>((n - at) / 64);
  const auto m = static_cast<uint32_t>((n - at) % 64 / 16);
  __m512i z = _mm512_ternarylogic_epi64(fold512(z0, lanes_fold(15 + 4 * j + m)),
                                        fold512(z1, lanes_fold(11 + 4 * j + m)),
                                        fold512(z2, lanes_fold(7 + 4 * j + m)), 0x96);
  z = _mm512_xor_si512(z, fold512(z3, lanes_fold(3 + 4 * j + m)));
  for (uint32_t k = j; k > 0; --k, at += 64)
    z = _mm512_xor_si512(z, fold512(load64<kCopy>(dst, src, at), lanes_fold(3 + 4 * (k - 1) + m)));
  // XOR the four lanes into one. (Masked extracts: GCC 12 warns that the plain ones' source
  // operand is undefined.)
  const __m128i zero = _mm_setzero_si128();
  __m128i a = _mm_xor_si128(_mm_xor_si128(_mm512_mask_extracti32x4_epi32(zero, 0xF, z, 0),
                                          _mm512_mask_extracti32x4_epi32(zero, 0xF, z, 1)),
                            _mm_xor_si128(_mm512_mask_extracti32x4_epi32(zero, 0xF, z, 2),
                                          _mm512_mask_extracti32x4_epi32(zero, 0xF, z, 3)));
  for (uint32_t left = static_cast<uint32_t>((n - at) / 16); left > 0; --left, at += 16)
    a = _mm_xor_si128(a, fold128(load16<kCopy>(dst, src, at), lane_fold(left - 1)));
  if constexpr (kCopy) std::memcpy(dst + at, src + at, n - at);
  return reg_tables(reg_of_lane(a), src + at, n - at);
}

template <bool kCopy>
ROCEMU_AVX512 uint32_t reg_avx512(uint32_t r, uint8_t* dst, const uint8_t* src,
                                  size_t n) noexcept {
  if (n < 256) return reg_pclmul<kCopy>(r, dst, src, n);
  return reg_avx512_blocks<kCopy>(r, nullptr, 0, dst, src, n);
}

/// crc32_copy_after() on 512-bit lanes: the prefix (pre | or_mask) is read by masked loads
/// into one or two blocks, zero-padded in front (leading zeros from a zero register leave it
/// zero), with the register XORed into its first 4 bytes. False (nothing done) where that
/// does not apply: a prefix over 128 bytes or whose padding is not whole words, or a stream
/// under 256 bytes.
template <bool kCopy>
ROCEMU_AVX512 bool reg_avx512_after(uint32_t r, const uint8_t* pre, size_t pre_len,
                                    const uint8_t* or_mask, uint8_t* dst, const uint8_t* src,
                                    size_t n, uint32_t& out) noexcept {
  const size_t padded = pre_len <= 64 ? 64 : 128, pad = padded - pre_len;
  if (pre_len < 4 || pre_len > 128 || pad % 4 != 0 || padded + n < 256) return false;
  __m512i blocks[2];
  // Block 0 holds the first 64 - pad bytes of pre behind `pad` zeros.
  const __mmask64 keep = ~__mmask64{0} << pad;
  const uint8_t* p0 = pre - pad;  // masked-off bytes are not read
  blocks[0] = _mm512_maskz_loadu_epi8(keep, p0);
  if (or_mask) blocks[0] = _mm512_or_si512(blocks[0], _mm512_maskz_loadu_epi8(keep, or_mask - pad));
  blocks[0] = _mm512_xor_si512(blocks[0], _mm512_maskz_set1_epi32(__mmask16(1u << (pad / 4)), static_cast<int>(r)));
  if (padded == 128) {
    blocks[1] = _mm512_loadu_si512(p0 + 64);
    if (or_mask) blocks[1] = _mm512_or_si512(blocks[1], _mm512_loadu_si512(or_mask - pad + 64));
  }
  out = reg_avx512_blocks<kCopy>(0, blocks, padded / 64, dst, src, n);
  return true;
}

uint32_t reg_tables_nocopy(uint32_t r, uint8_t*, const uint8_t* src, size_t n) noexcept {
  return reg_tables(r, src, n);
}
uint32_t reg_tables_copy(uint32_t r, uint8_t* dst, const uint8_t* src, size_t n) noexcept {
  if (n != 0) std::memcpy(dst, src, n);  // (both may be null)
  return reg_tables(r, src, n);
}

using RegFn = uint32_t (*)(uint32_t, uint8_t*, const uint8_t*, size_t) noexcept;
struct Impl {
  RegFn update, copy;
};

constexpr Impl kImpls[] = {
    {reg_tables_nocopy, reg_tables_copy},
    {reg_pclmul<false>, reg_pclmul<true>},
    {reg_avx512<false>, reg_avx512<true>},
};

bool cpu_has(Crc32Impl impl) noexcept {
  __builtin_cpu_init();
  switch (impl) {
    case Crc32Impl::kTables:
      return true;
    case Crc32Impl::kPclmul:
      return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
    case Crc32Impl::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq") &&
             __builtin_cpu_supports("pclmul");
  }
  return false;
}

Crc32Impl g_impl = cpu_has(Crc32Impl::kPclmul) ? Crc32Impl::kPclmul : Crc32Impl::kTables;

}  // namespace

bool crc32_impl_available(Crc32Impl impl) noexcept { return cpu_has(impl); }

bool crc32_use(Crc32Impl impl) noexcept {
  if (!cpu_has(impl)) return false;
  g_impl = impl;
  return true;
}

Crc32Impl crc32_impl() noexcept { return g_impl; }

uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t len) noexcept {
  if (len == 0) return crc;  // (a frame's pad, most often)
  return ~kImpls[static_cast<int>(g_impl)].update(~crc, nullptr, data, len);
}

uint32_t crc32_copy(uint32_t crc, uint8_t* dst, const uint8_t* src, size_t len) noexcept {
  return ~kImpls[static_cast<int>(g_impl)].copy(~crc, dst, src, len);
}

uint32_t crc32_copy_after(uint32_t crc, const uint8_t* pre, size_t pre_len,
                          const uint8_t* or_mask, uint8_t* dst, const uint8_t* src,
                          size_t len) noexcept {
  uint32_t r;
  if (g_impl == Crc32Impl::kAvx512 &&
      (dst ? reg_avx512_after<true>(~crc, pre, pre_len, or_mask, dst, src, len, r)
           : reg_avx512_after<false>(~crc, pre, pre_len, or_mask, nullptr, src, len, r)))
    return ~r;
  // Two steps: the prefix (masked in a copy), then the rest.
  const Impl& impl = kImpls[static_cast<int>(g_impl)];
  r = ~crc;
  uint8_t buf[128];
  for (size_t at = 0; at < pre_len; at += sizeof buf) {
    const size_t n = pre_len - at < sizeof buf ? pre_len - at : sizeof buf;
    for (size_t i = 0; i < n; ++i) buf[i] = pre[at + i] | (or_mask ? or_mask[at + i] : 0);
    r = impl.update(r, nullptr, buf, n);
  }
  return ~(dst ? impl.copy : impl.update)(r, dst, src, len);
}

}  // namespace rocemu
