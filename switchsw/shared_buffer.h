// shared_buffer.h — Broadcom-style shared-buffer MMU accounting (no packets, only bytes).
//
// The model HPCC's ns-3 simulator uses (switch-mmu.cc; re-derived here, not copied), after
// Broadcom Trident/Tomahawk "ingress admission with dynamic threshold":
//   buffer = sum of headroom (per port x lossless priority) + reserve (per ingress queue)
//            + shared pool.
// An ingress queue (port, priority) first fills its reserve, then takes from the shared pool
// up to the dynamic threshold T = alpha * (shared pool - shared bytes in use) (Choudhury &
// Hahne, 1998), then — lossless priorities only — fills its headroom. A lossless packet is
// dropped only when headroom is exhausted; a lossy packet when its shared limit is reached.
// PFC: pause when the queue is in headroom or its shared use reaches T; resume when headroom
// is empty and shared use + resume offset <= T (hysteresis). Egress: a lossy egress queue is
// limited by its own dynamic threshold on the same free pool; lossless egress is unlimited
// (the ingress side and PFC bound it). Admission is check / update / release on each side.
// alpha is held in 16.16 fixed point: T = (free * alpha_q16) >> 16, exact for 1/2^k.
// Units: bytes. Single-threaded (the switch's lcore).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/telemetry.h"

namespace rocemu::sw {

struct SharedBufferConfig {
  uint64_t buffer_bytes = 32ull << 20;
  uint32_t reserve_bytes = 4096;          // per ingress (port, priority)
  uint32_t alpha_q16 = 65536 / 8;         // ingress dynamic-threshold alpha, 16.16
  uint32_t egress_alpha_q16 = 65536 / 8;  // lossy egress alpha, 16.16
  uint32_t resume_offset_bytes = 3 * 1024;
  uint8_t lossless_mask = 1u << 3;        // bit i: priority i is lossless (PFC)
  std::vector<uint32_t> headroom_bytes;   // per port, for each lossless priority

  /// Empty if consistent, else the reason (e.g. reserve + headroom exceed the buffer).
  std::string validate() const;
};

enum class Admit : uint8_t { kOk, kBufferFull, kHeadroomFull };

class SharedBuffer {
 public:
  explicit SharedBuffer(SharedBufferConfig cfg);

  const SharedBufferConfig& config() const noexcept { return cfg_; }
  uint16_t num_ports() const noexcept { return num_ports_; }
  bool lossless(int prio) const noexcept { return (cfg_.lossless_mask >> prio) & 1; }

  /// Size of the shared pool: buffer minus all headroom and all reserves.
  uint64_t shared_pool_bytes() const noexcept { return shared_pool_bytes_; }
  uint64_t shared_used_bytes() const noexcept { return shared_used_bytes_; }
  /// Ingress dynamic threshold T = alpha * (shared pool - shared in use).
  uint64_t ingress_threshold() const noexcept {
    return ((shared_pool_bytes_ - shared_used_bytes_) * cfg_.alpha_q16) >> 16;
  }
  uint64_t egress_threshold() const noexcept {
    return ((shared_pool_bytes_ - shared_used_bytes_) * cfg_.egress_alpha_q16) >> 16;
  }

  /// Whether a packet of `bytes` may enter ingress queue (port, prio); no state change.
  Admit ingress_check(uint16_t port, int prio, uint32_t bytes) const noexcept;
  /// Accounts an admitted packet: reserve first, then shared (up to T), then headroom.
  void ingress_update(uint16_t port, int prio, uint32_t bytes) noexcept;
  /// Returns a departed packet's bytes: headroom first, then shared, then reserve.
  void ingress_release(uint16_t port, int prio, uint32_t bytes) noexcept;

  /// Whether a packet may join egress queue (port, prio): lossy queues up to the egress T.
  Admit egress_check(uint16_t port, int prio, uint32_t bytes) const noexcept;
  void egress_update(uint16_t port, int prio, uint32_t bytes) noexcept { egress(port, prio) += bytes; }
  void egress_release(uint16_t port, int prio, uint32_t bytes) noexcept { egress(port, prio) -= bytes; }

  /// PFC: the ingress queue should send XOFF (in headroom or shared use >= T).
  bool should_pause(uint16_t port, int prio) const noexcept;
  /// PFC: a paused ingress queue may send XON (headroom empty, shared + offset <= T).
  bool should_resume(uint16_t port, int prio) const noexcept;

  uint64_t ingress_bytes(uint16_t port, int prio) const noexcept { return q(port, prio).ingress; }
  uint64_t headroom_used_bytes(uint16_t port, int prio) const noexcept { return q(port, prio).headroom; }
  /// Bytes of ingress queue (port, prio) above its reserve (its use of the shared pool).
  uint64_t ingress_shared_bytes(uint16_t port, int prio) const noexcept {
    const auto& s = q(port, prio);
    return s.ingress > cfg_.reserve_bytes ? s.ingress - cfg_.reserve_bytes : 0;
  }
  uint32_t egress_bytes(uint16_t port, int prio) const noexcept {
    return egress_[static_cast<size_t>(port) * kNumPriorities + prio];
  }
  /// All bytes held (ingress view, including headroom).
  uint64_t total_used_bytes() const noexcept { return total_used_bytes_; }

 private:
  struct IngressQueue {
    uint64_t ingress = 0;   // bytes counted in reserve + shared
    uint64_t headroom = 0;  // bytes counted in headroom
  };
  IngressQueue& q(uint16_t port, int prio) noexcept {
    return ingress_[static_cast<size_t>(port) * kNumPriorities + prio];
  }
  const IngressQueue& q(uint16_t port, int prio) const noexcept {
    return ingress_[static_cast<size_t>(port) * kNumPriorities + prio];
  }
  uint32_t& egress(uint16_t port, int prio) noexcept {
    return egress_[static_cast<size_t>(port) * kNumPriorities + prio];
  }

  SharedBufferConfig cfg_;
  uint16_t num_ports_;
  uint64_t shared_pool_bytes_ = 0;
  uint64_t shared_used_bytes_ = 0;
  uint64_t total_used_bytes_ = 0;
  std::vector<IngressQueue> ingress_;
  std::vector<uint32_t> egress_;
};

// Per-packet operations, inline: they run several times per packet on the hot path.

inline Admit SharedBuffer::ingress_check(uint16_t port, int prio, uint32_t bytes) const noexcept {
  const IngressQueue& s = q(port, prio);
  const uint64_t after = s.ingress + bytes;
  if (after <= cfg_.reserve_bytes) return Admit::kOk;
  const uint64_t shared_after = after - cfg_.reserve_bytes;
  if (shared_after <= ingress_threshold()) return Admit::kOk;
  if (!lossless(prio)) return Admit::kBufferFull;
  if (s.headroom + bytes > cfg_.headroom_bytes[port]) return Admit::kHeadroomFull;
  return Admit::kOk;
}

inline void SharedBuffer::ingress_update(uint16_t port, int prio, uint32_t bytes) noexcept {
  IngressQueue& s = q(port, prio);
  total_used_bytes_ += bytes;
  const uint64_t after = s.ingress + bytes;
  if (after <= cfg_.reserve_bytes) {
    s.ingress = after;
    return;
  }
  const uint64_t shared_after = after - cfg_.reserve_bytes;
  if (shared_after > ingress_threshold()) {
    s.headroom += bytes;  // only reachable for lossless queues (ingress_check refused lossy)
    return;
  }
  shared_used_bytes_ += std::min<uint64_t>(bytes, shared_after);
  s.ingress = after;
}

inline void SharedBuffer::ingress_release(uint16_t port, int prio, uint32_t bytes) noexcept {
  IngressQueue& s = q(port, prio);
  total_used_bytes_ -= bytes;
  const uint64_t from_headroom = std::min<uint64_t>(s.headroom, bytes);
  const uint64_t rest = bytes - from_headroom;
  const uint64_t shared = s.ingress > cfg_.reserve_bytes ? s.ingress - cfg_.reserve_bytes : 0;
  shared_used_bytes_ -= std::min(rest, shared);
  s.headroom -= from_headroom;
  s.ingress -= rest;
}

inline Admit SharedBuffer::egress_check(uint16_t port, int prio, uint32_t bytes) const noexcept {
  if (lossless(prio)) return Admit::kOk;
  const uint64_t after = uint64_t{egress_bytes(port, prio)} + bytes;
  if (after <= cfg_.reserve_bytes || after <= egress_threshold()) return Admit::kOk;
  return Admit::kBufferFull;
}

inline bool SharedBuffer::should_pause(uint16_t port, int prio) const noexcept {
  const uint64_t shared = ingress_shared_bytes(port, prio);
  return q(port, prio).headroom > 0 || (shared > 0 && shared >= ingress_threshold());
}

inline bool SharedBuffer::should_resume(uint16_t port, int prio) const noexcept {
  if (q(port, prio).headroom > 0) return false;
  const uint64_t shared = ingress_shared_bytes(port, prio);
  return shared == 0 || shared + cfg_.resume_offset_bytes <= ingress_threshold();
}

}  // namespace rocemu::sw
