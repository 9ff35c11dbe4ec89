// port_graph.cc — agents and neighbourhoods from the topology (GraphCC Sec. 4).
#include "agent/port_graph.h"

#include <algorithm>

namespace rocemu::agent {

PortGraph::PortGraph(const Topology& topo) {
  const auto& nodes = topo.nodes();
  const auto& links = topo.links();
  agent_index_.resize(nodes.size());
  num_ports_.resize(nodes.size());
  // Agents: switch ports over up links, in (node, port) order.
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    num_ports_[n] = static_cast<uint16_t>(nodes[n].ports.size());
    agent_index_[n].assign(nodes[n].ports.size(), -1);
    if (nodes[n].kind != NodeKind::kSwitch) continue;
    bool any = false;
    for (uint16_t p = 0; p < nodes[n].ports.size(); ++p) {
      const auto& port = nodes[n].ports[p];
      const auto& link = links.at(port.link);
      if (!link.up) continue;
      agent_index_[n][p] = static_cast<int32_t>(agents_.size());
      agents_.push_back(
          AgentPort{n, p, port.peer.node, static_cast<uint32_t>(switches_.size()), link.rate_bps});
      any = true;
    }
    if (any) switches_.push_back(n);
  }
  // Agents grouped by the node they leave from.
  std::vector<std::vector<int>> leaving(nodes.size());
  for (int a = 0; a < num_agents(); ++a) leaving[agents_[a].node].push_back(a);
  // Ingress of v: agents whose link ends at v's node, i.e. agents u with peer_node == node(v).
  std::vector<std::vector<int>> arriving(nodes.size());
  for (int u = 0; u < num_agents(); ++u) arriving[agents_[u].peer_node].push_back(u);

  in_offset_.push_back(0);
  egress_.resize(agents_.size());
  for (int v = 0; v < num_agents(); ++v) {
    for (int u : arriving[agents_[v].node]) {
      edge_src_.push_back(u);
      edge_dst_.push_back(v);
    }
    in_offset_.push_back(static_cast<int32_t>(edge_src_.size()));
    egress_[v] = leaving[agents_[v].peer_node];
  }
}

int PortGraph::agent_of(uint32_t node, uint16_t port) const noexcept {
  if (node >= agent_index_.size() || port >= agent_index_[node].size()) return -1;
  return agent_index_[node][port];
}

std::vector<int> PortGraph::ingress(int v) const {
  std::vector<int> r(edge_src_.begin() + in_offset_.at(v),
                     edge_src_.begin() + in_offset_.at(v + 1));
  return r;
}

std::vector<int> PortGraph::egress(int v) const { return egress_.at(v); }

}  // namespace rocemu::agent
