// workload_topology.cc — hosts and per-pair ideal-FCT parameters from the topology.
#include "fabric/workload/workload_topology.h"

#include "common/topology_paths.h"

namespace rocemu::workload {

std::vector<HostSpec> hosts_from_topology(const Topology& topo) {
  std::vector<HostSpec> out;
  for (uint32_t h : topo.hosts()) {
    uint64_t rate = 0;
    for (const TopoPort& p : topo.node(h).ports) {
      const TopoLink& l = topo.links().at(p.link);
      if (l.up) {
        rate = l.rate_bps;
        break;
      }
    }
    out.push_back(HostSpec{h, rate});
  }
  return out;
}

namespace {
IdealFctParams params_of(const Topology::PathInfo& path, uint32_t mtu_bytes, bool count_fcs) {
  IdealFctParams p;
  p.base_rtt_ns = 2 * path.delay_ns;
  p.bottleneck_bps = path.bottleneck_bps;
  p.mtu_bytes = mtu_bytes;
  p.count_fcs = count_fcs;
  return p;
}
}  // namespace

IdealFctParams ideal_fct_params(const Topology& topo, uint32_t src, uint32_t dst,
                                uint32_t mtu_bytes, bool count_fcs) {
  return params_of(topo.path_info(src, dst), mtu_bytes, count_fcs);
}

std::vector<int32_t> host_index_by_node(const std::vector<HostSpec>& hosts, size_t num_nodes) {
  std::vector<int32_t> index(num_nodes, -1);
  for (size_t h = 0; h < hosts.size(); ++h) index.at(hosts[h].id) = static_cast<int32_t>(h);
  return index;
}

std::vector<IdealFctParams> ideal_fct_table(const Topology& topo,
                                            const std::vector<HostSpec>& hosts,
                                            uint32_t mtu_bytes) {
  const size_t n = hosts.size();
  std::vector<IdealFctParams> table(n * n);
  for (size_t b = 0; b < n; ++b) {  // one search per destination
    const auto to_b = path_infos_to(topo, hosts[b].id);
    for (size_t a = 0; a < n; ++a)
      if (a != b) table[a * n + b] = params_of(to_b[hosts[a].id], mtu_bytes, false);
  }
  return table;
}

}  // namespace rocemu::workload
