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

// y = act(W x + b) with W stored transposed ([In][Out]) so the inner loop runs over
// contiguous outputs and vectorises without a horizontal reduction.
template <int In, int Out, bool kRelu, bool kBias = true>
inline void dense(const float* __restrict wt, const float* __restrict b,
                  const float* __restrict x, float* __restrict y) noexcept {
  float acc[Out];
  for (int o = 0; o < Out; ++o) acc[o] = kBias ? b[o] : 0.0f;
  for (int i = 0; i < In; ++i) {
    const float xi = x[i];
    const float* __restrict row = wt + static_cast<size_t>(i) * Out;
    for (int o = 0; o < Out; ++o) acc[o] += xi * row[o];
  }
  for (int o = 0; o < Out; ++o) y[o] = kRelu ? std::max(acc[o], 0.0f) : acc[o];
}

template <int In, int Out>
constexpr size_t layer_floats() { return static_cast<size_t>(In) * Out + Out; }

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
  const int32_t* in_offset;
  int n;
  float* h;
  float* hn;
  float* a;
  float* bsrc;
  float* agg;
};

__attribute__((target_clones("avx2", "default")))
void mpnn_forward(const MpnnBuffers& m, const float* features, float* q) noexcept {
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
    for (int v = 0; v < m.n; ++v) {
      const float* hv = h + static_cast<size_t>(v) * kHidden;
      dense<kHidden, kMsgHidden, false>(w1a, b1, hv, m.a + static_cast<size_t>(v) * kMsgHidden);
      dense<kHidden, kMsgHidden, false, false>(w1b, nullptr, hv,
                                               m.bsrc + static_cast<size_t>(v) * kMsgHidden);
    }
    for (int v = 0; v < m.n; ++v) {
      float mn[kHidden], mx[kHidden];
      std::fill(mn, mn + kHidden, std::numeric_limits<float>::infinity());
      std::fill(mx, mx + kHidden, -std::numeric_limits<float>::infinity());
      const float* av = m.a + static_cast<size_t>(v) * kMsgHidden;
      for (int e = m.in_offset[v]; e < m.in_offset[v + 1]; ++e) {
        const float* bu = m.bsrc + static_cast<size_t>(m.src[e]) * kMsgHidden;
        float pre[kMsgHidden], msg[kHidden];
        for (int j = 0; j < kMsgHidden; ++j) pre[j] = std::max(av[j] + bu[j], 0.0f);
        dense<kMsgHidden, kHidden, false>(w2, b2, pre, msg);
        for (int j = 0; j < kHidden; ++j) {
          mn[j] = std::min(mn[j], msg[j]);
          mx[j] = std::max(mx[j], msg[j]);
        }
      }
      // Update input: (h_v, min, max); a port with no ingress neighbour aggregates zeros.
      float* x = m.agg;
      std::memcpy(x, h + static_cast<size_t>(v) * kHidden, sizeof(float) * kHidden);
      if (m.in_offset[v + 1] > m.in_offset[v]) {
        std::memcpy(x + kHidden, mn, sizeof(mn));
        std::memcpy(x + 2 * kHidden, mx, sizeof(mx));
      } else {
        std::fill(x + kHidden, x + 3 * kHidden, 0.0f);
      }
      float z[kUpdHidden];
      dense<3 * kHidden, kUpdHidden, true>(wt + kUpd1, wt + kUpd1 + 3 * kHidden * kUpdHidden, x, z);
      dense<kUpdHidden, kHidden, false>(wt + kUpd2, wt + kUpd2 + kUpdHidden * kHidden, z,
                                        hn + static_cast<size_t>(v) * kHidden);
    }
    std::swap(h, hn);
  }
  for (int v = 0; v < m.n; ++v) {
    float z[kReadoutHidden];
    dense<kHidden, kReadoutHidden, true>(wt + kRo1, wt + kRo1 + kHidden * kReadoutHidden,
                                         h + static_cast<size_t>(v) * kHidden, z);
    dense<kReadoutHidden, kNumActions, false>(wt + kRo2, wt + kRo2 + kReadoutHidden * kNumActions,
                                              z, q + static_cast<size_t>(v) * kNumActions);
  }
}

__attribute__((target_clones("avx2", "default")))
void acc_forward(const float* wt, const float* features, const float* settings,
                 float* q) noexcept {
  float x[kAccInputs], z[kAccHidden];
  std::memcpy(x, features, sizeof(float) * kNumFeatures);
  std::memcpy(x + kNumFeatures, settings, sizeof(float) * kNumSettingFeatures);
  dense<kAccInputs, kAccHidden, true>(wt + kAccL1, wt + kAccL1 + kAccInputs * kAccHidden, x, z);
  dense<kAccHidden, kNumActions, false>(wt + kAccL2, wt + kAccL2 + kAccHidden * kNumActions, z, q);
}

}  // namespace

int argmax(const float* v, int n) noexcept {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

FastMpnn::FastMpnn(const MpnnWeights& w, const PortGraph& graph)
    : n_(graph.num_agents()), src_(graph.edge_src()), in_offset_(graph.in_offset()) {
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
  agg_.assign(3 * kHidden, 0.0f);
  q_.assign(n * kNumActions, 0.0f);
}

void FastMpnn::q_values(const float* features, float* q) noexcept {
  const MpnnBuffers m{wt_.data(), src_.data(), in_offset_.data(), n_, h_.data(), hn_.data(),
                      a_.data(), bsrc_.data(), agg_.data()};
  mpnn_forward(m, features, q);
}

void FastMpnn::greedy(const float* features, uint16_t* actions) noexcept {
  q_values(features, q_.data());
  for (int v = 0; v < n_; ++v)
    actions[v] = static_cast<uint16_t>(argmax(q_.data() + static_cast<size_t>(v) * kNumActions,
                                              kNumActions));
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

void FastAccNets::greedy(const float* features, const float* settings,
                         uint16_t* actions) noexcept {
  for (size_t v = 0; v < nets_.size(); ++v) {
    acc_forward(nets_[v].data(), features + v * kNumFeatures, settings + v * kNumSettingFeatures,
                q_.data());
    actions[v] = static_cast<uint16_t>(argmax(q_.data(), kNumActions));
  }
}

}  // namespace rocemu::agent
