// fct.h — flow completion time (FCT): ideal FCT, slowdown, per-size-bin summaries, CSV.
//
// Ideal FCT (docs/workloads.md, as in HPCC/GraphCC evaluations): the time the flow would
// take alone on an idle path,
//   ideal_ns = base_rtt_ns + wire_bytes * 8 / bottleneck_bps (ceil, in ns)
//   wire_bytes = size + packets * (Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 [+ FCS 4])
//                      + RETH 16 (once, first packet of a WRITE)
//   packets = max(1, ceil(size / mtu)).
// FCS is not counted by default because the engines serialise frames without it.
// Slowdown = max(1, FCT / ideal). Percentiles use linear interpolation between order
// statistics (numpy's default), so scripts/plot_fct.py computes the same numbers.
// Units: bytes, ns, bits per second.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/time_ns.h"
#include "fabric/workload/flow.h"
#include "fabric/workload/flow_size_cdf.h"

namespace rocemu::workload {

inline constexpr uint32_t kPacketHeaderBytes = 14 + 20 + 8 + 12 + 4;  // Eth IPv4 UDP BTH ICRC
inline constexpr uint32_t kRethBytes = 16;
inline constexpr uint32_t kFcsBytes = 4;

struct IdealFctParams {
  TimeNs base_rtt_ns = 0;       // idle-path round trip (the engine's figure for this pair)
  uint64_t bottleneck_bps = 0;  // slowest link on the path
  uint32_t mtu_bytes = 1024;    // RoCE path MTU (payload bytes per packet)
  bool count_fcs = false;       // add the 4-byte Ethernet FCS to every packet
};

/// Packets of a `size_bytes` message at `mtu_bytes` payload each (at least one).
constexpr uint64_t packets_for(uint64_t size_bytes, uint32_t mtu_bytes) noexcept {
  return size_bytes == 0 ? 1 : (size_bytes + mtu_bytes - 1) / mtu_bytes;
}
/// Bytes on the wire for the whole message, headers included (formula above).
constexpr uint64_t wire_bytes(uint64_t size_bytes, FlowOp op, uint32_t mtu_bytes,
                              bool count_fcs) noexcept {
  const uint64_t per_packet = kPacketHeaderBytes + (count_fcs ? kFcsBytes : 0);
  return size_bytes + packets_for(size_bytes, mtu_bytes) * per_packet +
         (op == FlowOp::kWrite ? kRethBytes : 0);
}
/// Ideal FCT of a flow (formula above); 0 when bottleneck_bps is 0 (no path), which
/// slowdown() treats as "no ideal" (slowdown 1).
constexpr TimeNs ideal_fct_ns(uint64_t size_bytes, FlowOp op, const IdealFctParams& p) noexcept {
  if (p.bottleneck_bps == 0) return 0;
  return p.base_rtt_ns +
         serialization_ns(wire_bytes(size_bytes, op, p.mtu_bytes, p.count_fcs), p.bottleneck_bps);
}
/// max(1, fct / ideal); 1 when ideal <= 0.
double slowdown(TimeNs fct_ns, TimeNs ideal_ns) noexcept;

/// One finished flow, as the engine reports it.
struct FlowRecord {
  FlowSpec flow;
  TimeNs finish_ns = 0;  // completion seen by the requester
  TimeNs ideal_ns = 0;   // ideal_fct_ns() for the flow's path
  TimeNs fct_ns() const noexcept { return finish_ns - flow.start_ns; }
  double slowdown() const noexcept { return workload::slowdown(fct_ns(), ideal_ns); }
};

/// Flow-size bins: bin i holds sizes in (upper[i-1], upper[i]] (bin 0 from 0); a last,
/// open bin holds sizes above the last edge, if any occur.
class SizeBins {
 public:
  /// Fixed upper edges in bytes (strictly increasing, deduplicated if not).
  static SizeBins fixed(std::vector<uint64_t> upper_edges_bytes);
  /// Edges at quantiles of the size distribution (default: deciles 10%..100%), as in the
  /// FCT-by-size plots of HPCC and GraphCC where each bin holds about the same number of
  /// flows. Equal edges (point masses) collapse into one bin.
  static SizeBins from_quantiles(const FlowSizeCdf& cdf,
                                 const std::vector<double>& ps = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7,
                                                                  0.8, 0.9, 1.0});

  /// Number of bins including the open last bin.
  size_t size() const noexcept { return upper_.size() + 1; }
  size_t bin_of(uint64_t size_bytes) const noexcept;
  uint64_t lower_bytes(size_t bin) const noexcept { return bin == 0 ? 0 : upper_[bin - 1]; }
  /// Upper edge (inclusive); UINT64_MAX for the open last bin.
  uint64_t upper_bytes(size_t bin) const noexcept;
  const std::vector<uint64_t>& edges() const noexcept { return upper_; }

 private:
  explicit SizeBins(std::vector<uint64_t> upper) : upper_(std::move(upper)) {}
  std::vector<uint64_t> upper_;
};

struct SlowdownStats {
  uint64_t flows = 0;
  double mean = 0, median = 0, p95 = 0, p99 = 0;  // NaN when flows == 0
};

struct BinSummary {
  uint64_t lower_bytes = 0;  // exclusive (0: from the smallest flow)
  uint64_t upper_bytes = 0;  // inclusive; UINT64_MAX for the open bin
  SlowdownStats slowdown;
};

struct FctSummary {
  uint64_t flows_finished = 0;
  uint64_t flows_unfinished = 0;  // started but not finished at the end (fed by the engine)
  SlowdownStats overall;
  std::vector<BinSummary> bins;   // every bin; the open last bin only if it holds flows
  double goodput_bps = 0;         // sum(size) * 8 / (last finish - first start), finished flows
  double mean_flow_rate_bps = 0;  // mean over flows of size * 8 / FCT
  // Fed by the engine from switch/NIC counters (see FctStats::add_*):
  uint64_t queue_samples = 0;
  double mean_queue_bytes = 0;  // NaN when no samples
  double p99_queue_bytes = 0;
  uint64_t pfc_pauses = 0;
  uint64_t cnps = 0;
};

/// Linear-interpolation percentile of sorted `v` at `p` in [0, 100] (numpy's default):
/// h = (n - 1) * p / 100, v[floor h] + (h - floor h) * (v[floor h + 1] - v[floor h]).
/// NaN for an empty vector.
double percentile_sorted(const std::vector<double>& v, double p) noexcept;

/// Collects finished flows and engine counters; summarises them. Single-threaded: the
/// engine thread that completes flows owns it.
class FctStats {
 public:
  explicit FctStats(SizeBins bins) : bins_(std::move(bins)) {}

  /// One finished flow. Allocation is amortised (records are kept for the per-flow CSV).
  void add(const FlowRecord& r) { records_.push_back(r); }
  /// One sample of a queue length (e.g. every port's egress queue every interval). Empty
  /// queues, most samples of a large fabric, are only counted: a K=16 fat tree samples 5,120
  /// ports every 10 us and keeping each zero cost ~11% of its run (growth copies, page faults).
  void add_queue_sample(uint64_t queue_bytes) {
    if (queue_bytes == 0)
      ++empty_queue_samples_;
    else
      queue_samples_.push_back(queue_bytes);
  }
  void add_pfc_pauses(uint64_t n) noexcept { pfc_pauses_ += n; }
  void add_cnps(uint64_t n) noexcept { cnps_ += n; }
  void add_unfinished(uint64_t n) noexcept { unfinished_ += n; }

  FctSummary summarize() const;
  const std::vector<FlowRecord>& records() const noexcept { return records_; }
  const SizeBins& bins() const noexcept { return bins_; }

 private:
  SizeBins bins_;
  std::vector<FlowRecord> records_;
  std::vector<uint64_t> queue_samples_;  // the non-zero samples
  uint64_t empty_queue_samples_ = 0;
  uint64_t pfc_pauses_ = 0;
  uint64_t cnps_ = 0;
  uint64_t unfinished_ = 0;
};

/// FctStats plus the flows in flight: the engine reports starts and completions by flow id
/// and the recorder builds the FlowRecords. Single-threaded, like FctStats.
class FctRecorder {
 public:
  explicit FctRecorder(SizeBins bins) : stats_(std::move(bins)) {}

  /// A flow was posted; `ideal_ns` from ideal_fct_ns() for its path. A repeated id
  /// replaces the earlier start (counted in duplicate_starts()).
  void on_start(const FlowSpec& f, TimeNs ideal_ns);
  /// The flow's completion was seen at `now`. Returns false (and counts it) for an id that
  /// is not in flight.
  bool on_finish(uint64_t flow_id, TimeNs now);

  uint64_t in_flight() const noexcept { return in_flight_.size(); }
  uint64_t unknown_finishes() const noexcept { return unknown_finishes_; }
  uint64_t duplicate_starts() const noexcept { return duplicate_starts_; }
  /// The summary, counting flows still in flight as unfinished.
  FctSummary summarize() const;
  FctStats& stats() noexcept { return stats_; }
  const FctStats& stats() const noexcept { return stats_; }

 private:
  struct Started {
    FlowSpec flow;
    TimeNs ideal_ns;
  };
  FctStats stats_;
  std::unordered_map<uint64_t, Started> in_flight_;
  uint64_t unknown_finishes_ = 0;
  uint64_t duplicate_starts_ = 0;
};

/// Per-flow CSV: id,src,dst,size_bytes,op,incast,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown
/// (incast is -1 for background flows).
void write_flows_csv(std::ostream& os, const std::vector<FlowRecord>& records);
/// Per-bin CSV: scope,lower_bytes,upper_bytes,flows,mean,median,p95,p99 (scope "all" first,
/// then "bin"; upper_bytes empty for the open bin).
void write_bins_csv(std::ostream& os, const FctSummary& s);
/// Scalar metrics CSV: metric,value.
void write_metrics_csv(std::ostream& os, const FctSummary& s);
/// Human-readable summary table (for the end of a run).
std::string format_summary(const FctSummary& s);

}  // namespace rocemu::workload
