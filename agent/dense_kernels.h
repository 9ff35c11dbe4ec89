// dense_kernels.h — the register-tiled dense layers and the greedy argmax of the fast
// forward passes (fast_mpnn.cc), for its three instruction-set builds.
//
// Every function is force-inlined into the build that calls it, so one template serves the
// AVX-512, AVX2 + FMA and generic x86-64 builds (GCC vector extensions: 8-float vectors, and
// 16-float ones in the AVX-512 build). Weights are stored transposed ([In][Out]) so each
// input's products are contiguous multiply-adds over outputs. Internal to rocemu_agent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace rocemu::agent::kernels {

using v8f = float __attribute__((vector_size(32)));
using v8i = int32_t __attribute__((vector_size(32)));

// Unaligned vector loads and stores (8 floats in both SIMD builds, 16 in the AVX-512 one).
template <class V>
[[gnu::always_inline]] inline V load_vec(const float* p) noexcept {
  V v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}
template <class V>
[[gnu::always_inline]] inline void store_vec(float* p, V v) noexcept {
  __builtin_memcpy(p, &v, sizeof(v));
}
[[gnu::always_inline]] inline v8f load8(const float* p) noexcept { return load_vec<v8f>(p); }
[[gnu::always_inline]] inline void store8(float* p, v8f v) noexcept { store_vec(p, v); }

// Output vectors per register tile: kRows x kTile accumulators (at most 15) leave a ymm
// register for the broadcast input. One row takes all its outputs at once (up to 15
// vectors: the ACC nets, whose weights serve one row only); several rows take 3 (or 2)
// vectors, so each weight vector loaded serves every row and each broadcast input 3 vectors.
template <int Out, int kRows>
constexpr int tile_vecs() {
  constexpr int v = Out / 8;
  if (kRows == 1 && v <= 15) return v;
  return v % 3 == 0 ? 3 : (v % 2 == 0 ? 2 : 1);
}

// acc[k][t] += x[k][i] * W[i][vc + t] for rows k < kRows, vectors t < kTile.
template <int Out, int kRows, int kTile>
[[gnu::always_inline]] inline void add_input(v8f (&acc)[kRows][kTile], const float* __restrict wt,
                                             const float* __restrict x, size_t xs, int vc,
                                             int i) noexcept {
  v8f w[kTile];
  for (int t = 0; t < kTile; ++t) w[t] = load8(wt + static_cast<size_t>(i) * Out + (vc + t) * 8);
  for (int k = 0; k < kRows; ++k) {
    const float xi = x[k * xs + i];
    for (int t = 0; t < kTile; ++t) acc[k][t] += xi * w[t];
  }
}

// Calls add(i) for a layer's inputs in ascending order: those `live` marks (kSparse), else
// all but [kZeroFrom, kZeroTo).
template <int In, int kZeroFrom, int kZeroTo, bool kSparse, class F>
[[gnu::always_inline]] inline void for_each_input(uint32_t live, F&& add) noexcept {
  if constexpr (kSparse) {
    for (uint32_t m = live; m != 0; m &= m - 1) add(__builtin_ctz(m));
  } else {
    for (int i = 0; i < kZeroFrom; ++i) add(i);
    for (int i = kZeroTo; i < In; ++i) add(i);
  }
}

// y[k] = act(W x[k] + b) for kRows rows (x[k] = x + k * xs, y[k] = y + k * ys), W stored
// transposed ([In][Out]) so outputs are contiguous. Inputs [kZeroFrom, kZeroTo) are known to
// be zero and skipped. GCC vector extensions: 8-wide FMA in the AVX2 build, SSE pairs in the
// generic one (everything is force-inlined into the two builds of each pass).
template <int In, int Out, int kRows, bool kRelu, int kZeroFrom = In, int kZeroTo = In,
          bool kSparse = false>
[[gnu::always_inline]] inline void dense_tile(const float* __restrict wt, const float* __restrict b,
                                              const float* __restrict x, size_t xs,
                                              float* __restrict y, size_t ys,
                                              uint32_t live = 0) noexcept {
  static_assert(Out % 8 == 0, "outputs come in 8-float vectors");
  static_assert(0 <= kZeroFrom && kZeroFrom <= kZeroTo && kZeroTo <= In);
  static_assert(!kSparse || (In <= 32 && kZeroFrom == In), "a live mask covers every input");
  constexpr int kVecs = Out / 8;
  constexpr int kTile = tile_vecs<Out, kRows>();
  static_assert(kVecs % kTile == 0);
  for (int vc = 0; vc < kVecs; vc += kTile) {
    v8f acc[kRows][kTile];
    for (int t = 0; t < kTile; ++t) {
      const v8f init = load8(b + (vc + t) * 8);
      for (int k = 0; k < kRows; ++k) acc[k][t] = init;
    }
    for_each_input<In, kZeroFrom, kZeroTo, kSparse>(
        live, [&](int i) __attribute__((always_inline)) { add_input<Out>(acc, wt, x, xs, vc, i); });
    for (int k = 0; k < kRows; ++k)
      for (int t = 0; t < kTile; ++t) {
        v8f v = acc[k][t];
        if constexpr (kRelu) v = v > 0.0f ? v : v8f{};
        store8(y + k * ys + (vc + t) * 8, v);
      }
  }
}

// The AVX-512 build's dense layers: 16-float vectors over the wide weight layout, where a
// layer's row (each input's weights, then the bias) is Out = 16 A + 8 B floats padded to whole
// vectors: its A vectors as they are, then, if B = 1 (every 24-wide layer, and the 120
// Q-values), the last 8 weights each twice, (t0, t0, t1, t1, ..., t7, t7). A row of a tile
// takes its A vectors alone; the last 8 outputs of two rows 2p, 2p + 1 share one vector,
// lane 2j for row 2p and 2j + 1 for row 2p + 1, whose input is the two rows' inputs as one
// broadcast 64-bit pair: the tile's input rows are interleaved in pairs once per layer, so the
// inner loop has no shuffle. A tile of 8 rows of 24 outputs is then 12 FMAs per input, the ideal
// 96 lanes (the 8-float build: 24 FMAs). A lone row takes its tail the same way with its input
// broadcast (both lanes of a pair compute the same output). Each output is still its bias, then
// one FMA per input in ascending order: the values are the AVX2 build's, bit for bit.
using v16f = float __attribute__((vector_size(64)));
using v8d = double __attribute__((vector_size(64)));

template <int Out>
constexpr int kWideRow = (Out + 15) / 16 * 16;

[[gnu::always_inline]] inline v16f load16(const float* p) noexcept { return load_vec<v16f>(p); }
[[gnu::always_inline]] inline void store16(float* p, v16f v) noexcept { store_vec(p, v); }
// (p[0], p[1]) in every 64-bit lane: one broadcast load.
[[gnu::always_inline]] inline v16f splat_pair(const float* p) noexcept {
  double d;
  __builtin_memcpy(&d, p, sizeof(d));
  const v8d v{d, d, d, d, d, d, d, d};
  v16f f;
  __builtin_memcpy(&f, &v, sizeof(f));
  return f;
}

// One pass over the inputs for whole vectors [kC0, kC0 + kG) of every row and, if kWithTail,
// the last 8 outputs, then done(acc, pacc): acc[k][g] holds vector kC0 + g of row k, pacc[p]
// the last 8 outputs of rows 2p (even lanes) and 2p + 1 (odd lanes). xp: per pair of rows,
// its inputs interleaved (kRows > 1 with a tail). kPairsOnly: every input is read from xp
// (row k's input i is xp[k / 2][2 i + k % 2]); x is not read.
template <int In, int Out, int kRows, int kZeroFrom, int kZeroTo, bool kSparse, int kC0, int kG,
          bool kWithTail, bool kPairsOnly = false, class Done>
[[gnu::always_inline]] inline void dense_group16(const float* __restrict wt,
                                                 const float* __restrict b,
                                                 const float* __restrict x, size_t xs,
                                                 const float* __restrict xp, uint32_t live,
                                                 Done&& done) noexcept {
  constexpr int kS = kWideRow<Out>;  // floats per weight row
  constexpr int kT = Out / 16 * 16;  // first tail output
  constexpr int kPairs = kRows > 1 ? kRows / 2 : 1;
  static_assert(kRows == 1 || kRows % 2 == 0, "the tail pairs rows");
  static_assert(kG + (kWithTail ? 1 : 0) >= 1);
  static_assert(!kPairsOnly || (kRows > 1 && kWithTail), "pairs exist with a tail");
  constexpr bool kUsesPairs = kWithTail && kRows > 1;
  v16f acc[kRows][kG > 0 ? kG : 1];
  v16f pacc[kPairs];
#pragma GCC unroll 16
  for (int g = 0; g < kG; ++g) {
    const v16f init = load16(b + (kC0 + g) * 16);
#pragma GCC unroll 16
    for (int k = 0; k < kRows; ++k) acc[k][g] = init;
  }
  if constexpr (kWithTail) {
    const v16f init = load16(b + kT);
#pragma GCC unroll 16
    for (int p = 0; p < kPairs; ++p) pacc[p] = init;
  }
  auto add = [&](int i) __attribute__((always_inline)) {
    // One 64-bit index per input: every row's input is then at a constant offset from it
    // (int arithmetic per row cost a sign extension each, on the FMA ports).
    const size_t iu = static_cast<unsigned>(i);
    const float* wi = wt + iu * kS;
    const float* xpi = kUsesPairs ? xp + 2 * iu : nullptr;  // xp is null otherwise
    v16f w[kG > 0 ? kG : 1];
#pragma GCC unroll 16
    for (int g = 0; g < kG; ++g) w[g] = load16(wi + (kC0 + g) * 16);
#pragma GCC unroll 16
    for (int k = 0; k < kRows; ++k) {
      const float xi = kPairsOnly ? xpi[k / 2 * 2 * In + k % 2] : x[k * xs + iu];
#pragma GCC unroll 16
      for (int g = 0; g < kG; ++g) acc[k][g] += xi * w[g];
    }
    if constexpr (kWithTail) {
      const v16f wd = load16(wi + kT);
      if constexpr (kRows > 1) {
#pragma GCC unroll 16
        for (int p = 0; p < kPairs; ++p) pacc[p] += splat_pair(xpi + p * 2 * In) * wd;
      } else {
        pacc[0] += x[iu] * wd;
      }
    }
  };
  for_each_input<In, kZeroFrom, kZeroTo, kSparse>(live, add);
  done(acc, pacc);
}

// The tail's 8 outputs of row 2p + kOdd from its pair's accumulator (see dense_group16).
template <int kOdd>
[[gnu::always_inline]] inline v8f pair_half(v16f v) noexcept {
  if constexpr (kOdd == 0) {
    return __builtin_shufflevector(v, v, 0, 2, 4, 6, 8, 10, 12, 14);
  } else {
    return __builtin_shufflevector(v, v, 1, 3, 5, 7, 9, 11, 13, 15);
  }
}

// dense_group16 storing act(outputs) into rows y[k] = y + k * ys.
template <int In, int Out, int kRows, bool kRelu, int kZeroFrom, int kZeroTo, bool kSparse, int kC0,
          int kG, bool kWithTail>
[[gnu::always_inline]] inline void dense_group16_store(
    const float* __restrict wt, const float* __restrict b, const float* __restrict x, size_t xs,
    const float* __restrict xp, float* __restrict y, size_t ys, uint32_t live) noexcept {
  constexpr int kT = Out / 16 * 16;
  constexpr int kPairs = kRows > 1 ? kRows / 2 : 1;
  dense_group16<In, Out, kRows, kZeroFrom, kZeroTo, kSparse, kC0, kG, kWithTail>(
      wt, b, x, xs, xp, live, [&](auto& acc, auto& pacc) __attribute__((always_inline)) {
#pragma GCC unroll 16
        for (int k = 0; k < kRows; ++k)
#pragma GCC unroll 16
          for (int g = 0; g < kG; ++g) {
            v16f v = acc[k][g];
            if constexpr (kRelu) v = v > 0.0f ? v : v16f{};
            store16(y + k * ys + (kC0 + g) * 16, v);
          }
        if constexpr (kWithTail) {
#pragma GCC unroll 16
          for (int p = 0; p < kPairs; ++p) {
            v16f v = pacc[p];
            if constexpr (kRelu) v = v > 0.0f ? v : v16f{};
            store8(y + 2 * p * ys + kT, pair_half<0>(v));
            if constexpr (kRows > 1) store8(y + (2 * p + 1) * ys + kT, pair_half<1>(v));
          }
        }
      });
}

// Vectors [kC0, Out / 16) in groups: 2 vectors per row (with the tail in the first group:
// 8 rows make 20 accumulators of the 32 registers) or, for one row, all of them.
template <int In, int Out, int kRows, bool kRelu, int kZeroFrom, int kZeroTo, bool kSparse,
          int kC0>
[[gnu::always_inline]] inline void dense_groups16(const float* __restrict wt,
                                                  const float* __restrict b,
                                                  const float* __restrict x, size_t xs,
                                                  const float* __restrict xp,
                                                  float* __restrict y, size_t ys,
                                                  uint32_t live) noexcept {
  constexpr int kChunks = Out / 16;
  constexpr int kMax = kRows == 1 ? kChunks : 2;
  constexpr int kG = kChunks - kC0 < kMax ? kChunks - kC0 : kMax;
  constexpr bool kWithTail = kC0 == 0 && Out % 16 != 0;
  dense_group16_store<In, Out, kRows, kRelu, kZeroFrom, kZeroTo, kSparse, kC0, kG, kWithTail>(
      wt, b, x, xs, xp, y, ys, live);
  if constexpr (kC0 + kG < kChunks)
    dense_groups16<In, Out, kRows, kRelu, kZeroFrom, kZeroTo, kSparse, kC0 + kG>(wt, b, x, xs, xp,
                                                                                  y, ys, live);
}

template <int In, int Out, int kRows, bool kRelu, int kZeroFrom, int kZeroTo, bool kSparse>
[[gnu::always_inline]] inline void dense_tile16(const float* __restrict wt,
                                                const float* __restrict b,
                                                const float* __restrict x, size_t xs,
                                                float* __restrict y, size_t ys,
                                                uint32_t live) noexcept {
  static_assert(Out % 8 == 0, "outputs come in 8-float vectors");
  static_assert(0 <= kZeroFrom && kZeroFrom <= kZeroTo && kZeroTo <= In);
  static_assert(!kSparse || (In <= 32 && kZeroFrom == In), "a live mask covers every input");
  if constexpr (kRows > 1 && Out % 16 != 0) {
    static_assert(In % 8 == 0);
    alignas(64) float xp[kRows / 2][2 * In];
#pragma GCC unroll 16
    for (int p = 0; p < kRows / 2; ++p)
      for (int c = 0; c < In; c += 8) {
        const v8f lo = load8(x + 2 * p * xs + c), hi = load8(x + (2 * p + 1) * xs + c);
        store16(&xp[p][2 * c], __builtin_shufflevector(lo, hi, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5,
                                                       13, 6, 14, 7, 15));
      }
    dense_groups16<In, Out, kRows, kRelu, kZeroFrom, kZeroTo, kSparse, 0>(wt, b, x, xs, &xp[0][0],
                                                                          y, ys, live);
  } else {
    dense_groups16<In, Out, kRows, kRelu, kZeroFrom, kZeroTo, kSparse, 0>(wt, b, x, xs, nullptr, y,
                                                                          ys, live);
  }
}

// The dense layer of a build: kWide = the AVX-512 build.
template <bool kWide, int In, int Out, int kRows, bool kRelu, int kZeroFrom = In,
          int kZeroTo = In>
[[gnu::always_inline]] inline void dense(const float* __restrict wt, const float* __restrict b,
                                         const float* __restrict x, size_t xs,
                                         float* __restrict y, size_t ys) noexcept {
  if constexpr (kWide) {
    dense_tile16<In, Out, kRows, kRelu, kZeroFrom, kZeroTo, false>(wt, b, x, xs, y, ys, 0);
  } else {
    dense_tile<In, Out, kRows, kRelu, kZeroFrom, kZeroTo>(wt, b, x, xs, y, ys);
  }
}

// Bit i set if input i is not zero in some row of x[0 .. kRows) (row stride xs; In <= 32).
template <int In, int kRows>
[[gnu::always_inline]] inline uint32_t live_inputs(const float* __restrict x, size_t xs) noexcept {
  static_assert(In % 8 == 0 && In <= 32);
  v8i any[In / 8] = {};
  for (int k = 0; k < kRows; ++k)
    for (int c = 0; c < In / 8; ++c) any[c] |= load8(x + k * xs + c * 8) != 0.0f;
  uint32_t live = 0;
  for (int c = 0; c < In / 8; ++c)
    for (int j = 0; j < 8; ++j) live |= static_cast<uint32_t>(any[c][j] & 1) << (c * 8 + j);
  return live;
}

// A dense layer whose inputs follow a ReLU: only the inputs `live` marks (live_inputs) are
// added, in ascending order. Skipping an input that is zero in every row of the tile gives
// the same bits as adding it: its products are +-0, and an accumulator, which starts at its
// bias (never -0: FastMpnn stores -0 biases as +0), is never -0, so adding +-0 changes
// nothing (weights are finite: the model file refuses others). Trained networks leave many
// hidden units dead: with the shipped GraphCC model on the K=16 fat tree's live counters,
// about half of the message MLP's on every edge, and 43% of the readout's in a tile of 8.
template <bool kWide, int In, int Out, int kRows, bool kRelu>
[[gnu::always_inline]] inline void dense_live(const float* __restrict wt, const float* __restrict b,
                                              const float* __restrict x, size_t xs,
                                              float* __restrict y, size_t ys,
                                              uint32_t live) noexcept {
  if constexpr (kWide) {
    dense_tile16<In, Out, kRows, kRelu, In, In, true>(wt, b, x, xs, y, ys, live);
  } else {
    dense_tile<In, Out, kRows, kRelu, In, In, true>(wt, b, x, xs, y, ys, live);
  }
}

// Rows per tile: 4 with 8-float vectors (12 accumulators), 8 with 16-float ones.
template <bool kWide>
constexpr int kTileRowsOf = kWide ? 8 : 4;

// Index of the largest of v[0..n) with the scalar rule "v[i] > v[best] moves best": the
// first occurrence of the maximum; NaNs never win, except that a NaN at 0 is never beaten.
// That index is the first i with v[i] == M, M the largest value that is not a NaN (v[0] is
// not one): == holds for exactly the values > never moves past (+0 and -0 included). So M
// is found first, over four independent running maxima (one running maximum with the block
// that reached it was a chain of dependent compares and blends: 7% of a control step on an
// Intel core), then the first lane equal to it.
[[gnu::always_inline]] inline int argmax_body(const float* v, int n) noexcept {
  if (n <= 0 || !(v[0] == v[0])) return 0;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  float best_v = kNegInf;
  int i = 0;
  if (n >= 8) {
    v8f m[4] = {v8f{} + kNegInf, v8f{} + kNegInf, v8f{} + kNegInf, v8f{} + kNegInf};
    for (; i + 32 <= n; i += 32)
      for (int j = 0; j < 4; ++j) {
        const v8f x = load8(v + i + 8 * j);
        m[j] = x > m[j] ? x : m[j];  // a NaN never replaces
      }
    for (; i + 8 <= n; i += 8) {
      const v8f x = load8(v + i);
      m[0] = x > m[0] ? x : m[0];
    }
    v8f t = m[0] > m[1] ? m[0] : m[1];
    const v8f u = m[2] > m[3] ? m[2] : m[3];
    t = t > u ? t : u;
    for (int j = 0; j < 8; ++j) best_v = t[j] > best_v ? t[j] : best_v;
  }
  for (int j = i; j < n; ++j) best_v = v[j] > best_v ? v[j] : best_v;
  int at = 0;
  for (; at + 8 <= n; at += 8) {
    const v8i eq = load8(v + at) == best_v;
    uint32_t hit = 0;
    for (int j = 0; j < 8; ++j) hit |= static_cast<uint32_t>(eq[j] & 1) << j;
    if (hit != 0) return at + __builtin_ctz(hit);
  }
  for (; at < n; ++at)
    if (v[at] == best_v) return at;
  return 0;  // not reached: v[0] is not a NaN, so some value equals the largest
}

}  // namespace rocemu::agent::kernels
