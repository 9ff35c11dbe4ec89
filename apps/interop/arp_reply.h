// arp_reply.h — answering ARP for an address no kernel interface owns (RFC 826).
//
// rocemu's endpoint has an IPv4 address only inside the DPDK program, so the program itself
// must answer "who-has" for it, or the rxe guest never learns where to send RoCEv2 packets.
// Pure: works on a frame in memory, never touches a port.
#pragma once

#include <cstdint>

#include "common/topology.h"

namespace rocemu::interop {

inline constexpr uint32_t kArpFrameBytes = 42;  // Ethernet 14 + ARP for IPv4 over Ethernet 28

/// True if `frame` (len bytes) is an Ethernet/IPv4 ARP request for `my_ipv4` (host order).
bool is_arp_request_for(const uint8_t* frame, uint32_t len, uint32_t my_ipv4) noexcept;

/// Turns the ARP request in `frame` (checked by is_arp_request_for) into the reply from
/// `my_mac`, in place: Ethernet addresses swapped, opcode 2, sender/target swapped.
void make_arp_reply_in_place(uint8_t* frame, const MacAddr& my_mac) noexcept;

}  // namespace rocemu::interop
