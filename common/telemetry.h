// telemetry.h — the types the switch publishes and the congestion-control agent consumes.
//
// The switch fills a PortCounters per egress port; the agent reads snapshots of them at an
// interval and answers with one EcnSetting per port. Both live here so that switchsw/ and
// agent/ depend only on common/. Counters are cumulative since start (the agent takes
// differences between snapshots); queue bytes are instantaneous. Units in names.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/time_ns.h"

namespace rocemu {

inline constexpr int kNumPriorities = 8;

/// RED-ECN thresholds of one egress port (all data queues of the port).
struct EcnSetting {
  uint32_t kmin_bytes = 5 * 1024;
  uint32_t kmax_bytes = 200 * 1024;
  double pmax = 0.01;

  /// Empty string if valid, else the reason (kmin <= kmax, pmax in (0, 1]).
  std::string validate() const;
  bool operator==(const EcnSetting&) const = default;
};

enum class DropReason : uint8_t {
  kNoRoute = 0,
  kMalformed,
  kBufferFull,    // lossy class over its shared limit / total buffer exhausted
  kHeadroomFull,  // lossless class with headroom exhausted
  kTtlExpired,
  kPfcWatchdog,  // the PFC watchdog's drop action, during a storm
  kCount
};
inline constexpr int kNumDropReasons = static_cast<int>(DropReason::kCount);
const char* drop_reason_name(DropReason r) noexcept;

/// Cumulative counters of one switch port (its egress side unless named rx_/ingress).
struct PortCounters {
  uint64_t tx_bytes = 0;
  uint64_t tx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t rx_packets = 0;
  uint64_t ecn_marked_packets = 0;
  uint64_t ecn_marked_bytes = 0;
  std::array<uint64_t, kNumDropReasons> drops{};
  std::array<uint32_t, kNumPriorities> queue_bytes{};       // instantaneous, per egress queue
  std::array<uint32_t, kNumPriorities> peak_queue_bytes{};  // since start
  std::array<uint64_t, kNumPriorities> pfc_pauses_sent{};   // PAUSE frames this port sent
  std::array<uint64_t, kNumPriorities> pfc_pauses_received{};
  std::array<uint64_t, kNumPriorities> paused_ns{};         // time this port's egress queue was paused
  std::array<uint64_t, kNumPriorities> pfc_storms{};        // PFC watchdog: storms detected
  uint64_t mbuf_alloc_failures = 0;  // PFC frames the port could not build (pool empty; retried)

  uint64_t total_queue_bytes() const noexcept {
    uint64_t s = 0;
    for (auto q : queue_bytes) s += q;
    return s;
  }
  uint64_t total_drops() const noexcept {
    uint64_t s = 0;
    for (auto d : drops) s += d;
    return s;
  }
};

/// A consistent snapshot of every port of one switch at time `at_ns`.
struct SwitchSnapshot {
  TimeNs at_ns = 0;
  uint32_t node = 0;                  // topology node index of the switch
  std::vector<uint64_t> port_rate_bps;  // capacity of each port's link
  std::vector<EcnSetting> ecn;          // setting in force on each port
  std::vector<PortCounters> ports;
};

}  // namespace rocemu
