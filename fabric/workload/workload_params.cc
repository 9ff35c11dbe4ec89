// workload_params.cc — parsing and validation of the [workload] table (docs/workloads.md).
#include "fabric/workload/workload_params.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "fabric/workload/flow_size_cdf.h"

namespace rocemu::workload {

namespace {

constexpr int64_t kMaxTimeUs = int64_t{1} << 40;  // ~12.7 days, far below TimeNs overflow

// A key that belongs to the other incast mode: reported once with the reason (and read, so
// that finish() does not report it again as unknown).
void reject(ConfigReader& r, std::string_view key, const std::string& reason) {
  if (!r.has(key)) return;
  r.error(key, reason);
  (void)r.number(key, 0, std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
}

IncastParams parse_incast(ConfigReader& r) {
  IncastParams ip;
  ip.senders = static_cast<uint32_t>(r.required_integer("senders", 1, 65535));
  ip.size_bytes = static_cast<uint64_t>(
      r.required_integer("size_bytes", 1, static_cast<int64_t>(kMaxFlowBytes)));
  const std::string mode = r.string("mode", "periodic", {"periodic", "poisson"});
  ip.mode = mode == "poisson" ? IncastMode::kPoisson : IncastMode::kPeriodic;
  ip.receiver = r.integer("receiver", -1, -1, 1'000'000);
  if (ip.mode == IncastMode::kPeriodic) {
    const double period_us = r.required_number("period_us", 1e-3, static_cast<double>(kMaxTimeUs));
    ip.period_ns = static_cast<TimeNs>(std::llround(period_us * kNsPerUs));
    const double offset_us = r.number("offset_us", 0, 0, static_cast<double>(kMaxTimeUs));
    ip.offset_ns = static_cast<TimeNs>(std::llround(offset_us * kNsPerUs));
    reject(r, "rate_hz", "only for mode = \"poisson\" (periodic uses period_us)");
  } else {
    ip.rate_hz = r.required_number("rate_hz", 1e-3, 1e9);
    reject(r, "period_us", "only for mode = \"periodic\" (poisson uses rate_hz)");
    reject(r, "offset_us", "only for mode = \"periodic\"");
  }
  r.finish();
  return ip;
}

MatrixParams parse_matrix(ConfigReader& r) {
  MatrixParams m;
  m.pattern = r.string("pattern", "permutation", {"permutation", "all_to_all"}) == "all_to_all"
                  ? MatrixPattern::kAllToAll
                  : MatrixPattern::kPermutation;
  m.size_bytes = static_cast<uint64_t>(
      r.required_integer("size_bytes", 1, static_cast<int64_t>(kMaxFlowBytes)));
  const double jitter_us = r.number("start_jitter_us", 0, 0, static_cast<double>(kMaxTimeUs));
  m.start_jitter_ns = static_cast<TimeNs>(std::llround(jitter_us * kNsPerUs));
  r.finish();
  return m;
}

}  // namespace

WorkloadParams parse_workload_params(ConfigReader& r) {
  WorkloadParams p;
  // A matrix alone needs no background load, CDF or duration (its flows start at once).
  const bool matrix = r.has("matrix");
  p.load = r.number("load", matrix ? 0.0 : 0.5, 0.0, 1.0);
  if (p.load > 0) {
    p.cdf_file = r.required_string("cdf_file");
    if (r.has("cdf_file") && p.cdf_file.empty()) r.error("cdf_file", "must name a CDF file");
  } else {
    p.cdf_file = r.string("cdf_file", "");
  }
  p.start_ns = r.integer("start_us", 0, 0, kMaxTimeUs) * kNsPerUs;
  p.duration_ns = (matrix ? r.integer("duration_us", 1, 1, kMaxTimeUs)
                          : r.required_integer("duration_us", 1, kMaxTimeUs)) *
                  kNsPerUs;
  p.op = r.string("op", "write", {"write", "send"}) == "send" ? FlowOp::kSend : FlowOp::kWrite;
  p.seed_offset = static_cast<uint64_t>(r.integer("seed_offset", 0, 0, int64_t{1} << 62));
  if (auto inc = r.table("incast")) p.incast = parse_incast(*inc);
  if (auto m = r.table("matrix")) p.matrix = parse_matrix(*m);
  r.finish();
  return p;
}

void check_against_hosts(const WorkloadParams& p, size_t num_hosts, const std::string& path,
                         ConfigErrors& errors) {
  const std::string hosts = std::to_string(num_hosts);
  if (p.load > 0 && num_hosts < 2) {
    char load[32];
    std::snprintf(load, sizeof load, "%g", p.load);
    errors.add(path + ".load", load,
               "background flows need at least 2 hosts, topology has " + hosts);
  }
  if (p.matrix && num_hosts < 2)
    errors.add(path + ".matrix.pattern",
               p.matrix->pattern == MatrixPattern::kAllToAll ? "all_to_all" : "permutation",
               "needs at least 2 hosts, topology has " + hosts);
  if (p.incast) {
    if (num_hosts < 2 || p.incast->senders > num_hosts - 1) {
      errors.add(path + ".incast.senders", std::to_string(p.incast->senders),
                 "exceeds hosts - 1 (topology has " + hosts + " hosts)");
    }
    if (p.incast->receiver >= static_cast<int64_t>(num_hosts)) {
      errors.add(path + ".incast.receiver", std::to_string(p.incast->receiver),
                 "not a host index (topology has " + hosts + " hosts)");
    }
  }
}

}  // namespace rocemu::workload
