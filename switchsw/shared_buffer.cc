// shared_buffer.cc — construction and validation of the shared-buffer MMU (the per-packet
// operations are inline in shared_buffer.h, which describes the model).
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

}  // namespace rocemu::sw
