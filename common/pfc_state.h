// pfc_state.h — 802.1Qbb priority flow control: frame build/parse and the receive-side
// pause state a port obeys. Shared by the soft switch (switchsw/) and the RoCEv2 NIC (nic/).
//
// IEEE 802.1Qbb clause 36 / 802.3 Annex 31D: a PFC frame is a MAC control frame (ethertype
// 0x8808, dst 01:80:C2:00:00:01) with opcode 0x0101, a class-enable vector (bit i set = the
// quanta for priority i are valid) and eight 16-bit pause times in quanta of 512 bit times at
// the receiving port's speed. A valid quanta of 0 resumes the priority at once (XON).
// Units: TimeNs nanoseconds, rate in bits per second. Header-only, no allocation, noexcept.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/telemetry.h"
#include "common/time_ns.h"
#include "common/wire.h"

namespace rocemu {

inline constexpr uint32_t kPfcFrameBytes = sizeof(wire::Ethernet) + sizeof(wire::PfcFrame);  // 60
inline constexpr uint64_t kPfcQuantumBits = 512;

/// Pause duration of `quanta` at a port of `rate_bps` (quanta x 512 bit times), rounded up.
constexpr TimeNs pfc_quanta_ns(uint16_t quanta, uint64_t rate_bps) noexcept {
  return serialization_ns(uint64_t{quanta} * kPfcQuantumBits / kBitsPerByte, rate_bps);
}

/// Writes a 60-byte PFC frame at `buf` from `src_mac`: priorities in `class_enable` get
/// `quanta[i]` (0 = XON). Caller provides >= kPfcFrameBytes bytes.
inline void write_pfc_frame(uint8_t* buf, const uint8_t* src_mac, uint16_t class_enable,
                            const std::array<uint16_t, kNumPriorities>& quanta) noexcept {
  auto* eth = reinterpret_cast<wire::Ethernet*>(buf);
  std::memcpy(eth->dst, wire::kPfcDstMac.data(), 6);
  std::memcpy(eth->src, src_mac, 6);
  eth->set_ethertype(wire::kEtherTypeMacControl);
  auto* pfc = reinterpret_cast<wire::PfcFrame*>(buf + sizeof(wire::Ethernet));
  std::memset(pfc, 0, sizeof(*pfc));
  pfc->set_opcode(wire::kPfcOpcode);
  pfc->set_class_enable(class_enable & 0xff);
  for (int i = 0; i < kNumPriorities; ++i)
    pfc->set_quanta(i, (class_enable >> i) & 1 ? quanta[i] : 0);
}

/// The PFC body of a frame of `len` bytes at `data`, or nullptr if it is not a PFC frame
/// (not MAC control, wrong opcode, or too short).
inline const wire::PfcFrame* parse_pfc_frame(const uint8_t* data, uint32_t len) noexcept {
  if (len < kPfcFrameBytes) return nullptr;
  const auto* eth = reinterpret_cast<const wire::Ethernet*>(data);
  if (eth->ethertype() != wire::kEtherTypeMacControl) return nullptr;
  const auto* pfc = reinterpret_cast<const wire::PfcFrame*>(data + sizeof(wire::Ethernet));
  if (pfc->opcode() != wire::kPfcOpcode) return nullptr;
  return pfc;
}

/// PFC watchdog (as commodity switches run it, e.g. SONiC's): a priority whose queue has had
/// packets waiting while paused, without a break, for `detection_ns` is in a *storm*; its
/// pauses are then ignored for `restore_ns` (PFC frames received meanwhile are counted and
/// ignored) and the queue forwards, or with `drop` discards what it holds and what arrives;
/// after that pauses are obeyed again and detection restarts.
/// detection_ns = 0: off (every pause is obeyed for as long as it lasts).
struct PfcWatchdog {
  TimeNs detection_ns = 0;
  TimeNs restore_ns = 0;
  bool drop = false;  // action "drop" (else "forward")
  bool on() const noexcept { return detection_ns > 0; }
};

class ConfigReader;
/// Reads a pfc_watchdog table (`enabled` true, `detection_ms` 200, `restore_ms` 200 — SONiC's
/// defaults —, `action` one of `actions`, "forward" first); problems go to w.errors(); calls
/// w.finish(). The switch accepts "forward" and "drop", the NIC "forward" only.
PfcWatchdog parse_pfc_watchdog(ConfigReader& w, const std::vector<std::string>& actions);

/// Receive side of PFC on one port: which priorities of the port's egress are paused, until
/// when, and for how long in total, and the port's PFC watchdog. One instance per port;
/// single-threaded.
class PfcPauseState {
 public:
  void set_watchdog(const PfcWatchdog& w) noexcept { wd_ = w; }
  const PfcWatchdog& watchdog() const noexcept { return wd_; }

  /// The watchdog's look at `now`, before the port picks a queue: `waiting` has bit i set if
  /// priority i has packets queued. Starts a storm on each priority paused with packets for
  /// detection_ns; returns the priorities whose storm began now. No-op when off.
  uint8_t watch(uint8_t waiting, TimeNs now) noexcept {
    if (!wd_.on()) return 0;
    uint8_t began = 0;
    for (int i = 0; i < kNumPriorities; ++i) {
      if (!((waiting >> i) & 1) || !paused(i, now)) {
        blocked_since_[i] = kNever;
        continue;
      }
      if (blocked_since_[i] == kNever) blocked_since_[i] = now;
      if (now - blocked_since_[i] < wd_.detection_ns) continue;
      close_interval(i, now);
      until_[i] = now;  // the pause in force is dropped, later ones ignored until restored
      storm_until_[i] = now + wd_.restore_ns;
      blocked_since_[i] = kNever;
      ++storms_[i];
      began = static_cast<uint8_t>(began | (1u << i));
    }
    return began;
  }
  /// True while priority `prio`'s pauses are ignored (a storm's restore time).
  bool in_storm(int prio, TimeNs now) const noexcept { return now < storm_until_[prio]; }
  /// Storms detected on `prio`.
  uint64_t storms(int prio) const noexcept { return storms_[prio]; }

  /// Applies a received PFC frame at `now` on a port of `rate_bps`. Each enabled priority is
  /// paused for its quanta from `now` (replacing any earlier pause) or resumed if quanta 0.
  void on_frame(const wire::PfcFrame& f, uint64_t rate_bps, TimeNs now) noexcept {
    const uint16_t cev = f.class_enable();
    for (int i = 0; i < kNumPriorities; ++i) {
      if (!((cev >> i) & 1)) continue;
      const uint16_t q = f.quanta(i);
      if (q > 0) ++pauses_received_[i];
      if (in_storm(i, now)) continue;  // the watchdog ignores this priority's pauses
      close_interval(i, now);
      until_[i] = now + pfc_quanta_ns(q, rate_bps);
      start_[i] = now;
    }
  }
  /// True if priority `prio` may not transmit at `now`.
  bool paused(int prio, TimeNs now) const noexcept { return now < until_[prio]; }
  /// Bit i set if priority i is paused at `now`.
  uint8_t paused_mask(TimeNs now) const noexcept {
    uint8_t m = 0;
    for (int i = 0; i < kNumPriorities; ++i)
      if (now < until_[i]) m = static_cast<uint8_t>(m | (1u << i));
    return m;
  }
  /// Time the pause of `prio` ends (<= now when not paused).
  TimeNs pause_end(int prio) const noexcept { return until_[prio]; }
  /// The latest pause end over all priorities: nothing is paused at or after it (until a
  /// later frame).
  TimeNs latest_end() const noexcept { return *std::max_element(until_.begin(), until_.end()); }
  /// Earliest pause end after `now` over the priorities in `mask`, or the watchdog's
  /// detection instant of one of them if sooner; kNever if none paused.
  TimeNs next_expiry(uint8_t mask, TimeNs now) const noexcept {
    TimeNs t = kNever;
    for (int i = 0; i < kNumPriorities; ++i) {
      if (!(mask >> i & 1) || until_[i] <= now) continue;
      t = std::min(t, until_[i]);
      if (wd_.on() && blocked_since_[i] != kNever)
        t = std::min(t, std::max(now, blocked_since_[i] + wd_.detection_ns));
    }
    return t;
  }
  /// The instant the watchdog would declare a storm on one of the priorities in `mask` that
  /// are paused with packets waiting (as of the last watch()), or kNever.
  TimeNs detection_at(uint8_t mask) const noexcept {
    TimeNs t = kNever;
    if (!wd_.on()) return t;
    for (int i = 0; i < kNumPriorities; ++i)
      if ((mask >> i & 1) && blocked_since_[i] != kNever)
        t = std::min(t, blocked_since_[i] + wd_.detection_ns);
    return t;
  }
  /// Total time `prio` has been paused up to `now`.
  uint64_t paused_ns(int prio, TimeNs now) const noexcept {
    const TimeNs open = std::min(now, until_[prio]) - start_[prio];
    return acc_ns_[prio] + static_cast<uint64_t>(open > 0 ? open : 0);
  }
  /// XOFF frames (quanta > 0) received for `prio`.
  uint64_t pauses_received(int prio) const noexcept { return pauses_received_[prio]; }

 private:
  void close_interval(int i, TimeNs now) noexcept {
    const TimeNs open = std::min(now, until_[i]) - start_[i];
    if (open > 0) acc_ns_[i] += static_cast<uint64_t>(open);
  }
  std::array<TimeNs, kNumPriorities> until_{};
  std::array<TimeNs, kNumPriorities> start_{};
  std::array<uint64_t, kNumPriorities> acc_ns_{};
  std::array<uint64_t, kNumPriorities> pauses_received_{};
  PfcWatchdog wd_;
  std::array<TimeNs, kNumPriorities> blocked_since_ = filled(kNever);
  std::array<TimeNs, kNumPriorities> storm_until_{};
  std::array<uint64_t, kNumPriorities> storms_{};
  static constexpr std::array<TimeNs, kNumPriorities> filled(TimeNs v) noexcept {
    std::array<TimeNs, kNumPriorities> a{};
    a.fill(v);
    return a;
  }
};

}  // namespace rocemu
