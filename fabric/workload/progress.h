// progress.h — a progress line for long runs: simulated time, flows finished, time left.
//
// Pure logic: the engine passes simulated time, flows finished and wall time elapsed (both
// clocks are the caller's); Progress decides whether a line is due (at most one per
// `min_interval_ns` of wall time) and formats it. Time left is extrapolated linearly from
// the simulated-time fraction done: left = wall_elapsed * (end - now) / (now - start).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/time_ns.h"

namespace rocemu::workload {

class Progress {
 public:
  /// The run covers simulated [sim_start_ns, sim_end_ns]; lines at most once per
  /// `min_interval_ns` of wall time (default 5 s).
  Progress(TimeNs sim_start_ns, TimeNs sim_end_ns, TimeNs min_interval_ns = 5 * kNsPerSec) noexcept
      : sim_start_ns_(sim_start_ns), sim_end_ns_(sim_end_ns), min_interval_ns_(min_interval_ns) {}

  /// A line to print now, or nothing if the last one was less than the interval ago (the
  /// first line comes one interval into the run). Cheap when it returns nothing, so the
  /// engine may call it every loop iteration.
  std::optional<std::string> update(TimeNs sim_now_ns, uint64_t flows_done, TimeNs wall_elapsed_ns);
  /// The line itself, e.g. "sim 12.500 ms / 25.000 ms (50.0%), 1234 flows done, wall 3.2 s,
  /// ~3.2 s left".
  std::string format(TimeNs sim_now_ns, uint64_t flows_done, TimeNs wall_elapsed_ns) const;
  /// Estimated wall time left in ns; -1 when nothing can be extrapolated yet.
  TimeNs estimate_left_ns(TimeNs sim_now_ns, TimeNs wall_elapsed_ns) const noexcept;

 private:
  TimeNs sim_start_ns_;
  TimeNs sim_end_ns_;
  TimeNs min_interval_ns_;
  TimeNs last_print_wall_ns_ = 0;
};

}  // namespace rocemu::workload
