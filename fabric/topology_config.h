// topology_config.h — the [topology] table of a run's TOML: explicit nodes and links, or a
// generator (star, dumbbell, Clos) with parameters, plus per-link impairments (for tests)
// and per-link-end device names (for the real-time engine's vdev/PCI ports).
//
// Every problem (unknown key, value out of range, a link to a node that does not exist,
// a host without exactly one link, host pairs with no route) is recorded in ConfigErrors
// with its TOML line; the caller refuses to start if any. Keys and units: docs/config.md.
#pragma once

#include <string>
#include <vector>

#include "common/config.h"
#include "common/time_ns.h"
#include "common/topology.h"

namespace rocemu::fabric {

/// Seeded faults a virtual-time link injects, per direction, each a probability per packet.
struct LinkImpairment {
  double loss = 0.0;       // the packet vanishes
  double reorder = 0.0;    // the packet is held back `reorder_delay_ns` so later ones pass it
  double duplicate = 0.0;  // a copy arrives right after the original
  TimeNs reorder_delay_ns = 10 * kNsPerUs;
  bool any() const noexcept { return loss > 0 || reorder > 0 || duplicate > 0; }
};

/// Per-link extras the plain Topology does not carry.
struct LinkOptions {
  LinkImpairment impairment;
  std::string a_dev;  // real-time engine: device of the `a` end (iface, memif socket, PCI addr)
  std::string b_dev;
  /// rate_gbps = "port": the real-time engine takes the rate from the speed the link's PCI
  /// ports report (rte_eth_link_get) at start; until then the link has kPortRateProvisionalBps.
  bool rate_from_port = false;
};

/// The rate of a rate_gbps = "port" link until its ports report theirs (load-time checks,
/// such as the switch buffer's headroom, use it and are repeated with the reported rate).
inline constexpr uint64_t kPortRateProvisionalBps = 100'000'000'000ull;

struct TopologySpec {
  Topology topology;
  std::vector<LinkOptions> links;  // parallel to topology.links()
  std::vector<std::string> links_down;  // clos: the leaf-spine links failed at the start
};

/// Reads `topology` (the [topology] table reader). Problems go to reader.errors(); the
/// returned spec is meaningful only if no errors were added. Calls finish() on every table
/// it reads.
TopologySpec read_topology(ConfigReader& topology);

/// Cross-checks a built topology: every host has exactly one link, names are unique, every
/// host pair is connected. Problems are added under `path`.
void check_topology(const Topology& t, const std::string& path, ConfigErrors& errors);

/// Rate in Gbps (TOML) to bits per second, rounded to the nearest bit per second.
uint64_t gbps_to_bps(double gbps) noexcept;

}  // namespace rocemu::fabric
