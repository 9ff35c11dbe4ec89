// arp_reply.cc — ARP replies for the DPDK endpoint's own address (RFC 826 packet layout:
// htype 1, ptype 0x0800, hlen 6, plen 4, op, sha, spa, tha, tpa) and Neighbor
// Advertisements for its IPv6 GIDs (RFC 4861 4.3/4.4: type 135/136, code 0, checksum,
// reserved or R|S|O flags, target; options of 8-byte units).
#include "apps/interop/arp_reply.h"

#include <cstring>

#include "common/wire.h"

namespace rocemu::interop {

namespace {
constexpr uint32_t kArpOff = 14;
constexpr uint16_t kEtherTypeArp = 0x0806;

uint16_t load_be16(const uint8_t* p) noexcept { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t load_be32(const uint8_t* p) noexcept {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
}  // namespace

bool is_arp_request_for(const uint8_t* frame, uint32_t len, uint32_t my_ipv4) noexcept {
  if (len < kArpFrameBytes || load_be16(frame + 12) != kEtherTypeArp) return false;
  const uint8_t* a = frame + kArpOff;
  return load_be16(a) == 1 && load_be16(a + 2) == 0x0800 && a[4] == 6 && a[5] == 4 &&
         load_be16(a + 6) == 1 && load_be32(a + 24) == my_ipv4;
}

void make_arp_reply_in_place(uint8_t* frame, const MacAddr& my_mac) noexcept {
  uint8_t* a = frame + kArpOff;
  uint8_t asker_mac[6], asker_ip[4], my_ip[4];
  std::memcpy(asker_mac, a + 8, 6);
  std::memcpy(asker_ip, a + 14, 4);
  std::memcpy(my_ip, a + 24, 4);
  std::memcpy(frame, asker_mac, 6);          // Ethernet destination: the asker
  std::memcpy(frame + 6, my_mac.data(), 6);  // Ethernet source: us
  a[6] = 0;
  a[7] = 2;  // op = reply
  std::memcpy(a + 8, my_mac.data(), 6);
  std::memcpy(a + 14, my_ip, 4);
  std::memcpy(a + 18, asker_mac, 6);
  std::memcpy(a + 24, asker_ip, 4);
}

namespace {
constexpr uint8_t kIcmpNs = 135, kIcmpNa = 136;
constexpr uint32_t kIcmpOff = wire::kIpOff + sizeof(wire::Ipv6);
}  // namespace

bool is_neighbor_solicitation(const uint8_t* frame, uint32_t len, Ipv6Addr& target) noexcept {
  using namespace wire;
  if (len < kIcmpOff + 24 || load_be16(frame + 12) != kEtherTypeIpv6) return false;
  const auto& ip = *reinterpret_cast<const Ipv6*>(frame + kIpOff);
  const uint32_t icmp_len = ip.payload_length();
  const uint8_t* icmp = frame + kIcmpOff;
  if (ip.version() != 6 || ip.next_header != kIpProtoIcmpv6 || ip.hop_limit != 255 ||
      icmp_len < 24 || kIcmpOff + icmp_len > len || icmp[0] != kIcmpNs || icmp[1] != 0)
    return false;
  if (ipv6_l4_checksum(ip, icmp, icmp_len, kIpProtoIcmpv6, 2) != load_be16(icmp + 2)) return false;
  if (icmp[8] == 0xff) return false;  // a multicast target
  std::memcpy(target.data(), icmp + 8, 16);
  return true;
}

uint32_t make_neighbor_advertisement(uint8_t* frame, const MacAddr& my_mac) noexcept {
  using namespace wire;
  auto& ip = *reinterpret_cast<Ipv6*>(frame + kIpOff);
  uint8_t* icmp = frame + kIcmpOff;
  Ipv6Addr asker{}, target{};
  std::memcpy(asker.data(), ip.src, 16);
  std::memcpy(target.data(), icmp + 8, 16);
  MacAddr asker_mac{};
  std::memcpy(asker_mac.data(), frame + 6, 6);
  const bool dad = asker == Ipv6Addr{};  // RFC 4861 7.2.4: answer a DAD probe to all-nodes
  Ipv6Addr to = asker;
  if (dad) {
    to = Ipv6Addr{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};
    asker_mac = ipv6_multicast_mac(to);
  }
  std::memcpy(frame, asker_mac.data(), 6);
  std::memcpy(frame + 6, my_mac.data(), 6);
  ip.set_vtcfl(0, 0);
  ip.set_payload_length(32);
  ip.next_header = kIpProtoIcmpv6;
  ip.hop_limit = 255;
  std::memcpy(ip.src, target.data(), 16);
  std::memcpy(ip.dst, to.data(), 16);
  std::memset(icmp, 0, 32);
  icmp[0] = kIcmpNa;
  icmp[4] = dad ? 0x20 : 0x60;  // Solicited (not to all-nodes), Override
  std::memcpy(icmp + 8, target.data(), 16);
  icmp[24] = 2;  // target link-layer address option, 1 unit of 8 bytes
  icmp[25] = 1;
  std::memcpy(icmp + 26, my_mac.data(), 6);
  const uint16_t c = ipv6_l4_checksum(ip, icmp, 32, kIpProtoIcmpv6, 2);
  icmp[2] = static_cast<uint8_t>(c >> 8);
  icmp[3] = static_cast<uint8_t>(c);
  return kNaFrameBytes;
}

}  // namespace rocemu::interop
