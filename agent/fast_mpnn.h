// fast_mpnn.h — torch-free forward passes used when acting (GraphCC MPNN and ACC nets).
//
// Same maths as the LibTorch modules (see model_weights.h), with compile-time dimensions
// and weights stored transposed ([in][out]) so every dense layer is a run of contiguous
// multiply-adds over outputs. The first message layer is factored: W1 (h_v, h_u) + b1 =
// (W1a h_v + b1) + W1b h_u, both terms computed once per node, so an edge only adds two
// vectors before its ReLU and second layer. Built for AVX2 and a generic x86-64 fallback,
// chosen at load time. Buffers are sized at construction: q_values() and greedy() are
// noexcept and allocation-free. Not thread-safe (one instance per acting thread).
#pragma once

#include <cstdint>
#include <vector>

#include "agent/model_weights.h"
#include "agent/port_graph.h"

namespace rocemu::agent {

class FastMpnn {
 public:
  /// Copies the weights and the graph's edges.
  FastMpnn(const MpnnWeights& weights, const PortGraph& graph);

  int num_agents() const noexcept { return n_; }
  /// features: [num_agents x kNumFeatures]; q: [num_agents x kNumActions] (written).
  void q_values(const float* features, float* q) noexcept;
  /// Greedy action per agent (lowest id among equal Q-values).
  void greedy(const float* features, uint16_t* actions) noexcept;

 private:
  int n_;
  std::vector<int32_t> src_, in_offset_;
  std::vector<float> wt_;  // all layers, transposed, concatenated
  std::vector<float> h_, hn_, a_, bsrc_, agg_, q_;
};

class FastAccNets {
 public:
  /// One network per agent (nets.size() must equal the agent count; checked by the caller).
  explicit FastAccNets(const std::vector<AccNetWeights>& nets);

  int num_agents() const noexcept { return static_cast<int>(nets_.size()); }
  /// features [N x kNumFeatures], settings [N x kNumSettingFeatures]; q [N x kNumActions].
  void q_values(const float* features, const float* settings, float* q) noexcept;
  void greedy(const float* features, const float* settings, uint16_t* actions) noexcept;

 private:
  std::vector<std::vector<float>> nets_;  // transposed layers per agent
  std::vector<float> q_;
};

/// Index of the largest of `n` values (lowest index on ties).
int argmax(const float* v, int n) noexcept;

}  // namespace rocemu::agent
