// fast_mpnn.h — torch-free forward passes used when acting (GraphCC MPNN and ACC nets).
//
// Same maths as the LibTorch modules (see model_weights.h), with compile-time dimensions
// and weights stored transposed ([in][out]) so every dense layer is a run of contiguous
// multiply-adds over outputs, computed in register tiles of 4 rows (agents or edges) x 3
// 8-float vectors. The first message layer is factored: W1 (h_v, h_u) + b1 =
// (W1a h_v + b1) + W1b h_u, both terms computed once per agent, so an edge only adds two
// vectors before its ReLU and second layer. Each message-passing step is one pass over the
// edges (messages folded into their receiver's element-wise min and max as they are made:
// nothing is stored per edge) and one pass over the agents (update MLP, then the next step's
// first message layer, or the readout and the greedy argmax), so the working set is a few
// hundred bytes per agent. Hidden units a ReLU left at zero are skipped where that is
// cheap to know (a trained model leaves about half of the message MLP's dead on every edge):
// exact, since their products are +-0. Built for AVX-512, for AVX2 + FMA and for generic
// x86-64; the best the CPU has is chosen at start-up from its features. Buffers are sized at
// construction: q_values() and greedy() are noexcept and allocation-free. Not thread-safe
// (one instance per acting thread).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "agent/model_weights.h"
#include "agent/port_graph.h"

namespace rocemu::agent {

/// std::allocator with cache-line (64-byte) alignment, for the weights and buffers the
/// forward passes read as 8-float vectors.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() noexcept = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, size_t) noexcept { ::operator delete(p, kAlign); }
  friend bool operator==(const CacheLineAllocator&, const CacheLineAllocator&) noexcept {
    return true;
  }
};
using AlignedFloats = std::vector<float, CacheLineAllocator<float>>;

/// The instruction-set builds of the forward passes. AVX-512 and AVX2+FMA give the same bits
/// (one FMA per input, same order); generic x86-64 rounds each product (no FMA).
enum class SimdBuild : uint8_t { generic = 0, avx2 = 1, avx512 = 2 };
/// Whether this CPU can run `build`.
bool simd_build_supported(SimdBuild build) noexcept;
/// The fastest build this CPU runs: what every instance uses unless told otherwise.
SimdBuild best_simd_build() noexcept;
const char* simd_build_name(SimdBuild build) noexcept;

class FastMpnn {
 public:
  /// Copies the weights and the graph's edges. Throws std::invalid_argument if the CPU
  /// cannot run `build` or a weight is not finite. skip_dead_units: leave out the hidden units a ReLU zeroed (in
  /// the edge pass, the units no edge can make positive; in the update and readout MLPs,
  /// those zero in a whole tile of agents): the same bits, less work with trained weights.
  /// false adds every unit (to compare).
  FastMpnn(const MpnnWeights& weights, const PortGraph& graph,
           SimdBuild build = best_simd_build(), bool skip_dead_units = true);

  int num_agents() const noexcept { return n_; }
  /// features: [num_agents x kNumFeatures]; q: [num_agents x kNumActions] (written).
  void q_values(const float* features, float* q) noexcept;
  /// Greedy action per agent (lowest id among equal Q-values).
  void greedy(const float* features, uint16_t* actions) noexcept;

 private:
  // Greedy actions into `actions` if it is not null, else Q-values into `q`.
  void forward(const float* features, float* q, uint16_t* actions) noexcept;

  SimdBuild build_;
  bool skip_dead_;
  int n_;
  std::vector<int32_t> src_, dst_, in_offset_;
  AlignedFloats wt_;  // all layers, transposed, concatenated
  AlignedFloats x_;   // per agent: h, min and max of its incoming messages
  AlignedFloats a_;   // per agent: W1a h + b1 (as receiver)
  AlignedFloats s_;   // per agent: W1b h (as sender)
  AlignedFloats bounds_;      // per unit: the largest a, then the largest s, of a step; then
                              // per update input: its least, then its greatest value
  AlignedFloats upd1_plain_;  // the update MLP's first layer, transposed, in every build's layout
  AlignedFloats compact_;     // the update MLP with only its live units (fast_mpnn.cc)
  AlignedFloats msg1_plain_;  // the first message layer, transposed, in every build's layout
  AlignedFloats compact_msg_;                         // the message MLP with only its live units
  bool isolated_ = false;                             // some agent has no ingress neighbour
  std::array<uint32_t, 4> made_{~0u, ~0u, ~0u, ~0u};  // the units each compacted layer holds
  bool fuse_ = false;  // the second step's first message layer made in the first update pass
  std::array<uint8_t, 4> wait_{};  // forward passes before a layer is bounded again
};

class FastAccNets {
 public:
  /// One network per agent (nets.size() must equal the agent count; checked by the caller).
  /// Throws std::invalid_argument if the CPU cannot run `build` or a weight is not finite.
  explicit FastAccNets(const std::vector<AccNetWeights>& nets,
                       SimdBuild build = best_simd_build());

  int num_agents() const noexcept { return n_; }
  /// features [N x kNumFeatures], settings [N x kNumSettingFeatures]; q [N x kNumActions].
  void q_values(const float* features, const float* settings, float* q) noexcept;
  void greedy(const float* features, const float* settings, uint16_t* actions) noexcept;

 private:
  SimdBuild build_;
  int n_;
  AlignedFloats wt_;  // every agent's transposed layers, agent after agent
};

/// Index of the largest of `n` values (lowest index on ties; NaNs are never chosen unless
/// v[0] is one, then 0).
int argmax(const float* v, int n) noexcept;

}  // namespace rocemu::agent
