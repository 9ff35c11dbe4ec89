// model_weights.h — exported network weights as plain arrays with compile-time dimensions.
//
// The GraphCC MPNN (Bernardez et al., Sec. 4 "GNN model"): hidden state of kHidden floats
// (the 9 features zero-padded); kMpSteps message-passing steps; message = 2-layer MLP on
// (h_v, h_u) for each ingress neighbour u of v; aggregation = element-wise min and max over
// the messages, concatenated (zeros for a port with no ingress neighbour); update = 2-layer
// MLP on (h_v, min, max); readout = 2-layer MLP giving one Q-value per action. ReLU between
// the two layers of each MLP, linear outputs. One set of weights serves every agent.
// The ACC-style baseline (Yan et al., SIGCOMM 2021): one 2-layer MLP per port on its 9
// features plus its current ECN setting (3 floats), no sharing, no messages.
// Layout of a DenseWeights: w is row-major [out][in], exactly torch::nn::Linear's weight.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "agent/action_table.h"
#include "agent/port_features.h"

namespace rocemu::agent {

inline constexpr int kHidden = 24;
inline constexpr int kMsgHidden = 24;
inline constexpr int kUpdHidden = 24;
inline constexpr int kReadoutHidden = 32;
inline constexpr int kMpSteps = 2;
inline constexpr int kAccInputs = kNumFeatures + kNumSettingFeatures;  // 12
inline constexpr int kAccHidden = 32;
static_assert(kNumFeatures <= kHidden, "features are zero-padded into the hidden state");

template <int In, int Out>
struct DenseWeights {
  static constexpr int kIn = In;
  static constexpr int kOut = Out;
  std::array<float, static_cast<size_t>(In) * Out> w{};  // [Out][In]
  std::array<float, Out> b{};
  bool operator==(const DenseWeights&) const = default;
};

struct MpnnWeights {
  DenseWeights<2 * kHidden, kMsgHidden> msg1;
  DenseWeights<kMsgHidden, kHidden> msg2;
  DenseWeights<3 * kHidden, kUpdHidden> upd1;
  DenseWeights<kUpdHidden, kHidden> upd2;
  DenseWeights<kHidden, kReadoutHidden> ro1;
  DenseWeights<kReadoutHidden, kNumActions> ro2;

  /// Calls f(w_data, w_size, b_data, b_size) for every layer in the order above (the order
  /// of the model file and of the LibTorch module's parameters).
  template <class F>
  void for_each_layer(F&& f) {
    visit(msg1, f);
    visit(msg2, f);
    visit(upd1, f);
    visit(upd2, f);
    visit(ro1, f);
    visit(ro2, f);
  }
  template <class F>
  void for_each_layer(F&& f) const {
    const_cast<MpnnWeights*>(this)->for_each_layer(std::forward<F>(f));
  }
  bool operator==(const MpnnWeights&) const = default;

 private:
  template <class L, class F>
  static void visit(L& l, F& f) {
    f(l.w.data(), l.w.size(), l.b.data(), l.b.size());
  }
};

struct AccNetWeights {
  DenseWeights<kAccInputs, kAccHidden> l1;
  DenseWeights<kAccHidden, kNumActions> l2;
  template <class F>
  void for_each_layer(F&& f) {
    f(l1.w.data(), l1.w.size(), l1.b.data(), l1.b.size());
    f(l2.w.data(), l2.w.size(), l2.b.data(), l2.b.size());
  }
  template <class F>
  void for_each_layer(F&& f) const {
    const_cast<AccNetWeights*>(this)->for_each_layer(std::forward<F>(f));
  }
  bool operator==(const AccNetWeights&) const = default;
};

enum class ModelKind : uint32_t { kGraphCc = 1, kAccPerPort = 2 };

/// The kind's name as configurations spell it ([train] model, [agent] policy): "graphcc" or
/// "acc".
constexpr const char* model_kind_name(ModelKind k) noexcept {
  return k == ModelKind::kGraphCc ? "graphcc" : "acc";
}

/// A trained model: the GraphCC MPNN, or one ACC network per agent (in PortGraph order).
struct Model {
  ModelKind kind = ModelKind::kGraphCc;
  MpnnWeights mpnn;
  std::vector<AccNetWeights> acc;
  bool operator==(const Model&) const = default;
};

}  // namespace rocemu::agent
