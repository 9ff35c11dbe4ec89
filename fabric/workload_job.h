// workload_job.h — the workload job: a [workload] table (docs/workloads.md) run through the
// fabric's real switch and NIC nodes in either engine, with per-flow FCT records and a
// summary (docs/workload_runs.md).
//
// Transport mapping: one RC QP per ordered host pair (src -> dst), created and connected
// before time 0; each flow is one RDMA WRITE (or one SEND, with a matching receive posted
// at the destination at the same instant) of its size on the pair's QP. Flows of one pair
// run in start order: at most LaneScheduler::kMaxOutstandingPerLane (32) work requests are
// posted per QP, the rest wait in a per-pair FIFO (fabric/workload/lane_scheduler.h). Every
// host registers one source region and one sink region, both the largest flow's size; all
// hosts share the same two buffers (the payload is not verified, only timed). A flow is
// posted in the source host's node call at its start time (the host's next_deadline()
// includes it); FCT = the engine time of the node call that produced the requester's
// completion minus the flow's start time (exact in virtual time). In real time the
// workload's time 0 is the engine time at which the run starts, and the records'
// start/finish times are engine times (shifted by that origin).
//
// The nodes, the QP plan and the flow bookkeeping are WorkloadFabric's (workload_fabric.h:
// a facade over one part per concern), which also runs one host per process (apps/host,
// rocemu-host) with the same plan.
//
// Result files hold engine-time values only, so two virtual-time runs with one seed write
// byte-identical files; wall time, events per second and memory go to stdout and cost.csv.
// Units: ns, bytes, bps.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fabric/ecn_controller.h"
#include "fabric/run_config.h"
#include "fabric/workload/fct.h"
#include "fabric/workload/flow.h"

namespace rocemu::fabric {

/// How the job drives the engine (not from TOML: engine-level knobs with fixed defaults).
struct WorkloadRunOptions {
  TimeNs queue_sample_ns = 10 * kNsPerUs;   // switch queues sampled; flows pulled 2x ahead
  TimeNs progress_interval_ns = 5 * kNsPerSec;  // wall time between progress lines
  std::FILE* progress_out = stderr;         // nullptr: no progress lines
  std::string out_dir = ".";                // [agent] record, [capture] and [telemetry] files
};

/// One failed flow (a completion with an error status, or a post the NIC refused), for the
/// error report and failures.csv (fabric/workload/flow.h).
using FlowFailure = workload::FlowFailure;

/// PFC seen by the run: what switches sent and NICs obeyed, and the watchdogs' storms.
struct PfcTotals {
  uint64_t switch_pauses_received = 0;         // XOFF frames received by switch ports (from hosts)
  uint64_t nic_pauses_received = 0;            // XOFF/XON frames received by NICs, all priorities
  uint64_t nic_paused_ns = 0;                  // time NICs' priorities were paused, summed
  uint64_t switch_storms = 0, nic_storms = 0;  // PFC watchdog storms ([*.pfc_watchdog])
};

struct WorkloadResult {
  std::string engine;  // "virtual" or "realtime"
  uint64_t seed = 0;
  workload::FctSummary summary;
  std::vector<workload::FlowRecord> records;  // finished flows, by flow id
  uint64_t flows_generated = 0;  // taken from the generator (start time reached)
  uint64_t flows_posted = 0;     // handed to the NIC
  uint64_t flows_failed = 0;     // completed with an error status
  bool all_finished = false;     // the generator is exhausted and every flow completed OK
  TimeNs end_ns = 0;             // engine time when the run ended
  uint64_t retransmitted_packets = 0, timeouts = 0;
  uint64_t link_hops = 0;  // frames sent on every link (data, ACK, CNP, pause): metrics.csv
  uint64_t switch_drops = 0, ecn_marked_packets = 0;
  // The mbuf pool ([testbed] pool_mbufs) ran dry: frames NICs could not build when they
  // had one to send (retried 1 us later), PFC frames switches could not build (retried at
  // the port's next transmission). Either means the pool, not the network, shaped the run.
  uint64_t nic_alloc_failures = 0, switch_alloc_failures = 0;
  uint32_t pool_mbufs = 0;
  PfcTotals pfc;
  std::vector<FlowFailure> failures;  // the first failures (at most 64), by flow id
  AgentStats agent;  // [agent]: policy and counts in metrics.csv; step times on stdout only
  bool qp_per_flow = false;      // [workload] qp_per_flow: then in metrics.csv as well:
  uint64_t qps_connected = 0;    // QP pairs connected (one per flow that got one)
  uint64_t qps_live_at_end = 0;  // QPs not destroyed when the run ended (0 if all finished)
  std::vector<std::string> pci_ports;  // ports = "pci": describe_port() of each (stdout only)
  // Not written to result files (not reproducible):
  int64_t wall_ns = 0;
  uint64_t events = 0;  // virtual engine events
};

/// Runs cfg.workload (must be set) in virtual time until every flow is done or
/// cfg.sim.until_ns. EAL must be running (mbufs). Throws ConfigError for a bad CDF or a
/// workload that does not fit the topology, std::runtime_error on setup failures.
WorkloadResult run_workload_virtual(const RunConfig& cfg, const WorkloadRunOptions& opt = {});
/// The same on the real-time DPDK engine, until done or cfg.testbed.time_limit_ns.
WorkloadResult run_workload_realtime(const RunConfig& cfg, const WorkloadRunOptions& opt = {});

/// Writes flows.csv, bins.csv, metrics.csv, failures.csv (docs/workload_runs.md) into `dir`
/// (created), and for one engine's run (not merged host processes) cost.csv: events,
/// link-hops, both per second of the engine's wall time, peak RSS (run_cost.h; unlike the
/// others it differs from run to run). Throws std::runtime_error.
void write_workload_files(const WorkloadResult& r, const std::string& dir);
/// The line every workload tool prints after write_workload_files(r, dir): "results:
/// DIR/flows.csv, ...".
std::string workload_files_line(const WorkloadResult& r, const std::string& dir);
/// metrics.csv text: the FctSummary metrics, then the job's counters.
std::string workload_metrics_csv(const WorkloadResult& r);
/// failures.csv text: flow_id,src,dst,size_bytes,status (ibv_wc_status_str names, or
/// post_refused), one line per kept failure.
std::string workload_failures_csv(const WorkloadResult& r);
/// Exit status of a workload run, the same for rocemu-sim, rocemu-testbed, each rocemu-host
/// and their merge: 1 if a flow failed, or flows were generated and none finished; else 0
/// (flows still unfinished when the run ends are reported on stderr and in metrics.csv).
int workload_exit_status(const WorkloadResult& r);
/// Human summary for stdout (includes wall time and events per second).
std::string workload_text(const WorkloadResult& r);

}  // namespace rocemu::fabric
