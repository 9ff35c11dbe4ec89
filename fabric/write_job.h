// write_job.h — the default job: host A RDMA-WRITEs a buffer into a memory region of host B
// through the fabric (SoftSwitch nodes, RoceHost nodes), in either engine; then the data is
// verified and a summary built (bytes, goodput, packets and peak queue per port, elapsed
// engine time). Result files (summary.json, summary.csv) hold only engine-time values, so
// two virtual-time runs with one seed write byte-identical files; wall time is reported
// separately for stdout.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/node.h"
#include "fabric/ecn_controller.h"
#include "fabric/run_config.h"

struct rte_mempool;

namespace rocemu::nic {
class RoceHost;
}
namespace rocemu::sw {
class SoftSwitch;
}

namespace rocemu::fabric {

struct PortSummary {
  std::string node;
  uint16_t port = 0;
  uint64_t tx_packets = 0, tx_bytes = 0, rx_packets = 0, rx_bytes = 0;
  uint64_t wire_drops = 0;
  uint64_t peak_queue_bytes = 0;  // switch ports: largest egress queue (any priority)
  uint64_t switch_drops = 0;
  uint64_t ecn_marked_packets = 0;   // switch ports: packets this port CE-marked
  uint64_t pfc_pauses_sent = 0;      // switch ports: PAUSE frames sent (all priorities)
  uint64_t pfc_pauses_received = 0;  // switch ports and host NICs: PAUSE frames received
  uint64_t cnps_sent = 0;            // host NICs: CNPs sent (as notification point)
  uint64_t cnps_received = 0;        // host NICs: CNPs received (as reaction point)
};

struct JobResult {
  std::string engine;  // "virtual" or "realtime"
  uint64_t seed = 0;
  uint64_t bytes = 0;
  bool completed = false;  // every work request completed successfully
  bool verified = false;   // destination memory equals the source
  TimeNs elapsed_ns = 0;   // engine time from start to the last completion seen
  double goodput_gbps = 0;
  uint64_t retransmitted_packets = 0;
  uint64_t timeouts = 0;
  // Why the job did not complete ("" when it did): the first error completion (QP, work
  // request, status) or how far it got when the run ended.
  std::string failure;
  std::vector<PortSummary> ports;
  AgentStats agent;  // [agent] (summary.json: policy and counts; step times on stdout only)
  std::vector<std::string> pci_ports;  // ports = "pci": describe_port() of each (stdout only)
  // Not written to result files (not reproducible):
  int64_t wall_ns = 0;
  int64_t cpu_ns = 0;   // CPU time of the thread that ran the engine (main lcore)
  uint64_t events = 0;  // virtual engine events (deterministic, but stdout only)
};

/// summary.json text (fixed key order, fixed number formatting).
std::string to_json(const JobResult& r);
/// summary.csv text: one row per port, with the job totals repeated.
std::string to_csv(const JobResult& r);
/// Human summary for stdout (includes wall time).
std::string to_text(const JobResult& r);
/// Writes summary.json and summary.csv into `dir` (created). Throws std::runtime_error.
void write_result_files(const JobResult& r, const std::string& dir);

/// Runs the job in virtual time until it completes or cfg.sim.until_ns. EAL must be
/// running (mbufs). `out_dir` receives the capture file if [capture] names ports.
JobResult run_write_job_virtual(const RunConfig& cfg, const std::string& out_dir = ".");
/// Runs the job in real time on the DPDK engine (EAL must be running, with the lcores
/// named by [testbed.placement]) until done or cfg.testbed.time_limit_ns.
JobResult run_write_job_realtime(const RunConfig& cfg, const std::string& out_dir = ".");

}  // namespace rocemu::fabric
