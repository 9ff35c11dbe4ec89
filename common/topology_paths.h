// topology_paths.h — path figures of many host pairs at once (set-up of large fabrics).
#pragma once

#include <cstdint>
#include <vector>

#include "common/topology.h"

namespace rocemu {

/// t.path_info(a, b) for every node a (index a), from one search instead of one per source:
/// a table of every host pair (ideal FCTs) at 1,024 hosts costs 1,024 searches, not a million.
std::vector<Topology::PathInfo> path_infos_to(const Topology& t, uint32_t b);

}  // namespace rocemu
