// test_weights.h — seeded pseudo-random weights and features for agent tests.
#pragma once

#include <vector>

#include "agent/model_weights.h"
#include "common/rng.h"

namespace rocemu::agent::test {

/// Every weight uniform in [-scale, scale] from Rng(seed).
inline MpnnWeights random_mpnn(uint64_t seed, float scale = 0.3f) {
  MpnnWeights w;
  Rng rng(seed, "test-weights");
  w.for_each_layer([&](float* pw, size_t nw, float* pb, size_t nb) {
    for (size_t i = 0; i < nw; ++i) pw[i] = scale * static_cast<float>(2 * rng.uniform() - 1);
    for (size_t i = 0; i < nb; ++i) pb[i] = scale * static_cast<float>(2 * rng.uniform() - 1);
  });
  return w;
}

inline std::vector<AccNetWeights> random_acc(uint64_t seed, int n, float scale = 0.3f) {
  std::vector<AccNetWeights> nets(static_cast<size_t>(n));
  Rng rng(seed, "test-acc");
  for (auto& net : nets)
    net.for_each_layer([&](float* pw, size_t nw, float* pb, size_t nb) {
      for (size_t i = 0; i < nw; ++i) pw[i] = scale * static_cast<float>(2 * rng.uniform() - 1);
      for (size_t i = 0; i < nb; ++i) pb[i] = scale * static_cast<float>(2 * rng.uniform() - 1);
    });
  return nets;
}

/// `n` rows of `dim` values uniform in [0, 1).
inline std::vector<float> random_rows(uint64_t seed, int n, int dim) {
  Rng rng(seed, "test-rows");
  std::vector<float> v(static_cast<size_t>(n) * dim);
  for (auto& x : v) x = static_cast<float>(rng.uniform());
  return v;
}

}  // namespace rocemu::agent::test
