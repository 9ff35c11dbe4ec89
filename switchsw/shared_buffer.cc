// shared_buffer.cc — ingress/egress admission and PFC thresholds of the shared-buffer MMU.
// See shared_buffer.h for the model (HPCC switch-mmu split, Broadcom dynamic threshold).
#include "switchsw/shared_buffer.h"

#include <algorithm>
#include <bit>
#include <string>

namespace rocemu::sw {

namespace {
uint64_t total_headroom(const SharedBufferConfig& c) {
  uint64_t h = 0;
  for (uint32_t b : c.headroom_bytes) h += b;
  return h * static_cast<uint64_t>(std::popcount(c.lossless_mask));
}
uint64_t total_reserve(const SharedBufferConfig& c) {
  return uint64_t{c.reserve_bytes} * c.headroom_bytes.size() * kNumPriorities;
}
}  // namespace

std::string SharedBufferConfig::validate() const {
  const uint64_t fixed = total_headroom(*this) + total_reserve(*this);
  if (fixed >= buffer_bytes) {
    return "headroom (" + std::to_string(total_headroom(*this)) + " B) + reserve (" +
           std::to_string(total_reserve(*this)) + " B) leave no shared pool in a buffer of " +
           std::to_string(buffer_bytes) + " B";
  }
  if (alpha_q16 == 0 || egress_alpha_q16 == 0) return "alpha must be > 0";
  return {};
}

SharedBuffer::SharedBuffer(SharedBufferConfig cfg)
    : cfg_(std::move(cfg)),
      num_ports_(static_cast<uint16_t>(cfg_.headroom_bytes.size())),
      ingress_(static_cast<size_t>(num_ports_) * kNumPriorities),
      egress_(static_cast<size_t>(num_ports_) * kNumPriorities, 0) {
  const uint64_t fixed = total_headroom(cfg_) + total_reserve(cfg_);
  shared_pool_bytes_ = fixed < cfg_.buffer_bytes ? cfg_.buffer_bytes - fixed : 0;
}

Admit SharedBuffer::ingress_check(uint16_t port, int prio, uint32_t bytes) const noexcept {
  const IngressQueue& s = q(port, prio);
  const uint64_t after = s.ingress + bytes;
  if (after <= cfg_.reserve_bytes) return Admit::kOk;
  const uint64_t shared_after = after - cfg_.reserve_bytes;
  if (shared_after <= ingress_threshold()) return Admit::kOk;
  if (!lossless(prio)) return Admit::kBufferFull;
  if (s.headroom + bytes > cfg_.headroom_bytes[port]) return Admit::kHeadroomFull;
  return Admit::kOk;
}

void SharedBuffer::ingress_update(uint16_t port, int prio, uint32_t bytes) noexcept {
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

void SharedBuffer::ingress_release(uint16_t port, int prio, uint32_t bytes) noexcept {
  IngressQueue& s = q(port, prio);
  total_used_bytes_ -= bytes;
  const uint64_t from_headroom = std::min<uint64_t>(s.headroom, bytes);
  const uint64_t rest = bytes - from_headroom;
  const uint64_t shared = s.ingress > cfg_.reserve_bytes ? s.ingress - cfg_.reserve_bytes : 0;
  shared_used_bytes_ -= std::min(rest, shared);
  s.headroom -= from_headroom;
  s.ingress -= rest;
}

Admit SharedBuffer::egress_check(uint16_t port, int prio, uint32_t bytes) const noexcept {
  if (lossless(prio)) return Admit::kOk;
  const uint64_t after = uint64_t{egress_bytes(port, prio)} + bytes;
  if (after <= cfg_.reserve_bytes || after <= egress_threshold()) return Admit::kOk;
  return Admit::kBufferFull;
}

bool SharedBuffer::should_pause(uint16_t port, int prio) const noexcept {
  const uint64_t shared = ingress_shared_bytes(port, prio);
  return q(port, prio).headroom > 0 || (shared > 0 && shared >= ingress_threshold());
}

bool SharedBuffer::should_resume(uint16_t port, int prio) const noexcept {
  if (q(port, prio).headroom > 0) return false;
  const uint64_t shared = ingress_shared_bytes(port, prio);
  return shared == 0 || shared + cfg_.resume_offset_bytes <= ingress_threshold();
}

}  // namespace rocemu::sw
