// idle_backoff.h — lets a busy-polling loop give its core away while it has nothing to do.
//
// DPDK poll loops spin at 100% of a core. When more pollers than cores share a machine
// (the veth testbed: a switch process and N host processes on 2 cores), the scheduler
// time-slices them in milliseconds and every frame waits for its receiver's next slice.
// With a backoff, a loop that found nothing to do for `idle_iterations` consecutive
// iterations sleeps until its next known event (a timer deadline, a wire becoming free) or
// for at most `max_sleep_ns`, whichever is sooner: idle pollers then cost nothing and a busy
// one keeps its core. The price is the wake-up latency (tens of microseconds) on the first
// frame after an idle period. max_sleep_ns = 0 turns it off (pure busy polling, the
// default for throughput runs).
//
// The decision (`sleep_for_ns`) is pure and takes `now`; `IdleBackoff::after_iteration`
// applies it with clock_nanosleep. In fabric/, not common/: the layers below (switchsw, nic)
// never sleep; only the loops that drive them (the engines, the tools' endpoints) do.
// Units: ns.
#pragma once

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cstdint>

#include "common/time_ns.h"

namespace rocemu::fabric {

struct IdleBackoffParams {
  TimeNs max_sleep_ns = 0;          // 0: never sleep
  uint32_t idle_iterations = 256;   // consecutive idle iterations before the first sleep
  TimeNs min_sleep_ns = 2 * kNsPerUs;  // shorter sleeps are not worth a system call
};

/// How long a loop that has been idle for `idle_count` iterations should sleep at `now`
/// when its next known event is at `next_event_ns` (kNever: none): 0 while
/// idle_count < idle_iterations, or when the sleep would be shorter than min_sleep_ns;
/// else min(max_sleep_ns, next_event_ns - now).
constexpr TimeNs sleep_for_ns(const IdleBackoffParams& p, uint32_t idle_count, TimeNs now,
                              TimeNs next_event_ns) noexcept {
  if (p.max_sleep_ns <= 0 || idle_count < p.idle_iterations) return 0;
  const TimeNs until_event = next_event_ns == kNever ? p.max_sleep_ns : next_event_ns - now;
  const TimeNs s = std::min(p.max_sleep_ns, until_event);
  return s >= p.min_sleep_ns ? s : 0;
}

class IdleBackoff {
 public:
  explicit IdleBackoff(const IdleBackoffParams& p) noexcept : p_(p) {
    // The default 50 us timer slack would stretch every short sleep; 1 us keeps wake-ups
    // close to the next event. Per thread; harmless if refused.
    if (p_.max_sleep_ns > 0) prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  }

  /// Call once per loop iteration: `busy` = the iteration moved a frame or fired a timer.
  /// Sleeps (returns true) when the loop has been idle long enough; never sleeps past
  /// `next_event_ns`.
  bool after_iteration(bool busy, TimeNs now, TimeNs next_event_ns) noexcept {
    if (busy) {
      idle_ = 0;
      return false;
    }
    ++idle_;
    const TimeNs s = sleep_for_ns(p_, idle_, now, next_event_ns);
    if (s == 0) return false;
    const timespec ts{static_cast<time_t>(s / kNsPerSec), static_cast<long>(s % kNsPerSec)};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
    ++sleeps_;
    return true;
  }

  uint64_t sleeps() const noexcept { return sleeps_; }
  bool enabled() const noexcept { return p_.max_sleep_ns > 0; }

 private:
  IdleBackoffParams p_;
  uint32_t idle_ = 0;
  uint64_t sleeps_ = 0;
};

}  // namespace rocemu::fabric
