// progress.cc — progress line decisions and formatting (progress.h).
#include "fabric/workload/progress.h"

#include <algorithm>
#include <cstdio>

namespace rocemu::workload {

std::optional<std::string> Progress::update(TimeNs sim_now_ns, uint64_t flows_done,
                                            TimeNs wall_elapsed_ns) {
  if (wall_elapsed_ns - last_print_wall_ns_ < min_interval_ns_) return std::nullopt;
  last_print_wall_ns_ = wall_elapsed_ns;
  return format(sim_now_ns, flows_done, wall_elapsed_ns);
}

TimeNs Progress::estimate_left_ns(TimeNs sim_now_ns, TimeNs wall_elapsed_ns) const noexcept {
  const TimeNs done = sim_now_ns - sim_start_ns_;
  if (done <= 0 || wall_elapsed_ns <= 0) return -1;
  const TimeNs left = std::max<TimeNs>(0, sim_end_ns_ - sim_now_ns);
  return static_cast<TimeNs>(static_cast<double>(wall_elapsed_ns) * static_cast<double>(left) /
                             static_cast<double>(done));
}

std::string Progress::format(TimeNs sim_now_ns, uint64_t flows_done, TimeNs wall_elapsed_ns) const {
  const double span = static_cast<double>(sim_end_ns_ - sim_start_ns_);
  const double pct =
      span > 0 ? 100.0 * static_cast<double>(sim_now_ns - sim_start_ns_) / span : 100.0;
  const TimeNs left = estimate_left_ns(sim_now_ns, wall_elapsed_ns);
  char eta[48];
  if (left < 0) {
    std::snprintf(eta, sizeof eta, "time left unknown");
  } else {
    std::snprintf(eta, sizeof eta, "~%.1f s left", static_cast<double>(left) / 1e9);
  }
  char buf[192];
  std::snprintf(buf, sizeof buf, "sim %.3f ms / %.3f ms (%.1f%%), %llu flows done, wall %.1f s, %s",
                static_cast<double>(sim_now_ns) / 1e6, static_cast<double>(sim_end_ns_) / 1e6, pct,
                static_cast<unsigned long long>(flows_done),
                static_cast<double>(wall_elapsed_ns) / 1e9, eta);
  return buf;
}

}  // namespace rocemu::workload
