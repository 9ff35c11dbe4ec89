// log.h — spdlog set-up shared by every binary.
//
// One logger (spdlog's default) writing to stderr with a level chosen by --log-level or
// ROCEMU_LOG. Never call it per packet: the data path counts events and logs at most at a
// rate-limited interval (see RateLimitedLog).
#pragma once

#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "common/time_ns.h"

namespace rocemu {

/// Sets the default logger's level from `level` ("trace", "debug", "info", "warn", "error",
/// "critical", "off"); returns false (and leaves the level) if the name is unknown. If
/// `level` is empty, uses $ROCEMU_LOG or "info".
bool setup_logging(std::string_view level);

/// At most one message per `interval_ns` (in the caller's time base); counts what it skips.
class RateLimitedLog {
 public:
  explicit RateLimitedLog(TimeNs interval_ns = kNsPerSec) noexcept : interval_ns_(interval_ns) {}
  /// True if the caller may log now; `suppressed()` then tells how many were skipped.
  bool allow(TimeNs now) noexcept {
    if (now - last_ns_ >= interval_ns_ || last_ns_ == kNever) {
      last_ns_ = now;
      last_suppressed_ = suppressed_;
      suppressed_ = 0;
      return true;
    }
    ++suppressed_;
    return false;
  }
  uint64_t suppressed() const noexcept { return last_suppressed_; }

 private:
  TimeNs interval_ns_;
  TimeNs last_ns_ = kNever;
  uint64_t suppressed_ = 0;
  uint64_t last_suppressed_ = 0;
};

}  // namespace rocemu
