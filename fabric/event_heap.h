// event_heap.h — the virtual-time engine's event queues: a 4-ary min-heap on (t, seq) for
// packets, wire-free marks and periodic calls, and a tournament tree holding each node's
// one timer.
//
// Keys are unique (seq is an insertion counter), so any correct priority queue pops events
// in exactly one order: replacing std::push_heap/pop_heap (binary) by this changes no
// result. Why 4-ary: the engine pops every event once, and a pop's sift-down dominated the
// loop's own time (perf on the 24-host Clos episode: 15% of the run in pop_heap's loop);
// four children per level halve the depth, and the four 32-byte children of a node share
// two cache lines. Not thread-safe; no allocation once the vector has grown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/time_ns.h"

namespace rocemu::fabric {

/// E has `TimeNs t` and `uint64_t seq`; the minimum (t, seq) is on top.
template <class E>
class EventHeap {
 public:
  bool empty() const noexcept { return v_.empty(); }
  size_t size() const noexcept { return v_.size(); }
  const E& top() const noexcept { return v_.front(); }
  void reserve(size_t n) { v_.reserve(n); }

  void push(const E& e) {
    size_t i = v_.size();
    v_.push_back(e);
    while (i > 0) {
      const size_t parent = (i - 1) / kArity;
      if (!before(e, v_[parent])) break;
      v_[i] = v_[parent];
      i = parent;
    }
    v_[i] = e;
  }

  /// Removes and returns the top. The heap must not be empty.
  E pop() noexcept {
    const E top = v_.front();
    const E last = v_.back();
    v_.pop_back();
    const size_t n = v_.size();
    if (n == 0) return top;
    size_t i = 0;
    while (true) {
      const size_t first = kArity * i + 1;
      if (first >= n) break;
      const size_t end = first + kArity < n ? first + kArity : n;
      size_t best = first;
      for (size_t c = first + 1; c < end; ++c)
        if (before(v_[c], v_[best])) best = c;
      if (!before(v_[best], last)) break;
      v_[i] = v_[best];
      i = best;
    }
    v_[i] = last;
    return top;
  }

  /// Every element, in no particular order (e.g. to free what they hold).
  const std::vector<E>& items() const noexcept { return v_; }

  static bool before(const E& a, const E& b) noexcept {
    return a.t != b.t ? a.t < b.t : a.seq < b.seq;
  }

 private:
  static constexpr size_t kArity = 4;
  std::vector<E> v_;
};

/// One timer per node, each with the (t, seq) it was armed with; the earliest is on top.
/// Re-arming a node replaces its timer in O(log nodes). Why not heap events: a node's
/// deadline moves on almost every call (a retransmit timer pushed back by each ACK), and
/// every move left a stale event behind in the heap until its time came — 13,700 of the
/// heap's 13,900 entries at the end of the 24-host Clos episode, most of them ACK timeouts
/// tens of ms ahead that never fire. Sized at setup; no allocation afterwards.
class TimerTree {
 public:
  struct Entry {
    TimeNs t = kNever;
    uint64_t seq = 0;
  };

  /// Room for nodes [0, n), none armed (setup: allocates).
  void resize(uint32_t n) {
    leaves_ = 1;
    while (leaves_ < n) leaves_ *= 2;
    entries_.assign(leaves_, Entry{});
    win_.assign(2 * size_t{leaves_}, 0);
    for (uint32_t i = 0; i < leaves_; ++i) win_[leaves_ + i] = i;
    for (uint32_t k = leaves_ - 1; k >= 1; --k) win_[k] = win_[2 * k];
  }
  /// Arms `node` at (t, seq); t = kNever disarms it.
  void set(uint32_t node, TimeNs t, uint64_t seq) noexcept {
    entries_[node] = Entry{t, seq};
    for (uint32_t k = (leaves_ + node) / 2; k >= 1; k /= 2) {
      const uint32_t a = win_[2 * k], b = win_[2 * k + 1];
      win_[k] = earlier(entries_[b], entries_[a]) ? b : a;
    }
  }
  /// The node whose timer is earliest, and that timer (t = kNever: none armed).
  uint32_t top_node() const noexcept { return win_[1]; }
  const Entry& top() const noexcept { return entries_[win_[1]]; }
  const Entry& at(uint32_t node) const noexcept { return entries_[node]; }

 private:
  static bool earlier(const Entry& a, const Entry& b) noexcept {
    return a.t != b.t ? a.t < b.t : a.seq < b.seq;
  }
  uint32_t leaves_ = 1;
  std::vector<Entry> entries_;
  std::vector<uint32_t> win_;  // win_[k]: the leaf that wins the subtree of k (k >= 1)
};

}  // namespace rocemu::fabric
