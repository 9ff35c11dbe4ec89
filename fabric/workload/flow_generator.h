// flow_generator.h — lazy, seeded flow arrivals: per-host Poisson background and incast.
//
// Load definition (docs/workloads.md): host h starts flows as a Poisson process of rate
//   lambda_h = load * link_rate_bps(h) / (8 * mean flow size bytes)   [flows per second],
// so the bytes it offers per second equal `load` times its link capacity. Each flow's size
// is drawn from the CDF and its destination uniformly among the other hosts. Incast events
// (periodic or Poisson) make N distinct senders each send a fixed size to one receiver at
// the same instant. Nothing is precomputed: each call yields the next flow in start-time
// order (TimeNs in, TimeNs out), with O(log hosts) work and no allocation. Every host and
// the incast process draw from their own Rng stream (common/rng.h), so a seed replays
// exactly. Units: ns, bytes, bits per second.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/rng.h"
#include "common/time_ns.h"
#include "fabric/workload/flow.h"
#include "fabric/workload/flow_size_cdf.h"
#include "fabric/workload/workload_params.h"

namespace rocemu::workload {

struct HostSpec {
  uint32_t id = 0;             // what FlowSpec::src/dst carry (normally a topology node)
  uint64_t link_rate_bps = 0;  // the host's access link
};

/// Per-host Poisson arrivals of background flows in [start_ns, stop_ns).
class PoissonFlowGenerator {
 public:
  /// `cdf` must outlive the generator. Needs >= 2 hosts and load > 0 (else it is empty).
  PoissonFlowGenerator(const FlowSizeCdf& cdf, std::vector<HostSpec> hosts, double load,
                       TimeNs start_ns, TimeNs stop_ns, FlowOp op, uint64_t seed);

  /// Start time of the next flow, or kNever when the window is exhausted.
  TimeNs peek_ns() const noexcept { return heap_.empty() ? kNever : heap_.front().at_ns; }
  /// Writes the next flow (src, dst, size, start, op; id and incast are left as they were)
  /// and returns true, or returns false when there are no more flows.
  bool next(FlowSpec& out) noexcept;
  /// Flows per second of host index `i` (the lambda above).
  double lambda_per_sec(size_t i) const noexcept { return hosts_[i].lambda_per_ns * 1e9; }

 private:
  struct Host {
    Rng rng;
    double lambda_per_ns;
    double next_rel_ns;  // next arrival, ns after start_ns (kept in double: no drift)
  };
  struct Entry {
    TimeNs at_ns;
    uint32_t host;  // index into hosts_
  };
  static bool later(const Entry& a, const Entry& b) noexcept {
    return a.at_ns != b.at_ns ? a.at_ns > b.at_ns : a.host > b.host;
  }
  void schedule(uint32_t host) noexcept;

  const FlowSizeCdf* cdf_;
  std::vector<HostSpec> specs_;
  std::vector<Host> hosts_;
  std::vector<Entry> heap_;  // min-heap on (at_ns, host); one entry per host still active
  TimeNs start_ns_;
  TimeNs stop_ns_;
  FlowOp op_;
};

/// Incast events in [start_ns, stop_ns): each event emits `senders` flows of `size_bytes`,
/// all starting at the event time, from distinct senders to one receiver (never a sender).
class IncastGenerator {
 public:
  /// `hosts` are the host ids; validated beforehand by check_against_hosts().
  IncastGenerator(const IncastParams& p, std::vector<uint32_t> hosts, TimeNs start_ns,
                  TimeNs stop_ns, FlowOp op, uint64_t seed);

  TimeNs peek_ns() const noexcept { return event_ns_; }
  /// Next flow of the current event (senders in draw order); `out.incast` is the event number.
  bool next(FlowSpec& out) noexcept;
  uint32_t events_started() const noexcept { return event_; }

 private:
  void draw_event() noexcept;     // receiver and senders of the event at event_ns_
  void advance_event() noexcept;  // time of the following event (or kNever)

  IncastParams p_;
  std::vector<uint32_t> hosts_;
  std::vector<uint32_t> scratch_;  // host indices for the partial Fisher-Yates shuffle
  Rng rng_;
  TimeNs start_ns_;
  TimeNs stop_ns_;
  FlowOp op_;
  TimeNs event_ns_ = kNever;
  double poisson_rel_ns_ = 0;  // kPoisson: event time after start, double (no drift)
  uint32_t event_ = 0;         // number of the event being emitted
  uint32_t emitted_ = 0;       // flows of the current event already emitted
  uint32_t receiver_ = 0;      // index into hosts_
  bool drawn_ = false;
};

/// [workload.matrix]: the whole matrix drawn at construction (n flows for a permutation,
/// n (n - 1) for all_to_all) and yielded in (start, src, dst) order; starts are the workload
/// start plus a uniform jitter. A permutation is a seeded derangement: every host sends to
/// and receives from exactly one other host.
class MatrixGenerator {
 public:
  MatrixGenerator(const MatrixParams& p, const std::vector<uint32_t>& hosts, TimeNs start_ns,
                  FlowOp op, uint64_t seed);
  TimeNs peek_ns() const noexcept { return at_ < flows_.size() ? flows_[at_].start_ns : kNever; }
  bool next(FlowSpec& out) noexcept;
  size_t size() const noexcept { return flows_.size(); }

 private:
  std::vector<FlowSpec> flows_;
  size_t at_ = 0;
};

/// Validated workload: params + the loaded CDF + the hosts it runs on.
struct WorkloadConfig {
  WorkloadParams params;
  std::shared_ptr<const FlowSizeCdf> cdf;  // null when params.load == 0
  std::vector<HostSpec> hosts;
};

/// Loads params.cdf_file (relative paths are relative to the working directory) and checks
/// the params against `hosts`. Throws ConfigError: `file:line: reason` for a bad CDF, or every
/// host-dependent problem (`workload.incast.senders=30: exceeds hosts - 1 ...`).
WorkloadConfig make_workload_config(const WorkloadParams& p, std::vector<HostSpec> hosts);
/// Same with an already parsed CDF (tests, or a CDF built elsewhere).
WorkloadConfig make_workload_config(const WorkloadParams& p, std::vector<HostSpec> hosts,
                                    FlowSizeCdf cdf);

/// The whole workload as one stream in start-time order: background, incast and matrix flows
/// merged (in that order on equal start times), numbered 0, 1, 2, ... The engine either pulls
/// one at a time (next) or, as a timer, takes every flow due by `now` (due).
class WorkloadGenerator {
 public:
  /// Streams derive from `run_seed + params.seed_offset`. `cfg` must outlive the generator.
  WorkloadGenerator(const WorkloadConfig& cfg, uint64_t run_seed);

  /// Start time of the next flow, kNever when the workload is exhausted.
  TimeNs next_deadline() const noexcept;
  bool next(FlowSpec& out) noexcept;
  /// Writes up to `max` flows with start_ns <= now into `out`; returns how many.
  size_t due(TimeNs now, FlowSpec* out, size_t max) noexcept;
  uint64_t flows_generated() const noexcept { return next_id_; }
  const std::optional<PoissonFlowGenerator>& background() const noexcept { return background_; }

 private:
  std::optional<PoissonFlowGenerator> background_;
  std::optional<IncastGenerator> incast_;
  std::optional<MatrixGenerator> matrix_;
  uint64_t next_id_ = 0;
};

}  // namespace rocemu::workload
