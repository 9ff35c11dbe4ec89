// clos.h — the GraphCC paper's evaluation topology for agent tests (Bernardez et al.,
// Sec. 6): 24 hosts, 4 leaves, 2 spines; each leaf to 6 hosts (25 Gbps) and to both spines
// (100 Gbps). Node ids: hosts 0..23, leaves 24..27, spines 28..29. Each leaf's ports 0..5
// face its hosts, ports 6 and 7 face spine 0 and spine 1; each spine's port i faces leaf i.
#pragma once

#include <string>

#include "common/topology.h"
#include "common/topology_generators.h"

namespace rocemu::agent::test {

inline constexpr int kClosHosts = 24, kClosLeaves = 4, kClosSpines = 2;
inline constexpr uint32_t kLeaf0 = 24, kSpine0 = 28;

/// The one Clos builder's paper defaults (common/topology_generators.h); queue_env_test
/// pins the numbering above.
inline Topology paper_clos() { return make_clos(ClosParams{}); }

}  // namespace rocemu::agent::test
