// time_ns.h — simulated and real time in integer nanoseconds, and rate/size units.
//
// Every piece of core logic takes `TimeNs now` as a parameter and never reads a clock:
// the real-time engine converts the TSC once per poll iteration, the virtual-time engine
// passes simulated time. Units: TimeNs is nanoseconds; rates are bits per second (_bps).
#pragma once

#include <cstdint>
#include <ctime>
#include <limits>

namespace rocemu {

using TimeNs = int64_t;

inline constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();
inline constexpr TimeNs kNsPerUs = 1000;
inline constexpr TimeNs kNsPerMs = 1000 * kNsPerUs;
inline constexpr TimeNs kNsPerSec = 1000 * kNsPerMs;

inline constexpr uint64_t kBitsPerByte = 8;
inline constexpr uint64_t kBpsPerGbps = 1'000'000'000ULL;
inline constexpr uint64_t kBpsPerMbps = 1'000'000ULL;

/// Time to serialise `bytes` on a wire of `rate_bps`, rounded up to the next nanosecond.
/// Exact integer arithmetic: ceil(bytes * 8 * 1e9 / rate_bps). A 1000-byte frame at
/// 10 Gbps takes exactly 800 ns. Valid for bytes < 2^30 and rate_bps <= 2^40, where the
/// numerator fits 64 bits (8 * 10^9 * 2^30 + 2^40 < 2^63: one 64-bit division, not a call
/// to the 128-bit one, once per frame launched); 128-bit arithmetic beyond.
constexpr TimeNs serialization_ns(uint64_t bytes, uint64_t rate_bps) noexcept {
  if (bytes < (uint64_t{1} << 30) && rate_bps <= (uint64_t{1} << 40)) [[likely]]
    return static_cast<TimeNs>((bytes * kBitsPerByte * static_cast<uint64_t>(kNsPerSec) + rate_bps - 1) / rate_bps);
  const unsigned __int128 bits_ns =
      static_cast<unsigned __int128>(bytes) * kBitsPerByte * static_cast<uint64_t>(kNsPerSec);
  return static_cast<TimeNs>((bits_ns + rate_bps - 1) / rate_bps);
}

/// Bytes that `rate_bps` moves in `dt_ns` (floor).
constexpr uint64_t bytes_in(TimeNs dt_ns, uint64_t rate_bps) noexcept {
  if (dt_ns <= 0) return 0;
  if (dt_ns < (TimeNs{1} << 23) && rate_bps <= (uint64_t{1} << 40)) [[likely]]  // < 2^63
    return static_cast<uint64_t>(dt_ns) * rate_bps / (kBitsPerByte * static_cast<uint64_t>(kNsPerSec));
  const unsigned __int128 b = static_cast<unsigned __int128>(dt_ns) * rate_bps;
  return static_cast<uint64_t>(b / (kBitsPerByte * static_cast<uint64_t>(kNsPerSec)));
}

/// CPU time the calling thread has used, ns (CLOCK_THREAD_CPUTIME_ID). For measuring what a
/// run or a loop cost (benchmarks, cost summaries, normalising a real-time test by the CPU
/// its poll loop got), never as the `now` of core logic.
inline int64_t thread_cpu_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

static_assert(serialization_ns(1000, 10 * kBpsPerGbps) == 800);
static_assert(serialization_ns(1, 3) == 2'666'666'667);
// Both sides of the 64-bit fast paths give the 128-bit results.
static_assert(serialization_ns((uint64_t{1} << 30) - 1, 3) == 2'863'311'528'000'000'000);
static_assert(serialization_ns(uint64_t{1} << 30, 3) == 2'863'311'530'666'666'667);
static_assert(serialization_ns(4160, (uint64_t{1} << 40) + 1) == 31);
static_assert(bytes_in((TimeNs{1} << 23) - 1, uint64_t{1} << 40) == 1'152'921'367);
static_assert(bytes_in(TimeNs{1} << 23, (uint64_t{1} << 40) + 7) == 1'152'921'504);

}  // namespace rocemu
