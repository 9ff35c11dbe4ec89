// topology_generators.cc — star, dumbbell and 2-layer Clos builders (GraphCC paper, 5.1).
#include "fabric/topology_generators.h"

#include <stdexcept>

namespace rocemu::fabric {

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
  for (uint32_t i = 0; i < p.hosts; ++i) t.add_link(i, leaf0 + i / per_leaf, p.host_rate_bps, p.delay_ns);
  for (uint32_t l = 0; l < p.leaves; ++l)
    for (uint32_t s = 0; s < p.spines; ++s)
      t.add_link(leaf0 + l, spine0 + s, p.fabric_rate_bps, p.delay_ns);
  return t;
}

}  // namespace rocemu::fabric
