// frame_mutations.h — the edits the receive-path harnesses (rx_fuzz_harness.h,
// requester_fuzz_harness.h) and their fuzz targets make to RoCEv2/IPv4 frames: bytes
// garbled with the ICRC sealed again (so the garbage gets past the ICRC check), and a frame
// given a peer's Ethernet/IP/UDP headers and a QPN with every length, checksum and the ICRC
// fixed up (so arbitrary BTH bytes reach the QP roles).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/rng.h"
#include "common/wire.h"
#include "nic/packet.h"

namespace rocemu::test {

/// Sets 1-4 random bytes of `f` to random values, then, if it is still an IPv4 frame whose
/// IP length fits it, seals its ICRC again.
inline void garble_resealed(std::vector<uint8_t>& f, Rng& r) {
  using namespace wire;
  if (f.empty()) return;
  const int k = 1 + static_cast<int>(r.below(4));
  for (int i = 0; i < k; ++i) f[r.below(f.size())] = static_cast<uint8_t>(r.next());
  if (f.size() >= kRoceHeadersBytes + 4 && f[12] == 0x08 && f[13] == 0x00) {
    const uint32_t tl = uint32_t{f[16]} << 8 | f[17];
    if (kIpOff + tl <= f.size() && tl >= 32) nic::seal_frame(f.data());
  }
}

/// Gives `f` (a frame of at least the RoCEv2 headers and an ICRC) the first kBthOff bytes of
/// `addressed` (a frame from the peer: its Ethernet, IPv4 and UDP headers), IP and UDP
/// lengths that span it, a valid IP checksum, the default P_Key, destination QP `dqpn`,
/// TVer 0 and a sealed ICRC. Shorter frames are left as they are.
inline void readdress(std::vector<uint8_t>& f, const std::vector<uint8_t>& addressed, uint32_t dqpn) {
  using namespace wire;
  if (f.size() < kRoceHeadersBytes + 4 || addressed.size() < kBthOff) return;
  std::memcpy(f.data(), addressed.data(), kBthOff);
  const uint32_t ip_len = static_cast<uint32_t>(f.size()) - kIpOff;
  auto* ip = reinterpret_cast<Ipv4*>(f.data() + kIpOff);
  ip->set_total_length(static_cast<uint16_t>(ip_len));
  ip->set_checksum(ip->compute_checksum());
  reinterpret_cast<Udp*>(f.data() + kUdpOff)->set_length(static_cast<uint16_t>(ip_len - sizeof(Ipv4)));
  auto* bth = reinterpret_cast<Bth*>(f.data() + kBthOff);
  bth->set_pkey(0xFFFF);
  bth->set_dqpn(dqpn);
  bth->flags &= 0xf0;  // TVer 0
  nic::seal_frame(f.data());
}

}  // namespace rocemu::test
