// topology_generators.cc — star, dumbbell and 2-layer Clos builders (GraphCC paper, 5.1).
#include "common/topology_generators.h"

#include <stdexcept>

#include "common/rng.h"

namespace rocemu {

Topology make_star(const StarParams& p) {
  Topology t;
  for (uint32_t i = 0; i < p.hosts; ++i) t.add_node("h" + std::to_string(i), NodeKind::kHost);
  const uint32_t s = t.add_node("s0", NodeKind::kSwitch);
  for (uint32_t i = 0; i < p.hosts; ++i) t.add_link(i, s, p.rate_bps, p.delay_ns);
  return t;
}

Topology make_dumbbell(const DumbbellParams& p) {
  Topology t;
  const uint32_t n = p.left_hosts + p.right_hosts;
  for (uint32_t i = 0; i < n; ++i) t.add_node("h" + std::to_string(i), NodeKind::kHost);
  const uint32_t s0 = t.add_node("s0", NodeKind::kSwitch);
  const uint32_t s1 = t.add_node("s1", NodeKind::kSwitch);
  for (uint32_t i = 0; i < n; ++i)
    t.add_link(i, i < p.left_hosts ? s0 : s1, p.host_rate_bps, p.delay_ns);
  t.add_link(s0, s1, p.bottleneck_rate_bps, p.delay_ns);
  return t;
}

std::string validate(const ClosParams& p) {
  if (p.leaves == 0) return "leaves must be at least 1";
  if (p.spines == 0) return "spines must be at least 1";
  if (p.hosts == 0 || p.hosts % p.leaves != 0)
    return "hosts (" + std::to_string(p.hosts) + ") must be a positive multiple of leaves (" +
           std::to_string(p.leaves) + ")";
  return {};
}

Topology make_clos(const ClosParams& p) {
  if (auto why = validate(p); !why.empty()) throw std::invalid_argument("clos: " + why);
  Topology t;
  for (uint32_t i = 0; i < p.hosts; ++i) t.add_node("h" + std::to_string(i), NodeKind::kHost);
  const uint32_t leaf0 = p.hosts;
  for (uint32_t l = 0; l < p.leaves; ++l) t.add_node("leaf" + std::to_string(l), NodeKind::kSwitch);
  const uint32_t spine0 = leaf0 + p.leaves;
  for (uint32_t s = 0; s < p.spines; ++s)
    t.add_node("spine" + std::to_string(s), NodeKind::kSwitch);
  const uint32_t per_leaf = p.hosts / p.leaves;
  for (uint32_t i = 0; i < p.hosts; ++i)
    t.add_link(i, leaf0 + i / per_leaf, p.host_rate_bps, p.delay_ns);
  for (uint32_t l = 0; l < p.leaves; ++l)
    for (uint32_t s = 0; s < p.spines; ++s)
      t.add_link(leaf0 + l, spine0 + s, p.fabric_rate_bps, p.delay_ns);
  return t;
}

std::string validate(const FatTreeParams& p) {
  if (p.k < 2 || p.k % 2 != 0) return "k (" + std::to_string(p.k) + ") must be even and at least 2";
  if (p.k > 64) return "k (" + std::to_string(p.k) + ") above 64 (65,536 hosts) is not supported";
  if (p.oversubscription < 1 || p.oversubscription > 64)
    return "oversubscription (" + std::to_string(p.oversubscription) + ") must be in [1, 64]";
  return {};
}

Topology make_fattree(const FatTreeParams& p) {
  if (auto why = validate(p); !why.empty()) throw std::invalid_argument("fattree: " + why);
  const uint32_t half = p.k / 2, per_edge = p.oversubscription * half;
  const uint32_t hosts = p.k * half * per_edge;
  Topology t;
  for (uint32_t i = 0; i < hosts; ++i) t.add_node("h" + std::to_string(i), NodeKind::kHost);
  std::vector<uint32_t> edge(p.k * half), agg(p.k * half), core(half * half);
  for (uint32_t pod = 0; pod < p.k; ++pod) {
    const std::string suffix = std::to_string(pod) + "_";
    for (uint32_t e = 0; e < half; ++e)
      edge[pod * half + e] = t.add_node("edge" + suffix + std::to_string(e), NodeKind::kSwitch);
    for (uint32_t a = 0; a < half; ++a)
      agg[pod * half + a] = t.add_node("agg" + suffix + std::to_string(a), NodeKind::kSwitch);
  }
  for (uint32_t c = 0; c < half * half; ++c)
    core[c] = t.add_node("core" + std::to_string(c), NodeKind::kSwitch);
  for (uint32_t i = 0; i < hosts; ++i)
    t.add_link(i, edge[i / per_edge], p.host_rate_bps, p.host_delay_ns);
  for (uint32_t pod = 0; pod < p.k; ++pod)
    for (uint32_t e = 0; e < half; ++e)
      for (uint32_t a = 0; a < half; ++a)
        t.add_link(edge[pod * half + e], agg[pod * half + a], p.edge_rate_bps, p.edge_delay_ns);
  // Core c links to aggregation c / half of every pod, pod by pod (core port = pod).
  for (uint32_t c = 0; c < half * half; ++c)
    for (uint32_t pod = 0; pod < p.k; ++pod)
      t.add_link(agg[pod * half + c / half], core[c], p.core_rate_bps, p.core_delay_ns);
  return t;
}

std::vector<std::string> fail_clos_links(Topology& t, const ClosParams& p, const ClosFailures& f) {
  // make_clos's layout: leaf l to spine s is link hosts + l * spines + s.
  const uint32_t first = p.hosts, count = p.leaves * p.spines;
  const auto name = [&](uint32_t i) {
    return "leaf" + std::to_string(i / p.spines) + "-spine" + std::to_string(i % p.spines);
  };
  std::vector<std::string> down;
  // Takes fabric link i down unless that cuts a host pair off; true if it did.
  const auto take_down = [&](uint32_t i) {
    auto& link = t.mutable_links()[first + i];
    link.up = false;
    if (t.unreachable_host_pairs().empty()) {
      down.push_back(name(i));
      return true;
    }
    link.up = true;
    return false;
  };
  for (const auto& n : f.named) {
    uint32_t i = 0;
    while (i < count && name(i) != n) ++i;
    if (i == count)
      throw std::invalid_argument("no leaf-spine link '" + n + "' (names are leaf<i>-spine<j>)");
    if (!t.links()[first + i].up) throw std::invalid_argument("link '" + n + "' is named twice");
    if (!take_down(i)) throw std::invalid_argument("taking '" + n + "' down cuts hosts off");
  }
  // A seeded shuffle of the fabric links (Fisher-Yates), then the first that may fail.
  std::vector<uint32_t> order(count);
  for (uint32_t i = 0; i < count; ++i) order[i] = i;
  Rng rng(f.seed, "clos-link-failures");
  for (uint32_t i = count; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  uint32_t failed = 0;
  for (uint32_t k = 0; k < count && failed < f.random; ++k)
    if (t.links()[first + order[k]].up && take_down(order[k])) ++failed;
  if (failed < f.random)
    throw std::invalid_argument(
        "only " + std::to_string(failed) +
        " more leaf-spine links can fail without cutting hosts off (asked for " +
        std::to_string(f.random) + ")");
  return down;
}

}  // namespace rocemu
