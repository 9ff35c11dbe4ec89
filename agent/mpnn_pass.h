// mpnn_pass.h — the state of one FastMpnn forward pass (Mpnn) and the layout of its weights,
// shared by fast_mpnn.cc and mpnn_compact.h. Internal to rocemu_agent.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/dense_kernels.h"
#include "agent/model_weights.h"

namespace rocemu::agent::mpnn {

using namespace kernels;

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

// Per agent, x = (h, min, max): the update MLP's input.
constexpr int kX = 3 * kHidden;
// Every layer, weight row, bias and buffer row starts on a 32-byte boundary of the
// cache-line-aligned buffers, so no 8-float load straddles two cache lines.
static_assert(kX % 8 == 0 && kMsgHidden % 8 == 0);

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
  float* amax;     // [kMsgHidden]
  float* smax;     // [kMsgHidden]
  bool skip_dead;  // false: every unit is added (FastMpnn's skip_dead_units)
  // The update MLP's first layer transposed ([kX][kUpdHidden], then the bias) in the plain
  // layout of every build: its bounds and its compacted copy are made from it.
  const float* upd1_plain;
  // Per input of the update MLP, (h, min, max), its least and greatest value over the agents
  // this step (NaNs left out): h's folded as it is written (fold_h_bounds), the min and max
  // as each receiver's last edge is folded in (fold_aggregate_bounds).
  float* xlo;     // [kX]
  float* xhi;     // [kX]
  bool isolated;  // some agent has no ingress neighbour (its min and max are 0)
  // The update MLP with only its live units (compact_update): kCompactUnits outputs of the
  // first layer ([kX + 1][kCompactUnits]), then the second layer's rows of those units and its
  // bias ([kCompactUnits + 1][kRowOf<kHidden>]).
  float* cw;
  // The first message layer transposed ([2 kHidden][kMsgHidden], then the bias), plain.
  const float* msg1_plain;
  // The message MLP with only its live units (compact_messages): the first layer's halves
  // ([kHidden][kCompactUnits] each), its bias and a row of zeros; then the second layer's rows
  // of those units and its bias ([kCompactUnits + 1][kRowOf<kHidden>]).
  float* cm;
  // Per step, the units each compacted layer was last made for (~0: none): a step whose live
  // units are the last forward pass's reuses it (compact_update, compact_messages).
  uint32_t* made_upd;  // [kMpSteps]
  uint32_t* made_msg;  // [kMpSteps]
  // Whether the second step's first message layer is computed in the first step's update
  // pass, for every unit, as the new h's are made (cheaper when its units do not fit
  // kCompactUnits), or in a pass of its own after it (so that it can be compacted). The same
  // bits either way: chosen from the last forward pass (message_step).
  bool* fuse;
  // Per step, forward passes to wait before bounding the update MLP's units (wait[step]) or
  // the message MLP's (wait[kMpSteps + step]) again, after they did not fit kCompactUnits:
  // the bounds cost about a microsecond, as much as compaction saves on 40 agents.
  uint8_t* wait;
  // Whether this step's bounds are needed (a layer of it will be bounded): of the h's made,
  // and of the receivers' min and max (set per step by mpnn_forward_body).
  bool fold_h;
  bool fold_aggregates;
};

// Forward passes a layer whose live units did not fit waits before it is bounded again.
constexpr uint8_t kCompactRetryAfter = 7;

// Whether to bound a layer this forward pass (see Mpnn::wait).
[[gnu::always_inline]] inline bool try_compact(uint8_t& wait) noexcept {
  if (wait == 0) return true;
  --wait;
  return false;
}

// A layer whose live outputs fit in this many is computed with only those (two thirds of the
// multiply-adds of its 24).
constexpr int kCompactUnits = 16;
constexpr size_t kCompactUpd2 = static_cast<size_t>(kX + 1) * kCompactUnits;
constexpr size_t kCompactMsg2 = static_cast<size_t>(2 * kHidden + 2) * kCompactUnits;
// Floats of each step's compacted layers (either build's layout).
constexpr size_t kCompactUpdFloats = kCompactUpd2 + (kCompactUnits + 1) * kRowOf<true, kHidden>;
constexpr size_t kCompactMsgFloats = kCompactMsg2 + (kCompactUnits + 1) * kRowOf<true, kHidden>;

// Every input of an In-wide layer.
template <int In>
constexpr uint32_t kAllInputs = In == 32 ? ~0u : (1u << In) - 1;

}  // namespace rocemu::agent::mpnn
