// port_graph.h — the graph of agents: one agent per switch egress port.
//
// GraphCC (Bernardez et al., Sec. 4 "Graph representation"): every switch egress port is an
// agent; messages flow along the direction traffic flows. For an agent v = (switch S, port p)
// whose link leads to node N:
//   ingress neighbourhood of v = the agent ports whose link ends at S (they feed S, so their
//     traffic may leave through v; this includes N's port back to S when N is a switch);
//   egress neighbourhood of v  = the agent ports that leave from N (where v's traffic goes
//     next; empty when N is a host).
// A port on a host is never an agent; a port on a switch whose link goes to a host is. A port
// whose link is down (TopoLink::up == false) carries nothing: it is not an agent and takes
// no part in any neighbourhood. Edges are stored u -> v for u in ingress(v), sorted by v
// (CSR), which is the order the message-passing aggregation walks.
#pragma once

#include <cstdint>
#include <vector>

#include "common/topology.h"

namespace rocemu::agent {

/// One agent: the egress side of a switch port.
struct AgentPort {
  uint32_t node = 0;          // topology node (a switch)
  uint16_t port = 0;          // port index on that node
  uint32_t peer_node = 0;     // node the port's link leads to
  uint32_t switch_index = 0;  // position of `node` in PortGraph::switches()
  uint64_t rate_bps = 0;      // link capacity
};

class PortGraph {
 public:
  /// Builds the graph of `topo` (copies what it needs; `topo` may be discarded).
  explicit PortGraph(const Topology& topo);

  int num_agents() const noexcept { return static_cast<int>(agents_.size()); }
  int num_edges() const noexcept { return static_cast<int>(edge_src_.size()); }
  const std::vector<AgentPort>& agents() const noexcept { return agents_; }

  /// Agent id of (node, port), or -1 if that port is not an agent.
  int agent_of(uint32_t node, uint16_t port) const noexcept;

  /// Agent ids in the ingress / egress neighbourhood of agent v, ascending.
  std::vector<int> ingress(int v) const;
  std::vector<int> egress(int v) const;

  /// Edges u -> v (message from u to v), sorted by v then u. CSR: the edges into v are
  /// [in_offset()[v], in_offset()[v + 1]).
  const std::vector<int32_t>& edge_src() const noexcept { return edge_src_; }
  const std::vector<int32_t>& edge_dst() const noexcept { return edge_dst_; }
  const std::vector<int32_t>& in_offset() const noexcept { return in_offset_; }

  /// Switch nodes that own at least one agent, ascending.
  const std::vector<uint32_t>& switches() const noexcept { return switches_; }
  /// Number of ports of each topology node (so per-switch settings can be sized).
  uint16_t ports_of(uint32_t node) const noexcept { return num_ports_[node]; }

 private:
  std::vector<AgentPort> agents_;
  std::vector<std::vector<int32_t>> agent_index_;  // [node][port] -> agent id or -1
  std::vector<uint16_t> num_ports_;
  std::vector<uint32_t> switches_;
  std::vector<int32_t> edge_src_, edge_dst_, in_offset_;
  std::vector<std::vector<int>> egress_;
};

}  // namespace rocemu::agent
