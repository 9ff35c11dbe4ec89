// scenario_net.h — a seeded virtual-time network of SoftSwitch and RoceHost nodes carrying
// RDMA WRITE flows, with DCQCN on or off, for the issue 6 scenario tests (DCQCN, Zhu et
// al., SIGCOMM 2015, sections 5-6: fairness, multi-bottleneck, incast/PFC, victim flow).
//
// Each flow is one RC QP pair (sender QP on `src`, responder QP on `dst`) that keeps
// `outstanding` WRITEs of `message_bytes` posted (a long flow) or writes `bytes` in total.
// A periodic callback every `poll_ns` reaps completions and posts work; a flow's goodput is
// the payload of WRITEs completed inside the window [warmup_ns, duration_ns). Switch egress
// queues of the watched ports (data priority) are sampled every `sample_ns`.
// Units: ns, bytes, bit/s.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/topology.h"
#include "nic/dcqcn/dcqcn_params.h"
#include "nic/nic_params.h"
#include "switchsw/switch_params.h"

namespace rocemu::scenario {

struct FlowSpec {
  uint32_t src = 0, dst = 0;       // host node indices
  uint64_t bytes = 0;              // 0: long-lived (until the end of the run)
  TimeNs start_ns = 0;
  uint64_t fixed_rate_bps = 0;     // > 0: the QP's rate limiter is pinned to this (no CC)
};

struct ScenarioSpec {
  Topology topo;
  sw::SwitchParams sw;
  nic::NicParams nic;
  bool dcqcn = false;               // DCQCN on every host (and ECT(0) data)
  dcqcn::DcqcnParams dcqcn_params;  // used when dcqcn
  std::vector<FlowSpec> flows;
  TimeNs duration_ns = 50 * kNsPerMs;
  TimeNs warmup_ns = 10 * kNsPerMs;
  bool stop_when_complete = false;  // end as soon as every finite flow completed
  uint32_t message_bytes = 64 * 1024;
  uint32_t outstanding = 8;         // WRITEs in flight per long flow
  TimeNs poll_ns = 5 * kNsPerUs;
  std::vector<PortRef> watch;       // switch egress ports whose queue is sampled
  TimeNs sample_ns = 5 * kNsPerUs;
  uint8_t data_priority = 3;
  uint64_t seed = 1;
  // The GID index of every QP's path (RoceHost::gid): 1 = RoCEv2 over IPv4; 0 or >= 2 = over
  // IPv6 between the hosts' GIDs of that index (>= 2: topology nodes[].ipv6, routable).
  uint8_t gid_index = 1;
  // Real time instead: the DPDK engine over net_ring wires (fabric/realtime_engine.h), all
  // nodes on the calling lcore; durations are then wall-clock ns from the engine's start.
  bool realtime = false;
  // Traces (empty: none): <trace>_flows.csv (time_ns,flow,rate_gbps,throughput_gbps) and
  // <trace>_queue.csv (switchsw QueueSeriesWriter of the first watched port's switch).
  std::string trace;
  TimeNs trace_ns = 50 * kNsPerUs;
};

struct PortOutcome {
  double mean_queue_bytes = 0;  // sampled in the window
  uint64_t max_queue_bytes = 0;
  double utilisation = 0;       // wire tx bits in the window / (rate x window)
};

struct ScenarioResult {
  std::vector<double> goodput_bps;   // per flow, payload completed in the window
  std::vector<double> sender_tx_bps; // per flow: its sender port's wire tx rate in the window
  std::vector<TimeNs> finish_ns;     // per finite flow: completion time (kNever if not)
  std::vector<PortOutcome> ports;    // parallel to spec.watch
  bool all_complete = true;          // every finite flow completed without error
  bool data_ok = true;               // every flow's destination holds its source's bytes
  uint64_t wr_errors = 0;            // work completions with an error status
  uint64_t pfc_pauses_sent = 0;      // all switches, all ports
  uint64_t switch_drops = 0;
  uint64_t wire_drops = 0;
  uint64_t nic_drops = 0;            // frames the hosts refused (recv_checks)
  uint64_t retransmitted = 0, timeouts = 0;
  uint64_t cnps_sent = 0, cnps_received = 0, ce_received = 0;
  uint64_t ecn_marked = 0;           // switches
  TimeNs end_ns = 0;
  uint64_t events = 0;
  // The calling thread's CPU time in the window / the window's length: in real time, the
  // share of a core the poll loop got (near 1 on a quiet machine, less beside other load;
  // wall-rate figures such as utilisation scale with it). Virtual time: CPU per simulated ns.
  double window_cpu_share = 0;
};

/// Runs `s` (EAL started on first use). Throws std::runtime_error on setup failures.
ScenarioResult run_scenario(const ScenarioSpec& s);

/// Jain's fairness index (sum x)^2 / (n sum x^2); 1 for an empty or all-zero vector.
double jain_index(const std::vector<double>& x);

/// configs/dcqcn/<name>.toml of the source tree (ROCEMU_SOURCE_ROOT), parsed.
dcqcn::DcqcnParams dcqcn_profile(const std::string& name);

/// Trace prefix under $SCENARIO_TRACE_DIR for `name`, or "" when the variable is unset.
std::string trace_path(const std::string& name);

}  // namespace rocemu::scenario
