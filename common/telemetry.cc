// telemetry.cc — validation and names for the shared telemetry/control types.
#include "common/telemetry.h"

#include <cmath>
#include <string>

#include "common/config.h"

namespace rocemu {

std::string EcnSetting::validate() const {
  if (kmin_bytes > kmax_bytes) {
    return "kmin_bytes=" + std::to_string(kmin_bytes) + " exceeds kmax_bytes=" +
           std::to_string(kmax_bytes);
  }
  if (!(pmax > 0.0 && pmax <= 1.0) || std::isnan(pmax)) {
    return "pmax=" + format_number(pmax) + " not in (0, 1]";
  }
  return {};
}

const char* drop_reason_name(DropReason r) noexcept {
  switch (r) {
    case DropReason::kNoRoute: return "no_route";
    case DropReason::kMalformed: return "malformed";
    case DropReason::kBufferFull: return "buffer_full";
    case DropReason::kHeadroomFull: return "headroom_full";
    case DropReason::kTtlExpired: return "ttl_expired";
    case DropReason::kPfcWatchdog:
      return "pfc_watchdog";
    case DropReason::kCount: break;
  }
  return "unknown";
}

}  // namespace rocemu
