// pacer.h — per-QP rate limiter and the scheduler over the QPs of one NIC port.
//
// Each QP is released at its own rate (DCQCN's R_C, as hardware rate limiters do; DCQCN
// paper section 3.1 "RP"), and the QPs of a port share its wire fairly: among the QPs that
// have data and are eligible, the one with the earliest eligible time goes first; ties go
// to the QP served least recently, which is round robin when all tie (earliest-eligible-
// time first, as in virtual-clock / WF2Q-style schedulers). A pointer-based round robin
// was tried first and favoured the QPs right after a rate-limited one.
//
// Rate limiting: after a frame of b bytes the QP's next eligible time moves b*8/rate later,
// counted from max(previous eligible time, now - burst/rate - 999 ps), i.e. a QP may bank
// up to `burst_bytes` of credit while idle or when the caller comes back late (real time:
// the poll loop is not punctual). The 999 ps make a caller that comes back at the rounded-
// up next_eligible_ns() lose nothing; burst 0 = otherwise strict spacing.
// Internally time is in picoseconds (int64: 106 days) so the spacing of a 1 KiB frame at
// 100 Gbps (81.92 ns) accumulates without rounding drift; the API is in ns.
// The caller never busy-waits: next_eligible_ns() says when to come back.
// Slots are allocated at construction (setup time); no allocation afterwards. Not
// thread-safe: owned by the NIC's lcore.
#pragma once

#include <cstdint>
#include <vector>

#include "common/time_ns.h"

namespace rocemu::dcqcn {

class Pacer {
 public:
  /// `max_qps` slots, all inactive at rate `initial_rate_bps` (> 0).
  Pacer(uint32_t max_qps, uint64_t initial_rate_bps, uint64_t burst_bytes);

  /// Sets QP `qp`'s rate (bit/s, >= 1) at `now`. A wait still running is rescaled: the part
  /// of the last frame not yet paid for at `now` is paid at the new rate (a token bucket
  /// whose fill rate changes), so a rate rise takes effect at once.
  void set_rate(uint32_t qp, uint64_t rate_bps, TimeNs now) noexcept;
  /// Returns slot `qp` to its initial state: inactive, rate `rate_bps`, no history.
  void reset_slot(uint32_t qp, uint64_t rate_bps) noexcept;
  /// Marks whether `qp` has something to send (only active QPs are picked and counted in
  /// next_eligible_ns()).
  void set_active(uint32_t qp, bool has_data) noexcept;
  /// True if `qp` may put a frame on the wire at `now` (ignores the active flag).
  bool may_send(uint32_t qp, TimeNs now) const noexcept;
  /// `qp` sent a frame of `bytes` at `now`: moves its eligible time.
  void on_sent(uint32_t qp, uint32_t bytes, TimeNs now) noexcept;
  /// The active QP to serve at `now` (earliest eligible first, least recently served among
  /// ties), or -1 if none is eligible. Does not consume anything: call on_sent() after
  /// sending.
  int32_t pick(TimeNs now) noexcept;

  /// When `qp` becomes eligible (ns, rounded up).
  TimeNs next_eligible_ns(uint32_t qp) const noexcept;
  /// Earliest time any active QP becomes eligible; kNever if none is active.
  TimeNs next_eligible_ns() const noexcept;

  uint64_t rate_bps(uint32_t qp) const noexcept { return slots_[qp].rate_bps; }
  bool active(uint32_t qp) const noexcept { return slots_[qp].active; }
  uint32_t size() const noexcept { return static_cast<uint32_t>(slots_.size()); }

 private:
  // Per-rate values are computed when the rate changes, so the per-frame path (pick,
  // on_sent) has no division: spacing = bytes * ps_per_byte_q32 >> 32.
  struct Slot {
    int64_t next_ps = 0;          // eligible time in ps
    int64_t floor_offset_ps = 0;  // burst / rate + 999 ps: how far credit may lag `now`
    uint64_t served_seq = 0;      // value of sends_ when this QP last sent
    bool active = false;
    uint64_t rate_bps = 1;
    unsigned __int128 ps_per_byte_q32 = 0;  // 8e12 / rate in 32.32 fixed point
  };
  void set_slot_rate(Slot& s, uint64_t rate_bps) const noexcept;
  static int64_t spacing_ps(const Slot& s, uint64_t bytes) noexcept;
  /// Earliest eligible time `s` can have at `now_ps`: banked credit is capped.
  static int64_t credit_floor_ps(const Slot& s, int64_t now_ps) noexcept {
    return now_ps - s.floor_offset_ps;
  }

  std::vector<Slot> slots_;
  uint64_t burst_bytes_;
  uint64_t sends_ = 0;
};

}  // namespace rocemu::dcqcn
