// switch_params.h — every knob of the soft switch, read from the [switch] TOML table.
//
// Params (TOML) -> validated here -> the SoftSwitch derives per-port state (headroom from
// link rate x delay, ECN thresholds scaled by port bandwidth). Layout (docs/switch.md):
//   [switch]              buffer, reserve, alpha, headroom, PFC, scheduler, classes
//   [[switch.classes]]    name, priority, dscp = [...], lossless | control, weight
//   [switch.ecn]          kmin_kb, kmax_kb, pmax, scale = "none" | "bandwidth",
//                         reference_gbps (thresholds x port_gbps / reference_gbps)
//   [[switch.ecn.ports]]  per-port override: port, kmin_kb, kmax_kb, pmax (not scaled)
// A profile from configs/ecn/ can be named with `ecn_profile = "path"` instead of
// [switch.ecn]. Units: sizes in the TOML are KB (1024 B) or bytes as named; rates in Gbps.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/pfc_state.h"
#include "common/telemetry.h"

namespace rocemu::sw {

struct ClassParams {
  std::string name;
  int priority = 0;
  std::vector<int> dscp;
  bool lossless = false;  // PFC on this priority (if [switch].pfc)
  bool control = false;   // strict priority over all data queues; never ECN-marked
  uint32_t weight = 1;    // DWRR weight among data queues
};

struct EcnParams {
  bool enabled = true;
  double kmin_kb = 5;  // DCQCN paper defaults
  double kmax_kb = 200;
  double pmax = 0.01;
  bool scale_with_bandwidth = false;
  double reference_gbps = 25;
};

struct EcnPortOverride {
  uint16_t port = 0;
  EcnSetting setting;
};

struct SwitchParams {
  uint64_t buffer_bytes = 32ull << 20;
  uint32_t reserve_bytes = 4 * 1024;         // per ingress (port, priority)
  double alpha = 1.0 / 8;                    // ingress dynamic threshold
  double egress_alpha = 1.0 / 8;             // lossy egress dynamic threshold
  uint32_t headroom_bytes = 0;               // per (port, lossless priority); 0 = auto
  // Auto headroom = 2 x rate x delay + slack. Slack: what else arrives after XOFF is due:
  // the frame our port is sending ahead of the PFC frame, the one the upstream is sending
  // when it takes effect, and the one that crossed the threshold. kAutoSlack: 3 x the largest
  // frame (max_frame_bytes, at least 1536).
  static constexpr uint32_t kAutoSlack = UINT32_MAX;
  uint32_t headroom_slack_bytes = kAutoSlack;
  // The largest frame on the switch's links: runs set it from [nic] mtu_bytes
  // (max_frame_bytes_for_mtu). 1536 covers the default MTU of 1024.
  uint32_t max_frame_bytes = 1536;
  uint32_t slack_bytes() const noexcept {
    return headroom_slack_bytes != kAutoSlack ? headroom_slack_bytes
                                              : 3 * std::max<uint32_t>(1536, max_frame_bytes);
  }
  uint32_t resume_offset_bytes = 3 * 1024;   // XON hysteresis
  bool pfc = true;
  uint16_t pause_quanta = 0xffff;      // XOFF pause time; refreshed at half of it
  PfcWatchdog pfc_watchdog;            // [switch.pfc_watchdog]; off by default
  int default_priority = 0;            // DSCPs no class names
  int cnp_priority = 6;                // RoCEv2 CNPs (BTH opcode 0x81), whatever their DSCP
  bool acks_to_control = false;        // RC ACK/NAK (opcode 0x11) also to cnp_priority
  std::string scheduler = "dwrr";      // "dwrr" or "rr" among data queues
  uint32_t dwrr_quantum_bytes = 9216;  // x class weight; >= the largest frame
  std::vector<ClassParams> classes = default_classes();
  EcnParams ecn;
  std::vector<EcnPortOverride> ecn_ports;

  static std::vector<ClassParams> default_classes() {
    return {ClassParams{"rdma", 3, {26}, true, false, 1},
            ClassParams{"control", 6, {48}, false, true, 1}};
  }

  /// Bit i set if priority i is lossless (PFC) with these params.
  uint8_t lossless_mask() const noexcept;
  /// Bit i set if priority i is a strict-priority control queue.
  uint8_t control_mask() const noexcept;
  /// Priority of each DSCP value.
  std::array<uint8_t, 64> dscp_map() const noexcept;
  /// ECN setting of `port` on a link of `rate_bps` (override, else scaled profile).
  EcnSetting ecn_for_port(uint16_t port, uint64_t rate_bps) const noexcept;
};

/// Reads a [switch] table: `r` is a reader over that table (e.g. *root.table("switch")).
/// Every problem goes to r.errors() as `switch.key=value: reason (line N)`; calls r.finish().
/// `source`: the run file's path, against which a relative ecn_profile is also looked up.
SwitchParams parse_switch_params(ConfigReader& r, const std::string& source = "");

/// The largest RoCEv2 frame of a path MTU (payload) of `mtu_bytes`: every header a frame
/// may carry (Ethernet, IPv6, UDP, BTH, RETH, ImmDt, ICRC: 98 bytes) rounded up to 128.
constexpr uint32_t max_frame_bytes_for_mtu(uint32_t mtu_bytes) noexcept { return mtu_bytes + 128; }

/// The [ecn] table of the ECN profile file named by string `key` of `r` (configs/ecn/*.toml;
/// a relative path is looked up in the working directory, then beside `source`, the run
/// file); problems are reported on `r` under `key` (nullopt then).
std::optional<EcnParams> read_ecn_profile(ConfigReader& r, std::string_view key,
                                          const std::string& source = "");
/// The setting of `ecn` on a port of `rate_bps` (thresholds x rate / reference when scaled).
EcnSetting scaled_ecn(const EcnParams& ecn, uint64_t rate_bps) noexcept;

}  // namespace rocemu::sw
