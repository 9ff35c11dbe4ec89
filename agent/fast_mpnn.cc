// fast_mpnn.cc — torch-free MPNN and ACC forward passes (GraphCC Sec. 4; ACC Sec. 4.2).
//
// Cost per inference on the paper's Clos (40 agents, 96 edges), in multiply-adds:
// per step 40 x 2 x 24 x 24 (factored first message layer) + 96 x 24 x 24 (second message
// layer) + 40 x (72 x 24 + 24 x 24) (update) = 193k for the two steps, plus the readout
// 40 x (24 x 32 + 32 x 120) = 184k: ~380k, i.e. tens of microseconds scalar and a few
// with 8-wide FMA.
#include "agent/fast_mpnn.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace rocemu::agent {

namespace {

using v8f = float __attribute__((vector_size(32)));

[[gnu::always_inline]] inline v8f load8(const float* p) noexcept {
  v8f v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}
[[gnu::always_inline]] inline void store8(float* p, v8f v) noexcept {
  __builtin_memcpy(p, &v, sizeof(v));
}

// Y[r] = act(W X[r] + b) for `rows` rows, W stored transposed ([In][Out]) so outputs are
// contiguous. Register tile: kRows rows x kTile 8-float vectors of outputs (12 accumulators),
// so every weight vector loaded is used kRows times and every broadcast input kTile times.
// Built from GCC vector extensions: 8-wide FMA in the Haswell clone, SSE pairs otherwise.
template <int Out>
constexpr int tile_vecs() {
  constexpr int v = Out / 8;
  return v % 3 == 0 ? 3 : (v % 4 == 0 ? 4 : (v % 2 == 0 ? 2 : 1));
}

// Rows r0 .. r0 + kRows - 1 of Y.
template <int In, int Out, int kRows, bool kRelu, bool kBias>
[[gnu::always_inline]] inline void dense_tile(const float* __restrict wt, const float* __restrict b,
                                              const float* __restrict x, size_t x_stride,
                                              float* __restrict y, size_t y_stride,
                                              int r0) noexcept {
  constexpr int kVecs = Out / 8;
  constexpr int kTile = tile_vecs<Out>();
  for (int vc = 0; vc < kVecs; vc += kTile) {
    v8f acc[kRows][kTile];
    for (int t = 0; t < kTile; ++t) {
      const v8f init = kBias ? load8(b + (vc + t) * 8) : v8f{};
      for (int k = 0; k < kRows; ++k) acc[k][t] = init;
    }
    for (int i = 0; i < In; ++i) {
      v8f w[kTile];
      for (int t = 0; t < kTile; ++t)
        w[t] = load8(wt + static_cast<size_t>(i) * Out + (vc + t) * 8);
      for (int k = 0; k < kRows; ++k) {
        const float xi = x[static_cast<size_t>(r0 + k) * x_stride + i];
        for (int t = 0; t < kTile; ++t) acc[k][t] += xi * w[t];
      }
    }
    for (int k = 0; k < kRows; ++k)
      for (int t = 0; t < kTile; ++t) {
        v8f v = acc[k][t];
        if constexpr (kRelu) v = v > 0.0f ? v : v8f{};
        store8(y + static_cast<size_t>(r0 + k) * y_stride + (vc + t) * 8, v);
      }
  }
}

// Y[r] = act(W X[r] + b) for `rows` rows, W stored transposed ([In][Out]) so outputs are
// contiguous. Register tile: 4 rows x 3 (or 4) 8-float vectors of outputs, so every weight
// vector loaded serves 4 rows and every broadcast input 3-4 vectors. GCC vector extensions:
// 8-wide FMA in the Haswell clone, SSE pairs in the generic one (everything is force-inlined
// into the two clones of the caller).
template <int In, int Out, bool kRelu, bool kBias>
[[gnu::always_inline]] inline void dense_rows(const float* __restrict wt, const float* __restrict b,
                                              const float* __restrict x, size_t x_stride,
                                              float* __restrict y, size_t y_stride,
                                              int rows) noexcept {
  static_assert(Out % 8 == 0, "outputs come in 8-float vectors");
  int r = 0;
  for (; r + 4 <= rows; r += 4)
    dense_tile<In, Out, 4, kRelu, kBias>(wt, b, x, x_stride, y, y_stride, r);
  for (; r < rows; ++r) dense_tile<In, Out, 1, kRelu, kBias>(wt, b, x, x_stride, y, y_stride, r);
}

template <int In, int Out>
constexpr size_t layer_floats() {
  return static_cast<size_t>(In) * Out + Out;
}

// Offsets of each transposed layer (weights then bias) in FastMpnn::wt_.
constexpr size_t kMsg1 = 0;
constexpr size_t kMsg2 = kMsg1 + layer_floats<2 * kHidden, kMsgHidden>();
constexpr size_t kUpd1 = kMsg2 + layer_floats<kMsgHidden, kHidden>();
constexpr size_t kUpd2 = kUpd1 + layer_floats<3 * kHidden, kUpdHidden>();
constexpr size_t kRo1 = kUpd2 + layer_floats<kUpdHidden, kHidden>();
constexpr size_t kRo2 = kRo1 + layer_floats<kHidden, kReadoutHidden>();
constexpr size_t kMpnnFloats = kRo2 + layer_floats<kReadoutHidden, kNumActions>();

constexpr size_t kAccL1 = 0;
constexpr size_t kAccL2 = kAccL1 + layer_floats<kAccInputs, kAccHidden>();
constexpr size_t kAccFloats = kAccL2 + layer_floats<kAccHidden, kNumActions>();

// Appends layer (w row-major [out][in], b) transposed to `out`.
void append_transposed(std::vector<float>& out, const float* w, size_t in, size_t nout,
                       const float* b) {
  for (size_t i = 0; i < in; ++i)
    for (size_t o = 0; o < nout; ++o) out.push_back(w[o * in + i]);
  out.insert(out.end(), b, b + nout);
}

struct MpnnBuffers {
  const float* wt;
  const int32_t* src;
  const int32_t* dst;
  const int32_t* in_offset;
  int n;
  int e;
  float* h;    // [n x kHidden]
  float* hn;   // [n x kHidden]
  float* a;    // [n x kMsgHidden]  W1a h_v + b1
  float* bs;   // [n x kMsgHidden]  W1b h_u
  float* pre;  // [e x kMsgHidden]  relu(a_dst + bs_src)
  float* msg;  // [e x kHidden]
  float* x;    // [n x 3 kHidden]   (h_v, min, max)
  float* z;    // [n x max(kUpdHidden, kReadoutHidden)]
};

[[gnu::always_inline]] inline void mpnn_forward_body(const MpnnBuffers& m, const float* features,
                                                     float* q) noexcept {
  const float* wt = m.wt;
  float* h = m.h;
  float* hn = m.hn;
  for (int v = 0; v < m.n; ++v) {
    float* hv = h + static_cast<size_t>(v) * kHidden;
    std::memcpy(hv, features + static_cast<size_t>(v) * kNumFeatures, sizeof(float) * kNumFeatures);
    std::fill(hv + kNumFeatures, hv + kHidden, 0.0f);
  }
  const float* w1a = wt + kMsg1;
  const float* w1b = wt + kMsg1 + static_cast<size_t>(kHidden) * kMsgHidden;
  const float* b1 = wt + kMsg1 + static_cast<size_t>(2 * kHidden) * kMsgHidden;
  const float* w2 = wt + kMsg2;
  const float* b2 = w2 + static_cast<size_t>(kMsgHidden) * kHidden;
  for (int step = 0; step < kMpSteps; ++step) {
    // Factored first message layer: a_v = W1a h_v + b1 (as receiver), b_u = W1b h_u (as sender).
    dense_rows<kHidden, kMsgHidden, false, true>(w1a, b1, h, kHidden, m.a, kMsgHidden, m.n);
    dense_rows<kHidden, kMsgHidden, false, false>(w1b, nullptr, h, kHidden, m.bs, kMsgHidden, m.n);
    for (int e = 0; e < m.e; ++e) {
      const float* av = m.a + static_cast<size_t>(m.dst[e]) * kMsgHidden;
      const float* bu = m.bs + static_cast<size_t>(m.src[e]) * kMsgHidden;
      float* p = m.pre + static_cast<size_t>(e) * kMsgHidden;
      for (int j = 0; j < kMsgHidden; ++j) p[j] = std::max(av[j] + bu[j], 0.0f);
    }
    dense_rows<kMsgHidden, kHidden, false, true>(w2, b2, m.pre, kMsgHidden, m.msg, kHidden, m.e);
    // Update input (h_v, min, max); a port with no ingress neighbour aggregates zeros.
    for (int v = 0; v < m.n; ++v) {
      float* x = m.x + static_cast<size_t>(v) * 3 * kHidden;
      std::memcpy(x, h + static_cast<size_t>(v) * kHidden, sizeof(float) * kHidden);
      float* mn = x + kHidden;
      float* mx = x + 2 * kHidden;
      const int e0 = m.in_offset[v], e1 = m.in_offset[v + 1];
      if (e0 == e1) {
        std::fill(mn, mn + 2 * kHidden, 0.0f);
        continue;
      }
      std::memcpy(mn, m.msg + static_cast<size_t>(e0) * kHidden, sizeof(float) * kHidden);
      std::memcpy(mx, mn, sizeof(float) * kHidden);
      for (int e = e0 + 1; e < e1; ++e) {
        const float* me = m.msg + static_cast<size_t>(e) * kHidden;
        for (int j = 0; j < kHidden; ++j) {
          mn[j] = std::min(mn[j], me[j]);
          mx[j] = std::max(mx[j], me[j]);
        }
      }
    }
    dense_rows<3 * kHidden, kUpdHidden, true, true>(
        wt + kUpd1, wt + kUpd1 + 3 * kHidden * kUpdHidden, m.x, 3 * kHidden, m.z, kUpdHidden, m.n);
    dense_rows<kUpdHidden, kHidden, false, true>(wt + kUpd2, wt + kUpd2 + kUpdHidden * kHidden, m.z,
                                                 kUpdHidden, hn, kHidden, m.n);
    std::swap(h, hn);
  }
  dense_rows<kHidden, kReadoutHidden, true, true>(wt + kRo1, wt + kRo1 + kHidden * kReadoutHidden,
                                                  h, kHidden, m.z, kReadoutHidden, m.n);
  dense_rows<kReadoutHidden, kNumActions, false, true>(wt + kRo2,
                                                       wt + kRo2 + kReadoutHidden * kNumActions,
                                                       m.z, kReadoutHidden, q, kNumActions, m.n);
}

[[gnu::always_inline]] inline void acc_forward_body(const float* wt, const float* features,
                                                    const float* settings, float* q) noexcept {
  float x[kAccInputs], z[kAccHidden];
  std::memcpy(x, features, sizeof(float) * kNumFeatures);
  std::memcpy(x + kNumFeatures, settings, sizeof(float) * kNumSettingFeatures);
  dense_rows<kAccInputs, kAccHidden, true, true>(wt + kAccL1, wt + kAccL1 + kAccInputs * kAccHidden,
                                                 x, kAccInputs, z, kAccHidden, 1);
  dense_rows<kAccHidden, kNumActions, false, true>(
      wt + kAccL2, wt + kAccL2 + kAccHidden * kNumActions, z, kAccHidden, q, kNumActions, 1);
}

// Two builds of each forward pass: AVX2 + FMA, and generic x86-64. Chosen once at start-up
// with __builtin_cpu_supports (GCC's target_clones("arch=haswell") tests the CPU model, not
// its features, and so falls back to the generic build on AMD processors).
__attribute__((target("avx2,fma"))) void mpnn_forward_avx2(const MpnnBuffers& m, const float* f,
                                                           float* q) noexcept {
  mpnn_forward_body(m, f, q);
}
void mpnn_forward_generic(const MpnnBuffers& m, const float* f, float* q) noexcept {
  mpnn_forward_body(m, f, q);
}
__attribute__((target("avx2,fma"))) void acc_forward_avx2(const float* wt, const float* f,
                                                          const float* s, float* q) noexcept {
  acc_forward_body(wt, f, s, q);
}
void acc_forward_generic(const float* wt, const float* f, const float* s, float* q) noexcept {
  acc_forward_body(wt, f, s, q);
}

bool has_avx2_fma() noexcept {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return yes;
}

void mpnn_forward(const MpnnBuffers& m, const float* f, float* q) noexcept {
  static const auto fn = has_avx2_fma() ? mpnn_forward_avx2 : mpnn_forward_generic;
  fn(m, f, q);
}
void acc_forward(const float* wt, const float* f, const float* s, float* q) noexcept {
  static const auto fn = has_avx2_fma() ? acc_forward_avx2 : acc_forward_generic;
  fn(wt, f, s, q);
}

}  // namespace

int argmax(const float* v, int n) noexcept {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

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
  const size_t n = static_cast<size_t>(n_);
  h_.assign(n * kHidden, 0.0f);
  hn_.assign(n * kHidden, 0.0f);
  a_.assign(n * kMsgHidden, 0.0f);
  bsrc_.assign(n * kMsgHidden, 0.0f);
  pre_.assign(src_.size() * kMsgHidden, 0.0f);
  msg_.assign(src_.size() * kHidden, 0.0f);
  x_.assign(n * 3 * kHidden, 0.0f);
  z_.assign(n * std::max(kUpdHidden, kReadoutHidden), 0.0f);
  q_.assign(n * kNumActions, 0.0f);
}

void FastMpnn::q_values(const float* features, float* q) noexcept {
  const MpnnBuffers m{wt_.data(),        src_.data(), dst_.data(),
                      in_offset_.data(), n_,          static_cast<int>(src_.size()),
                      h_.data(),         hn_.data(),  a_.data(),
                      bsrc_.data(),      pre_.data(), msg_.data(),
                      x_.data(),         z_.data()};
  mpnn_forward(m, features, q);
}

void FastMpnn::greedy(const float* features, uint16_t* actions) noexcept {
  q_values(features, q_.data());
  for (int v = 0; v < n_; ++v)
    actions[v] = static_cast<uint16_t>(
        argmax(q_.data() + static_cast<size_t>(v) * kNumActions, kNumActions));
}

FastAccNets::FastAccNets(const std::vector<AccNetWeights>& nets) {
  nets_.reserve(nets.size());
  for (const auto& net : nets) {
    std::vector<float> wt;
    wt.reserve(kAccFloats);
    append_transposed(wt, net.l1.w.data(), kAccInputs, kAccHidden, net.l1.b.data());
    append_transposed(wt, net.l2.w.data(), kAccHidden, kNumActions, net.l2.b.data());
    nets_.push_back(std::move(wt));
  }
  q_.assign(kNumActions, 0.0f);
}

void FastAccNets::q_values(const float* features, const float* settings, float* q) noexcept {
  for (size_t v = 0; v < nets_.size(); ++v)
    acc_forward(nets_[v].data(), features + v * kNumFeatures, settings + v * kNumSettingFeatures,
                q + v * kNumActions);
}

void FastAccNets::greedy(const float* features, const float* settings, uint16_t* actions) noexcept {
  for (size_t v = 0; v < nets_.size(); ++v) {
    acc_forward(nets_[v].data(), features + v * kNumFeatures, settings + v * kNumSettingFeatures,
                q_.data());
    actions[v] = static_cast<uint16_t>(argmax(q_.data(), kNumActions));
  }
}

}  // namespace rocemu::agent
