// dpdk_port.h — one DPDK port on a kernel interface, for the interop tool, the perftest
// tools' network mode and rocemu-host.
//
// They run RoceHosts on one af_packet (or af_xdp / tap) port facing a peer in another
// process or a QEMU guest, with no switch and no topology of links, which the fabric engines
// do not model: so this thin wrapper opens the one vdev (DPDK-NOTES "Recipes": af_packet on a
// veth with framecnt and qdisc_bypass). EAL is started by fabric::eal_start (fabric/eal.h)
// with the vdev among its arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct rte_mbuf;
struct rte_mempool;

namespace rocemu::interop {

/// The one ethdev port of a vdev given to EAL (fabric::eal_start, "--vdev=net_af_packet0,..."):
/// one rx and one tx queue, started.
class ExternalPort {
 public:
  static constexpr uint16_t kDefaultMbufDataBytes = 2048 + 128;  // RTE_MBUF_DEFAULT_BUF_SIZE
  /// Opens the port named `dev_name` (the vdev's name, e.g. "net_af_packet0") with a pool of
  /// `pool_mbufs` mbufs of `mbuf_data_bytes` data room (headroom included; the default 2 KB
  /// holds frames of IB MTU 1024; MTU 4096 needs more, and af_packet's `framesz` devarg must
  /// not exceed the data room). Throws std::runtime_error on failure.
  ExternalPort(const std::string& dev_name, uint32_t pool_mbufs, uint16_t ring_size,
               uint16_t mbuf_data_bytes = kDefaultMbufDataBytes);
  ~ExternalPort();
  ExternalPort(const ExternalPort&) = delete;
  ExternalPort& operator=(const ExternalPort&) = delete;

  rte_mempool* pool() const noexcept { return pool_; }
  /// Receives up to n packets (ownership to the caller).
  uint16_t rx(rte_mbuf** pkts, uint16_t n) noexcept;
  /// Transmits up to n packets; returns how many the port took (the rest stay the caller's).
  uint16_t tx(rte_mbuf** pkts, uint16_t n) noexcept;

 private:
  uint16_t port_ = 0;
  rte_mempool* pool_ = nullptr;
};

/// Nanoseconds since the first call, from the TSC (read once per poll iteration).
int64_t tsc_now_ns() noexcept;

}  // namespace rocemu::interop
