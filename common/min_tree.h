// min_tree.h — the minimum of n times, kept up to date in O(log n) per changed entry (a
// tournament tree over a power-of-two array: node i holds min(node 2i, node 2i+1), the
// root is node 1). Lets a node answer next_deadline() without scanning all of its queue
// pairs or DCQCN reaction points. Units: TimeNs (ns); empty entries are kNever.
// Sized at setup (resize); update() and min() never allocate. One owner thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/time_ns.h"

namespace rocemu {

class MinTree {
 public:
  MinTree() = default;
  explicit MinTree(uint32_t n) { resize(n); }

  /// Room for entries [0, n); every entry becomes kNever (setup time: allocates).
  void resize(uint32_t n) {
    n_ = n;
    leaves_ = 1;
    while (leaves_ < n) leaves_ *= 2;
    nodes_.assign(2 * size_t{leaves_}, kNever);
  }
  /// Room for entries [0, n), n >= size(): the entries kept, the new ones kNever. Doubles the
  /// leaves when they run out, so growing one entry at a time is O(1) amortised (a host adds
  /// its queue pairs one by one; resize() made that O(n) each, and every entry stale).
  void grow(uint32_t n) {
    if (n <= leaves_ && !nodes_.empty()) {
      n_ = std::max(n_, n);
      return;
    }
    uint32_t leaves = leaves_;
    while (leaves < n) leaves *= 2;
    std::vector<TimeNs> nodes(2 * size_t{leaves}, kNever);
    for (uint32_t i = 0; i < n_; ++i) nodes[leaves + i] = nodes_[leaves_ + i];
    for (uint32_t k = leaves - 1; k >= 1; --k) nodes[k] = std::min(nodes[2 * k], nodes[2 * k + 1]);
    nodes_.swap(nodes);
    leaves_ = leaves;
    n_ = std::max(n_, n);
  }
  /// Sets entry `i` (< size()) to `t`.
  void update(uint32_t i, TimeNs t) noexcept {
    uint32_t k = leaves_ + i;
    nodes_[k] = t;
    for (k /= 2; k >= 1; k /= 2) {
      const TimeNs m = std::min(nodes_[2 * k], nodes_[2 * k + 1]);
      if (nodes_[k] == m) break;  // nothing above changes either
      nodes_[k] = m;
    }
  }
  /// Minimum over all entries (kNever when empty).
  TimeNs min() const noexcept { return nodes_.empty() ? kNever : nodes_[1]; }
  TimeNs at(uint32_t i) const noexcept { return nodes_[leaves_ + i]; }
  /// The smallest i >= from with at(i) <= t, or size() if none: O(log n), so a caller can
  /// visit the due entries in index order without scanning the others (it may update the
  /// entry it was given before asking for the next one).
  uint32_t first_due(TimeNs t, uint32_t from) const noexcept {
    if (from >= n_) return n_;
    uint32_t k = leaves_ + from;
    if (nodes_[k] > t) {
      // Up until a right sibling whose subtree holds a due entry (every entry under it is
      // beyond `from`), then down to that subtree's first due leaf.
      while (true) {
        if (k == 1) return n_;
        if ((k & 1) == 0 && nodes_[k + 1] <= t) {
          ++k;
          break;
        }
        k /= 2;
      }
      while (k < leaves_) k = nodes_[2 * k] <= t ? 2 * k : 2 * k + 1;
    }
    const uint32_t i = k - leaves_;
    return i < n_ ? i : n_;
  }
  uint32_t size() const noexcept { return n_; }

 private:
  uint32_t n_ = 0, leaves_ = 1;
  std::vector<TimeNs> nodes_;
};

}  // namespace rocemu
