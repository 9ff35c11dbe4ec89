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
// update and readout MLPs those zero in a whole tile of agents; and when at most 16 units of
// the message MLP's or the update MLP's first layer can be positive this step (bounds over
// the agents, mpnn_compact.h), that layer is computed for those only. The shipped trained
// model on the K=16 fat tree's live counters keeps 13-14 of the 24 message units and 11-13
// of the update's, and about 12 message units on every tile of edges.
// ACC: per agent 12 x 32 + 32 x 120 = 4.2 k multiply-adds on 17.5 KB of its own weights, so
// with thousands of ports the pass streams its weights from memory.
//
// Summation order: every output is its bias, then its inputs' products in ascending input
// order (one FMA each in the AVX2 and AVX-512 builds, so both give the same bits); skipped
// inputs are exact zeros. The min and max of a receiver fold its messages in edge order. So
// the values do not depend on the tiling. The dense layers themselves: dense_kernels.h.
#include "agent/fast_mpnn.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "agent/dense_kernels.h"
#include "agent/mpnn_compact.h"
#include "agent/mpnn_pass.h"

namespace rocemu::agent {

namespace {

using namespace kernels;
using namespace mpnn;

constexpr size_t kAccL1 = 0;
constexpr size_t kAccL2 = kAccL1 + layer_floats<kAccInputs, kAccHidden>();
constexpr size_t kAccFloats = kAccL2 + layer_floats<kAccHidden, kNumActions>();

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

// Folds rows x[0 .. kRows) (kU units each) into the running maximum hi.
template <int kRows, int kU>
[[gnu::always_inline]] inline void fold_max(float* __restrict hi,
                                            const float* __restrict x) noexcept {
  for (int j = 0; j < kU; j += 8) {
    v8f h = load8(hi + j);
    for (int k = 0; k < kRows; ++k) {
      const v8f v = load8(x + k * kU + j);
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
// inputs [kZeroFrom, kHidden) of h are zeros. kU: the layer's units, all kMsgHidden, or the
// kCompactUnits of compact_messages (rows of a and s are kU floats).
template <bool kWide, int kRows, int kZeroFrom, int kU>
[[gnu::always_inline]] inline void message_halves(const Mpnn& m, int v0, const float* h,
                                                  size_t hs) noexcept {
  using L = MpnnLayout<kWide>;
  constexpr bool kAll = kU == kMsgHidden;
  constexpr size_t kRow = kRowOf<kWide, kU>;
  const float* w1a = kAll ? m.wt + L::kMsg1 : m.cm;
  const float* w1b = w1a + kHidden * kRow;
  const float* b1 = w1a + 2 * kHidden * kRow;
  const float* zero = kAll ? m.wt + L::kZeroBias : b1 + kRow;
  const size_t o = static_cast<size_t>(v0) * kU;
  dense<kWide, kHidden, kU, kRows, false, kZeroFrom, kHidden>(w1a, b1, h, hs, m.a + o, kU);
  dense<kWide, kHidden, kU, kRows, false, kZeroFrom, kHidden>(w1b, zero, h, hs, m.s + o, kU);
  fold_max<kRows, kU>(m.amax, m.a + o);
  fold_max<kRows, kU>(m.smax, m.s + o);
}

// The second message layer (kU inputs: see message_halves).
template <bool kWide, int kU>
[[gnu::always_inline]] inline const float* message_out(const Mpnn& m) noexcept {
  return kU == kMsgHidden ? m.wt + MpnnLayout<kWide>::kMsg2 : m.cm + kCompactMsg2;
}

// The AVX-512 build's tile of 8 edges to one receiver (a fat tree's graph has only such
// tiles): the same values as edge_tile, in fewer instructions. relu(a_dst + s_src) goes
// straight into the layout of the tail's row pairs (dense_group16's xp), with no rows stored
// and interleaved, and the receiver's min and max fold the accumulators in registers, with
// edge_tile's values (the last 8 units pair by pair: see fold). (Two such tiles at once, 16
// edges: 10% slower, registers spill.)
template <int kU>
[[gnu::always_inline]] inline void edge_tile_pairs(const Mpnn& m, int e0, uint32_t live) noexcept {
  static_assert(kHidden == 24, "16 outputs, then a tail of 8");
  static_assert(kU == 16 || kU == 24);
  constexpr int kRows = 8;
  constexpr int kPairs = kRows / 2;
  const int32_t* src = m.src + e0;
  const float* av = m.a + static_cast<size_t>(m.dst[e0]) * kU;
  const v16f a16 = load16(av);
  alignas(64) float xp[kPairs][2 * kU];
  for (int p = 0; p < kPairs; ++p) {
    const float* s0 = m.s + static_cast<size_t>(src[2 * p]) * kU;
    const float* s1 = m.s + static_cast<size_t>(src[2 * p + 1]) * kU;
    v16f z0 = a16 + load16(s0), z1 = a16 + load16(s1);
    z0 = z0 < 0.0f ? v16f{} : z0;
    z1 = z1 < 0.0f ? v16f{} : z1;
    store16(&xp[p][0], __builtin_shufflevector(z0, z1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6,
                                               22, 7, 23));
    store16(&xp[p][16], __builtin_shufflevector(z0, z1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13,
                                                29, 14, 30, 15, 31));
    if constexpr (kU == 24) {
      const v8f a8 = load8(av + 16);
      v8f t0 = a8 + load8(s0 + 16), t1 = a8 + load8(s1 + 16);
      t0 = t0 < 0.0f ? v8f{} : t0;
      t1 = t1 < 0.0f ? v8f{} : t1;
      store16(&xp[p][32], __builtin_shufflevector(t0, t1, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6,
                                                  14, 7, 15));
    }
  }
  const float* w2 = message_out<true, kU>(m);
  float* mn = m.x + static_cast<size_t>(m.dst[e0]) * kX + kHidden;
  float* mx = mn + kHidden;
  // The last 8 units are folded in their row pairs' lanes first (each lane over 4 rows), then
  // the pairs' halves once: 16 operations per tile instead of 24, every one of them on the
  // FMAs' two ports of an Intel core. The order of a minimum does not change its bits here:
  // no value is -0 (an accumulator starts at its bias, stored as +0 if -0, and adds to it;
  // the receiver's min and max start at +-inf or +0), so equal values have equal bits, and a
  // NaN never replaces a number (the lanes start at +-inf, which a NaN row leaves as it is,
  // and a NaN min or max stays NaN: edge_tile's rule, edge by edge).
  // Avx512BuildFoldsNonFiniteMessagesAsTheAvx2Build checks it against the AVX2 build.
  auto fold = [&](auto& acc, auto& pacc) __attribute__((always_inline)) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    v16f lo = load16(mn), hi = load16(mx);
    v16f plo = v16f{} + kInf, phi = v16f{} - kInf;
    for (int p = 0; p < kPairs; ++p) {
      for (int r = 0; r < 2; ++r) {
        const v16f me = acc[2 * p + r][0];
        lo = me < lo ? me : lo;
        hi = hi < me ? me : hi;
      }
      plo = pacc[p] < plo ? pacc[p] : plo;
      phi = phi < pacc[p] ? pacc[p] : phi;
    }
    v8f lo8 = load8(mn + 16), hi8 = load8(mx + 16);
    const v8f tlo[2] = {pair_half<0>(plo), pair_half<1>(plo)};
    const v8f thi[2] = {pair_half<0>(phi), pair_half<1>(phi)};
    for (int r = 0; r < 2; ++r) {
      lo8 = tlo[r] < lo8 ? tlo[r] : lo8;
      hi8 = hi8 < thi[r] ? thi[r] : hi8;
    }
    store16(mn, lo);
    store16(mx, hi);
    store8(mn + 16, lo8);
    store8(mx + 16, hi8);
    if (m.fold_aggregates && m.in_offset[m.dst[e0] + 1] == e0 + kRows)
      fold_aggregate_bounds(m, m.dst[e0]);
  };
  dense_group16<kU, kHidden, kRows, kU, kU, true, 0, 1, true, true>(
      w2, w2 + kU * kWideRow<kHidden>, nullptr, 0, &xp[0][0], live, fold);
}

// Messages of edges e0 .. e0 + kRows - 1: m = W2 relu(a_dst + s_src) + b2, folded into the
// receiver's min and max in edge order. kOneDst: the kRows edges go to one agent (edges are
// sorted by receiver; in a fat tree of k >= 8 every agent has a multiple of 4), so its a row
// is read once and its min and max are folded in registers. kU: see message_halves.
template <bool kWide, int kRows, bool kOneDst, int kU>
[[gnu::always_inline]] inline void edge_tile(const Mpnn& m, int e0, uint32_t live) noexcept {
  alignas(64) float pre[kRows][kU];
  alignas(64) float msg[kRows][kHidden];
  const int32_t* dst = m.dst + e0;
  const int32_t* src = m.src + e0;
  for (int k = 0; k < kRows; ++k) {
    const float* av = m.a + static_cast<size_t>(dst[kOneDst ? 0 : k]) * kU;
    const float* su = m.s + static_cast<size_t>(src[k]) * kU;
    for (int j = 0; j < kU; j += 8) {
      const v8f z = load8(av + j) + load8(su + j);
      store8(&pre[k][j], z < 0.0f ? v8f{} : z);
    }
  }
  const float* w2 = message_out<kWide, kU>(m);
  dense_live<kWide, kU, kHidden, kRows, false>(w2, w2 + kU * kRowOf<kWide, kHidden>, &pre[0][0], kU,
                                               &msg[0][0], kHidden, live);
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
    if (m.fold_aggregates && m.in_offset[dst[k0] + 1] == e0 + k1) fold_aggregate_bounds(m, dst[k0]);
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
// kU: the message units (message_halves), of which `slots` are the layer's (compact_messages
// pads its units with zero ones).
template <bool kWide, int kU>
[[gnu::always_inline]] inline void edge_pass(const Mpnn& m, uint32_t slots) noexcept {
  uint32_t live = m.skip_dead ? 0 : kAllInputs<kU>;
  for (int j = 0; j < kU; ++j)
    if (!(m.amax[j] + m.smax[j] <= 0.0f)) live |= 1u << j;
  live &= slots;
  reset_bounds(m);
  reset_aggregate_bounds(m);
  constexpr int kTileRows = kTileRowsOf<kWide>;
  int e = 0;
  while (e + kTileRows <= m.e) {
    const bool one_dst = m.dst[e] == m.dst[e + kTileRows - 1];
    if constexpr (kWide) {
      if (one_dst) {
        edge_tile_pairs<kU>(m, e, live);
        e += kTileRows;
        continue;
      }
    } else if (one_dst) {
      edge_tile<kWide, kTileRows, true, kU>(m, e, live);
      e += kTileRows;
      continue;
    }
    edge_tile<kWide, kTileRows, false, kU>(m, e, live);
    e += kTileRows;
  }
  for (; e < m.e; ++e) edge_tile<kWide, 1, true, kU>(m, e, live);
}

// One step's messages: the first layer's halves of every agent from its h (in x), then the
// edge pass; with only the live units when they fit kCompactUnits (and skipping is on):
// returns whether they did.
template <bool kWide, int kZeroFrom>
[[gnu::always_inline]] inline bool message_step(const Mpnn& m) noexcept {
  reset_bounds(m);
  auto run = []<int kU>(const Mpnn& mm, uint32_t slots) __attribute__((always_inline)) {
    constexpr int kTileRows = kTileRowsOf<kWide>;
    int v = 0;
    for (; v + kTileRows <= mm.n; v += kTileRows)
      message_halves<kWide, kTileRows, kZeroFrom, kU>(mm, v, mm.x + static_cast<size_t>(v) * kX,
                                                      kX);
    for (; v < mm.n; ++v)
      message_halves<kWide, 1, kZeroFrom, kU>(mm, v, mm.x + static_cast<size_t>(v) * kX, kX);
    edge_pass<kWide, kU>(mm, slots);
  };
  constexpr int kStep = kZeroFrom == kHidden ? 1 : 0;
  if (m.skip_dead && try_compact(m.wait[kMpSteps + kStep])) {
    const uint32_t live = live_messages<kZeroFrom>(m);
    const int n = __builtin_popcount(live);
    if (n >= 1 && n <= kCompactUnits) {
      Mpnn ms = m;
      ms.cm += kStep * kCompactMsgFloats;
      run.template operator()<kCompactUnits>(ms,
                                             compact_messages<kWide>(ms, live, m.made_msg[kStep]));
      return true;
    }
    m.wait[kMpSteps + kStep] = kCompactRetryAfter;
  }
  run.template operator()<kMsgHidden>(m, kAllInputs<kMsgHidden>);
  return false;
}

// Update of agents v0 .. v0 + kRows - 1: h = upd2(relu(upd1(h, min, max))). Then, unless
// this is the last step, the new h and the next step's first message layer; after the last,
// the readout into q rows (stride kNumActions), or its argmax into actions.
// kCompact: with the update MLP of only its live units (compact_update).
// kFuse: the next step's first message layer too (every unit; see Mpnn::fuse).
template <bool kWide, int kRows, bool kFirst, bool kLast, bool kGreedy, bool kCompact, bool kFuse>
[[gnu::always_inline]] inline void node_tile(const Mpnn& m, int v0, float* q,
                                             uint16_t* actions) noexcept {
  float* x = m.x + static_cast<size_t>(v0) * kX;
  constexpr int kZ = kCompact ? kCompactUnits : kUpdHidden;
  alignas(64) float z[kRows][kZ];
  alignas(64) float h[kRows][kHidden];
  using L = MpnnLayout<kWide>;
  const float* u1 = kCompact ? m.cw : m.wt + L::kUpd1;
  const float* u2 = kCompact ? m.cw + kCompactUpd2 : m.wt + L::kUpd2;
  // In the first step, h is the features and zeros.
  constexpr int kPadFrom = kFirst ? kNumFeatures : kX;
  constexpr int kPadTo = kFirst ? kHidden : kX;
  dense<kWide, kX, kZ, kRows, true, kPadFrom, kPadTo>(u1, u1 + kX * kRowOf<kWide, kZ>, x, kX,
                                                      &z[0][0], kZ);
  dense_live<kWide, kZ, kHidden, kRows, false>(
      u2, u2 + kZ * kRowOf<kWide, kHidden>, &z[0][0], kZ, &h[0][0], kHidden,
      m.skip_dead ? live_inputs<kZ, kRows>(&z[0][0], kZ) : kAllInputs<kZ>);
  if constexpr (!kLast) {
    for (int k = 0; k < kRows; ++k) {
      std::memcpy(x + static_cast<size_t>(k) * kX, h[k], sizeof(h[k]));
      reset_aggregates(m, v0 + k);
    }
    if (m.fold_h) fold_h_bounds<kRows>(m, &h[0][0], kHidden);
    if constexpr (kFuse)
      message_halves<kWide, kRows, kHidden, kMsgHidden>(m, v0, &h[0][0], kHidden);
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

template <bool kWide, bool kFirst, bool kLast, bool kGreedy, bool kCompact, bool kFuse>
[[gnu::always_inline]] inline void node_pass_of(const Mpnn& m, float* q,
                                                uint16_t* actions) noexcept {
  constexpr int kTileRows = kTileRowsOf<kWide>;
  int v = 0;
  for (; v + kTileRows <= m.n; v += kTileRows)
    node_tile<kWide, kTileRows, kFirst, kLast, kGreedy, kCompact, kFuse>(m, v, q, actions);
  for (; v < m.n; ++v)
    node_tile<kWide, 1, kFirst, kLast, kGreedy, kCompact, kFuse>(m, v, q, actions);
}

template <bool kWide, bool kFirst, bool kLast, bool kGreedy, bool kFuse = false>
[[gnu::always_inline]] inline void node_pass(const Mpnn& m, float* q, uint16_t* actions) noexcept {
  Mpnn mu = m;
  mu.cw += (kFirst ? 0 : 1) * kCompactUpdFloats;
  const bool compact = m.skip_dead && compact_update<kWide, kFirst>(mu);
  if constexpr (!kLast) reset_h_bounds(m);  // the new h's are folded as they are written
  if constexpr (kFuse) reset_bounds(m);
  if (compact) {
    node_pass_of<kWide, kFirst, kLast, kGreedy, true, kFuse>(mu, q, actions);
  } else {
    node_pass_of<kWide, kFirst, kLast, kGreedy, false, kFuse>(m, q, actions);
  }
}

template <bool kWide, bool kGreedy>
[[gnu::always_inline]] inline void mpnn_forward_body(const Mpnn& m, const float* features, float* q,
                                                     uint16_t* actions) noexcept {
  static_assert(kMpSteps == 2, "one first and one last step");
  // Per step, the bounds its compact_update and message_step will read (those that are
  // not waiting: Mpnn::wait).
  auto with_bounds = [&](int step) {
    Mpnn ms = m;
    ms.fold_h = m.skip_dead && (m.wait[step] == 0 || m.wait[kMpSteps + step] == 0);
    ms.fold_aggregates = m.skip_dead && m.wait[step] == 0;
    return ms;
  };
  const Mpnn m0 = with_bounds(0);
  reset_h_bounds(m);
  for (int v = 0; v < m.n; ++v) {
    float* h = m.x + static_cast<size_t>(v) * kX;
    std::memcpy(h, features + static_cast<size_t>(v) * kNumFeatures, sizeof(float) * kNumFeatures);
    std::fill(h + kNumFeatures, h + kHidden, 0.0f);
    reset_aggregates(m, v);
    if (m0.fold_h) fold_h_bounds<1>(m, h, kX);
  }
  message_step<kWide, kNumFeatures>(m0);
  const Mpnn m1 = with_bounds(1);  // its h's are made by the first update pass
  if (*m.fuse) {
    node_pass<kWide, true, false, kGreedy, true>(m1, q, actions);
    edge_pass<kWide, kMsgHidden>(m1, kAllInputs<kMsgHidden>);
    if (m.skip_dead && try_compact(m.wait[kMpSteps + 1])) {
      const int n = __builtin_popcount(live_messages<kHidden>(m1));
      *m.fuse = !(n >= 1 && n <= kCompactUnits);
      if (*m.fuse) m.wait[kMpSteps + 1] = kCompactRetryAfter;
    }
  } else {
    node_pass<kWide, true, false, kGreedy>(m1, q, actions);
    *m.fuse = !message_step<kWide, kHidden>(m1);
  }
  node_pass<kWide, false, true, kGreedy>(m1, q, actions);
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

// Refuses weights that are not all finite: skipping a zero input is exact only for finite
// weights (0 x inf is NaN), and such a model is broken anyway (the model file refuses it).
template <class Weights>
void require_finite(const Weights& w, const char* what) {
  size_t at = 0;  // parameters before, in the model file's order
  auto check = [&](const float* p, size_t n) {
    for (size_t i = 0; i < n; ++i, ++at)
      if (!std::isfinite(p[i]))
        throw std::invalid_argument(std::string(what) + ": parameter " + std::to_string(at) +
                                    " is not finite");
  };
  w.for_each_layer([&](const float* pw, size_t nw, const float* pb, size_t nb) {
    check(pw, nw);
    check(pb, nb);
  });
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
  require_finite(w, "GraphCC weights");
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
  bounds_.assign(2 * kMsgHidden + 2 * kX, 0.0f);
  fuse_ = !skip_dead_;
  for (int v = 0; v < n_; ++v) isolated_ = isolated_ || in_offset_[v] == in_offset_[v + 1];
  upd1_plain_.reserve(static_cast<size_t>(kX + 1) * kUpdHidden);
  append_transposed(upd1_plain_, w.upd1.w.data(), kX, kUpdHidden, w.upd1.b.data());
  compact_.assign(kMpSteps * kCompactUpdFloats, 0.0f);
  msg1_plain_.reserve(static_cast<size_t>(2 * kHidden + 1) * kMsgHidden);
  append_transposed(msg1_plain_, w.msg1.w.data(), 2 * kHidden, kMsgHidden, w.msg1.b.data());
  compact_msg_.assign(kMpSteps * kCompactMsgFloats, 0.0f);
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
               .skip_dead = skip_dead_,
               .upd1_plain = upd1_plain_.data(),
               .xlo = bounds_.data() + 2 * kMsgHidden,
               .xhi = bounds_.data() + 2 * kMsgHidden + kX,
               .isolated = isolated_,
               .cw = compact_.data(),
               .msg1_plain = msg1_plain_.data(),
               .cm = compact_msg_.data(),
               .made_upd = made_.data(),
               .made_msg = made_.data() + kMpSteps,
               .fuse = &fuse_,
               .wait = wait_.data(),
               .fold_h = false,
               .fold_aggregates = false};
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
    require_finite(net, "ACC weights");
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
