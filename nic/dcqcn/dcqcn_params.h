// dcqcn_params.h — DCQCN parameters: TOML Params -> validated, line-rate-scaled Config.
//
// Follows DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
// SIGCOMM 2015, section 3 and the RP/NP algorithms) and the Mellanox/ConnectX-style variant
// used by HPCC's ns-3 simulator (Li et al., SIGCOMM 2019): periodic alpha update, periodic
// rate-decrease check, timer-only rate increase. One Params type covers both; the two
// profiles in configs/dcqcn/ set it up either way.
//
// Units are in the names: _us microseconds, _ns nanoseconds, _kb KiB (1024 bytes), _mbps
// 1e6 bit/s, _gbps 1e9 bit/s, _bps bit/s. Rates in Config are doubles in bit/s.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/config.h"
#include "common/telemetry.h"
#include "common/time_ns.h"

namespace rocemu::dcqcn {

/// How alpha (the RP's congestion estimate) is updated.
enum class AlphaUpdate : uint8_t {
  /// DCQCN paper: alpha = (1-g) alpha + g at each CNP; alpha = (1-g) alpha each
  /// alpha_interval without a CNP (the K timer restarts at every CNP).
  kOnCnp,
  /// ConnectX / HPCC simulator: every alpha_interval, alpha = (1-g) alpha + g if at least one
  /// CNP arrived during the slot, else alpha = (1-g) alpha. Slots start at the first CNP.
  kPeriodic,
};

/// Raw parameters as written in the `[dcqcn]` TOML table (see docs/dcqcn.md for ranges).
struct DcqcnParams {
  // NP (notification point, the receiver of CE-marked packets).
  int64_t cnp_interval_us = 50;  // at most one CNP per flow per interval (0: every CE)
  int64_t cnp_dscp = 48;         // DSCP of CNPs (ConnectX default roce_np cnp_dscp)
  int64_t cnp_priority = 6;      // traffic class / PFC priority of CNPs (high priority)
  // RP (reaction point, the sender).
  double g = 1.0 / 256;        // alpha gain
  double initial_alpha = 1.0;  // alpha at the first CNP
  AlphaUpdate alpha_update = AlphaUpdate::kOnCnp;
  int64_t alpha_interval_us = 55;         // K
  int64_t rate_decrease_interval_us = 0;  // 0: cut at each CNP; > 0: periodic check
  int64_t rate_increase_timer_us = 55;    // T
  int64_t byte_counter_kb = 10 * 1024;    // B (0: timer-only increase)
  int64_t fast_recovery_stages = 5;       // F
  double rate_ai_mbps = 40;               // R_AI
  double rate_hai_mbps = 400;             // R_HAI
  double min_rate_mbps = 100;             // floor of R_C
  double rate_reference_gbps = 0;         // > 0: R_AI, R_HAI scaled by line_rate / reference
  bool clamp_target_rate = true;          // R_T = R_C on every cut (false: not on a cut that
                                          // follows a cut before any timer stage, as ConnectX)
  // Optional window, enforced by the RoCE host (RoceHost::set_window_bytes).
  int64_t window_kb = 0;  // in-flight byte limit (0: no window)
};

/// Validated configuration for one NIC port of `line_rate_bps`; rates are bit/s.
struct DcqcnConfig {
  uint64_t line_rate_bps = 0;
  TimeNs cnp_interval_ns = 0;
  uint8_t cnp_dscp = 48;
  uint8_t cnp_priority = 6;
  double g = 1.0 / 256;
  double initial_alpha = 1.0;
  AlphaUpdate alpha_update = AlphaUpdate::kOnCnp;
  TimeNs alpha_interval_ns = 0;
  TimeNs rate_decrease_interval_ns = 0;
  TimeNs rate_increase_timer_ns = 0;
  uint64_t byte_counter_bytes = 0;
  uint32_t fast_recovery_stages = 5;
  double rate_ai_bps = 0;
  double rate_hai_bps = 0;
  double min_rate_bps = 0;
  bool clamp_target_rate = true;
  uint64_t window_bytes = 0;
};

/// Reads every key of the `[dcqcn]` table behind `r` (absent keys keep their defaults) and
/// records every problem (type, range, unknown or removed key, cross-field) in r.errors().
/// Calls r.finish(). Setup time only.
DcqcnParams parse_dcqcn_params(ConfigReader& r);

/// Builds the Config for a port of `line_rate_bps`, scaling R_AI/R_HAI when
/// rate_reference_gbps > 0. Throws ConfigError if min_rate exceeds the line rate or the
/// line rate is 0. Setup time only.
DcqcnConfig make_dcqcn_config(const DcqcnParams& p, uint64_t line_rate_bps);

/// Reads an `[ecn]` reference table (kmin_kb, kmax_kb, pmax — the switch's key names) into
/// an EcnSetting, recording problems in r.errors(). Calls r.finish().
EcnSetting parse_ecn_reference(ConfigReader& r);

/// A profile file: its `[dcqcn]` table and, when present, the `[ecn]` thresholds it was
/// designed for (they belong to the switch; carried here for reference and for tests).
struct DcqcnProfile {
  DcqcnParams dcqcn;
  std::optional<EcnSetting> ecn;
};

/// Parses a profile file (missing `[dcqcn]` = defaults; any other top-level key is an
/// error). Throws ConfigError listing every problem, prefixed with the file name.
DcqcnProfile load_dcqcn_profile(const std::string& path);

const char* alpha_update_name(AlphaUpdate a) noexcept;

}  // namespace rocemu::dcqcn
