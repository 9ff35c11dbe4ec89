// red_ecn.h — RED-style ECN marking on the instantaneous egress queue length, in bytes.
//
// The congestion point of DCQCN (Zhu et al., SIGCOMM 2015, section 3.1): a packet leaving a
// queue of q bytes is marked CE with probability
//     p(q) = 0                                  if q <= Kmin
//     p(q) = Pmax * (q - Kmin) / (Kmax - Kmin)  if Kmin < q <= Kmax
//     p(q) = 1                                  if q > Kmax
// (no EWMA: the queue is sampled instantaneously, as DCQCN and HPCC's simulator do). DPDK's
// rte_red cannot express byte thresholds, hence this type. Validated config -> precomputed
// slope; mark() takes the queue bytes and a seeded Rng. Units: bytes; probabilities in [0,1].
#pragma once

#include <cstdint>

#include "common/rng.h"
#include "common/telemetry.h"

namespace rocemu::sw {

class RedEcn {
 public:
  RedEcn() noexcept { configure(EcnSetting{}); }
  explicit RedEcn(const EcnSetting& s) noexcept { configure(s); }

  /// Installs `s` (caller has validated it: kmin <= kmax, pmax in (0, 1]).
  void configure(const EcnSetting& s) noexcept {
    setting_ = s;
    const uint32_t span = s.kmax_bytes - s.kmin_bytes;
    // Probability per byte above Kmin; with Kmin == Kmax the linear part is empty.
    slope_per_byte_ = span > 0 ? s.pmax / static_cast<double>(span) : 0.0;
  }
  const EcnSetting& setting() const noexcept { return setting_; }

  /// Marking probability for a queue of `queue_bytes` (the closed form above).
  double probability(uint64_t queue_bytes) const noexcept {
    if (queue_bytes <= setting_.kmin_bytes) return 0.0;
    if (queue_bytes > setting_.kmax_bytes) return 1.0;
    return static_cast<double>(queue_bytes - setting_.kmin_bytes) * slope_per_byte_;
  }

  /// Whether to mark a packet leaving a queue of `queue_bytes`; draws from `rng` only in the
  /// linear region, so runs stay reproducible.
  bool mark(uint64_t queue_bytes, Rng& rng) const noexcept {
    if (queue_bytes <= setting_.kmin_bytes) return false;
    if (queue_bytes > setting_.kmax_bytes) return true;
    return rng.uniform() < static_cast<double>(queue_bytes - setting_.kmin_bytes) * slope_per_byte_;
  }

 private:
  EcnSetting setting_;
  double slope_per_byte_ = 0.0;
};

}  // namespace rocemu::sw
