// fct.cc — slowdown statistics by flow-size bin, and the CSV/text outputs (fct.h).
#include "fabric/workload/fct.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>

namespace rocemu::workload {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Mean and percentiles of `v` (sorted in place); NaN statistics when empty.
SlowdownStats stats_of(std::vector<double>& v) {
  SlowdownStats s;
  s.flows = v.size();
  if (v.empty()) {
    s.mean = s.median = s.p95 = s.p99 = kNaN;
    return s;
  }
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  s.median = percentile_sorted(v, 50);
  s.p95 = percentile_sorted(v, 95);
  s.p99 = percentile_sorted(v, 99);
  return s;
}

std::string fmt(double v, const char* spec = "%.6g") {
  if (std::isnan(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

std::string size_label(uint64_t bytes) {
  if (bytes == std::numeric_limits<uint64_t>::max()) return "inf";
  if (bytes >= 1'000'000 && bytes % 1000 == 0) return fmt(static_cast<double>(bytes) / 1e6, "%gMB");
  if (bytes >= 1000) return fmt(static_cast<double>(bytes) / 1e3, "%gKB");
  return std::to_string(bytes) + "B";
}

}  // namespace

double slowdown(TimeNs fct_ns, TimeNs ideal_ns) noexcept {
  if (ideal_ns <= 0) return 1.0;
  return std::max(1.0, static_cast<double>(fct_ns) / static_cast<double>(ideal_ns));
}

// percentile_sorted over n sorted values given by at(i).
template <class At>
double percentile_of(uint64_t n, double p, At at) noexcept {
  if (n == 0) return kNaN;
  const double h = static_cast<double>(n - 1) * std::clamp(p, 0.0, 100.0) / 100.0;
  const auto lo = static_cast<uint64_t>(std::floor(h));
  if (lo + 1 >= n) return at(n - 1);
  return at(lo) + (h - static_cast<double>(lo)) * (at(lo + 1) - at(lo));
}

double percentile_sorted(const std::vector<double>& v, double p) noexcept {
  return percentile_of(v.size(), p, [&](uint64_t i) { return v[i]; });
}

// ---- SizeBins ----

SizeBins SizeBins::fixed(std::vector<uint64_t> upper_edges_bytes) {
  std::sort(upper_edges_bytes.begin(), upper_edges_bytes.end());
  upper_edges_bytes.erase(std::unique(upper_edges_bytes.begin(), upper_edges_bytes.end()),
                          upper_edges_bytes.end());
  return SizeBins(std::move(upper_edges_bytes));
}

SizeBins SizeBins::from_quantiles(const FlowSizeCdf& cdf, const std::vector<double>& ps) {
  std::vector<uint64_t> edges;
  edges.reserve(ps.size());
  // Flow sizes are quantile(u) rounded to the nearest byte, so the edges are rounded alike.
  for (double p : ps) edges.push_back(static_cast<uint64_t>(std::llround(cdf.quantile(p))));
  return fixed(std::move(edges));
}

size_t SizeBins::bin_of(uint64_t size_bytes) const noexcept {
  return static_cast<size_t>(std::lower_bound(upper_.begin(), upper_.end(), size_bytes) -
                             upper_.begin());
}

uint64_t SizeBins::upper_bytes(size_t bin) const noexcept {
  return bin < upper_.size() ? upper_[bin] : std::numeric_limits<uint64_t>::max();
}

// ---- FctStats ----

FctSummary FctStats::summarize() const {
  FctSummary s;
  s.flows_finished = records_.size();
  s.flows_unfinished = unfinished_;
  s.pfc_pauses = pfc_pauses_;
  s.cnps = cnps_;

  std::vector<double> all;
  std::vector<std::vector<double>> per_bin(bins_.size());
  all.reserve(records_.size());
  double bytes = 0;
  double rate_sum = 0;
  TimeNs first_start = kNever;
  TimeNs last_finish = std::numeric_limits<TimeNs>::min();
  for (const FlowRecord& r : records_) {
    const double sd = r.slowdown();
    all.push_back(sd);
    per_bin[bins_.bin_of(r.flow.size_bytes)].push_back(sd);
    bytes += static_cast<double>(r.flow.size_bytes);
    if (r.fct_ns() > 0)
      rate_sum += 8e9 * static_cast<double>(r.flow.size_bytes) / static_cast<double>(r.fct_ns());
    first_start = std::min(first_start, r.flow.start_ns);
    last_finish = std::max(last_finish, r.finish_ns);
  }
  s.overall = stats_of(all);
  for (size_t b = 0; b < bins_.size(); ++b) {
    if (b + 1 == bins_.size() && per_bin[b].empty()) break;  // the open bin, unused
    s.bins.push_back(BinSummary{bins_.lower_bytes(b), bins_.upper_bytes(b), stats_of(per_bin[b])});
  }
  if (!records_.empty()) {
    const TimeNs span = last_finish - first_start;
    s.goodput_bps = span > 0 ? 8e9 * bytes / static_cast<double>(span) : kNaN;
    s.mean_flow_rate_bps = rate_sum / static_cast<double>(records_.size());
  } else {
    s.goodput_bps = s.mean_flow_rate_bps = kNaN;
  }

  // The same mean and percentile rules as slowdowns (stats_of) over every sample, the empty
  // ones (only counted) first in the sorted order: a sum that starts with +0.0 additions and
  // ranks below the non-zero samples, without building the vector of zeros.
  const uint64_t zeros = empty_queue_samples_;
  std::vector<double> q(queue_samples_.begin(), queue_samples_.end());
  std::sort(q.begin(), q.end());
  s.queue_samples = zeros + q.size();
  double sum = 0;
  for (double x : q) sum += x;
  s.mean_queue_bytes = s.queue_samples ? sum / static_cast<double>(s.queue_samples) : kNaN;
  s.p99_queue_bytes = percentile_of(s.queue_samples, 99,
                                    [&](uint64_t i) { return i < zeros ? 0.0 : q[i - zeros]; });
  return s;
}

// ---- FctRecorder ----

void FctRecorder::on_start(const FlowSpec& f, TimeNs ideal_ns) {
  const auto [it, inserted] = in_flight_.insert_or_assign(f.id, Started{f, ideal_ns});
  (void)it;
  if (!inserted) ++duplicate_starts_;
}

bool FctRecorder::on_finish(uint64_t flow_id, TimeNs now) {
  const auto it = in_flight_.find(flow_id);
  if (it == in_flight_.end()) {
    ++unknown_finishes_;
    return false;
  }
  FlowRecord r;
  r.flow = it->second.flow;
  r.finish_ns = now;
  r.ideal_ns = it->second.ideal_ns;
  stats_.add(r);
  in_flight_.erase(it);
  return true;
}

FctSummary FctRecorder::summarize() const {
  FctSummary s = stats_.summarize();
  s.flows_unfinished += in_flight_.size();
  return s;
}

// ---- Output ----

void write_flows_csv(std::ostream& os, const std::vector<FlowRecord>& records) {
  os << "id,src,dst,size_bytes,op,incast,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown\n";
  for (const FlowRecord& r : records) {
    const FlowSpec& f = r.flow;
    os << f.id << ',' << f.src << ',' << f.dst << ',' << f.size_bytes << ',' << flow_op_name(f.op)
       << ',' << (f.incast == kNotIncast ? std::string("-1") : std::to_string(f.incast)) << ','
       << f.start_ns << ',' << r.finish_ns << ',' << r.fct_ns() << ',' << r.ideal_ns << ','
       << fmt(r.slowdown(), "%.6f") << '\n';
  }
}

void write_bins_csv(std::ostream& os, const FctSummary& s) {
  os << "scope,lower_bytes,upper_bytes,flows,mean,median,p95,p99\n";
  auto row = [&](const char* scope, uint64_t lo, uint64_t hi, const SlowdownStats& st) {
    os << scope << ',' << lo << ','
       << (hi == std::numeric_limits<uint64_t>::max() ? std::string() : std::to_string(hi)) << ','
       << st.flows << ',' << fmt(st.mean) << ',' << fmt(st.median) << ',' << fmt(st.p95) << ','
       << fmt(st.p99) << '\n';
  };
  row("all", 0, std::numeric_limits<uint64_t>::max(), s.overall);
  for (const BinSummary& b : s.bins) row("bin", b.lower_bytes, b.upper_bytes, b.slowdown);
}

void write_metrics_csv(std::ostream& os, const FctSummary& s) {
  os << "metric,value\n"
     << "flows_finished," << s.flows_finished << '\n'
     << "flows_unfinished," << s.flows_unfinished << '\n'
     << "slowdown_mean," << fmt(s.overall.mean) << '\n'
     << "slowdown_median," << fmt(s.overall.median) << '\n'
     << "slowdown_p95," << fmt(s.overall.p95) << '\n'
     << "slowdown_p99," << fmt(s.overall.p99) << '\n'
     << "goodput_bps," << fmt(s.goodput_bps, "%.0f") << '\n'
     << "mean_flow_rate_bps," << fmt(s.mean_flow_rate_bps, "%.0f") << '\n'
     << "queue_samples," << s.queue_samples << '\n'
     << "mean_queue_bytes," << fmt(s.mean_queue_bytes, "%.1f") << '\n'
     << "p99_queue_bytes," << fmt(s.p99_queue_bytes, "%.1f") << '\n'
     << "pfc_pauses," << s.pfc_pauses << '\n'
     << "cnps," << s.cnps << '\n';
}

std::string format_summary(const FctSummary& s) {
  std::string out;
  out += "flows finished " + std::to_string(s.flows_finished) + ", unfinished " +
         std::to_string(s.flows_unfinished) + "\n";
  out += "goodput " + fmt(s.goodput_bps / 1e9, "%.3f") + " Gbps, mean flow rate " +
         fmt(s.mean_flow_rate_bps / 1e9, "%.3f") + " Gbps\n";
  out += "queue mean " + fmt(s.mean_queue_bytes, "%.0f") + " B, p99 " +
         fmt(s.p99_queue_bytes, "%.0f") + " B (" + std::to_string(s.queue_samples) +
         " samples); PFC pauses " + std::to_string(s.pfc_pauses) + "; CNPs " +
         std::to_string(s.cnps) + "\n";
  char line[160];
  std::snprintf(line, sizeof line, "%-22s %9s %9s %9s %9s\n", "FCT slowdown", "flows", "median",
                "p95", "p99");
  out += line;
  auto row = [&](const std::string& name, const SlowdownStats& st) {
    std::snprintf(line, sizeof line, "%-22s %9llu %9s %9s %9s\n", name.c_str(),
                  static_cast<unsigned long long>(st.flows), fmt(st.median, "%.2f").c_str(),
                  fmt(st.p95, "%.2f").c_str(), fmt(st.p99, "%.2f").c_str());
    out += line;
  };
  row("all", s.overall);
  for (const BinSummary& b : s.bins) {
    row("(" + size_label(b.lower_bytes) + ", " + size_label(b.upper_bytes) + "]", b.slowdown);
  }
  return out;
}

}  // namespace rocemu::workload
