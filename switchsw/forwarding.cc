// forwarding.cc — construction of the route table from the topology; drop-reason names.
#include "switchsw/forwarding.h"

#include <algorithm>
#include <bit>
#include <map>
#include <stdexcept>
#include <string>

namespace rocemu::sw {

const char* rx_drop_name(RxDrop d) noexcept {
  switch (d) {
    case RxDrop::kShort: return "short";
    case RxDrop::kNotIpv4: return "not_ipv4";
    case RxDrop::kBadIhl: return "bad_ihl";
    case RxDrop::kBadLength: return "bad_length";
    case RxDrop::kBadControl: return "bad_control";
    case RxDrop::kUnknownDst: return "unknown_dst";
    case RxDrop::kTtlExpired: return "ttl_expired";
    case RxDrop::kBufferFull: return "buffer_full";
    case RxDrop::kHeadroomFull: return "headroom_full";
    case RxDrop::kPfcWatchdog:
      return "pfc_watchdog";
    case RxDrop::kCount: break;
  }
  return "unknown";
}

DropReason to_drop_reason(RxDrop d) noexcept {
  switch (d) {
    case RxDrop::kUnknownDst: return DropReason::kNoRoute;
    case RxDrop::kTtlExpired: return DropReason::kTtlExpired;
    case RxDrop::kBufferFull: return DropReason::kBufferFull;
    case RxDrop::kHeadroomFull: return DropReason::kHeadroomFull;
    case RxDrop::kPfcWatchdog:
      return DropReason::kPfcWatchdog;
    default: return DropReason::kMalformed;
  }
}

RouteTable::RouteTable(const Topology& topo, uint32_t node, uint64_t salt) : salt_(salt) {
  const auto mine = topo.shortest_path_ports(node);
  // The routed hosts and their addresses' range: a dense range (at most 4 addresses per
  // route) gets a direct index, any other a hash table.
  size_t n = 0;
  uint32_t lo = UINT32_MAX, hi = 0;
  for (uint32_t h : topo.hosts()) {
    if (mine[h].empty()) continue;
    ++n;
    lo = std::min(lo, topo.node(h).ipv4);
    hi = std::max(hi, topo.node(h).ipv4);
  }
  // Destinations behind the same ports share one list and one Entry: a fat tree's switch has
  // a handful of distinct sets (its uplinks, the ports down to a host or a pod), so
  // next_hops_ stays a few cache lines whatever the fabric's size (one list per host was
  // 16 KB per K=16 switch and a cache miss per forwarded packet), and an Entry's 16-bit
  // `first` (and an index into routes_by_list_) cannot overflow.
  std::map<std::vector<uint16_t>, uint16_t> list_at;  // ports -> index into routes_by_list_
  const auto route_of = [&](const std::vector<uint16_t>& ports) {
    const auto [it, fresh] =
        list_at.try_emplace(ports, static_cast<uint16_t>(routes_by_list_.size()));
    if (fresh) {
      if (next_hops_.size() + ports.size() > UINT16_MAX)
        throw std::length_error("route table of node " + topo.node(node).name +
                                ": more than 65,535 next hops in distinct ECMP sets");
      routes_by_list_.push_back(Entry{static_cast<uint16_t>(next_hops_.size()),
                                      static_cast<uint16_t>(ports.size())});
      next_hops_.insert(next_hops_.end(), ports.begin(), ports.end());
    }
    return it->second;
  };
  const bool dense = n > 0 && uint64_t{hi} - lo < 4 * uint64_t{n};
  if (dense) {
    dense_lo_ = lo;
    dense_.assign(hi - lo + 1, 0);
  } else {
    const size_t cap = std::bit_ceil(std::max<size_t>(4, n * 2));
    slots_.assign(cap, Entry{});
    keys_.assign(cap, 0);
    mask_ = static_cast<uint32_t>(cap - 1);
  }
  for (uint32_t h : topo.hosts()) {
    const auto& ports = mine[h];
    if (ports.empty()) continue;
    const uint16_t r = route_of(ports);
    const uint32_t ipv4 = topo.node(h).ipv4;
    if (dense) {
      if (dense_[ipv4 - lo] == 0) ++routes_;
      dense_[ipv4 - lo] = static_cast<uint16_t>(r + 1);
      continue;
    }
    uint32_t i = slot_of(ipv4);
    while (slots_[i].count != 0 && keys_[i] != ipv4) i = (i + 1) & mask_;
    if (slots_[i].count == 0) ++routes_;
    slots_[i] = routes_by_list_[r];
    keys_[i] = ipv4;
  }
  size_t n6 = 0;
  for (uint32_t h : topo.hosts())
    if (!mine[h].empty()) n6 += topo.node(h).ipv6.size();
  if (n6 == 0) return;
  const size_t cap6 = std::bit_ceil(std::max<size_t>(4, n6 * 2));
  slots6_.assign(cap6, Entry{});
  addr6_.assign(cap6, Ipv6Addr{});
  mask6_ = static_cast<uint32_t>(cap6 - 1);
  for (uint32_t h : topo.hosts()) {
    const auto& ports = mine[h];
    if (ports.empty()) continue;
    const Entry e = routes_by_list_[route_of(ports)];  // the IPv4 route's list (added above)
    for (const Ipv6Addr& a : topo.node(h).ipv6) {
      if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) continue;  // link-local: not routed
      uint32_t i = slot_of(fold_ipv6(a.data())) & mask6_;
      while (slots6_[i].count != 0 && addr6_[i] != a) i = (i + 1) & mask6_;
      if (slots6_[i].count == 0) ++routes6_;
      slots6_[i] = e;
      addr6_[i] = a;
    }
  }
}

}  // namespace rocemu::sw
