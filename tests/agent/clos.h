// clos.h — the GraphCC paper's evaluation topology for agent tests (Bernardez et al.,
// Sec. 6): 24 hosts, 4 leaves, 2 spines; each leaf to 6 hosts (25 Gbps) and to both spines
// (100 Gbps). Node ids: hosts 0..23, leaves 24..27, spines 28..29. Each leaf's ports 0..5
// face its hosts, ports 6 and 7 face spine 0 and spine 1; each spine's port i faces leaf i.
#pragma once

#include <string>

#include "common/topology.h"

namespace rocemu::agent::test {

inline constexpr int kClosHosts = 24, kClosLeaves = 4, kClosSpines = 2;
inline constexpr uint32_t kLeaf0 = 24, kSpine0 = 28;

inline Topology paper_clos() {
  Topology t;
  for (int h = 0; h < kClosHosts; ++h) t.add_node("h" + std::to_string(h), NodeKind::kHost);
  for (int l = 0; l < kClosLeaves; ++l) t.add_node("leaf" + std::to_string(l), NodeKind::kSwitch);
  for (int s = 0; s < kClosSpines; ++s) t.add_node("spine" + std::to_string(s), NodeKind::kSwitch);
  for (int l = 0; l < kClosLeaves; ++l)
    for (int h = 0; h < 6; ++h) t.add_link(kLeaf0 + l, l * 6 + h, 25 * kBpsPerGbps, 1000);
  for (int l = 0; l < kClosLeaves; ++l)
    for (int s = 0; s < kClosSpines; ++s) t.add_link(kLeaf0 + l, kSpine0 + s, 100 * kBpsPerGbps, 1000);
  return t;
}

}  // namespace rocemu::agent::test
