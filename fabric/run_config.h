// run_config.h — the whole TOML of a run, as rocemu-sim and rocemu-testbed read it:
// [run] seed, [topology] (topology_config.h), [switch] (switchsw/switch_params.h),
// [nic] (nic/nic_params.h), [job] (what to run), [sim], [testbed], [capture], [telemetry].
// Every problem of every table is collected; load_run_config() throws one ConfigError
// listing all of them (exit 2, nothing started). Keys, units, ranges: docs/config.md.
#pragma once

#include <cstdint>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/model_weights.h"
#include "common/topology.h"
#include "fabric/realtime_engine.h"
#include "fabric/topology_config.h"
#include "fabric/workload/workload_params.h"
#include "nic/dcqcn/dcqcn_params.h"
#include "nic/nic_params.h"
#include "switchsw/switch_params.h"

namespace rocemu::fabric {

/// [job] kind = "write": host `from` RDMA-WRITEs `bytes` into a memory region of host `to`
/// over one RC QP, in work requests of `message_bytes`.
struct WriteJobParams {
  std::string from = "h0";
  std::string to = "h1";
  uint64_t bytes = 4ull << 20;
  uint64_t message_bytes = 1ull << 20;
  uint64_t pattern_seed = 0;  // 0: the run seed
};

struct SimParams {
  TimeNs until_ns = kNsPerSec;  // [sim] until_us
};

struct TestbedParams {
  PortBackend backend = PortBackend::kRing;
  TimeNs time_limit_ns = 30 * kNsPerSec;
  uint32_t pool_mbufs = 16383;
  bool pool_mbufs_given = false;  // [testbed] pool_mbufs set (else virtual_pool_mbufs sizes it)
  TimeNs idle_sleep_ns = 0;  // idle_sleep_us: RealtimeOptions::idle_sleep_ns (0 = busy poll)
  std::vector<std::string> eal_args;       // before the command line's `-- ...`
  std::map<std::string, uint32_t> placement;  // node name -> lcore (default: the main lcore)
  /// hardware_pfc: ports = "pci" asks each port's PMD for hardware PFC on the lossless
  /// priorities (RealtimeOptions::hardware_pfc); software PFC where the PMD has none.
  bool hardware_pfc = false;
};

struct CaptureParams {
  std::vector<PortRef> ports;  // node:port
  std::vector<std::string> names;  // "node:port", parallel to ports
  std::string file = "capture.pcapng";  // relative to --out
};

/// [telemetry]: every switch's per-port queue series (switchsw/queue_series.h) sampled
/// every interval_ns of engine time into queues_<switch>.csv in --out; 0 = off. With
/// [dcqcn], every dcqcn_interval_ns each host's DCQCN reaction points (rate, target, alpha,
/// CNPs per QP; nic/dcqcn/rate_csv.h) into dcqcn_<host>.csv; 0 = off.
struct TelemetryParams {
  TimeNs interval_ns = 0;
  TimeNs dcqcn_interval_ns = 0;
};

/// [agent] (docs/agent.md "In the loop"): who sets every switch egress port's RED-ECN
/// thresholds during the run, once per interval_ns of engine time, from the switches'
/// counters. policy "" = no [agent]: the [switch.ecn] thresholds stay all run.
struct AgentRunParams {
  std::string policy;  // "", "static", "graphcc", "acc"; test policies "alternate", "stall", "throw"
  std::string model_path;      // graphcc / acc: the model file (agent/model_file.h)
  std::shared_ptr<const agent::Model> model;  // loaded and checked at load time
  TimeNs interval_ns = 100 * kNsPerUs;
  std::optional<sw::EcnParams> profile;  // static: thresholds (scaled per port); else [switch.ecn]
  std::array<int, 2> alternate{0, 119};  // alternate: the two action ids it switches between
  bool record = false;                   // ecn.csv and agent.csv in --out
  bool on() const noexcept { return !policy.empty(); }
};

struct RunConfig {
  std::string source;  // the file it came from
  uint64_t seed = 1;
  TopologySpec topology;
  sw::SwitchParams switch_params;
  nic::NicParams nic_params;
  WriteJobParams job;
  SimParams sim;
  TestbedParams testbed;
  CaptureParams capture;
  /// [dcqcn]: present = DCQCN on every host (and ECT(0) on data). Either
  /// `profile = "configs/dcqcn/paper.toml"` (relative to the working directory, else to the
  /// run file's directory) or the keys of dcqcn/dcqcn_params.h; `enabled = false` turns
  /// it off while keeping the table.
  bool dcqcn_enabled = false;
  dcqcn::DcqcnParams dcqcn;
  TelemetryParams telemetry;
  /// [workload] (docs/workloads.md): present = the apps run the workload job
  /// (fabric/workload_job.h) instead of [job]; [job] is then not read.
  std::optional<workload::WorkloadParams> workload;
  /// [workload] qps_per_pair (read here, not by parse_workload_params): RC QPs per ordered
  /// host pair that the workload job spreads flows over (docs/workload_runs.md).
  uint32_t workload_qps_per_pair = 1;
  /// [workload] qp_per_flow: one RC QP pair per flow, connected at its start and destroyed at
  /// its end (as the paper's ns-3 and HPCC's simulator run flows); excludes qps_per_pair.
  bool workload_qp_per_flow = false;
  AgentRunParams agent;
};

/// Puts the command line's agent flags (--policy, --agent-model, --agent-interval-us) over
/// cfg.agent, with the checks of the [agent] table. Empty strings / 0 leave a value alone.
/// Throws ConfigError naming the flag.
/// `profile` (--agent-profile): the static policy's ECN profile file, as [agent] profile.
void apply_agent_flags(RunConfig& cfg, const std::string& policy, const std::string& model,
                       int64_t interval_us, const std::string& profile = "");

/// The real-time engine's options of a run: [testbed] ports, pool_mbufs, idle_sleep_us,
/// hardware_pfc; for ports = "pci" the MTU [nic] mtu_bytes needs, and the lossless
/// priorities and pause time of [switch] for hardware PFC. Lcore placement is the job's.
RealtimeOptions realtime_options(const RunConfig& cfg);

/// The mbufs of a virtual-time run's header-only pool (frames without payload bytes): [testbed]
/// pool_mbufs if given, else enough that the pool, not the network, never limits the run: every
/// switch's buffer filled to its PFC limit (ingress dynamic thresholds of all its ports, plus
/// their headroom) in frames of the MTU, every wire's bandwidth-delay product, and 64 per host;
/// at least pool_mbufs' default, at most 2^22. A pool that still runs dry is reported.
uint32_t virtual_pool_mbufs(const RunConfig& cfg);

/// Empty if the links with rate_gbps = "port" can be run, else why not: they need the
/// real-time engine (`realtime`) on ports = "pci". Pure.
std::string check_rate_from_port(const RunConfig& cfg, bool realtime);

/// A copy of `cfg` whose links run at `link_rate_bps` (one per link: what the real-time
/// engine took from the ports, RealtimeEngine::link_rates_bps), with the load-time checks
/// that depend on rates (switch buffer headroom) repeated. Throws ConfigError.
RunConfig with_link_rates(const RunConfig& cfg, const std::vector<uint64_t>& link_rate_bps);

/// Reads and validates `path`. Throws ConfigError listing every problem (with lines), or
/// naming the file if it cannot be read or parsed.
RunConfig load_run_config(const std::string& path);
/// The same from TOML text (tests); `source` names it in messages.
RunConfig parse_run_config(const toml::table& root, const std::string& source);

}  // namespace rocemu::fabric
