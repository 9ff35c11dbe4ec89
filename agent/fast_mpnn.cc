// fast_mpnn.cc — torch-free MPNN and ACC forward passes (GraphCC Sec. 4; ACC Sec. 4.2).
//
// GraphCC cost per inference in multiply-adds, N agents and E edges (u -> v pairs):
//   each of the kMpSteps = 2 steps: N x 2 x 24 x 24 (factored first message layer)
//                                   + E x 24 x 24 (second message layer)
//                                   + N x (72 x 24 + 24 x 24) (update MLP),
//   readout: N x (24 x 32 + 32 x 120),
// less the first step's zero padding (h_v is the 9 features and 15 zeros: N x 15 x 72).
// Paper's Clos (N = 40, E = 96): 0.53 M. K=16 fat tree (N = 5,120, E = 65,536, 12.8 ingress
// neighbours per agent): 129 M, 25.2 k per agent, of which 14.7 k in edge messages; at 16 FMA
// lanes per cycle (two 256-bit FMA pipes) that is >= 1,574 cycles per agent per step whatever
// the data layout, at 32 (two 512-bit pipes, the AVX-512 build on Zen 5) >= 787.
// Those are the counts with every hidden unit added. Units a ReLU left at zero add nothing and
// are skipped (dense_live): in the edge pass the units no edge can make positive, in the
// update and readout MLPs those zero in a whole tile of agents. The shipped trained model on
// the K=16 fat tree's live counters keeps 10-12 of the 24 message units, so its edge messages
// cost ~6.6 k multiply-adds per agent, not 14.7 k (random weights and features keep more).
// ACC: per agent 12 x 32 + 32 x 120 = 4.2 k multiply-adds on 17.5 KB of its own weights, so
// with thousands of ports the pass streams its weights from memory.
//
// Summation order: every output is its bias, then its inputs' products in ascending input
// order (one FMA each in the AVX2 and AVX-512 builds, so both give the same bits); skipped
// inputs are exact zeros. The min and max
// of a receiver fold its messages in edge order. So the values do not depend on the tiling.
#include "agent/fast_mpnn.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace rocemu::agent {

namespace {

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
    if constexpr (kSparse) {
      for (uint32_t m = live; m != 0; m &= m - 1) add_input<Out>(acc, wt, x, xs, vc, __builtin_ctz(m));
    } else {
      for (int i = 0; i < kZeroFrom; ++i) add_input<Out>(acc, wt, x, xs, vc, i);
      for (int i = kZeroTo; i < In; ++i) add_input<Out>(acc, wt, x, xs, vc, i);
    }
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
// the last 8 outputs. xp: per pair of rows, its inputs interleaved (kRows > 1 with a tail).
template <int In, int Out, int kRows, bool kRelu, int kZeroFrom, int kZeroTo, bool kSparse,
          int kC0, int kG, bool kWithTail>
[[gnu::always_inline]] inline void dense_group16(const float* __restrict wt,
                                                 const float* __restrict b,
                                                 const float* __restrict x, size_t xs,
                                                 const float* __restrict xp,
                                                 float* __restrict y, size_t ys,
                                                 uint32_t live) noexcept {
  constexpr int kS = kWideRow<Out>;  // floats per weight row
  constexpr int kT = Out / 16 * 16;  // first tail output
  constexpr int kPairs = kRows > 1 ? kRows / 2 : 1;
  static_assert(kRows == 1 || kRows % 2 == 0, "the tail pairs rows");
  static_assert(kG + (kWithTail ? 1 : 0) >= 1);
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
    const float* wi = wt + static_cast<size_t>(i) * kS;
    v16f w[kG > 0 ? kG : 1];
#pragma GCC unroll 16
    for (int g = 0; g < kG; ++g) w[g] = load16(wi + (kC0 + g) * 16);
#pragma GCC unroll 16
    for (int k = 0; k < kRows; ++k) {
      const float xi = x[k * xs + i];
#pragma GCC unroll 16
      for (int g = 0; g < kG; ++g) acc[k][g] += xi * w[g];
    }
    if constexpr (kWithTail) {
      const v16f wd = load16(wi + kT);
      if constexpr (kRows > 1) {
#pragma GCC unroll 16
        for (int p = 0; p < kPairs; ++p) pacc[p] += splat_pair(xp + p * 2 * In + 2 * i) * wd;
      } else {
        pacc[0] += x[i] * wd;
      }
    }
  };
  if constexpr (kSparse) {
    for (uint32_t m = live; m != 0; m &= m - 1) add(__builtin_ctz(m));
  } else {
    for (int i = 0; i < kZeroFrom; ++i) add(i);
    for (int i = kZeroTo; i < In; ++i) add(i);
  }
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
      store8(y + 2 * p * ys + kT, __builtin_shufflevector(v, v, 0, 2, 4, 6, 8, 10, 12, 14));
      if constexpr (kRows > 1)
        store8(y + (2 * p + 1) * ys + kT, __builtin_shufflevector(v, v, 1, 3, 5, 7, 9, 11, 13, 15));
    }
  }
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
  dense_group16<In, Out, kRows, kRelu, kZeroFrom, kZeroTo, kSparse, kC0, kG, kWithTail>(
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
// Eight lanes keep their running maximum and the first block that reached it.
[[gnu::always_inline]] inline int argmax_body(const float* v, int n) noexcept {
  if (n <= 0 || !(v[0] == v[0])) return 0;
  int best = 0;
  float best_v = v[0];
  int i = 0;
  if (n >= 8) {
    v8f m = v8f{} - std::numeric_limits<float>::infinity();
    v8i blk{};
    int b = 0;
    for (; i + 8 <= n; i += 8, ++b) {
      const v8f x = load8(v + i);
      const v8i gt = x > m;
      m = gt ? x : m;
      blk = gt ? v8i{} + b : blk;
    }
    best = 0;
    best_v = -std::numeric_limits<float>::infinity();
    for (int j = 0; j < 8; ++j) {
      const int at = blk[j] * 8 + j;
      if (m[j] > best_v || (m[j] == best_v && at < best)) {
        best = at;
        best_v = m[j];
      }
    }
  }
  for (; i < n; ++i)
    if (v[i] > best_v) {
      best = i;
      best_v = v[i];
    }
  return best;
}

// Floats per weight row (an input's weights, or the bias) of an Out-wide layer in a build.
template <bool kWide, int Out>
constexpr int kRowOf = kWide ? kWideRow<Out> : Out;

template <int In, int Out, bool kWide = false>
constexpr size_t layer_floats() {
  return static_cast<size_t>(In + 1) * kRowOf<kWide, Out>;
}

// Offsets of each transposed layer (weights then bias) in FastMpnn::wt_, then one row of
// zeros: the bias of the sender half of the first message layer. kWide: the AVX-512 build's
// layout (kWideRow).
template <bool kWide>
struct MpnnLayout {
  static constexpr size_t kMsg1 = 0;
  static constexpr size_t kMsg2 = kMsg1 + layer_floats<2 * kHidden, kMsgHidden, kWide>();
  static constexpr size_t kUpd1 = kMsg2 + layer_floats<kMsgHidden, kHidden, kWide>();
  static constexpr size_t kUpd2 = kUpd1 + layer_floats<3 * kHidden, kUpdHidden, kWide>();
  static constexpr size_t kRo1 = kUpd2 + layer_floats<kUpdHidden, kHidden, kWide>();
  static constexpr size_t kRo2 = kRo1 + layer_floats<kHidden, kReadoutHidden, kWide>();
  static constexpr size_t kZeroBias = kRo2 + layer_floats<kReadoutHidden, kNumActions, kWide>();
  static constexpr size_t kFloats = kZeroBias + kRowOf<kWide, kMsgHidden>;
  static_assert(kMsg2 % 8 == 0 && kUpd1 % 8 == 0 && kUpd2 % 8 == 0 && kRo1 % 8 == 0 &&
                kRo2 % 8 == 0 && kZeroBias % 8 == 0);
  static_assert(!kWide || (kMsg2 % 16 == 0 && kUpd1 % 16 == 0 && kUpd2 % 16 == 0 &&
                           kRo1 % 16 == 0 && kRo2 % 16 == 0 && kZeroBias % 16 == 0));
};

constexpr size_t kAccL1 = 0;
constexpr size_t kAccL2 = kAccL1 + layer_floats<kAccInputs, kAccHidden>();
constexpr size_t kAccFloats = kAccL2 + layer_floats<kAccHidden, kNumActions>();

// Per agent, x = (h, min, max): the update MLP's input.
constexpr int kX = 3 * kHidden;
// Every layer, weight row, bias and buffer row starts on a 32-byte boundary of the
// cache-line-aligned buffers, so no 8-float load straddles two cache lines.
static_assert(kAccL2 % 8 == 0 && kAccFloats % 8 == 0 && kX % 8 == 0 && kMsgHidden % 8 == 0);

// Appends layer (w row-major [out][in], b) transposed to `out`: a row per input, then the
// bias row. kWide: each row in the AVX-512 build's layout (kWideRow).
template <bool kWide = false, class Floats>
void append_transposed(Floats& out, const float* w, size_t in, size_t nout, const float* b) {
  // Every layer's Out is 16 A + 8 B, so the wide row is exactly kWideRow<Out> floats.
  const size_t whole = kWide ? nout / 16 * 16 : nout;
  for (size_t i = 0; i <= in; ++i) {
    // A bias of -0 is stored as +0 (b + 0 is b otherwise): see dense_live.
    auto at = [&](size_t o) { return i < in ? w[o * in + i] : b[o] + 0.0f; };
    for (size_t o = 0; o < whole; ++o) out.push_back(at(o));
    for (size_t o = whole; o < nout; ++o) out.insert(out.end(), 2, at(o));
  }
}

struct Mpnn {
  const float* wt;
  const int32_t* src;
  const int32_t* dst;
  const int32_t* in_offset;
  int n;
  int e;
  float* x;  // [n x kX]
  float* a;  // [n x kMsgHidden]
  float* s;  // [n x kMsgHidden]
  // Per unit of the first message layer, the largest a and s row entry written since the
  // last edge pass (NaN once one is NaN): a unit whose a + s bound is <= 0 is zero after the
  // ReLU on every edge, and the edge pass skips it.
  float* amax;  // [kMsgHidden]
  float* smax;  // [kMsgHidden]
  bool skip_dead;  // false: every unit is added (FastMpnn's skip_dead_units)
};

// Every input of an In-wide layer.
template <int In>
constexpr uint32_t kAllInputs = In == 32 ? ~0u : (1u << In) - 1;

// Folds rows x[0 .. kRows) (stride kMsgHidden) into the running maximum hi.
template <int kRows>
[[gnu::always_inline]] inline void fold_max(float* __restrict hi, const float* __restrict x) noexcept {
  for (int j = 0; j < kMsgHidden; j += 8) {
    v8f h = load8(hi + j);
    for (int k = 0; k < kRows; ++k) {
      const v8f v = load8(x + k * kMsgHidden + j);
      h = (h < v || v != v) ? v : h;
    }
    store8(hi + j, h);
  }
}

// Before an edge pass, min and max start at +inf / -inf (the first message replaces them);
// a port with no ingress neighbour aggregates zeros.
[[gnu::always_inline]] inline void reset_aggregates(const Mpnn& m, int v) noexcept {
  float* mn = m.x + static_cast<size_t>(v) * kX + kHidden;
  const bool any = m.in_offset[v] != m.in_offset[v + 1];
  const float inf = std::numeric_limits<float>::infinity();
  std::fill(mn, mn + kHidden, any ? inf : 0.0f);
  std::fill(mn + kHidden, mn + 2 * kHidden, any ? -inf : 0.0f);
}

// The first message layer's two halves for rows v0.., from hidden states h (stride hs);
// inputs [kZeroFrom, kHidden) of h are zeros.
template <bool kWide, int kRows, int kZeroFrom>
[[gnu::always_inline]] inline void message_halves(const Mpnn& m, int v0, const float* h,
                                                  size_t hs) noexcept {
  using L = MpnnLayout<kWide>;
  constexpr size_t kRow = kRowOf<kWide, kMsgHidden>;
  const float* w1a = m.wt + L::kMsg1;
  const float* w1b = w1a + kHidden * kRow;
  const float* b1 = w1a + 2 * kHidden * kRow;
  const size_t o = static_cast<size_t>(v0) * kMsgHidden;
  dense<kWide, kHidden, kMsgHidden, kRows, false, kZeroFrom, kHidden>(w1a, b1, h, hs, m.a + o,
                                                                    kMsgHidden);
  dense<kWide, kHidden, kMsgHidden, kRows, false, kZeroFrom, kHidden>(w1b, m.wt + L::kZeroBias, h, hs,
                                                                    m.s + o, kMsgHidden);
  fold_max<kRows>(m.amax, m.a + o);
  fold_max<kRows>(m.smax, m.s + o);
}

// Messages of edges e0 .. e0 + kRows - 1: m = W2 relu(a_dst + s_src) + b2, folded into the
// receiver's min and max in edge order. kOneDst: the kRows edges go to one agent (edges are
// sorted by receiver; in a fat tree of k >= 8 every agent has a multiple of 4), so its a row
// is read once and its min and max are folded in registers.
template <bool kWide, int kRows, bool kOneDst>
[[gnu::always_inline]] inline void edge_tile(const Mpnn& m, int e0, uint32_t live) noexcept {
  alignas(64) float pre[kRows][kMsgHidden];
  alignas(64) float msg[kRows][kHidden];
  const int32_t* dst = m.dst + e0;
  const int32_t* src = m.src + e0;
  for (int k = 0; k < kRows; ++k) {
    const float* av = m.a + static_cast<size_t>(dst[kOneDst ? 0 : k]) * kMsgHidden;
    const float* su = m.s + static_cast<size_t>(src[k]) * kMsgHidden;
    for (int j = 0; j < kMsgHidden; j += 8) {
      const v8f z = load8(av + j) + load8(su + j);
      store8(&pre[k][j], z < 0.0f ? v8f{} : z);
    }
  }
  const float* w2 = m.wt + MpnnLayout<kWide>::kMsg2;
  dense_live<kWide, kMsgHidden, kHidden, kRows, false>(
      w2, w2 + kMsgHidden * kRowOf<kWide, kHidden>, &pre[0][0], kMsgHidden, &msg[0][0], kHidden,
      live);
  for (int k0 = 0, k1; k0 < kRows; k0 = k1) {
    // Edges k0 .. k1 - 1 go to one receiver.
    k1 = kRows;
    if constexpr (!kOneDst)
      for (k1 = k0 + 1; k1 < kRows && dst[k1] == dst[k0];) ++k1;
    float* mn = m.x + static_cast<size_t>(dst[k0]) * kX + kHidden;
    float* mx = mn + kHidden;
    for (int j = 0; j < kHidden; j += 8) {
      v8f lo = load8(mn + j), hi = load8(mx + j);
      for (int k = k0; k < k1; ++k) {
        const v8f me = load8(&msg[k][j]);
        lo = me < lo ? me : lo;
        hi = hi < me ? me : hi;
      }
      store8(mn + j, lo);
      store8(mx + j, hi);
    }
  }
}

// Before the first message layer of a step: no a or s row seen yet.
[[gnu::always_inline]] inline void reset_bounds(const Mpnn& m) noexcept {
  std::fill(m.amax, m.amax + kMsgHidden, -std::numeric_limits<float>::infinity());
  std::fill(m.smax, m.smax + kMsgHidden, -std::numeric_limits<float>::infinity());
}

// The edge pass skips the units of the first message layer that are zero after its ReLU on
// every edge: a + s <= amax + smax <= 0 (float addition is monotone, so the bound holds
// for the rounded sums; a NaN bound keeps the unit). Skipping them gives the same bits (see
// dense_live). Trained networks leave many units dead: the shipped GraphCC model about half
// of them on the K=16 fat tree's live counters, the same units on every edge.
template <bool kWide>
[[gnu::always_inline]] inline void edge_pass(const Mpnn& m) noexcept {
  uint32_t live = m.skip_dead ? 0 : kAllInputs<kMsgHidden>;
  for (int j = 0; j < kMsgHidden; ++j)
    if (!(m.amax[j] + m.smax[j] <= 0.0f)) live |= 1u << j;
  reset_bounds(m);
  constexpr int kTileRows = kTileRowsOf<kWide>;
  int e = 0;
  for (; e + kTileRows <= m.e; e += kTileRows) {
    if (m.dst[e] == m.dst[e + kTileRows - 1]) {
      edge_tile<kWide, kTileRows, true>(m, e, live);
    } else {
      edge_tile<kWide, kTileRows, false>(m, e, live);
    }
  }
  for (; e < m.e; ++e) edge_tile<kWide, 1, true>(m, e, live);
}

// Update of agents v0 .. v0 + kRows - 1: h = upd2(relu(upd1(h, min, max))). Then, unless
// this is the last step, the new h and the next step's first message layer; after the last,
// the readout into q rows (stride kNumActions), or its argmax into actions.
template <bool kWide, int kRows, bool kFirst, bool kLast, bool kGreedy>
[[gnu::always_inline]] inline void node_tile(const Mpnn& m, int v0, float* q,
                                             uint16_t* actions) noexcept {
  float* x = m.x + static_cast<size_t>(v0) * kX;
  alignas(64) float z[kRows][kUpdHidden];
  alignas(64) float h[kRows][kHidden];
  using L = MpnnLayout<kWide>;
  const float* u1 = m.wt + L::kUpd1;
  const float* u2 = m.wt + L::kUpd2;
  // In the first step, h is the features and zeros.
  constexpr int kPadFrom = kFirst ? kNumFeatures : kX;
  constexpr int kPadTo = kFirst ? kHidden : kX;
  dense<kWide, kX, kUpdHidden, kRows, true, kPadFrom, kPadTo>(
      u1, u1 + kX * kRowOf<kWide, kUpdHidden>, x, kX, &z[0][0], kUpdHidden);
  dense_live<kWide, kUpdHidden, kHidden, kRows, false>(
      u2, u2 + kUpdHidden * kRowOf<kWide, kHidden>, &z[0][0], kUpdHidden, &h[0][0], kHidden,
      m.skip_dead ? live_inputs<kUpdHidden, kRows>(&z[0][0], kUpdHidden) : kAllInputs<kUpdHidden>);
  if constexpr (!kLast) {
    for (int k = 0; k < kRows; ++k) {
      std::memcpy(x + static_cast<size_t>(k) * kX, h[k], sizeof(h[k]));
      reset_aggregates(m, v0 + k);
    }
    message_halves<kWide, kRows, kHidden>(m, v0, &h[0][0], kHidden);
  } else {
    alignas(64) float r[kRows][kReadoutHidden];
    const float* r1 = m.wt + L::kRo1;
    const float* r2 = m.wt + L::kRo2;
    dense<kWide, kHidden, kReadoutHidden, kRows, true>(
        r1, r1 + kHidden * kRowOf<kWide, kReadoutHidden>, &h[0][0], kHidden, &r[0][0],
        kReadoutHidden);
    const float* b2 = r2 + kReadoutHidden * kRowOf<kWide, kNumActions>;
    const uint32_t live = m.skip_dead ? live_inputs<kReadoutHidden, kRows>(&r[0][0], kReadoutHidden)
                                      : kAllInputs<kReadoutHidden>;
    if constexpr (kGreedy) {
      alignas(64) float qt[kRows][kNumActions];
      dense_live<kWide, kReadoutHidden, kNumActions, kRows, false>(
          r2, b2, &r[0][0], kReadoutHidden, &qt[0][0], kNumActions, live);
      for (int k = 0; k < kRows; ++k)
        actions[v0 + k] = static_cast<uint16_t>(argmax_body(qt[k], kNumActions));
    } else {
      dense_live<kWide, kReadoutHidden, kNumActions, kRows, false>(
          r2, b2, &r[0][0], kReadoutHidden, q + static_cast<size_t>(v0) * kNumActions, kNumActions,
          live);
    }
  }
}

template <bool kWide, bool kFirst, bool kLast, bool kGreedy>
[[gnu::always_inline]] inline void node_pass(const Mpnn& m, float* q, uint16_t* actions) noexcept {
  constexpr int kTileRows = kTileRowsOf<kWide>;
  int v = 0;
  for (; v + kTileRows <= m.n; v += kTileRows)
    node_tile<kWide, kTileRows, kFirst, kLast, kGreedy>(m, v, q, actions);
  for (; v < m.n; ++v) node_tile<kWide, 1, kFirst, kLast, kGreedy>(m, v, q, actions);
}

template <bool kWide, bool kGreedy>
[[gnu::always_inline]] inline void mpnn_forward_body(const Mpnn& m, const float* features, float* q,
                                                     uint16_t* actions) noexcept {
  static_assert(kMpSteps == 2, "one first and one last step");
  for (int v = 0; v < m.n; ++v) {
    float* h = m.x + static_cast<size_t>(v) * kX;
    std::memcpy(h, features + static_cast<size_t>(v) * kNumFeatures, sizeof(float) * kNumFeatures);
    std::fill(h + kNumFeatures, h + kHidden, 0.0f);
    reset_aggregates(m, v);
  }
  reset_bounds(m);
  constexpr int kTileRows = kTileRowsOf<kWide>;
  int v = 0;
  for (; v + kTileRows <= m.n; v += kTileRows)
    message_halves<kWide, kTileRows, kNumFeatures>(m, v, m.x + static_cast<size_t>(v) * kX, kX);
  for (; v < m.n; ++v)
    message_halves<kWide, 1, kNumFeatures>(m, v, m.x + static_cast<size_t>(v) * kX, kX);
  edge_pass<kWide>(m);
  node_pass<kWide, true, false, kGreedy>(m, q, actions);
  edge_pass<kWide>(m);
  node_pass<kWide, false, true, kGreedy>(m, q, actions);
}

// Agents 0 .. n - 1 of the ACC nets, one network each.
template <bool kGreedy>
[[gnu::always_inline]] inline void acc_forward_body(const float* wt, int n, const float* features,
                                                    const float* settings, float* q,
                                                    uint16_t* actions) noexcept {
  for (int v = 0; v < n; ++v) {
    const float* w = wt + static_cast<size_t>(v) * kAccFloats;
    alignas(64) float x[kAccInputs], z[kAccHidden], qv[kNumActions];
    std::memcpy(x, features + static_cast<size_t>(v) * kNumFeatures, sizeof(float) * kNumFeatures);
    std::memcpy(x + kNumFeatures, settings + static_cast<size_t>(v) * kNumSettingFeatures,
                sizeof(float) * kNumSettingFeatures);
    dense_tile<kAccInputs, kAccHidden, 1, true>(w + kAccL1, w + kAccL1 + kAccInputs * kAccHidden, x,
                                                kAccInputs, z, kAccHidden);
    float* out = kGreedy ? qv : q + static_cast<size_t>(v) * kNumActions;
    // The hidden units at zero are left out (same bits, see dense_live): their rows of the
    // second layer's weights, most of a port's 17.5 KB, are not even read.
    dense_tile<kAccHidden, kNumActions, 1, false, kAccHidden, kAccHidden, true>(
        w + kAccL2, w + kAccL2 + kAccHidden * kNumActions, z, kAccHidden, out, kNumActions,
        live_inputs<kAccHidden, 1>(z, kAccHidden));
    if constexpr (kGreedy) actions[v] = static_cast<uint16_t>(argmax_body(qv, kNumActions));
  }
}

// Three builds of each pass: AVX-512 (16-float vectors), AVX2 + FMA, and generic x86-64. The
// best the CPU has is chosen once at start-up with __builtin_cpu_supports (GCC's
// target_clones("arch=haswell") tests the CPU model, not its features, and so falls back to
// the generic build on AMD processors). The AVX-512 and AVX2 builds give the same bits.
#define ROCEMU_AVX512_TARGET __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma")))
template <bool kGreedy>
ROCEMU_AVX512_TARGET void mpnn_avx512(const Mpnn& m, const float* f, float* q,
                                      uint16_t* a) noexcept {
  mpnn_forward_body<true, kGreedy>(m, f, q, a);
}
template <bool kGreedy>
__attribute__((target("avx2,fma"))) void mpnn_avx2(const Mpnn& m, const float* f, float* q,
                                                   uint16_t* a) noexcept {
  mpnn_forward_body<false, kGreedy>(m, f, q, a);
}
template <bool kGreedy>
void mpnn_generic(const Mpnn& m, const float* f, float* q, uint16_t* a) noexcept {
  mpnn_forward_body<false, kGreedy>(m, f, q, a);
}
template <bool kGreedy>
__attribute__((target("avx2,fma"))) void acc_avx2(const float* wt, int n, const float* f,
                                                  const float* s, float* q, uint16_t* a) noexcept {
  acc_forward_body<kGreedy>(wt, n, f, s, q, a);
}
template <bool kGreedy>
void acc_generic(const float* wt, int n, const float* f, const float* s, float* q,
                 uint16_t* a) noexcept {
  acc_forward_body<kGreedy>(wt, n, f, s, q, a);
}
#undef ROCEMU_AVX512_TARGET

template <bool kGreedy>
void mpnn_forward(SimdBuild build, const Mpnn& m, const float* f, float* q, uint16_t* a) noexcept {
  switch (build) {
    case SimdBuild::avx512: return mpnn_avx512<kGreedy>(m, f, q, a);
    case SimdBuild::avx2: return mpnn_avx2<kGreedy>(m, f, q, a);
    case SimdBuild::generic: return mpnn_generic<kGreedy>(m, f, q, a);
  }
}
template <bool kGreedy>
void acc_forward(SimdBuild build, const float* wt, int n, const float* f, const float* s, float* q,
                 uint16_t* a) noexcept {
  switch (build) {
    // The ACC nets stream each port's own weights: at scale the pass is bound by memory, and
    // with one row per tile the 16-float layers would gain little. Same bits either way.
    case SimdBuild::avx512:
    case SimdBuild::avx2: return acc_avx2<kGreedy>(wt, n, f, s, q, a);
    case SimdBuild::generic: return acc_generic<kGreedy>(wt, n, f, s, q, a);
  }
}

SimdBuild checked(SimdBuild build) {
  if (!simd_build_supported(build))
    throw std::invalid_argument(std::string("fast forward pass: this CPU cannot run the ") +
                                simd_build_name(build) + " build");
  return build;
}

}  // namespace

int argmax(const float* v, int n) noexcept { return argmax_body(v, n); }

bool simd_build_supported(SimdBuild build) noexcept {
  __builtin_cpu_init();
  switch (build) {
    case SimdBuild::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("fma");
    case SimdBuild::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case SimdBuild::generic: return true;
  }
  return false;
}

SimdBuild best_simd_build() noexcept {
  static const SimdBuild best = simd_build_supported(SimdBuild::avx512) ? SimdBuild::avx512
                                : simd_build_supported(SimdBuild::avx2) ? SimdBuild::avx2
                                                                         : SimdBuild::generic;
  return best;
}

const char* simd_build_name(SimdBuild build) noexcept {
  switch (build) {
    case SimdBuild::avx512: return "AVX-512";
    case SimdBuild::avx2: return "AVX2+FMA";
    case SimdBuild::generic: return "generic x86-64";
  }
  return "?";
}

FastMpnn::FastMpnn(const MpnnWeights& w, const PortGraph& graph, SimdBuild build,
                   bool skip_dead_units)
    : build_(checked(build)),
      skip_dead_(skip_dead_units),
      n_(graph.num_agents()),
      src_(graph.edge_src()),
      dst_(graph.edge_dst()),
      in_offset_(graph.in_offset()) {
  auto append = [&]<bool kWide>() {
    wt_.reserve(MpnnLayout<kWide>::kFloats);
    append_transposed<kWide>(wt_, w.msg1.w.data(), 2 * kHidden, kMsgHidden, w.msg1.b.data());
    append_transposed<kWide>(wt_, w.msg2.w.data(), kMsgHidden, kHidden, w.msg2.b.data());
    append_transposed<kWide>(wt_, w.upd1.w.data(), 3 * kHidden, kUpdHidden, w.upd1.b.data());
    append_transposed<kWide>(wt_, w.upd2.w.data(), kUpdHidden, kHidden, w.upd2.b.data());
    append_transposed<kWide>(wt_, w.ro1.w.data(), kHidden, kReadoutHidden, w.ro1.b.data());
    append_transposed<kWide>(wt_, w.ro2.w.data(), kReadoutHidden, kNumActions, w.ro2.b.data());
    wt_.resize(MpnnLayout<kWide>::kFloats, 0.0f);
  };
  if (build_ == SimdBuild::avx512) {
    append.operator()<true>();
  } else {
    append.operator()<false>();
  }
  const size_t n = static_cast<size_t>(n_);
  x_.assign(n * kX, 0.0f);
  a_.assign(n * kMsgHidden, 0.0f);
  s_.assign(n * kMsgHidden, 0.0f);
  bounds_.assign(2 * kMsgHidden, 0.0f);
}

void FastMpnn::forward(const float* features, float* q, uint16_t* actions) noexcept {
  const Mpnn m{.wt = wt_.data(),
               .src = src_.data(),
               .dst = dst_.data(),
               .in_offset = in_offset_.data(),
               .n = n_,
               .e = static_cast<int>(src_.size()),
               .x = x_.data(),
               .a = a_.data(),
               .s = s_.data(),
               .amax = bounds_.data(),
               .smax = bounds_.data() + kMsgHidden,
               .skip_dead = skip_dead_};
  if (actions) {
    mpnn_forward<true>(build_, m, features, nullptr, actions);
  } else {
    mpnn_forward<false>(build_, m, features, q, nullptr);
  }
}

void FastMpnn::q_values(const float* features, float* q) noexcept { forward(features, q, nullptr); }

void FastMpnn::greedy(const float* features, uint16_t* actions) noexcept {
  forward(features, nullptr, actions);
}

FastAccNets::FastAccNets(const std::vector<AccNetWeights>& nets, SimdBuild build)
    : build_(checked(build)), n_(static_cast<int>(nets.size())) {
  wt_.reserve(nets.size() * kAccFloats);
  for (const auto& net : nets) {
    append_transposed(wt_, net.l1.w.data(), kAccInputs, kAccHidden, net.l1.b.data());
    append_transposed(wt_, net.l2.w.data(), kAccHidden, kNumActions, net.l2.b.data());
  }
}

void FastAccNets::q_values(const float* features, const float* settings, float* q) noexcept {
  acc_forward<false>(build_, wt_.data(), n_, features, settings, q, nullptr);
}

void FastAccNets::greedy(const float* features, const float* settings, uint16_t* actions) noexcept {
  acc_forward<true>(build_, wt_.data(), n_, features, settings, nullptr, actions);
}

}  // namespace rocemu::agent
