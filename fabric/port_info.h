// port_info.h — what a PCI ethdev port can do (driver, speed, link, MTU limit, offloads,
// hardware PFC), and the checks the real-time engine applies to it before a run
// (docs/hardware.md). The checks and the text are pure, so they are unit-tested without a
// NIC; query_port_info() is the one DPDK call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rocemu::fabric {

/// DPDK's RTE_ETH_SPEED_NUM_UNKNOWN: a port that does not know its speed (virtio without
/// the speed feature, a vdev).
inline constexpr uint32_t kSpeedUnknownMbps = UINT32_MAX;

struct PortInfo {
  std::string device;  // the PCI address (a_dev/b_dev) or ethdev name
  std::string driver;  // rte_eth_dev_info.driver_name, e.g. net_virtio, mlx5_pci
  bool link_up = false;
  uint32_t speed_mbps = 0;  // rte_eth_link.link_speed: 0 none, kSpeedUnknownMbps unknown
  bool full_duplex = false;
  uint32_t max_mtu_bytes = 0;  // rte_eth_dev_info.max_mtu
  uint32_t mtu_bytes = 0;      // the MTU the port runs with (after the engine set it)
  std::string rx_offloads;     // names of rx_offload_capa, space-separated ("" = none)
  std::string tx_offloads;
  std::string pfc;  // "hardware" or "software (<why not hardware>)"
};

/// The Ethernet MTU (the IP packet, Ethernet header excluded) that RoCEv2 frames of IB path
/// MTU `ib_mtu_bytes` need: IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ImmDt 4 (the largest
/// extension a full-payload packet carries) + payload + ICRC 4 = payload + 64.
uint32_t eth_mtu_for_ib_mtu(uint32_t ib_mtu_bytes) noexcept;

/// Empty if a run may use the port, else the reason it is refused: the link is down, its
/// MTU limit is below `need_mtu_bytes`, or (`need_speed`: the link's rate_gbps = "port")
/// it reports no speed. Pure.
std::string check_port(const PortInfo& p, uint32_t need_mtu_bytes, bool need_speed);

/// The port's line rate in bits per second; 0 if it reports none (down or unknown).
uint64_t port_rate_bps(const PortInfo& p) noexcept;

/// One line: device, driver, link, speed, duplex, MTU (limit), PFC; and a second with the
/// offload capabilities. Pure.
std::string describe_port(const PortInfo& p);

/// The run summary's lines for the PCI ports (describe_port() texts, each indented under a
/// heading); "" when there are none.
std::string pci_ports_text(const std::vector<std::string>& described);

/// Reads ethdev port `port_id` (started, so that the link is reported): driver, link,
/// MTU, offload capabilities. pfc is left empty. `device` names it in the result.
PortInfo query_port_info(uint16_t port_id, const std::string& device);

}  // namespace rocemu::fabric
