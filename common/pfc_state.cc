// pfc_state.cc — the pfc_watchdog table of [switch] and [nic] (see pfc_state.h).
#include "common/pfc_state.h"

#include "common/config.h"

namespace rocemu {

PfcWatchdog parse_pfc_watchdog(ConfigReader& w, const std::vector<std::string>& actions) {
  PfcWatchdog wd;
  const bool enabled = w.boolean("enabled", true);
  // SONiC's defaults: 200 ms detection, 200 ms restoration.
  const double detection_ms = w.number("detection_ms", 200, 0.001, 60'000);
  const double restore_ms = w.number("restore_ms", 200, 0.001, 60'000);
  const std::string action = w.string("action", actions.front(), actions);
  w.finish();
  if (!enabled) return wd;
  wd.detection_ns = static_cast<TimeNs>(detection_ms * 1e6);
  wd.restore_ns = static_cast<TimeNs>(restore_ms * 1e6);
  wd.drop = action == "drop";
  return wd;
}

}  // namespace rocemu
