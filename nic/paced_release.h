// paced_release.h — the RoCE host's per-QP rate limiter, the one pacer of the project:
// RoceHost paces each QP's data frames with it (RoceHost::set_qp_rate_bps, nic/host_io.cc),
// DCQCN sets its rate (fabric/cc/dcqcn_hooks.h) and the DCQCN validation model
// (tests/dcqcn/bottleneck_sim.cc) paces its senders with it too.
//
// A QP limited to R releases its next data frame no earlier than
//   release' = max(now, release) + ceil(bytes * 8 * 1e9 / R)   [ns]
// after a frame of `bytes` left at `now`: strict spacing at R (as a hardware rate limiter
// releases DCQCN's R_C; Zhu et al., SIGCOMM 2015, section 3.1), no credit banked while idle
// or while the QP was held by something else (the wire, a window, PFC), and each frame's
// spacing rounded up to the nanosecond, so the achieved rate is below R by less than 1 ns
// per frame (1082-byte frames at 100 Gbps: 87 ns instead of 86.56, -0.5%). A rate change
// applies from the next frame on: a wait already running keeps the old rate's spacing.
// Rate 0 means no limit (release times are left alone).
// Units: ns, bytes, bit/s. Pure functions of their arguments: no clock, no state.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/time_ns.h"

namespace rocemu::nic {

/// True while a QP limited to `rate_bps` (0 = no limit) whose next frame may leave at
/// `release_ns` must hold its data frames at `now`.
constexpr bool pacing_holds(uint64_t rate_bps, TimeNs release_ns, TimeNs now) noexcept {
  return rate_bps != 0 && release_ns > now;
}

/// The release time of a QP's next data frame after one of `bytes` left at `now`, with the
/// previous release time `prev_release_ns`, at `rate_bps` (0: no limit, `prev_release_ns`
/// unchanged). Valid for bytes < 2^30 and rate_bps <= 2^40 (serialization_ns).
constexpr TimeNs paced_release_ns(TimeNs prev_release_ns, TimeNs now, uint64_t bytes,
                                  uint64_t rate_bps) noexcept {
  if (rate_bps == 0) return prev_release_ns;
  return std::max(now, prev_release_ns) + serialization_ns(bytes, rate_bps);
}

/// The limiter rate for a congestion-control rate `rate_bps` on a port of `line_rate_bps`:
/// at or above line rate the limiter would only repeat the wire's own serialisation, so
/// it is lifted (0).
constexpr uint64_t limiter_rate_bps(uint64_t rate_bps, uint64_t line_rate_bps) noexcept {
  return rate_bps >= line_rate_bps ? 0 : rate_bps;
}

static_assert(paced_release_ns(0, 1'000, 1000, 10 * kBpsPerGbps) == 1'800);
static_assert(paced_release_ns(5'000, 1'000, 1000, 10 * kBpsPerGbps) == 5'800);
static_assert(paced_release_ns(5'000, 1'000, 1000, 0) == 5'000);

}  // namespace rocemu::nic
