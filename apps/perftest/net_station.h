// net_station.h — the DPDK side of the perftest tools' network mode: one RoceHost on one
// net_af_packet port of a kernel interface (apps/interop's endpoint: fabric's real-time
// engine with the peer as an external node), plus the
// kernel facts it needs: the interface's MAC, IPv4 address and MTU, and a peer's MAC from
// the kernel's neighbour table (docs/perftest.md "Network").
//
// Frame sizes (DPDK 22.11 net_af_packet devargs framesz/blocksz/framecnt): IB MTU 1024 frames fit
// af_packet's default 2 KB ring frames and the port's 2 KB mbufs. Above 1024 the station asks
// af_packet for 8 KB ring frames (`framesz=8192,blocksz=8192`) and makes its mbufs 8 KB + headroom,
// so a 4096-byte payload plus Ethernet/IPv4/UDP/BTH/RETH/ICRC headers (4170 bytes) fits both; the
// kernel interface's own MTU must also carry it (checked: IB MTU + 120 bytes, e.g. `ip link set
// veth0 mtu 9000`).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/interop/endpoint.h"
#include "apps/interop/side_channel.h"
#include "apps/perftest/bench_roles.h"

namespace rocemu::perftest {

/// Bytes the kernel interface's MTU must exceed the IB MTU by (IPv4 20, UDP 8, BTH 12,
/// RETH 16, ICRC 4 = 60, rounded up for extended headers).
inline constexpr uint32_t kIfaceMtuOverheadBytes = 120;

/// The interface's MAC (/sys/class/net/<iface>/address). Throws if unreadable.
MacAddr iface_mac(const std::string& iface);
/// The interface's IPv4 address, host order. Throws if it has none.
uint32_t iface_ipv4(const std::string& iface);
/// The interface's MTU (/sys/class/net/<iface>/mtu). Throws if unreadable.
uint32_t iface_mtu(const std::string& iface);
/// The MAC of `ipv4` in the kernel's neighbour table (/proc/net/arp): the entry on `iface`,
/// else a complete entry on any interface (the interop layout: the TCP side channel runs over
/// a bridge that also holds `iface`, so the kernel learnt the peer there). Throws if absent.
MacAddr neighbour_mac(uint32_t ipv4, const std::string& iface);

/// neighbour_mac, after asking the kernel to resolve `ipv4` if it has no entry yet (one UDP
/// datagram to the discard port makes it ARP, as rdma_resolve_addr does); waits up to
/// `timeout_ms`. Throws with the reason if the peer never answers.
MacAddr resolve_neighbour_mac(uint32_t ipv4, const std::string& iface, int timeout_ms);

/// Our RoCE address: --roce_ip, else the interface's IPv4 address.
interop::EndpointAddress local_address(const PerftestOptions& o);

/// One DPDK port with one RoceHost facing `peer`, and the perftest Side created on it.
struct Station {
  std::unique_ptr<interop::Endpoint> ep;
  std::unique_ptr<nic::RoceHost> host;
  Side side;
  interop::EndpointAddress self;
  uint32_t out_reads = 1;  // advertised in our keys (perftest's out_reads)
  uint8_t gid_index = 1;  // -x: 1 IPv4-mapped (default), 0 IPv6 link-local

  /// Starts EAL (once) and the port; `half` is the per-QP buffer half. Throws on failure.
  Station(const PerftestOptions& o, const interop::EndpointAddress& me,
          const interop::EndpointAddress& peer, uint32_t half);
  ~Station();
  Station(const Station&) = delete;
  Station& operator=(const Station&) = delete;

  /// Our key message for QP q (its buffer is the receive half: the peer WRITEs/SENDs there
  /// and READs from there).
  interop::PerftestKey key(uint32_t q) const;
  /// Connects every QP to the peer's keys (QPN, PSN, GID; each QP's buffer and rkey).
  void connect_all(const std::vector<interop::PerftestKey>& theirs, const PerftestOptions& o);
  /// What connect_all takes from the keys besides the QPs: every QP's remote buffer and the
  /// rkey (with -R rdma_cm connected the QPs; the keys still carry the buffers).
  void learn_buffers(const std::vector<interop::PerftestKey>& theirs, uint32_t num_qps);
};

}  // namespace rocemu::perftest
