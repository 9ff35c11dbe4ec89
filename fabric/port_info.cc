// port_info.cc — port capabilities and the start-of-run checks (docs/hardware.md).
#include "fabric/port_info.h"

#include <rte_ethdev.h>

#include "common/wire.h"

namespace rocemu::fabric {

namespace {
std::string speed_text(uint32_t mbps) {
  if (mbps == 0) return "none";
  if (mbps == kSpeedUnknownMbps) return "unknown";
  if (mbps % 1000 == 0) return std::to_string(mbps / 1000) + " Gbps";
  return std::to_string(mbps) + " Mbps";
}

std::string offload_names(uint64_t capa, const char* (*name)(uint64_t)) {
  std::string s;
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t f = 1ull << bit;
    if ((capa & f) == 0) continue;
    s += (s.empty() ? "" : " ") + std::string(name(f));
  }
  return s;
}
}  // namespace

uint32_t eth_mtu_for_ib_mtu(uint32_t ib_mtu_bytes) noexcept {
  return wire::kRoceHeadersBytes - static_cast<uint32_t>(sizeof(wire::Ethernet)) +
         static_cast<uint32_t>(sizeof(wire::Reth) + sizeof(wire::ImmDt)) + ib_mtu_bytes +
         wire::kIcrcBytes;
}

std::string check_port(const PortInfo& p, uint32_t need_mtu_bytes, bool need_speed) {
  const std::string who = "port " + p.device + " (" + p.driver + ")";
  if (!p.link_up)
    return who +
           ": no link (check the cable, the peer port and that the peer is up; a "
           "loopback cable joins port A to port B of the same NIC)";
  if (p.max_mtu_bytes < need_mtu_bytes)
    return who + ": MTU limit " + std::to_string(p.max_mtu_bytes) + " bytes is below the " +
           std::to_string(need_mtu_bytes) +
           " this run needs (IB MTU [nic] mtu_bytes + 64 bytes of RoCEv2 headers): lower "
           "mtu_bytes";
  if (need_speed && (p.speed_mbps == 0 || p.speed_mbps == kSpeedUnknownMbps))
    return who + ": rate_gbps = \"port\" but the port reports no speed (" +
           speed_text(p.speed_mbps) + "): give rate_gbps as a number";
  return {};
}

uint64_t port_rate_bps(const PortInfo& p) noexcept {
  if (!p.link_up || p.speed_mbps == 0 || p.speed_mbps == kSpeedUnknownMbps) return 0;
  return static_cast<uint64_t>(p.speed_mbps) * 1'000'000ull;
}

std::string describe_port(const PortInfo& p) {
  std::string s = "port " + p.device + ": driver " + p.driver + ", link " +
                  (p.link_up ? "up" : "down") + ", speed " + speed_text(p.speed_mbps) +
                  (p.link_up ? (p.full_duplex ? " full duplex" : " half duplex") : "") + ", MTU " +
                  std::to_string(p.mtu_bytes) + " (limit " + std::to_string(p.max_mtu_bytes) + ")";
  if (!p.pfc.empty()) s += ", PFC " + p.pfc;
  s += "\n  offloads rx: " + (p.rx_offloads.empty() ? std::string("none") : p.rx_offloads) +
       "\n  offloads tx: " + (p.tx_offloads.empty() ? std::string("none") : p.tx_offloads);
  return s;
}

std::string pci_ports_text(const std::vector<std::string>& described) {
  if (described.empty()) return {};
  std::string s = "  PCI ports (as run: MTU set, rate_gbps = \"port\" from the speed, PFC):\n";
  for (const auto& d : described) {
    std::string line = "    ";
    for (char c : d) {
      line += c;
      if (c == '\n') line += "    ";
    }
    s += line + "\n";
  }
  return s;
}

PortInfo query_port_info(uint16_t port_id, const std::string& device) {
  PortInfo p;
  p.device = device;
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(port_id, &info) == 0) {
    p.driver = info.driver_name ? info.driver_name : "?";
    p.max_mtu_bytes = info.max_mtu;
    p.rx_offloads = offload_names(info.rx_offload_capa, rte_eth_dev_rx_offload_name);
    p.tx_offloads = offload_names(info.tx_offload_capa, rte_eth_dev_tx_offload_name);
  }
  uint16_t mtu = 0;
  if (rte_eth_dev_get_mtu(port_id, &mtu) == 0) p.mtu_bytes = mtu;
  rte_eth_link link{};
  if (rte_eth_link_get_nowait(port_id, &link) == 0) {
    p.link_up = link.link_status == RTE_ETH_LINK_UP;
    p.speed_mbps = link.link_speed;
    p.full_duplex = link.link_duplex == RTE_ETH_LINK_FULL_DUPLEX;
  }
  return p;
}

}  // namespace rocemu::fabric
