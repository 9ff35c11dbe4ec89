// topology.cc — construction and shortest-path routing over the topology model.
#include "common/topology.h"

#include <arpa/inet.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "common/topology_paths.h"

namespace rocemu {

uint32_t Topology::add_node(std::string name, NodeKind kind) {
  const auto idx = static_cast<uint32_t>(nodes_.size());
  TopoNode n;
  n.name = std::move(name);
  n.kind = kind;
  if (kind == NodeKind::kHost) {
    const uint32_t h = static_cast<uint32_t>(hosts().size());
    n.ipv4 = (10u << 24) | ((h / 250) << 8) | (h % 250 + 1);
  }
  nodes_.push_back(std::move(n));
  return idx;
}

uint32_t Topology::add_link(uint32_t a, uint32_t b, uint64_t rate_bps, TimeNs delay_ns) {
  const auto li = static_cast<uint32_t>(links_.size());
  TopoLink l;
  l.a = {a, static_cast<uint16_t>(nodes_.at(a).ports.size())};
  // A cable between two ports of one node (a == b) takes its next two ports.
  l.b = {b, static_cast<uint16_t>(nodes_.at(b).ports.size() + (a == b ? 1 : 0))};
  l.rate_bps = rate_bps;
  l.delay_ns = delay_ns;
  auto mac_for = [](PortRef p) {
    // Locally administered unicast: 02:rc:node(2):port(2)
    return MacAddr{0x02, 0x52, static_cast<uint8_t>(p.node >> 8), static_cast<uint8_t>(p.node),
                   static_cast<uint8_t>(p.port >> 8), static_cast<uint8_t>(p.port)};
  };
  nodes_[a].ports.push_back(TopoPort{li, l.b, mac_for(l.a)});
  nodes_[b].ports.push_back(TopoPort{li, l.a, mac_for(l.b)});
  links_.push_back(l);
  return li;
}

int64_t Topology::find(const std::string& name) const noexcept {
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].name == name) return static_cast<int64_t>(i);
  return -1;
}

int64_t Topology::find_host_by_ip(uint32_t ipv4) const noexcept {
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].kind == NodeKind::kHost && nodes_[i].ipv4 == ipv4) return static_cast<int64_t>(i);
  return -1;
}

int64_t Topology::find_host_by_ipv6(const Ipv6Addr& a) const noexcept {
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].kind == NodeKind::kHost)
      for (const Ipv6Addr& mine : nodes_[i].ipv6)
        if (mine == a) return static_cast<int64_t>(i);
  return -1;
}

std::vector<uint32_t> Topology::hosts() const {
  std::vector<uint32_t> r;
  for (uint32_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].kind == NodeKind::kHost) r.push_back(i);
  return r;
}

std::vector<uint32_t> Topology::switches() const {
  std::vector<uint32_t> r;
  for (uint32_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].kind == NodeKind::kSwitch) r.push_back(i);
  return r;
}

namespace {
constexpr int kUnreached = std::numeric_limits<int>::max();

// Hop distance from every node to `dst`, over up links. Hosts do not forward: a path may
// start or end at a host but never pass through one.
// `order`, if given, receives the reached nodes in search order (nondecreasing distance).
std::vector<int> distances_to(const Topology& t, uint32_t dst,
                              std::vector<uint32_t>* order = nullptr) {
  std::vector<int> d(t.nodes().size(), kUnreached);
  std::vector<uint32_t> local;
  std::vector<uint32_t>& q = order ? *order : local;  // every node enters once: a FIFO by index
  q.clear();
  q.reserve(t.nodes().size());
  d[dst] = 0;
  q.push_back(dst);
  for (size_t head = 0; head < q.size(); ++head) {
    const uint32_t u = q[head];
    if (u != dst && t.node(u).kind == NodeKind::kHost) continue;
    for (const auto& p : t.node(u).ports) {
      if (!t.links()[p.link].up) continue;
      const uint32_t v = p.peer.node;
      if (d[v] == kUnreached) {
        d[v] = d[u] + 1;
        q.push_back(v);
      }
    }
  }
  return d;
}
}  // namespace

std::vector<std::vector<uint16_t>> Topology::shortest_path_ports(uint32_t n) const {
  // One search from n. Port p of n is a next hop to dst iff a shortest path from n to dst
  // (no host inside it) starts with p. In search order, the set of such first ports of a
  // node u at distance d >= 2 is the union of those of its switch neighbours at distance
  // d - 1 (the last link of each shortest path to u); at distance 1 it is the ports of n
  // that reach u. A K=16 fat tree: one search per switch, not 17 (one per neighbour too).
  std::vector<std::vector<uint16_t>> r(nodes_.size());
  std::vector<uint32_t> order;
  const auto d = distances_to(*this, n, &order);
  const auto& ports = nodes_.at(n).ports;
  const size_t words = (ports.size() + 63) / 64;  // a port set per node, `words` wide
  std::vector<uint64_t> first(nodes_.size() * words, 0);
  for (uint16_t p = 0; p < ports.size(); ++p) {
    const uint32_t v = ports[p].peer.node;
    if (links_[ports[p].link].up && v != n) first[v * words + p / 64] |= uint64_t{1} << (p % 64);
  }
  for (const uint32_t u : order) {
    if (d[u] < 2) continue;
    uint64_t* const fu = &first[u * words];
    for (const auto& q : nodes_[u].ports) {
      const uint32_t w = q.peer.node;
      if (!links_[q.link].up || d[w] != d[u] - 1 || nodes_[w].kind != NodeKind::kSwitch) continue;
      const uint64_t* const fw = &first[w * words];
      for (size_t i = 0; i < words; ++i) fu[i] |= fw[i];
    }
  }
  for (uint32_t dst : hosts()) {
    if (n == dst || d[dst] == kUnreached) continue;
    const uint64_t* const f = &first[dst * words];
    for (size_t i = 0; i < words; ++i)
      for (uint64_t bits = f[i]; bits != 0; bits &= bits - 1)
        r[dst].push_back(
            static_cast<uint16_t>(i * 64 + static_cast<size_t>(std::countr_zero(bits))));
  }
  return r;
}

std::vector<std::vector<std::vector<uint16_t>>> Topology::shortest_path_ports() const {
  std::vector<std::vector<std::vector<uint16_t>>> r;
  r.reserve(nodes_.size());
  for (uint32_t n = 0; n < nodes_.size(); ++n) r.push_back(shortest_path_ports(n));
  return r;
}

std::vector<std::string> Topology::unreachable_host_pairs() const {
  std::vector<std::string> r;
  const auto hs = hosts();
  for (uint32_t b : hs) {
    const auto d = distances_to(*this, b);
    for (uint32_t a : hs)
      if (a != b && d[a] == kUnreached) r.push_back(nodes_[a].name + "->" + nodes_[b].name);
  }
  return r;
}

namespace {
// The path from a to b along distances d = distances_to(b): the first port that descends
// towards b at every node (deterministic).
// The first port of n (d[n] finite, n != b) whose link descends towards b: to b itself or to a
// switch (hosts do not forward). One always exists: the search reached n through one.
const TopoPort& next_hop(const Topology& t, const std::vector<int>& d, uint32_t n, uint32_t b) {
  for (const auto& p : t.node(n).ports) {
    const uint32_t v = p.peer.node;
    if (t.links()[p.link].up && d[v] == d[n] - 1 && (v == b || t.node(v).kind == NodeKind::kSwitch))
      return p;
  }
  std::abort();  // unreachable for a node the search reached
}

Topology::PathInfo walk_path(const Topology& t, const std::vector<int>& d, uint32_t a, uint32_t b) {
  Topology::PathInfo info;
  if (d[a] == kUnreached || a == b) return info;
  info.bottleneck_bps = std::numeric_limits<uint64_t>::max();
  for (uint32_t n = a; n != b;) {
    const TopoPort& p = next_hop(t, d, n, b);
    const TopoLink& l = t.links()[p.link];
    info.bottleneck_bps = std::min(info.bottleneck_bps, l.rate_bps);
    info.delay_ns += l.delay_ns;
    ++info.hops;
    n = p.peer.node;
  }
  return info;
}
}  // namespace

Topology::PathInfo Topology::path_info(uint32_t a, uint32_t b) const {
  return walk_path(*this, distances_to(*this, b), a, b);
}

std::vector<Topology::PathInfo> path_infos_to(const Topology& t, uint32_t b) {
  // walk_path from every node at once: a node's path is its first descending link followed
  // by the path of that link's far end (b or a switch, which walk_path continues from in the
  // same way), so in search order each node extends an already known path by one link.
  std::vector<uint32_t> order;
  const auto d = distances_to(t, b, &order);
  std::vector<Topology::PathInfo> r(t.nodes().size());
  for (size_t i = 1; i < order.size(); ++i) {  // order[0] is b: the empty path
    const uint32_t n = order[i];
    const TopoPort& p = next_hop(t, d, n, b);
    const uint32_t v = p.peer.node;
    const TopoLink& l = t.links()[p.link];
    const Topology::PathInfo& rest = r[v];
    r[n].bottleneck_bps = v == b ? l.rate_bps : std::min(l.rate_bps, rest.bottleneck_bps);
    r[n].delay_ns = l.delay_ns + rest.delay_ns;
    r[n].hops = 1 + rest.hops;
  }
  return r;
}

std::string ipv4_to_string(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 0xff) + "." +
         std::to_string((ip >> 8) & 0xff) + "." + std::to_string(ip & 0xff);
}

std::optional<uint32_t> parse_ipv4(const std::string& s) noexcept {
  in_addr a{};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) return std::nullopt;
  return ntohl(a.s_addr);
}

std::string ipv6_to_string(const Ipv6Addr& a) {
  char buf[INET6_ADDRSTRLEN];
  if (!inet_ntop(AF_INET6, a.data(), buf, sizeof buf)) return "?";
  return buf;
}

std::optional<Ipv6Addr> parse_ipv6(const std::string& s) noexcept {
  Ipv6Addr a{};
  if (inet_pton(AF_INET6, s.c_str(), a.data()) != 1) return std::nullopt;
  return a;
}

Ipv6Addr link_local_ipv6(const MacAddr& mac) noexcept {
  Ipv6Addr a{};
  a[0] = 0xfe;
  a[1] = 0x80;
  a[8] = static_cast<uint8_t>(mac[0] ^ 0x02);  // the universal/local bit, inverted
  a[9] = mac[1];
  a[10] = mac[2];
  a[11] = 0xff;
  a[12] = 0xfe;
  a[13] = mac[3];
  a[14] = mac[4];
  a[15] = mac[5];
  return a;
}

std::optional<MacAddr> mac_of_link_local(const Ipv6Addr& a) noexcept {
  for (int i = 2; i < 8; ++i)
    if (a[i] != 0) return std::nullopt;
  if (a[0] != 0xfe || a[1] != 0x80 || a[11] != 0xff || a[12] != 0xfe) return std::nullopt;
  return MacAddr{static_cast<uint8_t>(a[8] ^ 0x02), a[9], a[10], a[13], a[14], a[15]};
}

Ipv6Addr ipv4_mapped_ipv6(uint32_t ipv4) noexcept {
  Ipv6Addr a{};
  a[10] = a[11] = 0xff;
  a[12] = static_cast<uint8_t>(ipv4 >> 24);
  a[13] = static_cast<uint8_t>(ipv4 >> 16);
  a[14] = static_cast<uint8_t>(ipv4 >> 8);
  a[15] = static_cast<uint8_t>(ipv4);
  return a;
}

bool is_ipv4_mapped(const Ipv6Addr& a, uint32_t* ipv4) noexcept {
  for (int i = 0; i < 10; ++i)
    if (a[i] != 0) return false;
  if (a[10] != 0xff || a[11] != 0xff) return false;
  if (ipv4) *ipv4 = uint32_t{a[12]} << 24 | uint32_t{a[13]} << 16 | uint32_t{a[14]} << 8 | a[15];
  return true;
}

MacAddr ipv6_multicast_mac(const Ipv6Addr& a) noexcept {
  return {0x33, 0x33, a[12], a[13], a[14], a[15]};
}

Ipv6Addr solicited_node_ipv6(const Ipv6Addr& a) noexcept {
  Ipv6Addr s{};
  s[0] = 0xff;
  s[1] = 0x02;
  s[11] = 0x01;
  s[12] = 0xff;
  s[13] = a[13];
  s[14] = a[14];
  s[15] = a[15];
  return s;
}

std::string mac_to_string(const MacAddr& m) {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4],
                m[5]);
  return buf;
}

std::optional<MacAddr> parse_mac(const std::string& s) noexcept {
  MacAddr mac{};
  size_t i = 0;
  for (size_t b = 0; b < mac.size(); ++b) {
    if (b > 0 && (i >= s.size() || s[i++] != ':')) return std::nullopt;
    unsigned v = 0, digits = 0;
    for (; i < s.size() && digits < 2 && std::isxdigit(static_cast<unsigned char>(s[i]));
         ++i, ++digits)
      v = v * 16 +
          static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(s[i]))
                                    ? s[i] - '0'
                                    : std::tolower(static_cast<unsigned char>(s[i])) - 'a' + 10);
    if (digits == 0) return std::nullopt;
    mac[b] = static_cast<uint8_t>(v);
  }
  if (i != s.size()) return std::nullopt;
  return mac;
}

}  // namespace rocemu
