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
// lanes per cycle that is >= 1,574 cycles per agent per step whatever the data layout.
// ACC: per agent 12 x 32 + 32 x 120 = 4.2 k multiply-adds on 17.5 KB of its own weights, so
// with thousands of ports the pass streams its weights from memory.
//
// Summation order: every output is its bias, then its inputs' products in ascending input
// order (one FMA each in the AVX2 build); skipped inputs are exact zeros. The min and max
// of a receiver fold its messages in edge order. So the values do not depend on the tiling.
#include "agent/fast_mpnn.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace rocemu::agent {

namespace {

using v8f = float __attribute__((vector_size(32)));
using v8i = int32_t __attribute__((vector_size(32)));

[[gnu::always_inline]] inline v8f load8(const float* p) noexcept {
  v8f v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}
[[gnu::always_inline]] inline void store8(float* p, v8f v) noexcept {
  __builtin_memcpy(p, &v, sizeof(v));
}

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
template <int In, int Out, int kRows, bool kRelu, int kZeroFrom = In, int kZeroTo = In>
[[gnu::always_inline]] inline void dense_tile(const float* __restrict wt, const float* __restrict b,
                                              const float* __restrict x, size_t xs,
                                              float* __restrict y, size_t ys) noexcept {
  static_assert(Out % 8 == 0, "outputs come in 8-float vectors");
  static_assert(0 <= kZeroFrom && kZeroFrom <= kZeroTo && kZeroTo <= In);
  constexpr int kVecs = Out / 8;
  constexpr int kTile = tile_vecs<Out, kRows>();
  static_assert(kVecs % kTile == 0);
  for (int vc = 0; vc < kVecs; vc += kTile) {
    v8f acc[kRows][kTile];
    for (int t = 0; t < kTile; ++t) {
      const v8f init = load8(b + (vc + t) * 8);
      for (int k = 0; k < kRows; ++k) acc[k][t] = init;
    }
    for (int i = 0; i < kZeroFrom; ++i) add_input<Out>(acc, wt, x, xs, vc, i);
    for (int i = kZeroTo; i < In; ++i) add_input<Out>(acc, wt, x, xs, vc, i);
    for (int k = 0; k < kRows; ++k)
      for (int t = 0; t < kTile; ++t) {
        v8f v = acc[k][t];
        if constexpr (kRelu) v = v > 0.0f ? v : v8f{};
        store8(y + k * ys + (vc + t) * 8, v);
      }
  }
}

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

template <int In, int Out>
constexpr size_t layer_floats() {
  return static_cast<size_t>(In) * Out + Out;
}

// Offsets of each transposed layer (weights then bias) in FastMpnn::wt_, then kMsgHidden
// zeros: the bias of the sender half of the first message layer.
constexpr size_t kMsg1 = 0;
constexpr size_t kMsg2 = kMsg1 + layer_floats<2 * kHidden, kMsgHidden>();
constexpr size_t kUpd1 = kMsg2 + layer_floats<kMsgHidden, kHidden>();
constexpr size_t kUpd2 = kUpd1 + layer_floats<3 * kHidden, kUpdHidden>();
constexpr size_t kRo1 = kUpd2 + layer_floats<kUpdHidden, kHidden>();
constexpr size_t kRo2 = kRo1 + layer_floats<kHidden, kReadoutHidden>();
constexpr size_t kZeroBias = kRo2 + layer_floats<kReadoutHidden, kNumActions>();
constexpr size_t kMpnnFloats = kZeroBias + kMsgHidden;

constexpr size_t kAccL1 = 0;
constexpr size_t kAccL2 = kAccL1 + layer_floats<kAccInputs, kAccHidden>();
constexpr size_t kAccFloats = kAccL2 + layer_floats<kAccHidden, kNumActions>();

// Per agent, x = (h, min, max): the update MLP's input.
constexpr int kX = 3 * kHidden;
constexpr int kTileRows = 4;
// Every layer, weight row, bias and buffer row starts on a 32-byte boundary of the
// cache-line-aligned buffers, so no 8-float load straddles two cache lines.
static_assert(kMsg2 % 8 == 0 && kUpd1 % 8 == 0 && kUpd2 % 8 == 0 && kRo1 % 8 == 0 &&
              kRo2 % 8 == 0 && kZeroBias % 8 == 0 && kAccL2 % 8 == 0 && kAccFloats % 8 == 0 &&
              kX % 8 == 0 && kMsgHidden % 8 == 0);

// Appends layer (w row-major [out][in], b) transposed to `out`.
template <class Floats>
void append_transposed(Floats& out, const float* w, size_t in, size_t nout, const float* b) {
  for (size_t i = 0; i < in; ++i)
    for (size_t o = 0; o < nout; ++o) out.push_back(w[o * in + i]);
  out.insert(out.end(), b, b + nout);
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
};

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
template <int kRows, int kZeroFrom>
[[gnu::always_inline]] inline void message_halves(const Mpnn& m, int v0, const float* h,
                                                  size_t hs) noexcept {
  const float* w1a = m.wt + kMsg1;
  const float* w1b = w1a + static_cast<size_t>(kHidden) * kMsgHidden;
  const float* b1 = w1a + static_cast<size_t>(2 * kHidden) * kMsgHidden;
  const size_t o = static_cast<size_t>(v0) * kMsgHidden;
  dense_tile<kHidden, kMsgHidden, kRows, false, kZeroFrom, kHidden>(w1a, b1, h, hs, m.a + o,
                                                                    kMsgHidden);
  dense_tile<kHidden, kMsgHidden, kRows, false, kZeroFrom, kHidden>(w1b, m.wt + kZeroBias, h, hs,
                                                                    m.s + o, kMsgHidden);
}

// Messages of edges e0 .. e0 + kRows - 1: m = W2 relu(a_dst + s_src) + b2, folded into the
// receiver's min and max in edge order. kOneDst: the kRows edges go to one agent (edges are
// sorted by receiver; in a fat tree of k >= 8 every agent has a multiple of 4), so its a row
// is read once and its min and max are folded in registers.
template <int kRows, bool kOneDst>
[[gnu::always_inline]] inline void edge_tile(const Mpnn& m, int e0) noexcept {
  alignas(32) float pre[kRows][kMsgHidden];
  alignas(32) float msg[kRows][kHidden];
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
  const float* w2 = m.wt + kMsg2;
  dense_tile<kMsgHidden, kHidden, kRows, false>(w2, w2 + static_cast<size_t>(kMsgHidden) * kHidden,
                                                &pre[0][0], kMsgHidden, &msg[0][0], kHidden);
  for (int k0 = 0; k0 < kRows; k0 += kOneDst ? kRows : 1) {
    float* mn = m.x + static_cast<size_t>(dst[k0]) * kX + kHidden;
    float* mx = mn + kHidden;
    for (int j = 0; j < kHidden; j += 8) {
      v8f lo = load8(mn + j), hi = load8(mx + j);
      for (int k = k0; k < (kOneDst ? kRows : k0 + 1); ++k) {
        const v8f me = load8(&msg[k][j]);
        lo = me < lo ? me : lo;
        hi = hi < me ? me : hi;
      }
      store8(mn + j, lo);
      store8(mx + j, hi);
    }
  }
}

[[gnu::always_inline]] inline void edge_pass(const Mpnn& m) noexcept {
  int e = 0;
  for (; e + kTileRows <= m.e; e += kTileRows) {
    if (m.dst[e] == m.dst[e + kTileRows - 1]) {
      edge_tile<kTileRows, true>(m, e);
    } else {
      edge_tile<kTileRows, false>(m, e);
    }
  }
  for (; e < m.e; ++e) edge_tile<1, true>(m, e);
}

// Update of agents v0 .. v0 + kRows - 1: h = upd2(relu(upd1(h, min, max))). Then, unless
// this is the last step, the new h and the next step's first message layer; after the last,
// the readout into q rows (stride kNumActions), or its argmax into actions.
template <int kRows, bool kFirst, bool kLast, bool kGreedy>
[[gnu::always_inline]] inline void node_tile(const Mpnn& m, int v0, float* q,
                                             uint16_t* actions) noexcept {
  float* x = m.x + static_cast<size_t>(v0) * kX;
  alignas(32) float z[kRows][kUpdHidden];
  alignas(32) float h[kRows][kHidden];
  const float* u1 = m.wt + kUpd1;
  const float* u2 = m.wt + kUpd2;
  // In the first step, h is the features and zeros.
  constexpr int kPadFrom = kFirst ? kNumFeatures : kX;
  constexpr int kPadTo = kFirst ? kHidden : kX;
  dense_tile<kX, kUpdHidden, kRows, true, kPadFrom, kPadTo>(
      u1, u1 + static_cast<size_t>(kX) * kUpdHidden, x, kX, &z[0][0], kUpdHidden);
  dense_tile<kUpdHidden, kHidden, kRows, false>(u2, u2 + static_cast<size_t>(kUpdHidden) * kHidden,
                                                &z[0][0], kUpdHidden, &h[0][0], kHidden);
  if constexpr (!kLast) {
    for (int k = 0; k < kRows; ++k) {
      std::memcpy(x + static_cast<size_t>(k) * kX, h[k], sizeof(h[k]));
      reset_aggregates(m, v0 + k);
    }
    message_halves<kRows, kHidden>(m, v0, &h[0][0], kHidden);
  } else {
    alignas(32) float r[kRows][kReadoutHidden];
    const float* r1 = m.wt + kRo1;
    const float* r2 = m.wt + kRo2;
    dense_tile<kHidden, kReadoutHidden, kRows, true>(
        r1, r1 + static_cast<size_t>(kHidden) * kReadoutHidden, &h[0][0], kHidden, &r[0][0],
        kReadoutHidden);
    const float* b2 = r2 + static_cast<size_t>(kReadoutHidden) * kNumActions;
    if constexpr (kGreedy) {
      alignas(32) float qt[kRows][kNumActions];
      dense_tile<kReadoutHidden, kNumActions, kRows, false>(r2, b2, &r[0][0], kReadoutHidden,
                                                            &qt[0][0], kNumActions);
      for (int k = 0; k < kRows; ++k)
        actions[v0 + k] = static_cast<uint16_t>(argmax_body(qt[k], kNumActions));
    } else {
      dense_tile<kReadoutHidden, kNumActions, kRows, false>(
          r2, b2, &r[0][0], kReadoutHidden, q + static_cast<size_t>(v0) * kNumActions, kNumActions);
    }
  }
}

template <bool kFirst, bool kLast, bool kGreedy>
[[gnu::always_inline]] inline void node_pass(const Mpnn& m, float* q, uint16_t* actions) noexcept {
  int v = 0;
  for (; v + kTileRows <= m.n; v += kTileRows)
    node_tile<kTileRows, kFirst, kLast, kGreedy>(m, v, q, actions);
  for (; v < m.n; ++v) node_tile<1, kFirst, kLast, kGreedy>(m, v, q, actions);
}

template <bool kGreedy>
[[gnu::always_inline]] inline void mpnn_forward_body(const Mpnn& m, const float* features, float* q,
                                                     uint16_t* actions) noexcept {
  static_assert(kMpSteps == 2, "one first and one last step");
  for (int v = 0; v < m.n; ++v) {
    float* h = m.x + static_cast<size_t>(v) * kX;
    std::memcpy(h, features + static_cast<size_t>(v) * kNumFeatures, sizeof(float) * kNumFeatures);
    std::fill(h + kNumFeatures, h + kHidden, 0.0f);
    reset_aggregates(m, v);
  }
  int v = 0;
  for (; v + kTileRows <= m.n; v += kTileRows)
    message_halves<kTileRows, kNumFeatures>(m, v, m.x + static_cast<size_t>(v) * kX, kX);
  for (; v < m.n; ++v) message_halves<1, kNumFeatures>(m, v, m.x + static_cast<size_t>(v) * kX, kX);
  edge_pass(m);
  node_pass<true, false, kGreedy>(m, q, actions);
  edge_pass(m);
  node_pass<false, true, kGreedy>(m, q, actions);
}

// Agents 0 .. n - 1 of the ACC nets, one network each.
template <bool kGreedy>
[[gnu::always_inline]] inline void acc_forward_body(const float* wt, int n, const float* features,
                                                    const float* settings, float* q,
                                                    uint16_t* actions) noexcept {
  for (int v = 0; v < n; ++v) {
    const float* w = wt + static_cast<size_t>(v) * kAccFloats;
    alignas(32) float x[kAccInputs], z[kAccHidden], qv[kNumActions];
    std::memcpy(x, features + static_cast<size_t>(v) * kNumFeatures, sizeof(float) * kNumFeatures);
    std::memcpy(x + kNumFeatures, settings + static_cast<size_t>(v) * kNumSettingFeatures,
                sizeof(float) * kNumSettingFeatures);
    dense_tile<kAccInputs, kAccHidden, 1, true>(w + kAccL1, w + kAccL1 + kAccInputs * kAccHidden, x,
                                                kAccInputs, z, kAccHidden);
    float* out = kGreedy ? qv : q + static_cast<size_t>(v) * kNumActions;
    dense_tile<kAccHidden, kNumActions, 1, false>(w + kAccL2, w + kAccL2 + kAccHidden * kNumActions,
                                                  z, kAccHidden, out, kNumActions);
    if constexpr (kGreedy) actions[v] = static_cast<uint16_t>(argmax_body(qv, kNumActions));
  }
}

// Two builds of each pass: AVX2 + FMA, and generic x86-64. Chosen once at start-up with
// __builtin_cpu_supports (GCC's target_clones("arch=haswell") tests the CPU model, not its
// features, and so falls back to the generic build on AMD processors).
template <bool kGreedy>
__attribute__((target("avx2,fma"))) void mpnn_avx2(const Mpnn& m, const float* f, float* q,
                                                   uint16_t* a) noexcept {
  mpnn_forward_body<kGreedy>(m, f, q, a);
}
template <bool kGreedy>
void mpnn_generic(const Mpnn& m, const float* f, float* q, uint16_t* a) noexcept {
  mpnn_forward_body<kGreedy>(m, f, q, a);
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

bool has_avx2_fma() noexcept {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return yes;
}

template <bool kGreedy>
void mpnn_forward(const Mpnn& m, const float* f, float* q, uint16_t* a) noexcept {
  static const auto fn = has_avx2_fma() ? mpnn_avx2<kGreedy> : mpnn_generic<kGreedy>;
  fn(m, f, q, a);
}
template <bool kGreedy>
void acc_forward(const float* wt, int n, const float* f, const float* s, float* q,
                 uint16_t* a) noexcept {
  static const auto fn = has_avx2_fma() ? acc_avx2<kGreedy> : acc_generic<kGreedy>;
  fn(wt, n, f, s, q, a);
}

}  // namespace

int argmax(const float* v, int n) noexcept { return argmax_body(v, n); }

FastMpnn::FastMpnn(const MpnnWeights& w, const PortGraph& graph)
    : n_(graph.num_agents()),
      src_(graph.edge_src()),
      dst_(graph.edge_dst()),
      in_offset_(graph.in_offset()) {
  wt_.reserve(kMpnnFloats);
  append_transposed(wt_, w.msg1.w.data(), 2 * kHidden, kMsgHidden, w.msg1.b.data());
  append_transposed(wt_, w.msg2.w.data(), kMsgHidden, kHidden, w.msg2.b.data());
  append_transposed(wt_, w.upd1.w.data(), 3 * kHidden, kUpdHidden, w.upd1.b.data());
  append_transposed(wt_, w.upd2.w.data(), kUpdHidden, kHidden, w.upd2.b.data());
  append_transposed(wt_, w.ro1.w.data(), kHidden, kReadoutHidden, w.ro1.b.data());
  append_transposed(wt_, w.ro2.w.data(), kReadoutHidden, kNumActions, w.ro2.b.data());
  wt_.resize(kMpnnFloats, 0.0f);
  const size_t n = static_cast<size_t>(n_);
  x_.assign(n * kX, 0.0f);
  a_.assign(n * kMsgHidden, 0.0f);
  s_.assign(n * kMsgHidden, 0.0f);
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
               .s = s_.data()};
  if (actions) {
    mpnn_forward<true>(m, features, nullptr, actions);
  } else {
    mpnn_forward<false>(m, features, q, nullptr);
  }
}

void FastMpnn::q_values(const float* features, float* q) noexcept { forward(features, q, nullptr); }

void FastMpnn::greedy(const float* features, uint16_t* actions) noexcept {
  forward(features, nullptr, actions);
}

FastAccNets::FastAccNets(const std::vector<AccNetWeights>& nets)
    : n_(static_cast<int>(nets.size())) {
  wt_.reserve(nets.size() * kAccFloats);
  for (const auto& net : nets) {
    append_transposed(wt_, net.l1.w.data(), kAccInputs, kAccHidden, net.l1.b.data());
    append_transposed(wt_, net.l2.w.data(), kAccHidden, kNumActions, net.l2.b.data());
  }
}

void FastAccNets::q_values(const float* features, const float* settings, float* q) noexcept {
  acc_forward<false>(wt_.data(), n_, features, settings, q, nullptr);
}

void FastAccNets::greedy(const float* features, const float* settings, uint16_t* actions) noexcept {
  acc_forward<true>(wt_.data(), n_, features, settings, nullptr, actions);
}

}  // namespace rocemu::agent
