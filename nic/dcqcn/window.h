// window.h — optional in-flight byte limit (a BDP window) next to DCQCN's rate control.
//
// DCQCN itself is rate based (Zhu et al., SIGCOMM 2015); deployments and HPCC's simulator
// add a window of about one bandwidth-delay product so that a QP cannot flood the fabric
// while its rate is still high. Bytes in flight = sent and not yet acknowledged.
// A limit of 0 disables the window. One frame may always leave an empty window, so a frame
// larger than the limit cannot stall the QP. Not thread-safe: owned by the QP's lcore.
#pragma once

#include <cstdint>

namespace rocemu::dcqcn {

class BdpWindow {
 public:
  explicit BdpWindow(uint64_t limit_bytes = 0) noexcept : limit_bytes_(limit_bytes) {}

  /// BDP of a path: rate (bit/s) x round-trip time (ns), in bytes (rounded up).
  static constexpr uint64_t bdp_bytes(uint64_t rate_bps, int64_t rtt_ns) noexcept {
    if (rtt_ns <= 0) return 0;
    const unsigned __int128 bits_ns = static_cast<unsigned __int128>(rate_bps) * rtt_ns;
    constexpr uint64_t kBitNsPerByte = 8ULL * 1'000'000'000ULL;
    return static_cast<uint64_t>((bits_ns + kBitNsPerByte - 1) / kBitNsPerByte);
  }

  /// True if a frame of `bytes` may be sent now.
  bool may_send(uint64_t bytes) const noexcept {
    return limit_bytes_ == 0 || inflight_bytes_ == 0 || inflight_bytes_ + bytes <= limit_bytes_;
  }
  void on_sent(uint64_t bytes) noexcept { inflight_bytes_ += bytes; }
  /// `bytes` were acknowledged; more than in flight (a duplicate ACK) leaves 0.
  void on_acked(uint64_t bytes) noexcept {
    inflight_bytes_ = bytes >= inflight_bytes_ ? 0 : inflight_bytes_ - bytes;
  }
  /// Forgets everything in flight (go-back-N retransmits from scratch).
  void reset() noexcept { inflight_bytes_ = 0; }

  uint64_t inflight_bytes() const noexcept { return inflight_bytes_; }
  uint64_t limit_bytes() const noexcept { return limit_bytes_; }
  void set_limit_bytes(uint64_t limit) noexcept { limit_bytes_ = limit; }

 private:
  uint64_t limit_bytes_;
  uint64_t inflight_bytes_ = 0;
};

static_assert(BdpWindow::bdp_bytes(25'000'000'000ULL, 8'000) == 25'000);

}  // namespace rocemu::dcqcn
