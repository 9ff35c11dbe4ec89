// rp.h — DCQCN reaction point (RP): the per-QP sending-rate controller.
//
// DCQCN, Zhu et al., SIGCOMM 2015, section 3.1 ("RP algorithm") and its RP state machine,
// which follows QCN (IEEE 802.1Qau) for rate increase; with the ConnectX-style variant of
// HPCC's ns-3 simulator (rdma-hw.cc, "Mellanox's version of DCQCN") selected by Config.
//
// State per QP: current rate R_C, target rate R_T, alpha. Flows start at line rate (no slow
// start). Rules, in the order they are applied:
//   cut (at a CNP, or at the next rate-decrease tick after one when
//   rate_decrease_interval > 0):
//       R_T = R_C  (unless !clamp_target_rate and no increase event happened since the
//                   previous cut: then R_T is kept)
//       R_C = max(min_rate, R_C (1 - alpha/2))
//       timer stage T = byte stage BC = 0; byte count = 0; increase timer restarts.
//   alpha (AlphaUpdate::kOnCnp): alpha = (1-g) alpha + g right after each cut-causing CNP;
//       alpha = (1-g) alpha every alpha_interval without a CNP (the K timer restarts at
//       each CNP).
//       (With periodic cuts the CNP's alpha update comes first and the later cut uses it.)
//   alpha (AlphaUpdate::kPeriodic): every alpha_interval from the first CNP,
//       alpha = (1-g) alpha + g if a CNP arrived in the slot, else (1-g) alpha. The first
//       CNP sets alpha = initial_alpha and does not count in a slot (as HPCC's simulator).
//   increase event (every rate_increase_timer: T event; every byte_counter bytes sent: BC
//   event), classified with the stage counters as they were BEFORE the event, then the
//   event's counter is incremented:
//       with a byte counter:  max(T, BC) < F -> fast recovery; min(T, BC) >= F -> hyper;
//                             otherwise -> additive          (paper: F stages of FR)
//       timer only (B = 0):   T < F -> fast recovery; T == F -> additive; T > F -> hyper
//                             (HPCC simulator's RateIncEventMlx)
//       fast recovery: R_C = (R_T + R_C) / 2
//       additive:      R_T = min(line, R_T + R_AI);  R_C = (R_T + R_C) / 2
//       hyper:         R_T = min(line, R_T + R_HAI); R_C = (R_T + R_C) / 2
//   A gap R_T - R_C below 1 bit/s is closed (halving alone never closes it). The increase
//   timer stops once R_C = R_T = line rate (further increases would change nothing), and
//   restarts at the next cut. Nothing runs before the first CNP.
//
// Time: every entry point takes `now` (ns) and first processes every timer due at or
// before `now`, in time order, at its own scheduled time; so a late on_timer() call gives
// the same result as a punctual one. Alpha ticks are applied lazily (closed form
// alpha (1-g)^n) and never appear in next_deadline(); rate-changing timers do.
// Rates are double bit/s. Not thread-safe: one owner (the NIC's lcore) per QP.
#pragma once

#include <cstdint>

#include "common/time_ns.h"
#include "nic/dcqcn/dcqcn_params.h"

namespace rocemu::dcqcn {

enum class IncreaseStage : uint8_t { kFastRecovery, kAdditive, kHyper };

struct RpCounters {
  uint64_t cnps = 0;       // CNPs received
  uint64_t rate_cuts = 0;  // decreases applied (< cnps when decreases are periodic)
  uint64_t fast_recovery_steps = 0;
  uint64_t additive_steps = 0;
  uint64_t hyper_steps = 0;
  uint64_t timer_events = 0;
  uint64_t byte_events = 0;
};

class DcqcnRp {
 public:
  /// `cfg` must outlive the RP (one Config is shared by every QP of a port).
  explicit DcqcnRp(const DcqcnConfig& cfg) noexcept;

  /// A CNP for this QP arrived at `now`.
  void on_cnp(TimeNs now) noexcept;
  /// The QP put `bytes` on the wire at `now` (drives the byte counter).
  void on_bytes_sent(uint64_t bytes, TimeNs now) noexcept;
  /// Earliest time a timer changes the rate (kNever if none is armed).
  TimeNs next_deadline() const noexcept;
  /// Processes every timer due at or before `now`. Safe to call at any time.
  void on_timer(TimeNs now) noexcept { advance(now); }
  /// Brings the lazily updated state (alpha ticks) up to `now`; then the accessors below
  /// describe the RP at `now`.
  void advance(TimeNs now) noexcept;

  double rate_bps() const noexcept { return rate_bps_; }
  double target_bps() const noexcept { return target_bps_; }
  double alpha() const noexcept { return alpha_; }
  uint32_t timer_stage() const noexcept { return timer_stage_; }
  uint32_t byte_stage() const noexcept { return byte_stage_; }
  bool congested() const noexcept { return started_; }
  const RpCounters& counters() const noexcept { return counters_; }
  const DcqcnConfig& config() const noexcept { return *cfg_; }

 private:
  void catch_up_alpha(TimeNs t) noexcept;
  void cut(TimeNs t) noexcept;
  void increase(bool byte_event) noexcept;
  IncreaseStage classify() const noexcept;

  const DcqcnConfig* cfg_;
  double rate_bps_;
  double target_bps_;
  double alpha_;
  TimeNs next_increase_ns_ = kNever;
  TimeNs next_decrease_ns_ = kNever;  // armed only while a CNP awaits the periodic cut
  TimeNs alpha_anchor_ns_ = 0;        // alpha ticks at anchor + k * alpha_interval, k >= 1
  int64_t alpha_ticks_done_ = 0;
  TimeNs decrease_anchor_ns_ = 0;  // decrease ticks at anchor + k * interval
  uint64_t bytes_since_event_ = 0;
  uint32_t timer_stage_ = 0;
  uint32_t byte_stage_ = 0;
  bool started_ = false;            // a CNP has arrived
  bool alpha_cnp_in_slot_ = false;  // kPeriodic: a CNP arrived in the current slot
  bool increased_since_cut_ = false;
  RpCounters counters_;
};

}  // namespace rocemu::dcqcn
