// psn.h — 24-bit packet sequence number arithmetic and the RC timer formulas.
//
// IBTA Vol. 1 rel. 1.4: PSNs are 24 bits and wrap (9.7.1); two PSNs compare through their
// signed 24-bit difference, which is valid while they are less than 2^23 apart (the
// responder's valid window, 9.7.5.1.1). Local ACK timeout (9.7.6.1.3, table of the QP
// attribute `timeout`): 4.096 us x 2^timeout, 0 meaning infinite. RNR NAK timer codes
// (table 45, 9.7.5.2.8): a 5-bit code to a delay, 0 meaning 655.36 ms. Units: ns.
#pragma once

#include <cstdint>

#include "common/time_ns.h"

namespace rocemu::nic {

inline constexpr uint32_t kPsnMask = 0xFFFFFF;
inline constexpr int32_t kPsnHalfWindow = 1 << 23;

/// (psn + n) mod 2^24.
constexpr uint32_t psn_add(uint32_t psn, uint32_t n) noexcept { return (psn + n) & kPsnMask; }

/// Signed distance a - b in the 24-bit circle, in [-2^23, 2^23).
constexpr int32_t psn_diff(uint32_t a, uint32_t b) noexcept {
  // Shift the 24-bit difference into the top of a 32-bit word, then back with sign.
  return static_cast<int32_t>(((a - b) & kPsnMask) << 8) >> 8;
}

/// a is before b (a < b modulo 2^24).
constexpr bool psn_before(uint32_t a, uint32_t b) noexcept { return psn_diff(a, b) < 0; }

/// Local ACK timeout for the QP attribute `timeout` (0..31): 4096 ns x 2^timeout; kNever
/// when timeout is 0 (IBTA: infinite).
constexpr TimeNs local_ack_timeout_ns(uint8_t timeout) noexcept {
  if (timeout == 0) return kNever;
  return TimeNs{4096} << (timeout & 31);
}

/// RNR NAK timer code (0..31) to its delay (IBTA table 45).
constexpr TimeNs rnr_timer_ns(uint8_t code) noexcept {
  constexpr uint32_t kUs100[32] = {
      // Delays in units of 10 ns (so 0.01 ms = 1000): 655.36 ms, 0.01 ms .. 491.52 ms.
      65536000, 1000,   2000,   3000,   4000,    6000,    8000,    12000,
      16000,    24000,  32000,  48000,  64000,   96000,   128000,  192000,
      256000,   384000, 512000, 768000, 1024000, 1536000, 2048000, 3072000,
      4096000,  6144000, 8192000, 12288000, 16384000, 24576000, 32768000, 49152000};
  return TimeNs{kUs100[code & 31]} * 10;
}

static_assert(psn_diff(0, kPsnMask) == 1);
static_assert(psn_diff(kPsnMask, 0) == -1);
static_assert(psn_add(kPsnMask, 2) == 1);
static_assert(local_ack_timeout_ns(14) == 67'108'864);
static_assert(rnr_timer_ns(1) == 10'000 && rnr_timer_ns(0) == 655'360'000);

}  // namespace rocemu::nic
