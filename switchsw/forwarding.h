// forwarding.h — static IPv4 and IPv6 routes with ECMP, and the per-packet L3 rewrite of the
// switch.
//
// Routes come from Topology::shortest_path_ports() (equal-cost next-hop ports per host
// destination): one per host IPv4 address, and one per configured host IPv6 address
// (topology nodes[].ipv6; link-local fe80::/10 destinations are never routed, RFC 4291 2.5.6).
// Lookup is an open-addressing hash table keyed by the destination address (no allocation
// after construction). ECMP picks a next hop from a hash of the 5-tuple (src/dst address,
// protocol, UDP/TCP ports; IPv6 addresses folded to 32 bits with the flow label) salted per
// switch, so one flow keeps one path and a run replays for a given seed (RFC 2992
// hash-threshold selection, Lemire multiply-shift). RoCEv2 puts its per-QP entropy in the
// UDP source port, over IPv6 as over IPv4.
// The TTL decrement updates the IPv4 checksum incrementally (RFC 1624 eqn. 3); the RoCEv2
// ICRC masks TTL and TOS, so it stays valid. Units: addresses in host byte order.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/telemetry.h"
#include "common/topology.h"
#include "common/wire.h"

namespace rocemu::sw {

/// Why the switch refused a frame (finer than telemetry's DropReason; see to_drop_reason()).
enum class RxDrop : uint8_t {
  kShort = 0,     // shorter than its headers
  kNotIpv4,       // ethertype neither IPv4 nor IPv6 (and not PFC), or a wrong IP version
  kBadIhl,        // IHL < 5
  kBadLength,     // IPv4 total length / IPv6 payload length inconsistent with the frame
  kBadControl,    // MAC control frame that is not a valid PFC frame
  kUnknownDst,    // no route to the destination address
  kTtlExpired,    // TTL (IPv6: hop limit) <= 1
  kBufferFull,    // shared-buffer admission refused a lossy packet
  kHeadroomFull,  // lossless packet with headroom exhausted
  kPfcWatchdog,   // discarded by the PFC watchdog's drop action during a storm
  kCount
};
inline constexpr int kNumRxDrops = static_cast<int>(RxDrop::kCount);
const char* rx_drop_name(RxDrop d) noexcept;
DropReason to_drop_reason(RxDrop d) noexcept;

/// Deterministic 32-bit hash of a 5-tuple, salted.
inline uint32_t ecmp_hash(uint32_t src, uint32_t dst, uint8_t proto, uint16_t sport,
                          uint16_t dport, uint64_t salt) noexcept {
  auto mix = [](uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  uint64_t h = mix(salt ^ (uint64_t{src} << 32 | dst));
  h = mix(h ^ (uint64_t{proto} << 32 | uint64_t{sport} << 16 | dport));
  return static_cast<uint32_t>(h >> 32);
}

/// The 32-bit fold of an IPv6 address for ecmp_hash (XOR of its four words), with `mix`
/// (the flow label for the source address) XORed in.
inline uint32_t fold_ipv6(const uint8_t* a, uint32_t mix = 0) noexcept {
  return wire::detail::get32(a) ^ wire::detail::get32(a + 4) ^ wire::detail::get32(a + 8) ^
         wire::detail::get32(a + 12) ^ mix;
}

/// Decrements the TTL of `ip` (> 1) and updates its checksum incrementally.
inline void decrement_ttl(wire::Ipv4& ip) noexcept {
  const uint16_t old_word = static_cast<uint16_t>(ip.ttl << 8 | ip.protocol);
  ip.ttl = static_cast<uint8_t>(ip.ttl - 1);
  const uint16_t new_word = static_cast<uint16_t>(ip.ttl << 8 | ip.protocol);
  uint32_t sum = static_cast<uint16_t>(~ip.checksum()) + static_cast<uint16_t>(~old_word) + new_word;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  ip.set_checksum(static_cast<uint16_t>(~sum));
}

class RouteTable {
 public:
  /// Routes of switch `node` of `topo` towards every reachable host.
  RouteTable(const Topology& topo, uint32_t node, uint64_t salt);

  /// A route: its list of next-hop ports (shared by every destination behind the same ports).
  struct Entry {
    uint16_t first = 0;  // index into next_hops()
    uint16_t count = 0;  // 0 = empty slot
  };

  /// The route to `ipv4`, or nullptr if none.
  const Entry* find(uint32_t ipv4) const noexcept {
    if (!dense_.empty()) {
      // Host addresses in one dense range (the generated ones: 250 per /24): one 2-byte
      // index per address. A K=16 switch's table is 2 KB instead of a 16 KB hash table,
      // 0.6 MB for the fabric's 320 switches instead of 5 MB (a cache miss per packet).
      const uint32_t i = ipv4 - dense_lo_;
      if (i >= dense_.size() || dense_[i] == 0) return nullptr;
      return &routes_by_list_[dense_[i] - 1];
    }
    uint32_t i = slot_of(ipv4);
    while (true) {
      const Entry& e = slots_[i];
      if (e.count == 0) return nullptr;
      if (keys_[i] == ipv4) return &e;
      i = (i + 1) & mask_;
    }
  }
  /// The route to IPv6 address `a` (16 bytes), or nullptr if none.
  const Entry* find6(const uint8_t* a) const noexcept {
    if (slots6_.empty()) return nullptr;
    uint32_t i = slot_of(fold_ipv6(a)) & mask6_;
    while (true) {
      const Entry& e = slots6_[i];
      if (e.count == 0) return nullptr;
      if (std::memcmp(addr6_[i].data(), a, 16) == 0) return &e;
      i = (i + 1) & mask6_;
    }
  }
  /// Egress port for a flow hashing to `hash` along route `e`.
  uint16_t select(const Entry& e, uint32_t hash) const noexcept {
    return next_hops_[e.first + ((uint64_t{hash} * e.count) >> 32)];
  }
  uint64_t salt() const noexcept { return salt_; }
  size_t size() const noexcept { return routes_; }
  /// True if the IPv4 routes are one direct index over a dense address range (at most four
  /// addresses per route; the generated addresses are), false if a hash table.
  bool direct_indexed() const noexcept { return !dense_.empty(); }
  size_t size6() const noexcept { return routes6_; }
  /// Ports held in all next-hop lists (each distinct ECMP set once).
  size_t next_hop_entries() const noexcept { return next_hops_.size(); }

 private:
  uint32_t slot_of(uint32_t ipv4) const noexcept {
    return static_cast<uint32_t>((uint64_t{ipv4} * 0x9e3779b97f4a7c15ULL) >> 32) & mask_;
  }
  std::vector<Entry> slots_;     // IPv4 hash table (addresses not in one dense range)
  std::vector<uint32_t> keys_;   // the address of each slots_ slot
  std::vector<uint16_t> dense_;  // else: 1 + index into routes_by_list_ per address - dense_lo_
  uint32_t dense_lo_ = 0;
  std::vector<Entry> routes_by_list_;  // one Entry per distinct next-hop list, in order seen
  std::vector<uint16_t> next_hops_;
  uint32_t mask_ = 0;
  std::vector<Entry> slots6_;    // IPv6 routes, empty if none
  std::vector<Ipv6Addr> addr6_;  // the address of each slots6_ slot
  uint32_t mask6_ = 0;
  size_t routes6_ = 0;
  uint64_t salt_;
  size_t routes_ = 0;
};

}  // namespace rocemu::sw
