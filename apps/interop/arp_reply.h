// arp_reply.h — answering ARP (RFC 826) and IPv6 Neighbor Solicitations (RFC 4861 4.3,
// 7.2.4) for addresses no kernel interface owns.
//
// rocemu's endpoint has its IPv4 address and IPv6 GIDs only inside the DPDK program, so the
// program itself must answer "who-has" / NS for them, or the rxe guest never learns where to
// send RoCEv2 packets (rxe resolves the peer of a GID index 0 QP by NS to the solicited-node
// multicast address, 33:33:ff:xx:xx:xx).
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

/// Bytes of the Neighbor Advertisement made: Ethernet 14, IPv6 40, NA 24, target link-layer
/// address option 8.
inline constexpr uint32_t kNaFrameBytes = 86;

/// If `frame` (len bytes) is a valid ICMPv6 Neighbor Solicitation (RFC 4861 7.1.1: hop
/// limit 255, code 0, length >= 24, checksum right, target not multicast), returns true and
/// its target address in `target`.
bool is_neighbor_solicitation(const uint8_t* frame, uint32_t len, Ipv6Addr& target) noexcept;

/// Writes into `frame` (room for kNaFrameBytes) the solicited Neighbor Advertisement that
/// answers the NS in `frame` from `my_mac` for the NS's target: to the asker's MAC and
/// address (all-nodes ff02::1 for a DAD probe from ::), flags Solicited (unless to all-nodes)
/// and Override, a target link-layer address option, checksummed. Returns kNaFrameBytes.
uint32_t make_neighbor_advertisement(uint8_t* frame, const MacAddr& my_mac) noexcept;

}  // namespace rocemu::interop
