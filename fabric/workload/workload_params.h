// workload_params.h — the [workload] TOML table: what traffic to offer, for how long.
//
// Params (as written in TOML, every field validated by parse_workload_params) feed a
// WorkloadConfig (flow_generator.h) once the engine knows the hosts and their link rates.
// Keys, units, defaults and ranges: docs/workloads.md. Times are read in microseconds
// (`_us` keys) and held in nanoseconds; sizes in bytes; rates in events per second.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/config.h"
#include "common/time_ns.h"
#include "fabric/workload/flow.h"

namespace rocemu::workload {

enum class IncastMode : uint8_t { kPeriodic = 0, kPoisson = 1 };

/// N senders each send `size_bytes` to one receiver at the same instant.
struct IncastParams {
  uint32_t senders = 0;
  uint64_t size_bytes = 0;
  IncastMode mode = IncastMode::kPeriodic;
  TimeNs period_ns = 0;   // kPeriodic: events at start + offset + k * period
  TimeNs offset_ns = 0;   // kPeriodic: first event after the workload start
  double rate_hz = 0;     // kPoisson: mean events per second
  int64_t receiver = -1;  // index into the host list; -1 = uniform random per event
};

enum class MatrixPattern : uint8_t { kPermutation = 0, kAllToAll = 1 };

/// A synthetic traffic matrix started at once (give or take a jitter): `permutation` (every
/// host sends one flow to another, each host receives one: a seeded derangement) or
/// `all_to_all` (one flow per ordered pair of distinct hosts), each flow `size_bytes`.
struct MatrixParams {
  MatrixPattern pattern = MatrixPattern::kPermutation;
  uint64_t size_bytes = 0;
  TimeNs start_jitter_ns = 0;  // each flow starts uniformly in [start, start + jitter)
};

struct WorkloadParams {
  std::string cdf_file;    // flow-size CDF; required when load > 0
  double load = 0;         // offered load per host, fraction of its link rate
  TimeNs start_ns = 0;     // first possible flow start
  TimeNs duration_ns = 0;  // flows start in [start_ns, start_ns + duration_ns)
  FlowOp op = FlowOp::kWrite;
  uint64_t seed_offset = 0;  // added to the run seed (other streams stay unchanged)
  std::optional<IncastParams> incast;
  std::optional<MatrixParams> matrix;  // [workload.matrix]

  TimeNs stop_ns() const noexcept { return start_ns + duration_ns; }
};

/// Reads the table `r` points at (normally `[workload]`), recording every problem in
/// r.errors() as `workload.key=value: reason (line N)` and calling finish() so unknown keys
/// are reported. The caller checks the errors and refuses to start when there are any.
WorkloadParams parse_workload_params(ConfigReader& r);

/// Host-dependent checks (the CDF file itself is checked when loaded): background load
/// needs at least 2 hosts; incast senders <= hosts - 1; receiver < hosts. Problems are
/// added to `errors` with the path prefix `path` (e.g. "workload").
void check_against_hosts(const WorkloadParams& p, size_t num_hosts, const std::string& path,
                         ConfigErrors& errors);

}  // namespace rocemu::workload
