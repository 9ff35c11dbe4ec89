// workload_topology.h — what the workload needs from the topology: the hosts with their
// access-link rates (for the load definition), which node is which host, and each pair's
// ideal-FCT parameters.
//
// Base RTT of a pair = 2 x the propagation delay of the shortest path (Topology::path_info);
// the bottleneck is the slowest link on that path. See docs/workloads.md. Units: ns, bps.
#pragma once

#include <cstdint>
#include <vector>

#include "common/topology.h"
#include "fabric/workload/fct.h"
#include "fabric/workload/flow_generator.h"

namespace rocemu::workload {

/// One HostSpec per host of `topo`, in Topology::hosts() order: id = node index,
/// link_rate_bps = the rate of the host's first link that is up (0 if none, which
/// make_workload_config reports).
std::vector<HostSpec> hosts_from_topology(const Topology& topo);

/// Ideal-FCT parameters of the pair (src, dst) (node indices): base RTT = 2 x path
/// propagation delay, bottleneck = slowest link on the path (0 when unreachable).
IdealFctParams ideal_fct_params(const Topology& topo, uint32_t src, uint32_t dst,
                                uint32_t mtu_bytes, bool count_fcs = false);

/// For every node id in [0, num_nodes): its index in `hosts`, or -1 if it is no host there.
/// Every host id must be below num_nodes.
std::vector<int32_t> host_index_by_node(const std::vector<HostSpec>& hosts, size_t num_nodes);

/// ideal_fct_params of every ordered pair of `hosts`, at [a * hosts.size() + b] for host
/// indices a != b (default parameters where a == b).
std::vector<IdealFctParams> ideal_fct_table(const Topology& topo,
                                            const std::vector<HostSpec>& hosts, uint32_t mtu_bytes);

}  // namespace rocemu::workload
