// snapshot_board.h — the only path by which a switch's counters cross threads: its lcore
// publishes a SwitchSnapshot into storage allocated once, any other thread (the real-time
// agent) copies the latest one out. A sequence lock (as Linux's seqcount): the writer makes
// the sequence odd, writes, makes it even; a reader copies and retries if the sequence was
// odd or changed meanwhile, so it never returns a torn snapshot (stress-tested with a
// checksum). The writer never waits, allocates or logs; a reader that keeps losing the race
// gives up after `max_tries` and reports it. The fields are trivially copyable and copied
// with memcpy between acquire/release fences (the usual seqlock idiom).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common/telemetry.h"

namespace rocemu::sw {

class SnapshotBoard {
 public:
  /// Storage for `ports` ports (call before any publish/read).
  void init(uint32_t node, uint32_t ports) {
    node_ = node;
    rate_.assign(ports, 0);
    ecn_.assign(ports, EcnSetting{});
    ctr_.assign(ports, PortCounters{});
  }
  uint32_t ports() const noexcept { return static_cast<uint32_t>(ctr_.size()); }

  /// Writer (one thread): fill(rate_bps*, ecn*, counters*) writes the fields in place.
  template <class Fill>
  void publish(TimeNs at_ns, Fill&& fill) noexcept {
    const uint64_t s = seq_.load(std::memory_order_relaxed);
    seq_.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    at_ns_ = at_ns;
    fill(rate_.data(), ecn_.data(), ctr_.data());
    seq_.store(s + 2, std::memory_order_release);
  }

  /// Reader (any thread): copies the latest snapshot into `out` (resized once to the port
  /// count; no allocation after that). False if nothing was published yet or the writer
  /// kept overtaking the copy for `max_tries` attempts.
  bool read(SwitchSnapshot& out, int max_tries = 64) const {
    const size_t n = ctr_.size();
    if (out.ports.size() != n) {
      out.port_rate_bps.resize(n);
      out.ecn.resize(n);
      out.ports.resize(n);
    }
    for (int t = 0; t < max_tries; ++t) {
      const uint64_t s0 = seq_.load(std::memory_order_acquire);
      if (s0 == 0) return false;  // never published
      if (s0 & 1) {               // a write is in progress
        ++retries_;
        continue;
      }
      out.at_ns = at_ns_;
      out.node = node_;
      std::memcpy(out.port_rate_bps.data(), rate_.data(), n * sizeof(uint64_t));
      std::memcpy(static_cast<void*>(out.ecn.data()), ecn_.data(), n * sizeof(EcnSetting));
      std::memcpy(static_cast<void*>(out.ports.data()), ctr_.data(), n * sizeof(PortCounters));
      std::atomic_thread_fence(std::memory_order_acquire);
      if (seq_.load(std::memory_order_relaxed) == s0) return true;
      ++retries_;  // the writer overtook this copy: it is discarded
    }
    ++contended_reads_;
    return false;
  }

  /// Snapshots published so far.
  uint64_t published() const noexcept { return seq_.load(std::memory_order_acquire) / 2; }
  /// Reads that gave up (the writer overtook every attempt).
  uint64_t contended_reads() const noexcept { return contended_reads_; }
  /// Copies discarded because a write was in progress or overtook them.
  uint64_t read_retries() const noexcept { return retries_; }

 private:
  static_assert(std::is_trivially_copyable_v<PortCounters> &&
                std::is_trivially_copyable_v<EcnSetting>);
  alignas(64) std::atomic<uint64_t> seq_{0};
  TimeNs at_ns_ = 0;
  uint32_t node_ = 0;
  std::vector<uint64_t> rate_;
  std::vector<EcnSetting> ecn_;
  std::vector<PortCounters> ctr_;
  mutable uint64_t contended_reads_ = 0;  // the reader's own counters (one reader thread)
  mutable uint64_t retries_ = 0;
};

}  // namespace rocemu::sw
