// event_heap.h — the virtual-time engine's event queues: a 4-ary min-heap on (t, seq), and
// the calendar queue the engine uses (near-future buckets, that heap for far events).
//
// Keys are unique (seq is an insertion counter), so any correct priority queue pops events
// in exactly one order: replacing std::push_heap/pop_heap (binary) by this changes no
// result. Why 4-ary: the engine pops every event once, and a pop's sift-down dominated the
// loop's own time (perf on the 24-host Clos episode: 15% of the run in pop_heap's loop);
// four children per level halve the depth, and the four 32-byte children of a node share
// two cache lines. Not thread-safe; no allocation once the vector has grown.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>
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

/// The engine's event queue: a calendar of buckets `2^width_shift` ns wide over a window of
/// `2^slots_log2` buckets, and an EventHeap for events beyond the window. Pops the minimum
/// (t, seq) exactly as EventHeap does (the keys are unique, so the order is the same; the
/// tests check it against std::priority_queue), for any times pushed, earlier ones included.
///
/// Why: on the K=8 fat tree the heap held ~1,500 events and its pop was a fifth of the run
/// (perf: the sift-down's compares). Nearly every event is near-future (a wire free in one
/// frame time, an arrival one hop later), so a push is an append to its bucket, and a pop
/// takes the back of the current bucket, sorted once when it becomes current (a few dozen to
/// a few hundred events), or the top of a small heap of the events pushed into the current
/// bucket after that (an ACK's wire free a few ns later; sorted insertion there moved half
/// the bucket per push: 12% of a K=16 run in memmove). Far events (timeouts, DCQCN timers beyond
/// the window) wait in the heap and move into the calendar as the window reaches them. No
/// allocation once the buckets have grown.
///
/// The buckets' events sit in chunks of a few cache lines taken from one free list, last
/// freed first: the chunks a bucket releases when it becomes current are the next ones
/// pushes fill, so the memory a run touches is that of the events waiting, not the largest
/// size every one of the 2,048 buckets ever had (one vector per bucket grew to megabytes,
/// and appends to it became cache misses: 13% of a K=8 run in vector::push_back).
template <class E>
class CalendarQueue {
 public:
  explicit CalendarQueue(unsigned width_shift = 5, unsigned slots_log2 = 11)
      : shift_(width_shift),
        nslots_(int64_t{1} << slots_log2),
        slot_last_(size_t{1} << slots_log2, kNone),
        nonempty_((size_t{1} << slots_log2) / 64 + 1, 0) {}

  bool empty() const noexcept { return size_ == 0; }
  size_t size() const noexcept { return size_; }
  /// The minimum. The queue must not be empty.
  const E& top() const noexcept {
    if (late_.empty()) return cur_.back();
    if (cur_.empty() || EventHeap<E>::before(late_.top(), cur_.back())) return late_.top();
    return cur_.back();
  }

  void push(const E& e) {
    const int64_t b = bucket_of(e.t);
    if (size_++ == 0) {
      cur_abs_ = b;
      cur_.push_back(e);
      return;
    }
    if (b <= cur_abs_) {
      late_.push(e);  // the current bucket is sorted already: beside it, in a small heap
    } else if (b < cur_abs_ + nslots_) {
      append(slot_of(b), e);
    } else {
      far_.push(e);
    }
  }

  /// Removes and returns the minimum. The queue must not be empty.
  E pop() {
    E top;
    if (!late_.empty() && (cur_.empty() || EventHeap<E>::before(late_.top(), cur_.back()))) {
      top = late_.pop();
    } else {
      top = cur_.back();
      cur_.pop_back();
    }
    if (--size_ > 0 && cur_.empty() && late_.empty()) advance();
    return top;
  }

  /// Calls f(e) for every event, in no particular order (e.g. to free what they hold).
  template <class F>
  void for_each(F f) const {
    for (const E& e : cur_) f(e);
    for (const E& e : late_.items()) f(e);
    for (int32_t first : slot_last_)
      for (int32_t c = first; c != kNone; c = chunks_[static_cast<size_t>(c)].prev)
        for (uint32_t i = 0; i < chunks_[static_cast<size_t>(c)].n; ++i)
          f(chunks_[static_cast<size_t>(c)].ev[i]);
    for (const E& e : far_.items()) f(e);
  }

 private:
  static constexpr int32_t kNone = -1;
  // Events per chunk: the chunk (with its count and link) fills 4 cache lines.
  static constexpr uint32_t kChunkEvents = sizeof(E) < 248 ? (256 - 8) / sizeof(E) : 1;
  struct alignas(64) Chunk {
    uint32_t n = 0;
    int32_t prev = kNone;  // the slot's previous (full) chunk; on the free list: the next free
    E ev[kChunkEvents];
  };

  int64_t bucket_of(TimeNs t) const noexcept { return t >> shift_; }
  size_t slot_of(int64_t b) const noexcept { return static_cast<size_t>(b & (nslots_ - 1)); }

  void append(size_t s, const E& e) {
    int32_t c = slot_last_[s];
    if (c == kNone || chunks_[static_cast<size_t>(c)].n == kChunkEvents) {
      int32_t fresh = free_;
      if (fresh != kNone) {
        free_ = chunks_[static_cast<size_t>(fresh)].prev;
      } else {
        fresh = static_cast<int32_t>(chunks_.size());
        chunks_.emplace_back();
      }
      Chunk& k = chunks_[static_cast<size_t>(fresh)];
      k.n = 0;
      k.prev = c;
      slot_last_[s] = c = fresh;
      nonempty_[s / 64] |= uint64_t{1} << (s % 64);
    }
    Chunk& k = chunks_[static_cast<size_t>(c)];
    k.ev[k.n++] = e;
  }

  // The current bucket and late_ are empty and events remain: makes the next non-empty bucket
  // current.
  void advance() {
    int64_t next = -1;
    // Buckets cur_abs_ + 1 .. cur_abs_ + nslots_ - 1, via the bitmap, in at most two sweeps
    // (from the slot after the current one to the end, then from 0).
    const size_t from = slot_of(cur_abs_ + 1);
    if (const int64_t s = find_set(from, static_cast<size_t>(nslots_)); s >= 0) {
      next = cur_abs_ + 1 + (s - static_cast<int64_t>(from));
    } else if (const int64_t s2 = find_set(0, from); s2 >= 0) {
      next = cur_abs_ + 1 + (nslots_ - static_cast<int64_t>(from)) + s2;
    }
    if (next < 0) next = bucket_of(far_.top().t);  // the window is empty: jump to the far heap
    cur_abs_ = next;
    const size_t s = slot_of(next);
    // The bucket's events into cur_ (empty here); its chunks back to the free list. Last
    // pushed first: sequence numbers grow with pushes, so cur_ comes out (nearly) in the
    // descending seq order sort_bucket leaves within each time, and its insertion sorts
    // move almost nothing.
    for (int32_t c = slot_last_[s]; c != kNone;) {
      Chunk& k = chunks_[static_cast<size_t>(c)];
      cur_.insert(cur_.end(), std::make_reverse_iterator(k.ev + k.n), std::make_reverse_iterator(k.ev));
      const int32_t prev = k.prev;
      k.prev = free_;
      free_ = c;
      c = prev;
    }
    slot_last_[s] = kNone;
    nonempty_[s / 64] &= ~(uint64_t{1} << (s % 64));
    // The window now ends at next + nslots_: bring in the far events it reaches.
    while (!far_.empty() && bucket_of(far_.top().t) < next + nslots_) {
      const E e = far_.pop();
      const int64_t b = bucket_of(e.t);
      if (b == next) {
        cur_.push_back(e);
      } else {
        append(slot_of(b), e);
      }
    }
    sort_bucket();
  }

  // Orders cur_ (the events of bucket cur_abs_) by descending (t, seq). Its times take at most
  // 2^shift_ values: a counting sort on the time's offset in the bucket, then each run of
  // equal times by seq (short runs by insertion). At K=16 a bucket holds ~170 events and
  // std::sort over them was ~18% of the event loop's instructions.
  void sort_bucket() {
    const auto later = [](const E& a, const E& b) { return EventHeap<E>::before(b, a); };
    const size_t n = cur_.size();
    if (n < 32 || shift_ > 12) {
      std::sort(cur_.begin(), cur_.end(), later);
      return;
    }
    const size_t w = size_t{1} << shift_;
    const TimeNs last = ((cur_abs_ + 1) << shift_) - 1;  // the bucket's latest time: key 0
    counts_.assign(w, 0);
    for (const E& e : cur_) ++counts_[static_cast<size_t>(last - e.t)];
    size_t sum = 0;
    for (size_t& c : counts_) sum += std::exchange(c, sum);  // each key's first position
    tmp_.resize(n);
    for (const E& e : cur_) tmp_[counts_[static_cast<size_t>(last - e.t)]++] = e;
    cur_.swap(tmp_);
    // counts_[k] is now the end of key k's run.
    const auto later_seq = [](const E& a, const E& b) { return a.seq > b.seq; };
    for (size_t k = 0, lo = 0; k < w; lo = counts_[k++]) {
      const size_t hi = counts_[k];
      if (hi - lo < 2) continue;
      E* const b = cur_.data() + lo;
      E* const e = cur_.data() + hi;
      if (hi - lo > 16) {
        std::sort(b, e, later_seq);
        continue;
      }
      for (E* i = b + 1; i < e; ++i) {
        const E v = *i;
        E* j = i;
        for (; j > b && later_seq(v, j[-1]); --j) *j = j[-1];
        *j = v;
      }
    }
  }

  // The first set bit in [lo, hi) of nonempty_, or -1.
  int64_t find_set(size_t lo, size_t hi) const noexcept {
    size_t i = lo;
    while (i < hi) {
      const size_t w = i / 64;
      uint64_t bits = nonempty_[w] & (~uint64_t{0} << (i % 64));
      if (bits) {
        const size_t found = w * 64 + static_cast<size_t>(__builtin_ctzll(bits));
        return found < hi ? static_cast<int64_t>(found) : -1;
      }
      i = (w + 1) * 64;
    }
    return -1;
  }

  unsigned shift_;
  int64_t nslots_;
  std::vector<E> cur_;                 // bucket cur_abs_ as it became current, descending
  std::vector<E> tmp_;                 // sort_bucket()'s scatter target (swapped with cur_)
  std::vector<size_t> counts_;         // sort_bucket()'s counts per time in the bucket
  EventHeap<E> late_;                  // pushed into bucket cur_abs_ (or earlier) since then
  int64_t cur_abs_ = 0;                // the current bucket's number (t >> shift_)
  std::vector<Chunk> chunks_;          // every chunk, by index
  int32_t free_ = kNone;               // the free chunks, last freed first
  std::vector<int32_t> slot_last_;     // buckets cur_abs_ + 1 .. cur_abs_ + nslots_ - 1: last chunk
  std::vector<uint64_t> nonempty_;     // one bit per slot
  EventHeap<E> far_;                   // buckets >= cur_abs_ + nslots_
  size_t size_ = 0;
};

}  // namespace rocemu::fabric
