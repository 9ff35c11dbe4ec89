// arp_reply.cc — ARP replies for the DPDK endpoint's own address (RFC 826 packet layout:
// htype 1, ptype 0x0800, hlen 6, plen 4, op, sha, spa, tha, tpa).
#include "apps/interop/arp_reply.h"

#include <cstring>

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

}  // namespace rocemu::interop
