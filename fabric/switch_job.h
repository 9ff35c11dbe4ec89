// switch_job.h — the switch process of the veth testbed (docs/testbed.md): every switch
// node of a run's topology as a SoftSwitch on the real-time engine, every host node
// external (hosted by a perftest tool or workload generator in its own network namespace),
// run until stopped; then a per-port summary. Also the host plan: the addressing a testbed
// script needs to build the namespaces around this process, derived from the topology
// alone (no EAL), so the script and the switch agree by construction.
// Units: bytes, packets, bits per second, ns of engine time.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fabric/realtime_engine.h"
#include "fabric/ecn_controller.h"
#include "fabric/run_config.h"
#include "switchsw/forwarding.h"

namespace rocemu::fabric {

/// One host of the testbed: what its namespace needs.
struct HostPlanRow {
  std::string host;
  uint32_t ipv4 = 0;       // host byte order
  MacAddr host_mac{};      // topology MAC of the host's port: the host iface must carry it
  MacAddr gateway_mac{};   // topology MAC of the switch port facing the host
  std::string switch_dev;  // the switch end's device (a_dev/b_dev, default re<link>a/b)
  std::string host_dev;    // the host end's device name, same rule
  uint64_t rate_bps = 0;   // the link's rate
};

/// The plan of every host of cfg's topology, in node order. Throws ConfigError (the usual
/// `path=value: reason` lines) if a host is not linked to a switch.
std::vector<HostPlanRow> host_plan(const RunConfig& cfg);
/// Tab-separated: a header line `host ipv4 host_mac gateway_mac switch_dev host_dev
/// rate_bps`, then one line per row. MACs as aa:bb:cc:dd:ee:ff.
std::string plan_tsv(const std::vector<HostPlanRow>& rows);
/// A link between two switches: both ends belong to the switch process, so with kernel
/// interface backends the testbed makes a veth pair for it inside the switch's namespace.
struct SwitchLinkRow {
  uint32_t link = 0;
  std::string a_node, b_node;
  std::string a_dev, b_dev;  // a_dev/b_dev, default re<link>a / re<link>b
  uint64_t rate_bps = 0;
};
/// Every switch-to-switch link of cfg's topology, in link order.
std::vector<SwitchLinkRow> switch_links(const RunConfig& cfg);
/// Tab-separated: header `link a_node b_node a_dev b_dev rate_bps`, one line per row.
std::string switch_links_tsv(const std::vector<SwitchLinkRow>& rows);

/// Counters of one switch port at the end of a run.
struct SwitchPortStats {
  std::string node;
  uint16_t port = 0;
  std::string peer;  // node at the other end of the link
  std::string dev;   // this port's device
  uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0;
  uint64_t wire_drops = 0;  // frames the ethdev refused
  uint64_t peak_queue_bytes = 0;
  uint64_t ecn_marked_packets = 0;
  std::array<uint64_t, sw::kNumRxDrops> drops{};  // per sw::RxDrop reason
  uint64_t pfc_pauses_sent = 0, pfc_pauses_received = 0;
  uint64_t pfc_storms = 0;           // PFC watchdog storms on this port, all priorities
  uint64_t mbuf_alloc_failures = 0;  // PFC frames not built for want of an mbuf (retried)
};

struct SwitchRunResult {
  TimeNs elapsed_ns = 0;  // engine time the run lasted
  RealtimeStats engine;
  std::vector<SwitchPortStats> ports;  // every port of every switch, in node order
  AgentStats agent;                    // [agent] (fabric/ecn_controller.h)
};

struct SwitchRunOptions {
  TimeNs duration_ns = 0;                   // 0: until *stop becomes true
  const std::atomic<bool>* stop = nullptr;  // polled every millisecond (e.g. set by SIGINT)
  std::function<void()> on_ready;           // called once every port is up, before polling
  std::string out_dir = ".";                // [capture] and [telemetry] files
  std::optional<TimeNs> idle_sleep_ns;      // overrides [testbed] idle_sleep_us
};

/// Runs every switch of cfg on the real-time engine (cfg.testbed.backend, which must allow
/// external nodes) with every host external. EAL must be running. Throws
/// std::invalid_argument (backend ring/memif, bad [switch] params) or std::runtime_error
/// (a device cannot be opened, with the reason).
SwitchRunResult run_switches_realtime(const RunConfig& cfg, const SwitchRunOptions& opt);

/// Per-port table for stdout.
std::string switch_summary_text(const SwitchRunResult& r);
/// CSV: a header, then one row per switch port (drop_<reason> columns per sw::RxDrop).
std::string switch_summary_csv(const SwitchRunResult& r);

}  // namespace rocemu::fabric
