// frames.h — test helpers that build RoCEv2-shaped frames (Eth/IPv4 or IPv6/UDP 4791/BTH/
// payload/ICRC placeholder) in mbufs. Test-only; the ICRC bytes are zero (the switch never checks
// them: it only rewrites TTL/TOS/MACs, which the ICRC masks or does not cover).
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>

#include "common/topology.h"
#include "common/wire.h"

namespace rocemu::test {

struct FrameSpec {
  MacAddr src_mac{};
  MacAddr dst_mac{};
  uint32_t src_ip = 0;
  uint32_t dst_ip = 0;
  uint8_t dscp = 26;
  uint8_t ecn = wire::kEcnEct0;
  uint8_t ttl = 64;
  uint16_t udp_sport = 49152;
  uint16_t udp_dport = wire::kRoceV2Port;
  uint8_t opcode = wire::kRcWriteMiddle;
  uint32_t psn = 0;
  uint32_t frame_bytes = 1024;  // whole frame, without FCS
  bool ipv6 = false;            // IPv6 with src_ip6/dst_ip6 (dscp/ecn in the Traffic Class)
  Ipv6Addr src_ip6{}, dst_ip6{};
  uint32_t flow_label = 0;
};

/// Allocates and fills a frame; nullptr if the pool is empty.
inline rte_mbuf* make_frame(rte_mempool* pool, const FrameSpec& s) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (!m) return nullptr;
  auto* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(s.frame_bytes)));
  if (!d) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  std::memset(d, 0, s.frame_bytes);
  auto* eth = reinterpret_cast<wire::Ethernet*>(d);
  std::memcpy(eth->dst, s.dst_mac.data(), 6);
  std::memcpy(eth->src, s.src_mac.data(), 6);
  if (s.ipv6) {
    eth->set_ethertype(wire::kEtherTypeIpv6);
    auto* ip6 = reinterpret_cast<wire::Ipv6*>(d + wire::kIpOff);
    ip6->set_vtcfl(static_cast<uint8_t>(s.dscp << 2 | s.ecn), s.flow_label);
    ip6->set_payload_length(static_cast<uint16_t>(s.frame_bytes - wire::kUdp6Off));
    ip6->next_header = wire::kIpProtoUdp;
    ip6->hop_limit = s.ttl;
    std::memcpy(ip6->src, s.src_ip6.data(), 16);
    std::memcpy(ip6->dst, s.dst_ip6.data(), 16);
    auto* udp6 = reinterpret_cast<wire::Udp*>(d + wire::kUdp6Off);
    udp6->set_src_port(s.udp_sport);
    udp6->set_dst_port(s.udp_dport);
    udp6->set_length(static_cast<uint16_t>(s.frame_bytes - wire::kUdp6Off));
    auto* bth6 = reinterpret_cast<wire::Bth*>(d + wire::kBth6Off);
    bth6->opcode = s.opcode;
    bth6->set_pkey(0xffff);
    bth6->set_dqpn(0x11);
    bth6->set_psn(s.psn);
    return m;
  }
  eth->set_ethertype(wire::kEtherTypeIpv4);
  auto* ip = reinterpret_cast<wire::Ipv4*>(d + wire::kIpOff);
  ip->ver_ihl = 0x45;
  ip->tos = static_cast<uint8_t>(s.dscp << 2 | s.ecn);
  ip->set_total_length(static_cast<uint16_t>(s.frame_bytes - wire::kIpOff));
  ip->set_frag(0x4000);
  ip->ttl = s.ttl;
  ip->protocol = wire::kIpProtoUdp;
  ip->set_src(s.src_ip);
  ip->set_dst(s.dst_ip);
  ip->set_checksum(ip->compute_checksum());
  auto* udp = reinterpret_cast<wire::Udp*>(d + wire::kUdpOff);
  udp->set_src_port(s.udp_sport);
  udp->set_dst_port(s.udp_dport);
  udp->set_length(static_cast<uint16_t>(s.frame_bytes - wire::kUdpOff));
  auto* bth = reinterpret_cast<wire::Bth*>(d + wire::kBthOff);
  bth->opcode = s.opcode;
  bth->set_pkey(0xffff);
  bth->set_dqpn(0x11);
  bth->set_psn(s.psn);
  return m;
}

inline wire::Ipv4* ipv4_of(rte_mbuf* m) { return rte_pktmbuf_mtod_offset(m, wire::Ipv4*, wire::kIpOff); }
inline wire::Ipv6* ipv6_of(rte_mbuf* m) {
  return rte_pktmbuf_mtod_offset(m, wire::Ipv6*, wire::kIpOff);
}
inline wire::Ethernet* eth_of(rte_mbuf* m) { return rte_pktmbuf_mtod(m, wire::Ethernet*); }

}  // namespace rocemu::test
