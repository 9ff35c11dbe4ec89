// mpnn_compact.h — the bounds that find a FastMpnn layer's units dead on every agent or edge
// of a step, and the layers compacted to the units left (fast_mpnn.cc). Internal to
// rocemu_agent.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "agent/mpnn_pass.h"

namespace rocemu::agent::mpnn {

// The units `live` marks, ascending, into unit[]; returns their count (<= kCompactUnits).
[[gnu::always_inline]] inline int units_of(uint32_t live, int* unit) noexcept {
  int n = 0;
  for (uint32_t b = live; b != 0; b &= b - 1) unit[n++] = __builtin_ctz(b);
  return n;
}

// The rows of a kHidden-wide layer (kIn input rows, then the bias, in the build's layout at
// `layer`) for inputs unit[0 .. n), then zero rows up to kCompactUnits, then the bias: the
// layer after a compacted one.
template <bool kWide, int kIn>
[[gnu::always_inline]] inline void copy_unit_rows(float* out, const float* layer, const int* unit,
                                                  int n) noexcept {
  constexpr size_t kRow = kRowOf<kWide, kHidden>;
  for (int c = 0; c < kCompactUnits; ++c) {
    if (c < n) {
      std::memcpy(out + c * kRow, layer + unit[c] * kRow, sizeof(float) * kRow);
    } else {
      std::fill(out + c * kRow, out + (c + 1) * kRow, 0.0f);
    }
  }
  std::memcpy(out + kCompactUnits * kRow, layer + kIn * kRow, sizeof(float) * kRow);
}

// Folds rows h[0 .. kRows) (stride hs) into the step's bounds of h, the first kHidden of
// the update MLP's inputs (NaNs left out).
template <int kRows>
[[gnu::always_inline]] inline void fold_h_bounds(const Mpnn& m, const float* h,
                                                 size_t hs) noexcept {
  for (int j = 0; j < kHidden; j += 8) {
    v8f lo = load8(m.xlo + j), hi = load8(m.xhi + j);
    for (int k = 0; k < kRows; ++k) {
      const v8f v = load8(h + k * hs + j);
      lo = v < lo ? v : lo;
      hi = hi < v ? v : hi;
    }
    store8(m.xlo + j, lo);
    store8(m.xhi + j, hi);
  }
}

[[gnu::always_inline]] inline void reset_h_bounds(const Mpnn& m) noexcept {
  std::fill(m.xlo, m.xlo + kHidden, std::numeric_limits<float>::infinity());
  std::fill(m.xhi, m.xhi + kHidden, -std::numeric_limits<float>::infinity());
}

// Before an edge pass: no receiver's min and max folded yet, but those of agents with no
// ingress neighbour, 0.
[[gnu::always_inline]] inline void reset_aggregate_bounds(const Mpnn& m) noexcept {
  const float inf = std::numeric_limits<float>::infinity();
  std::fill(m.xlo + kHidden, m.xlo + kX, m.isolated ? 0.0f : inf);
  std::fill(m.xhi + kHidden, m.xhi + kX, m.isolated ? 0.0f : -inf);
}

// Folds agent v's min and max, complete, into the step's bounds of the update MLP's inputs.
[[gnu::always_inline]] inline void fold_aggregate_bounds(const Mpnn& m, int v) noexcept {
  const float* a = m.x + static_cast<size_t>(v) * kX;
  for (int j = kHidden; j < kX; j += 8) {
    const v8f x = load8(a + j);
    const v8f lo = load8(m.xlo + j), hi = load8(m.xhi + j);
    store8(m.xlo + j, x < lo ? x : lo);
    store8(m.xhi + j, hi < x ? x : hi);
  }
}

// The bits of the units of the first message layer that can be positive on some edge this
// step, a_dst + s_src, from the bounds of h over the agents (fold_h_bounds): as in
// compact_update, each half is bounded with its own operations in its own order (inputs
// [kZeroFrom, kHidden) skipped as message_halves skips them) and float addition is
// monotone, so no edge's sum exceeds the bound's; a NaN bound keeps the unit. (A NaN input
// makes every unit of its agent NaN, which the kept units carry; an infinite one makes the
// bound infinite or NaN.)
template <int kZeroFrom>
[[gnu::always_inline]] inline uint32_t live_messages(const Mpnn& m) noexcept {
  constexpr int kOut = kMsgHidden / 8;
  const float* w = m.msg1_plain;
  v8f ba[kOut], bs[kOut];
  for (int t = 0; t < kOut; ++t) {
    ba[t] = load8(w + 2 * kHidden * kMsgHidden + 8 * t);
    bs[t] = v8f{};
  }
  for_each_input<kHidden, kZeroFrom, kHidden, false>(
      0, [&](int i) __attribute__((always_inline)) {
        for (int t = 0; t < kOut; ++t) {
          const v8f wa = load8(w + i * kMsgHidden + 8 * t);
          const v8f ws = load8(w + (kHidden + i) * kMsgHidden + 8 * t);
          ba[t] += (wa >= 0.0f ? v8f{} + m.xhi[i] : v8f{} + m.xlo[i]) * wa;
          bs[t] += (ws >= 0.0f ? v8f{} + m.xhi[i] : v8f{} + m.xlo[i]) * ws;
        }
      });
  uint32_t live = 0;
  for (int t = 0; t < kOut; ++t) {
    const v8f sum = ba[t] + bs[t];
    for (int j = 0; j < 8; ++j)
      if (!(sum[j] <= 0.0f)) live |= 1u << (8 * t + j);
  }
  return live;
}

// Writes the message MLP with only the units `live` marks (at most kCompactUnits, at least
// one: with none, a NaN agent's messages would lose their NaN) into m.cm, in ascending order,
// the rest of the kCompactUnits zero; returns the mask of the slots they fill.
template <bool kWide>
[[gnu::always_inline]] inline uint32_t compact_messages(const Mpnn& m, uint32_t live,
                                                        uint32_t& made) noexcept {
  if (made == live) return (1u << __builtin_popcount(live)) - 1;
  made = live;
  int unit[kCompactUnits];
  const int n = units_of(live, unit);
  const float* w = m.msg1_plain;
  for (int i = 0; i < 2 * kHidden + 2; ++i) {  // both halves, the bias, the zero row
    float* row = m.cm + static_cast<size_t>(i) * kCompactUnits;
    for (int c = 0; c < kCompactUnits; ++c)
      row[c] = c < n && i <= 2 * kHidden ? w[i * kMsgHidden + unit[c]] : 0.0f;
  }
  copy_unit_rows<kWide, kMsgHidden>(m.cm + kCompactMsg2, m.wt + MpnnLayout<kWide>::kMsg2, unit, n);
  return (1u << n) - 1;
}

// Whether the update MLP's first layer has at most kCompactUnits units that can be positive
// on some agent this step; if so, writes the layer with only those (in ascending order, the
// rest of the kCompactUnits zero) and the second layer's rows of them into m.cw. A unit is
// dead on every agent when its output computed from the inputs' bounds over the agents, each
// input at the end its weight's sign favours, is <= 0: the bound is computed in the order and
// with the operations of the layer itself (bias, then one multiply-add per input in ascending
// order, the same inputs skipped), and each of them is monotone in its operands (round to
// nearest is), so every agent's value is at most the bound, or NaN (0 after the ReLU). A NaN
// bound (an infinite input times a zero weight) keeps the unit. Units left out are 0 after the ReLU
// on every agent, as the ones a tile finds zero (dense_live), so the values are the bits of the
// full layer. Trained networks leave many dead: the shipped GraphCC model 11-15 of the 24 on the
// K=16 fat tree's live counters.
template <bool kWide, bool kFirst>
[[gnu::always_inline]] inline bool compact_update(const Mpnn& m) noexcept {
  uint8_t& wait = m.wait[kFirst ? 0 : 1];
  if (!try_compact(wait)) return false;
  constexpr int kPadFrom = kFirst ? kNumFeatures : kX;
  constexpr int kPadTo = kFirst ? kHidden : kX;
  constexpr int kOut = kUpdHidden / 8;
  const float* w = m.upd1_plain;
  v8f bound[kOut];
  for (int t = 0; t < kOut; ++t) bound[t] = load8(w + kX * kUpdHidden + 8 * t);
  for_each_input<kX, kPadFrom, kPadTo, false>(
      0, [&](int i) __attribute__((always_inline)) {
        for (int t = 0; t < kOut; ++t) {
          const v8f wi = load8(w + i * kUpdHidden + 8 * t);
          const v8f xi = wi >= 0.0f ? v8f{} + m.xhi[i] : v8f{} + m.xlo[i];
          bound[t] += xi * wi;
        }
      });
  uint32_t live = 0;
  for (int t = 0; t < kOut; ++t)
    for (int j = 0; j < 8; ++j)
      if (!(bound[t][j] <= 0.0f)) live |= 1u << (8 * t + j);
  if (__builtin_popcount(live) > kCompactUnits) {
    wait = kCompactRetryAfter;
    return false;
  }
  uint32_t& made = m.made_upd[kFirst ? 0 : 1];
  if (made == live) return true;
  made = live;
  int unit[kCompactUnits];
  const int n = units_of(live, unit);
  for (int i = 0; i <= kX; ++i) {
    float* row = m.cw + static_cast<size_t>(i) * kCompactUnits;
    for (int c = 0; c < kCompactUnits; ++c) row[c] = c < n ? w[i * kUpdHidden + unit[c]] : 0.0f;
  }
  copy_unit_rows<kWide, kUpdHidden>(m.cw + kCompactUpd2, m.wt + MpnnLayout<kWide>::kUpd2, unit, n);
  return true;
}

}  // namespace rocemu::agent::mpnn
