// action_table.h — the discrete ECN actions every agent chooses from.
//
// GraphCC (Bernardez et al., "GraphCC: A Practical Graph Learning-based Approach to
// Congestion Control in Datacenters", Sec. 4 "Action space") and ACC (Yan et al., SIGCOMM
// 2021, Sec. 4.2) both pick a RED-ECN triple per egress port from a fixed table:
// Kmin in {2,4,8,16,32} KB, Kmax in {16,32,64,128,256} KB, Pmax in {0.01,0.25,0.5,0.75,1.0},
// every combination with Kmin <= Kmax: 24 threshold pairs x 5 probabilities = 120 actions.
// Units: KB = 1024 bytes; settings are stored in bytes (EcnSetting).
#pragma once

#include <array>
#include <cstdint>

#include "common/telemetry.h"

namespace rocemu::agent {

inline constexpr int kNumActions = 120;
inline constexpr std::array<uint32_t, 5> kKminKb = {2, 4, 8, 16, 32};
inline constexpr std::array<uint32_t, 5> kKmaxKb = {16, 32, 64, 128, 256};
inline constexpr std::array<double, 5> kPmax = {0.01, 0.25, 0.5, 0.75, 1.0};
inline constexpr uint32_t kLargestKmaxBytes = 256 * 1024;

/// The 120 actions, ordered by Kmin, then Kmax, then Pmax (ascending). Index = action id.
const std::array<EcnSetting, kNumActions>& action_table() noexcept;

/// The setting of action `a` (0 <= a < kNumActions).
inline const EcnSetting& action_setting(int a) noexcept { return action_table()[a]; }

/// Action id of `s`, or -1 if `s` is not in the table.
int action_index(const EcnSetting& s) noexcept;

/// FNV-1a hash over every entry (kmin, kmax bytes, pmax bits) in order: a model file trained
/// against another table is refused.
uint64_t action_table_hash() noexcept;

}  // namespace rocemu::agent
