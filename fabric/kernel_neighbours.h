// kernel_neighbours.h — the permanent neighbour entries of a kernel interface, read and
// written over rtnetlink (RTM_GETNEIGH / RTM_NEWNEIGH, rtnetlink(7)), and a DPDK port start
// that leaves them as they were.
//
// Why: rte_eth_dev_start replays the port's default MAC address through the PMD's
// mac_addr_set (ethdev's configuration restore). net_af_packet implements it with
// ioctl(SIOCSIFHWADDR) on the kernel interface, and the kernel treats every SIOCSIFHWADDR,
// the unchanged address included, as an address change (NETDEV_CHANGEADDR): it flushes
// every neighbour entry of the interface, permanent ones too (neigh_changeaddr). A static
// neighbour entry the testbed installed for the first program on an interface is then gone
// for the next one (docs/testbed.md, "Neighbour entries").
//
// Linux only; needs CAP_NET_ADMIN to write (as the flush itself does: without it the PMD's
// ioctl fails and nothing is flushed). Works in the caller's network namespace.
#pragma once

#include <cstdint>
#include <vector>

namespace rocemu::fabric {

/// One neighbour entry as the kernel reports it.
struct NeighbourEntry {
  uint8_t family = 0;           ///< AF_INET or AF_INET6
  std::vector<uint8_t> dst;     ///< the protocol address, 4 or 16 bytes, network order
  std::vector<uint8_t> lladdr;  ///< the link-layer address (6 bytes on Ethernet)
  uint8_t flags = 0;            ///< ndm_flags (NTF_ROUTER, NTF_EXT_LEARNED, ...)
  bool operator==(const NeighbourEntry&) const = default;
};

/// The NUD_PERMANENT entries with a link-layer address on kernel interface `ifindex` (IPv4
/// and IPv6). Throws std::runtime_error with errno's reason if rtnetlink cannot be read.
std::vector<NeighbourEntry> permanent_neighbours(int ifindex);

/// Adds `e` on `ifindex` as a permanent entry, replacing an entry for the same address (the
/// kernel may have made one, e.g. a NOARP entry, since the flush). Returns 0 or the errno
/// the kernel answered (EPERM without CAP_NET_ADMIN).
int add_permanent_neighbour(int ifindex, const NeighbourEntry& e);

/// rte_eth_dev_start(port_id) that leaves the permanent neighbour entries of the port's
/// kernel interface (rte_eth_dev_info.if_index; a port without one starts plainly) as they
/// were before: those the start flushed are written back at once. Returns
/// rte_eth_dev_start's result. Reading or restoring the entries failing is logged (warning)
/// and does not fail the start. Main thread, before the port is polled.
int start_port_keeping_neighbours(uint16_t port_id);

}  // namespace rocemu::fabric
