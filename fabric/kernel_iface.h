// kernel_iface.h — facts of a kernel network interface in the caller's network namespace,
// which the tools check before they open a DPDK port on it: its MAC
// (/sys/class/net/<iface>/address), IPv4 address (ioctl SIOCGIFADDR) and MTU
// (/sys/class/net/<iface>/mtu). Each is nullopt if the interface does not exist or has
// none; the callers word the error for their own flags.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/topology.h"

namespace rocemu::fabric {

std::optional<MacAddr> iface_mac(const std::string& iface);
/// Host order.
std::optional<uint32_t> iface_ipv4(const std::string& iface);
std::optional<uint32_t> iface_mtu(const std::string& iface);

}  // namespace rocemu::fabric
