// topology.h — the network as plain data: nodes, their ports, and the links between them.
//
// Built by fabric/ (from TOML or a generator), read by the engines, the switch (routes) and
// the agent (port graph). A link joins two ports; every link end creates one port on its
// node, numbered in the order links are added. Links are full duplex: one rate and one
// propagation delay for both directions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/time_ns.h"

namespace rocemu {

enum class NodeKind : uint8_t { kHost, kSwitch };

using MacAddr = std::array<uint8_t, 6>;
/// An IPv6 address (or a RoCEv2 GID), network byte order.
using Ipv6Addr = std::array<uint8_t, 16>;

struct PortRef {
  uint32_t node = 0;
  uint16_t port = 0;
  bool operator==(const PortRef&) const = default;
};

struct TopoLink {
  PortRef a, b;
  uint64_t rate_bps = 0;
  TimeNs delay_ns = 0;
  bool up = true;  // a link that is down carries nothing and takes no part in routing
};

struct TopoPort {
  uint32_t link = 0;   // index into Topology::links
  PortRef peer;        // the port at the other end of the link
  MacAddr mac{};       // this port's MAC address
};

struct TopoNode {
  std::string name;
  NodeKind kind = NodeKind::kHost;
  uint32_t ipv4 = 0;   // host byte order; hosts only (switches route, they do not terminate)
  std::vector<Ipv6Addr> ipv6;  // configured IPv6 addresses (hosts only; GID indexes 2, 3, ...)
  std::vector<TopoPort> ports;
};

class Topology {
 public:
  /// Adds a node; returns its index. Hosts get IPv4 10.0.(i/256).(i%256 + 1) unless set later.
  uint32_t add_node(std::string name, NodeKind kind);
  /// Joins a new port on `a` to a new port on `b`; returns the link index.
  uint32_t add_link(uint32_t a, uint32_t b, uint64_t rate_bps, TimeNs delay_ns);

  const std::vector<TopoNode>& nodes() const noexcept { return nodes_; }
  const std::vector<TopoLink>& links() const noexcept { return links_; }
  std::vector<TopoNode>& mutable_nodes() noexcept { return nodes_; }
  std::vector<TopoLink>& mutable_links() noexcept { return links_; }
  const TopoNode& node(uint32_t i) const { return nodes_.at(i); }
  const TopoLink& link_of(PortRef p) const { return links_.at(nodes_.at(p.node).ports.at(p.port).link); }

  /// Index of the node named `name`, or -1.
  int64_t find(const std::string& name) const noexcept;
  /// Index of the host with `ipv4`, or -1.
  int64_t find_host_by_ip(uint32_t ipv4) const noexcept;
  /// Index of the host with the configured IPv6 address `a`, or -1.
  int64_t find_host_by_ipv6(const Ipv6Addr& a) const noexcept;
  std::vector<uint32_t> hosts() const;
  std::vector<uint32_t> switches() const;

  /// Equal-cost next hops: for every node and every host destination, the ports of the node
  /// that lie on a shortest path (in hops, over links that are up). result[node][dst_host]
  /// is empty when dst is unreachable or is the node itself.
  std::vector<std::vector<std::vector<uint16_t>>> shortest_path_ports() const;
  /// The same for one node: result[dst_host] (what one switch's route table needs; set-up
  /// cost O(degree x (nodes + links)), not O(hosts x (nodes + links))).
  std::vector<std::vector<uint16_t>> shortest_path_ports(uint32_t node) const;

  /// Hosts pairs with no path between them, as "a->b" strings (empty when fully connected).
  std::vector<std::string> unreachable_host_pairs() const;

  /// Smallest link rate along a shortest path from host a to host b (0 if unreachable) and
  /// the sum of propagation delays along it.
  struct PathInfo { uint64_t bottleneck_bps = 0; TimeNs delay_ns = 0; int hops = 0; };
  PathInfo path_info(uint32_t a, uint32_t b) const;

 private:
  std::vector<TopoNode> nodes_;
  std::vector<TopoLink> links_;
};

/// "10.0.0.1" from host-order address.
std::string ipv4_to_string(uint32_t ipv4);
/// A dotted-decimal IPv4 address (inet_pton's form: four decimal bytes, no leading zeros)
/// in host order; nullopt for anything else.
std::optional<uint32_t> parse_ipv4(const std::string& s) noexcept;
/// RFC 5952 text of an IPv6 address ("fe80::5054:ff:fe77:11").
std::string ipv6_to_string(const Ipv6Addr& a);
/// An IPv6 address in any RFC 4291 text form (inet_pton); nullopt for anything else.
std::optional<Ipv6Addr> parse_ipv6(const std::string& s) noexcept;
/// The link-local address fe80::/64 with the modified EUI-64 interface identifier of `mac`
/// (RFC 4291 appendix A: U/L bit flipped, ff:fe in the middle), as Linux gives an interface
/// and rxe puts at GID index 0.
Ipv6Addr link_local_ipv6(const MacAddr& mac) noexcept;
/// The MAC of a link-local address made by link_local_ipv6() (ff:fe in the middle), or
/// nullopt for any other address.
std::optional<MacAddr> mac_of_link_local(const Ipv6Addr& a) noexcept;
/// The IPv4-mapped address ::ffff:a.b.c.d of a host-order IPv4 address (RFC 4291 2.5.5.2).
Ipv6Addr ipv4_mapped_ipv6(uint32_t ipv4) noexcept;
/// True for ::ffff:0:0/96; `ipv4` (host order) gets the embedded address.
bool is_ipv4_mapped(const Ipv6Addr& a, uint32_t* ipv4 = nullptr) noexcept;
/// 33:33:xx:xx:xx:xx, the Ethernet multicast address of IPv6 multicast `a` (RFC 2464 7).
MacAddr ipv6_multicast_mac(const Ipv6Addr& a) noexcept;
/// ff02::1:ffXX:XXXX, the solicited-node multicast address of `a` (RFC 4291 2.7.1).
Ipv6Addr solicited_node_ipv6(const Ipv6Addr& a) noexcept;

/// "aa:bb:cc:dd:ee:ff" (lower-case hex).
std::string mac_to_string(const MacAddr& mac);
/// Six ':'-separated bytes of one or two hex digits each (either case) to a MAC; nullopt
/// for anything else.
std::optional<MacAddr> parse_mac(const std::string& s) noexcept;

}  // namespace rocemu
