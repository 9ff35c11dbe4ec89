// fast_mpnn_test.cc — the torch-free forward pass against a plain transcription of the
// MPNN equations (model_weights.h), and the greedy policies built on it.
#include "agent/fast_mpnn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/policy.h"
#include "common/topology_generators.h"
#include "tests/agent/clos.h"
#include "tests/agent/test_weights.h"

namespace rocemu::agent {
namespace {

// y = W x + b for a [out][in] row-major W, in double.
template <int In, int Out>
std::vector<double> linear(const DenseWeights<In, Out>& l, const std::vector<double>& x,
                           bool relu) {
  std::vector<double> y(Out);
  for (int o = 0; o < Out; ++o) {
    double s = l.b[o];
    for (int i = 0; i < In; ++i) s += static_cast<double>(l.w[o * In + i]) * x[i];
    y[o] = relu ? std::max(s, 0.0) : s;
  }
  return y;
}

std::vector<double> cat(std::vector<double> a, const std::vector<double>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Unfactored reference: message = msg2(relu(msg1([h_v, h_u]))) per edge.
std::vector<double> reference_q(const MpnnWeights& w, const PortGraph& g,
                                const std::vector<float>& x) {
  const int n = g.num_agents();
  std::vector<std::vector<double>> h(n, std::vector<double>(kHidden, 0.0));
  for (int v = 0; v < n; ++v)
    for (int i = 0; i < kNumFeatures; ++i) h[v][i] = x[v * kNumFeatures + i];
  for (int k = 0; k < kMpSteps; ++k) {
    std::vector<std::vector<double>> hn(n);
    for (int v = 0; v < n; ++v) {
      std::vector<double> mn(kHidden, 0.0), mx(kHidden, 0.0);
      bool first = true;
      for (int u : g.ingress(v)) {
        const auto m = linear(w.msg2, linear(w.msg1, cat(h[v], h[u]), true), false);
        for (int j = 0; j < kHidden; ++j) {
          mn[j] = first ? m[j] : std::min(mn[j], m[j]);
          mx[j] = first ? m[j] : std::max(mx[j], m[j]);
        }
        first = false;
      }
      hn[v] = linear(w.upd2, linear(w.upd1, cat(cat(h[v], mn), mx), true), false);
    }
    h = hn;
  }
  std::vector<double> q;
  for (int v = 0; v < n; ++v) {
    const auto qv = linear(w.ro2, linear(w.ro1, h[v], true), false);
    q.insert(q.end(), qv.begin(), qv.end());
  }
  return q;
}

// The largest |q - ref| (infinity if the sizes differ).
double max_difference(const std::vector<float>& q, const std::vector<double>& ref) {
  if (q.size() != ref.size()) return std::numeric_limits<double>::infinity();
  double worst = 0.0;
  for (size_t i = 0; i < q.size(); ++i) worst = std::max(worst, std::abs(ref[i] - q[i]));
  return worst;
}

// The fast forward pass of `g` against reference_q, with weights from Rng(seed) and
// features from Rng(seed + 1): the largest difference over every Q-value, and the reference.
struct PlainComparison {
  double worst = std::numeric_limits<double>::infinity();
  std::vector<double> ref;
};
PlainComparison compare_with_plain(const PortGraph& g, uint64_t seed,
                                   SimdBuild build = best_simd_build()) {
  const auto w = test::random_mpnn(seed);
  const auto x = test::random_rows(seed + 1, g.num_agents(), kNumFeatures);
  FastMpnn net(w, g, build);
  std::vector<float> q(static_cast<size_t>(g.num_agents()) * kNumActions);
  net.q_values(x.data(), q.data());
  PlainComparison c;
  c.ref = reference_q(w, g, x);
  if (c.ref.size() != q.size()) return c;
  c.worst = max_difference(q, c.ref);
  return c;
}

TEST(FastMpnn, MatchesPlainEquationsOnPaperClos) {
  const PlainComparison c = compare_with_plain(PortGraph(test::paper_clos()), 7);
  EXPECT_LT(c.worst, 1e-5);
  ASSERT_GT(c.ref.size(), static_cast<size_t>(kNumActions));
  EXPECT_GT(std::abs(c.ref[0] - c.ref[kNumActions]), 1e-6) << "agents should differ";
}

// Fat trees of k = 4, 8 and 16 (5,120 agents, 65,536 edges): with k >= 8 every agent has a
// multiple of 4 ingress neighbours, so the edge pass folds whole tiles of edges into one
// receiver; with k = 4 (2 or 4) tiles also straddle two receivers.
TEST(FastMpnn, MatchesPlainEquationsOnFatTrees) {
  for (uint32_t k : {4u, 8u, 16u}) {
    FatTreeParams p;
    p.k = k;
    EXPECT_LT(compare_with_plain(PortGraph(make_fattree(p)), 21).worst, 1e-5) << "k = " << k;
  }
}

// The paper's Clos with two links down: agent and edge counts that tiles of 4 or 8 rows do
// not divide, so single rows are left over (the fat trees and the whole Clos divide evenly).
Topology clos_with_a_link_down() {
  auto t = test::paper_clos();
  t.mutable_links()[24].up = false;
  t.mutable_links()[0].up = false;
  return t;
}

// The paper's Clos, the same with two links down, and fat trees of each k.
std::vector<Topology> clos_and_fat_trees(std::initializer_list<uint32_t> ks) {
  std::vector<Topology> graphs{test::paper_clos(), clos_with_a_link_down()};
  for (uint32_t k : ks) {
    FatTreeParams p;
    p.k = k;
    graphs.push_back(make_fattree(p));
  }
  return graphs;
}

std::vector<SimdBuild> builds_this_cpu_runs() {
  std::vector<SimdBuild> b;
  for (SimdBuild s : {SimdBuild::generic, SimdBuild::avx2, SimdBuild::avx512})
    if (simd_build_supported(s)) b.push_back(s);
  return b;
}

TEST(FastMpnn, EveryBuildMatchesPlainEquations) {
  const PortGraph odd(clos_with_a_link_down());
  ASSERT_NE(odd.num_agents() % 8, 0);
  ASSERT_NE(odd.edge_src().size() % 8, 0u);
  FatTreeParams p;
  p.k = 8;
  const PortGraph tree(make_fattree(p));
  for (SimdBuild b : builds_this_cpu_runs()) {
    EXPECT_LT(compare_with_plain(PortGraph(test::paper_clos()), 7, b).worst, 1e-5)
        << simd_build_name(b);
    EXPECT_LT(compare_with_plain(odd, 8, b).worst, 1e-5) << simd_build_name(b);
    EXPECT_LT(compare_with_plain(tree, 9, b).worst, 1e-5) << simd_build_name(b);
  }
}

// The Q-values of the AVX2 build and of the AVX-512 build on the same features.
std::pair<std::vector<float>, std::vector<float>> narrow_and_wide_q(const MpnnWeights& w,
                                                                   const PortGraph& g,
                                                                   const std::vector<float>& x) {
  const size_t nq = static_cast<size_t>(g.num_agents()) * kNumActions;
  std::pair<std::vector<float>, std::vector<float>> q{std::vector<float>(nq),
                                                      std::vector<float>(nq)};
  FastMpnn(w, g, SimdBuild::avx2).q_values(x.data(), q.first.data());
  FastMpnn(w, g, SimdBuild::avx512).q_values(x.data(), q.second.data());
  return q;
}

bool cpu_runs_both_simd_builds() {
  return simd_build_supported(SimdBuild::avx512) && simd_build_supported(SimdBuild::avx2);
}

// The AVX-512 build lays its weights and tiles out differently but adds the same products in
// the same order with one FMA each: its Q-values and actions are the AVX2 build's bits, so
// results do not depend on which of the two a machine runs.
TEST(FastMpnn, Avx512BuildGivesTheBitsOfTheAvx2Build) {
  if (!cpu_runs_both_simd_builds())
    GTEST_SKIP() << "this CPU has no AVX-512 (or no AVX2): nothing to compare";
  uint64_t seed = 31;
  for (const Topology& t : clos_and_fat_trees({4, 8, 16})) {
    const PortGraph g(t);
    const auto w = test::random_mpnn(seed);
    // Features spread over several orders of magnitude, some exactly zero.
    auto x = test::random_rows(seed + 1, g.num_agents(), kNumFeatures);
    for (size_t i = 0; i < x.size(); i += 7) x[i] = 0.0f;
    for (size_t i = 3; i < x.size(); i += 11) x[i] *= 1000.0f;
    seed += 2;
    const auto [qn, qw] = narrow_and_wide_q(w, g, x);
    ASSERT_EQ(std::memcmp(qn.data(), qw.data(), qn.size() * sizeof(float)), 0)
        << g.num_agents() << " agents";
    std::vector<uint16_t> an(g.num_agents()), aw(g.num_agents());
    FastMpnn(w, g, SimdBuild::avx2).greedy(x.data(), an.data());
    FastMpnn(w, g, SimdBuild::avx512).greedy(x.data(), aw.data());
    EXPECT_EQ(an, aw) << g.num_agents() << " agents";
  }
}

// The same with NaN and infinite features: NaN messages drop out of their receivers' min and
// max, infinite ones win them, in both builds alike (the AVX-512 build folds the last 8
// units of each pair of edges before splitting the pair, the AVX2 build edge by edge).
// NaN Q-values are compared as NaN (their payloads may differ), the others bit for bit.
TEST(FastMpnn, Avx512BuildFoldsNonFiniteMessagesAsTheAvx2Build) {
  if (!cpu_runs_both_simd_builds())
    GTEST_SKIP() << "this CPU has no AVX-512 (or no AVX2): nothing to compare";
  uint64_t seed = 61;
  for (const Topology& t : clos_and_fat_trees({4, 8})) {
    const PortGraph g(t);
    for (int round = 0; round < 4; ++round, seed += 2) {
      const auto w = test::random_mpnn(seed);
      auto x = test::random_rows(seed + 1, g.num_agents(), kNumFeatures);
      // Every 5th agent NaN in one feature; every 7th +inf, every 11th -inf (shifted by the
      // round, so receivers see NaN and infinite senders in different rows of their tiles).
      for (int v = round; v < g.num_agents(); v += 5)
        x[static_cast<size_t>(v) * kNumFeatures + 2] = std::numeric_limits<float>::quiet_NaN();
      for (int v = round; v < g.num_agents(); v += 7)
        x[static_cast<size_t>(v) * kNumFeatures + 4] = std::numeric_limits<float>::infinity();
      for (int v = round + 3; v < g.num_agents(); v += 11)
        x[static_cast<size_t>(v) * kNumFeatures] = -std::numeric_limits<float>::infinity();
      const auto [qn, qw] = narrow_and_wide_q(w, g, x);
      const size_t nq = qn.size();
      size_t finite = 0;
      for (size_t i = 0; i < nq; ++i) {
        if (std::isnan(qn[i])) {
          ASSERT_TRUE(std::isnan(qw[i])) << i << ": " << qw[i] << ", " << g.num_agents() << " agents";
          continue;
        }
        ++finite;
        ASSERT_EQ(std::memcmp(&qn[i], &qw[i], sizeof(float)), 0)
            << i << ": " << qn[i] << " vs " << qw[i] << ", " << g.num_agents() << " agents";
      }
      EXPECT_GT(finite, nq / 4) << "too few agents left finite to compare";
    }
  }
}

// Weights with dead hidden units, as training leaves them: a third of the first message
// layer's units can never be positive (no weight, negative bias: skipped on every edge),
// others are negative for some edges only, and update and readout units are zero for some
// agents and not others. Some biases are -0.
MpnnWeights weights_with_dead_units(uint64_t seed) {
  auto w = test::random_mpnn(seed);
  for (int o = 0; o < kMsgHidden; o += 3) {
    std::fill_n(&w.msg1.w[static_cast<size_t>(o) * 2 * kHidden], 2 * kHidden, 0.0f);
    w.msg1.b[o] = -0.5f;
  }
  for (int o = 1; o < kMsgHidden; o += 3) w.msg1.b[o] -= 0.6f;
  // A third of the update MLP's first units dead on every agent (so the rest, some of them
  // dead on some agents, fit the compacted layer), others often dead.
  for (int o = 0; o < kUpdHidden; o += 3) {
    std::fill_n(&w.upd1.w[static_cast<size_t>(o) * 3 * kHidden], 3 * kHidden, 0.0f);
    w.upd1.b[o] = -0.5f;
  }
  for (int o = 1; o < kUpdHidden; o += 3) w.upd1.b[o] -= 0.8f;
  for (int o = 0; o < kReadoutHidden; o += 2) w.ro1.b[o] -= 0.5f;
  w.msg2.b[3] = w.upd2.b[4] = w.ro2.b[5] = -0.0f;
  return w;
}

// q_values with dead units skipped and with every unit added.
std::pair<std::vector<float>, std::vector<float>> skipped_and_full(const MpnnWeights& w,
                                                                   const PortGraph& g,
                                                                   const std::vector<float>& x,
                                                                   SimdBuild b) {
  const size_t nq = static_cast<size_t>(g.num_agents()) * kNumActions;
  std::pair<std::vector<float>, std::vector<float>> q{std::vector<float>(nq),
                                                      std::vector<float>(nq)};
  FastMpnn(w, g, b, true).q_values(x.data(), q.first.data());
  FastMpnn(w, g, b, false).q_values(x.data(), q.second.data());
  return q;
}

// Skipping a unit that is zero adds nothing, to the bit: the same Q-values (memcmp: zeros
// keep their sign, NaNs their payload) as adding every unit, in every build, with units dead
// on every edge or agent (so that layers are compacted), on some, and in some tiles of agents
// only, and with random weights (few dead: nothing compacted).
TEST(FastMpnn, SkippingDeadUnitsGivesTheBitsOfAddingThem) {
  uint64_t seed = 41;
  for (const Topology& t : clos_and_fat_trees({4, 8}))
    for (const bool dead : {true, false}) {
      const PortGraph g(t);
      const auto w = dead ? weights_with_dead_units(seed) : test::random_mpnn(seed);
      auto x = test::random_rows(seed + 1, g.num_agents(), kNumFeatures);
      for (size_t i = 0; i < x.size(); i += 5) x[i] = 0.0f;
      seed += 2;
      std::vector<float> first_build;
      for (SimdBuild b : builds_this_cpu_runs()) {
        const auto [skipped, full] = skipped_and_full(w, g, x, b);
        ASSERT_EQ(std::memcmp(skipped.data(), full.data(), skipped.size() * sizeof(float)), 0)
            << simd_build_name(b) << ", " << g.num_agents() << " agents";
        EXPECT_LT(max_difference(skipped, reference_q(w, g, x)), 1e-5) << simd_build_name(b);
        if (b == SimdBuild::avx512 && simd_build_supported(SimdBuild::avx2)) {
          const auto narrow = skipped_and_full(w, g, x, SimdBuild::avx2).first;
          EXPECT_EQ(std::memcmp(narrow.data(), skipped.data(), skipped.size() * sizeof(float)), 0);
        }
      }
    }
}

// A readout whose hidden units are all zero leaves each Q-value at its bias. A bias of -0
// must come out as the sum over every unit does (+0 with positive weights), not as the
// skipped sum's -0: FastMpnn stores -0 biases as +0.
TEST(FastMpnn, MinusZeroBiasesDoNotSurviveSkippedUnits) {
  const PortGraph g(test::paper_clos());
  auto w = test::random_mpnn(51);
  std::fill(w.ro1.w.begin(), w.ro1.w.end(), 0.0f);
  std::fill(w.ro1.b.begin(), w.ro1.b.end(), -1.0f);
  for (auto& v : w.ro2.w) v = std::abs(v) + 0.01f;
  std::fill(w.ro2.b.begin(), w.ro2.b.end(), -0.0f);
  const auto x = test::random_rows(52, g.num_agents(), kNumFeatures);
  for (SimdBuild b : builds_this_cpu_runs()) {
    const auto [skipped, full] = skipped_and_full(w, g, x, b);
    for (size_t i = 0; i < skipped.size(); ++i) {
      ASSERT_EQ(skipped[i], 0.0f);
      ASSERT_FALSE(std::signbit(skipped[i])) << simd_build_name(b) << " Q " << i;
      ASSERT_FALSE(std::signbit(full[i])) << simd_build_name(b) << " Q " << i;
    }
  }
}

// A NaN or infinite feature makes its unit's bound NaN or infinite, never a dead unit: the
// Q-values are those of adding every unit (where NaN messages drop out of the min and max).
TEST(FastMpnn, NonFiniteFeaturesGiveTheBitsOfAddingEveryUnit) {
  const PortGraph g(test::paper_clos());
  const auto w = weights_with_dead_units(53);
  auto x = test::random_rows(54, g.num_agents(), kNumFeatures);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[kNumFeatures * 7 + 1] = std::numeric_limits<float>::infinity();
  for (SimdBuild b : builds_this_cpu_runs()) {
    const auto [skipped, full] = skipped_and_full(w, g, x, b);
    EXPECT_EQ(std::memcmp(skipped.data(), full.data(), skipped.size() * sizeof(float)), 0)
        << simd_build_name(b);
  }
}

// A network keeps its compacted layers while the same units are live: one that has run on
// other features (other units live, fewer, or too many to compact) gives the bits of a fresh
// one.
TEST(FastMpnn, ANetworkThatRanBeforeGivesTheBitsOfAFreshOne) {
  // Both MLPs compacted; then only the message MLP (the update MLP's units do not fit, so it
  // waits while the message MLP is compacted every pass).
  auto messages_only = weights_with_dead_units(94);
  messages_only.upd1 = test::random_mpnn(95).upd1;
  for (const Topology& t : clos_and_fat_trees({8}))
    for (const MpnnWeights& w : {weights_with_dead_units(91), messages_only}) {
      const PortGraph g(t);
      const size_t nf = static_cast<size_t>(g.num_agents()) * kNumFeatures;
      std::vector<std::vector<float>> xs{test::random_rows(92, g.num_agents(), kNumFeatures)};
      xs.push_back(xs[0]);
      for (float& v : xs[1]) v = 4.0f * v - 2.0f;  // other units live
      xs.push_back(test::random_rows(93, g.num_agents(), kNumFeatures));
      xs.emplace_back(nf, 0.0f);  // fewer units live
      for (SimdBuild b : builds_this_cpu_runs()) {
        FastMpnn used(w, g, b);
        std::vector<float> q(static_cast<size_t>(g.num_agents()) * kNumActions), fresh(q.size());
        for (int i : {3, 0, 1, 0, 2, 3, 1, 1, 0}) {
          ASSERT_EQ(xs[static_cast<size_t>(i)].size(), nf);
          used.q_values(xs[static_cast<size_t>(i)].data(), q.data());
          FastMpnn(w, g, b).q_values(xs[static_cast<size_t>(i)].data(), fresh.data());
          ASSERT_EQ(std::memcmp(q.data(), fresh.data(), q.size() * sizeof(float)), 0)
              << simd_build_name(b) << ", features " << i;
        }
      }
    }
}

// Infinite features where the message MLP is compacted: an agent whose first feature is
// +inf sends and receives messages of -inf sums only (every unit's weight on that feature is
// negative), 0 after the ReLU, so its messages are the second layer's bias and count in the
// min and max. The slots compact_messages pads with zero units must not add their NaN
// (0 x inf) to those messages: half the units are dead by their bias, so 12 slots are used
// of 16, in a Clos and in fat trees (whose tiles take the AVX-512 edge path).
TEST(FastMpnn, InfiniteFeaturesLeaveCompactedMessagesFinite) {
  auto w = test::random_mpnn(71);
  for (int o = 0; o < kMsgHidden; ++o) {
    float* row = &w.msg1.w[static_cast<size_t>(o) * 2 * kHidden];
    row[0] = -std::abs(row[0]) - 0.1f;
    row[kHidden] = -std::abs(row[kHidden]) - 0.1f;
    if (o % 2 == 0) w.msg1.b[o] = -20.0f;
  }
  uint64_t seed = 72;
  for (const Topology& t : clos_and_fat_trees({4, 8})) {
    const PortGraph g(t);
    auto x = test::random_rows(seed++, g.num_agents(), kNumFeatures);
    for (int v = 3; v < g.num_agents(); v += 11)
      x[static_cast<size_t>(v) * kNumFeatures] = std::numeric_limits<float>::infinity();
    for (SimdBuild b : builds_this_cpu_runs()) {
      const auto [skipped, full] = skipped_and_full(w, g, x, b);
      EXPECT_EQ(std::memcmp(skipped.data(), full.data(), skipped.size() * sizeof(float)), 0)
          << simd_build_name(b) << ", " << g.num_agents() << " agents";
    }
  }
}

// A message MLP whose every unit is dead: messages are the second layer's bias, except those
// of a NaN agent, which stay NaN and so drop out of their receivers' min and max. An agent
// all of whose ingress neighbours are NaN keeps its min and max at +inf and -inf, as when
// every unit is added (with no unit kept, the NaN would be lost).
TEST(FastMpnn, NaNMessagesStayNaNWhenEveryMessageUnitIsDead) {
  auto w = test::random_mpnn(81);
  std::fill(w.msg1.w.begin(), w.msg1.w.end(), 0.0f);
  std::fill(w.msg1.b.begin(), w.msg1.b.end(), -0.5f);
  const PortGraph g(test::paper_clos());
  auto x = test::random_rows(82, g.num_agents(), kNumFeatures);
  const auto& src = g.edge_src();
  const auto& dst = g.edge_dst();
  for (size_t e = 0; e < src.size(); ++e)
    if (dst[e] == 0 && src[e] != 0)
      x[static_cast<size_t>(src[e]) * kNumFeatures] = std::numeric_limits<float>::quiet_NaN();
  for (SimdBuild b : builds_this_cpu_runs()) {
    const auto [skipped, full] = skipped_and_full(w, g, x, b);
    EXPECT_EQ(std::memcmp(skipped.data(), full.data(), skipped.size() * sizeof(float)), 0)
        << simd_build_name(b);
  }
}

// Skipping zero inputs is exact only for finite weights: others are refused, with the place.
TEST(FastMpnn, WeightsThatAreNotFiniteAreRefused) {
  const PortGraph g(test::paper_clos());
  auto w = test::random_mpnn(61);
  w.upd2.b[2] = std::numeric_limits<float>::infinity();
  const size_t at = w.msg1.w.size() + w.msg1.b.size() + w.msg2.w.size() + w.msg2.b.size() +
                    w.upd1.w.size() + w.upd1.b.size() + w.upd2.w.size() + 2;
  try {
    FastMpnn net(w, g);
    FAIL() << "an infinite bias was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("parameter " + std::to_string(at) + " is not finite"),
              std::string::npos)
        << e.what();
  }
  auto nets = test::random_acc(62, 2);
  nets[1].l2.w[7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(FastAccNets{nets}, std::invalid_argument);
}

TEST(FastMpnn, CarriesNothingFromOneStepToTheNext) {
  const PortGraph g(test::paper_clos());
  FastMpnn net(test::random_mpnn(5), g);
  const auto x1 = test::random_rows(6, g.num_agents(), kNumFeatures);
  const auto x2 = test::random_rows(7, g.num_agents(), kNumFeatures);
  const size_t nq = static_cast<size_t>(g.num_agents()) * kNumActions;
  std::vector<float> first(nq), other(nq), again(nq);
  net.q_values(x1.data(), first.data());
  net.q_values(x2.data(), other.data());
  net.q_values(x1.data(), again.data());
  EXPECT_NE(first, other);
  EXPECT_EQ(first, again);
}

TEST(FastMpnn, PortWithoutIngressNeighboursAggregatesZeros) {
  Topology t;
  const auto h0 = t.add_node("h0", NodeKind::kHost);
  const auto s = t.add_node("s", NodeKind::kSwitch);
  t.add_link(s, h0, 10 * kBpsPerGbps, 0);
  const PortGraph g(t);
  const auto w = test::random_mpnn(3);
  const auto x = test::random_rows(4, 1, kNumFeatures);
  FastMpnn net(w, g);
  std::vector<float> q(kNumActions);
  net.q_values(x.data(), q.data());
  const auto ref = reference_q(w, g, x);
  for (int a = 0; a < kNumActions; ++a) EXPECT_NEAR(q[a], ref[a], 1e-5);
}

TEST(FastMpnn, GreedyPicksTheLargestQPerAgent) {
  const PortGraph g(test::paper_clos());
  const auto w = test::random_mpnn(11);
  const auto x = test::random_rows(12, g.num_agents(), kNumFeatures);
  FastMpnn net(w, g);
  std::vector<float> q(static_cast<size_t>(g.num_agents()) * kNumActions);
  net.q_values(x.data(), q.data());
  std::vector<uint16_t> a(g.num_agents());
  net.greedy(x.data(), a.data());
  for (int v = 0; v < g.num_agents(); ++v) {
    const float* qv = &q[static_cast<size_t>(v) * kNumActions];
    EXPECT_EQ(a[v], std::max_element(qv, qv + kNumActions) - qv);
  }
}

TEST(Argmax, FirstLargestWinsAndNaNsNeverDo) {
  std::vector<float> v(kNumActions, 0.0f);
  EXPECT_EQ(argmax(v.data(), kNumActions), 0);
  v[37] = 2.0f;
  v[95] = 2.0f;
  v[119] = 1.5f;
  EXPECT_EQ(argmax(v.data(), kNumActions), 37);
  v[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(argmax(v.data(), kNumActions), 37);
  v[119] = 3.0f;  // in the last block
  EXPECT_EQ(argmax(v.data(), kNumActions), 119);
  v[0] = std::numeric_limits<float>::quiet_NaN();  // the scalar rule: nothing beats v[0]
  EXPECT_EQ(argmax(v.data(), kNumActions), 0);
  const float tail[11] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 4};  // one block and a tail
  EXPECT_EQ(argmax(tail, 11), 9);
  std::vector<float> neg(16, -std::numeric_limits<float>::infinity());
  EXPECT_EQ(argmax(neg.data(), 16), 0);
}

// The scalar rule argmax implements, over vectors drawn from a few values (ties), +-0,
// infinities and NaNs, at every length up to 130 (blocks of 8 and 32 and tails).
TEST(Argmax, MatchesTheScalarRuleOnTiesSignedZerosInfinitiesAndNaNs) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float pool[] = {-0.0f, 0.0f, 1.0f, -1.0f, 2.5f, inf, -inf, nan, 7.0f, -3.0f};
  std::mt19937 rng(17);
  int nan_at_0 = 0, ties = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 130);
    // Draw from a prefix of the pool: some vectors have no NaN, no infinity, only zeros.
    const size_t kinds = 1 + rng() % std::size(pool);
    std::vector<float> v(n);
    for (float& x : v) x = pool[rng() % kinds];
    int best = 0;
    for (int i = 1; i < n; ++i)
      if (v[i] > v[best]) best = i;
    nan_at_0 += v[0] != v[0];
    ties += std::count(v.begin(), v.end(), v[best]) > 1;
    ASSERT_EQ(argmax(v.data(), n), best) << "trial " << trial << ", n " << n;
  }
  EXPECT_GT(nan_at_0, 100);
  EXPECT_GT(ties, 1000);
}

TEST(FastAccNets, EachPortUsesItsOwnNetworkOnFeaturesAndSetting) {
  const int n = 3;
  const auto nets = test::random_acc(5, n);
  const auto f = test::random_rows(6, n, kNumFeatures);
  const auto s = test::random_rows(7, n, kNumSettingFeatures);
  FastAccNets acc(nets);
  std::vector<float> q(n * kNumActions);
  acc.q_values(f.data(), s.data(), q.data());
  for (int v = 0; v < n; ++v) {
    std::vector<double> x(f.begin() + v * kNumFeatures, f.begin() + (v + 1) * kNumFeatures);
    x.insert(x.end(), s.begin() + v * kNumSettingFeatures,
             s.begin() + (v + 1) * kNumSettingFeatures);
    const auto ref = linear(nets[v].l2, linear(nets[v].l1, x, true), false);
    for (int a = 0; a < kNumActions; ++a) EXPECT_NEAR(q[v * kNumActions + a], ref[a], 1e-5);
  }
}

TEST(FastMpnn, OutputShapeIsOneRowOf120PerAgent) {
  const PortGraph g(test::paper_clos());
  FastMpnn net(test::random_mpnn(1), g);
  EXPECT_EQ(net.num_agents(), 40);
  // Guard values past the end must stay untouched.
  std::vector<float> q(static_cast<size_t>(40) * kNumActions + 1, -7.0f);
  net.q_values(test::random_rows(2, 40, kNumFeatures).data(), q.data());
  EXPECT_EQ(q.back(), -7.0f);
  EXPECT_NE(q[40 * kNumActions - 1], -7.0f);
}

TEST(EcnAgent, DecideWritesTheChosenActionOnEveryAgentPortAndKeepsOthers) {
  auto t = test::paper_clos();
  t.mutable_links()[24].up = false;  // leaf0 port 6 is no agent now
  const EcnSetting kept{3000, 90000, 0.3};
  EcnAgent agent(t, FeatureConfig{}, std::make_unique<StaticPolicy>(42));
  std::vector<SwitchSnapshot> snaps;
  for (uint32_t n : agent.graph().switches()) {
    SwitchSnapshot s;
    s.node = n;
    s.at_ns = 1000;
    s.ports.resize(t.node(n).ports.size());
    s.ecn.assign(t.node(n).ports.size(), kept);
    s.port_rate_bps.assign(t.node(n).ports.size(), 25 * kBpsPerGbps);
    snaps.push_back(s);
  }
  const auto& out = agent.decide(snaps);
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0].node, test::kLeaf0);
  EXPECT_EQ(out[0].ecn[0], action_setting(42));
  EXPECT_EQ(out[0].ecn[6], kept);
  EXPECT_EQ(out[0].ecn[7], action_setting(42));
  EXPECT_EQ(out[5].ecn[3], action_setting(42));
}

TEST(Policy, ModelOfWrongPortCountIsRefused) {
  const PortGraph g(test::paper_clos());
  Model m;
  m.kind = ModelKind::kAccPerPort;
  m.acc = test::random_acc(1, 3);
  EXPECT_THROW(make_policy(m, g), std::invalid_argument);
  m.acc = test::random_acc(1, 40);
  EXPECT_EQ(make_policy(m, g)->name(), "acc");
}

}  // namespace
}  // namespace rocemu::agent
