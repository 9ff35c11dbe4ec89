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
  size_t n = 0;
  for (uint32_t h : topo.hosts())
    if (!mine[h].empty()) ++n;
  // Destinations behind the same ports share one list: a fat tree's switch has a handful of
  // distinct sets (its uplinks, the ports down to a host or a pod), so next_hops_ stays a few
  // cache lines whatever the fabric's size (one list per host was 16 KB per K=16 switch and a
  // cache miss per forwarded packet), and an Entry's 16-bit `first` cannot overflow.
  std::map<std::vector<uint16_t>, uint16_t> list_at;
  const auto add_next_hops = [&](const std::vector<uint16_t>& ports) {
    const auto [it, fresh] = list_at.try_emplace(ports, static_cast<uint16_t>(next_hops_.size()));
    if (fresh) {
      if (next_hops_.size() + ports.size() > UINT16_MAX)
        throw std::length_error("route table of node " + topo.node(node).name +
                                ": more than 65,535 next hops in distinct ECMP sets");
      next_hops_.insert(next_hops_.end(), ports.begin(), ports.end());
    }
    return it->second;
  };
  // The routed addresses: a dense range (at most 4 addresses per route) gets a direct index.
  uint32_t lo = UINT32_MAX, hi = 0;
  for (uint32_t h : topo.hosts()) {
    if (mine[h].empty()) continue;
    lo = std::min(lo, topo.node(h).ipv4);
    hi = std::max(hi, topo.node(h).ipv4);
  }
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
  std::map<uint16_t, uint16_t> entry_of_list;  // next_hops_ index -> routes_by_list_ index
  for (uint32_t h : topo.hosts()) {
    const auto& ports = mine[h];
    if (ports.empty()) continue;
    Entry e;
    e.first = add_next_hops(ports);
    e.count = static_cast<uint16_t>(ports.size());
    const uint32_t ipv4 = topo.node(h).ipv4;
    if (dense) {
      const auto [it, fresh] =
          entry_of_list.try_emplace(e.first, static_cast<uint16_t>(routes_by_list_.size()));
      if (fresh) routes_by_list_.push_back(e);
      if (dense_[ipv4 - lo] == 0) ++routes_;
      dense_[ipv4 - lo] = static_cast<uint16_t>(it->second + 1);
      continue;
    }
    uint32_t i = slot_of(ipv4);
    while (slots_[i].count != 0 && keys_[i] != ipv4) i = (i + 1) & mask_;
    if (slots_[i].count == 0) ++routes_;
    slots_[i] = e;
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
    // The host's IPv4 route's next hops (added above).
    const Entry* v4 = find(topo.node(h).ipv4);
    for (const Ipv6Addr& a : topo.node(h).ipv6) {
      if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) continue;  // link-local: not routed
      Entry e;
      e.first = v4 ? v4->first : add_next_hops(ports);
      e.count = static_cast<uint16_t>(ports.size());
      uint32_t i = slot_of(fold_ipv6(a.data())) & mask6_;
      while (slots6_[i].count != 0 && addr6_[i] != a) i = (i + 1) & mask6_;
      if (slots6_[i].count == 0) ++routes6_;
      slots6_[i] = e;
      addr6_[i] = a;
    }
  }
}

}  // namespace rocemu::sw
