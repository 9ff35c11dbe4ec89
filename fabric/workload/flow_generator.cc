// flow_generator.cc — Poisson and incast flow arrivals, merged lazily in start-time order.
//
// Exponential inter-arrival times by inversion: dt = -ln(1 - u) / lambda for u uniform in
// [0, 1). Arrival times accumulate in double nanoseconds relative to the window start and
// are floored to TimeNs when emitted, so rounding never accumulates over a long run.
#include "fabric/workload/flow_generator.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace rocemu::workload {

namespace {

double exponential_ns(Rng& rng, double rate_per_ns) noexcept {
  return -std::log1p(-rng.uniform()) / rate_per_ns;
}

// Relative double time -> absolute TimeNs, or kNever at/after the stop time.
TimeNs absolute(TimeNs start_ns, TimeNs stop_ns, double rel_ns) noexcept {
  if (!(rel_ns < static_cast<double>(stop_ns - start_ns))) return kNever;
  const TimeNs t = start_ns + static_cast<TimeNs>(std::floor(rel_ns));
  return t < stop_ns ? t : kNever;
}

}  // namespace

// ---- PoissonFlowGenerator ----

PoissonFlowGenerator::PoissonFlowGenerator(const FlowSizeCdf& cdf, std::vector<HostSpec> hosts,
                                           double load, TimeNs start_ns, TimeNs stop_ns, FlowOp op,
                                           uint64_t seed)
    : cdf_(&cdf), specs_(std::move(hosts)), start_ns_(start_ns), stop_ns_(stop_ns), op_(op) {
  hosts_.reserve(specs_.size());
  heap_.reserve(specs_.size());
  const double mean_bits = 8.0 * cdf.mean_bytes();
  for (size_t i = 0; i < specs_.size(); ++i) {
    // lambda = load * rate_bps / (8 * mean_bytes) flows per second, here per nanosecond.
    const double lambda_per_ns =
        load * static_cast<double>(specs_[i].link_rate_bps) / mean_bits / 1e9;
    hosts_.push_back(Host{Rng(seed, "workload.host." + std::to_string(i)), lambda_per_ns, 0.0});
  }
  if (specs_.size() < 2 || !(load > 0)) return;
  for (uint32_t i = 0; i < hosts_.size(); ++i) {
    if (!(hosts_[i].lambda_per_ns > 0)) continue;
    hosts_[i].next_rel_ns = exponential_ns(hosts_[i].rng, hosts_[i].lambda_per_ns);
    schedule(i);
  }
}

void PoissonFlowGenerator::schedule(uint32_t host) noexcept {
  const TimeNs at = absolute(start_ns_, stop_ns_, hosts_[host].next_rel_ns);
  if (at == kNever) return;  // this host's window is over
  heap_.push_back(Entry{at, host});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

bool PoissonFlowGenerator::next(FlowSpec& out) noexcept {
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  const Entry e = heap_.back();
  heap_.pop_back();
  Host& h = hosts_[e.host];
  // Destination uniform among the other hosts: draw from n - 1 and skip the source.
  const auto n = static_cast<uint64_t>(specs_.size());
  uint64_t d = h.rng.below(n - 1);
  if (d >= e.host) ++d;
  out.src = specs_[e.host].id;
  out.dst = specs_[d].id;
  out.size_bytes = cdf_->sample(h.rng);
  out.start_ns = e.at_ns;
  out.op = op_;
  h.next_rel_ns += exponential_ns(h.rng, h.lambda_per_ns);
  schedule(e.host);
  return true;
}

// ---- IncastGenerator ----

IncastGenerator::IncastGenerator(const IncastParams& p, std::vector<uint32_t> hosts,
                                 TimeNs start_ns, TimeNs stop_ns, FlowOp op, uint64_t seed)
    : p_(p),
      hosts_(std::move(hosts)),
      rng_(seed, "workload.incast"),
      start_ns_(start_ns),
      stop_ns_(stop_ns),
      op_(op) {
  scratch_.resize(hosts_.size());
  if (hosts_.size() < 2 || p_.senders == 0 || p_.senders > hosts_.size() - 1) return;
  if (p_.mode == IncastMode::kPeriodic) {
    event_ns_ = start_ns_ + p_.offset_ns < stop_ns_ ? start_ns_ + p_.offset_ns : kNever;
  } else {
    poisson_rel_ns_ = exponential_ns(rng_, p_.rate_hz / 1e9);
    event_ns_ = absolute(start_ns_, stop_ns_, poisson_rel_ns_);
  }
}

void IncastGenerator::draw_event() noexcept {
  const auto n = static_cast<uint32_t>(hosts_.size());
  receiver_ =
      p_.receiver >= 0 ? static_cast<uint32_t>(p_.receiver) : static_cast<uint32_t>(rng_.below(n));
  // Candidates: every host but the receiver, in index order; the first `senders` slots of a
  // partial Fisher-Yates shuffle are the senders (distinct by construction).
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (i != receiver_) scratch_[k++] = i;
  }
  for (uint32_t i = 0; i < p_.senders; ++i) {
    const auto j = i + static_cast<uint32_t>(rng_.below(k - i));
    std::swap(scratch_[i], scratch_[j]);
  }
  drawn_ = true;
}

void IncastGenerator::advance_event() noexcept {
  ++event_;
  emitted_ = 0;
  drawn_ = false;
  if (p_.mode == IncastMode::kPeriodic) {
    const TimeNs t = event_ns_ + p_.period_ns;
    event_ns_ = t < stop_ns_ ? t : kNever;
  } else {
    poisson_rel_ns_ += exponential_ns(rng_, p_.rate_hz / 1e9);
    event_ns_ = absolute(start_ns_, stop_ns_, poisson_rel_ns_);
  }
}

bool IncastGenerator::next(FlowSpec& out) noexcept {
  if (event_ns_ == kNever) return false;
  if (!drawn_) draw_event();
  out.src = hosts_[scratch_[emitted_]];
  out.dst = hosts_[receiver_];
  out.size_bytes = p_.size_bytes;
  out.start_ns = event_ns_;
  out.op = op_;
  out.incast = event_;
  if (++emitted_ == p_.senders) advance_event();
  return true;
}

// ---- MatrixGenerator ----

MatrixGenerator::MatrixGenerator(const MatrixParams& p, const std::vector<uint32_t>& hosts,
                                 TimeNs start_ns, FlowOp op, uint64_t seed) {
  const auto n = static_cast<uint32_t>(hosts.size());
  Rng rng(seed, "workload-matrix");
  std::vector<std::pair<uint32_t, uint32_t>> pairs;  // (src, dst) host indices
  if (p.pattern == MatrixPattern::kPermutation) {
    // A uniform derangement by rejection: shuffle (Fisher-Yates) until no host maps to
    // itself (about e = 2.7 tries on average).
    std::vector<uint32_t> to(n);
    for (bool fixed = true; fixed && n >= 2;) {
      for (uint32_t i = 0; i < n; ++i) to[i] = i;
      for (uint32_t i = n; i > 1; --i) std::swap(to[i - 1], to[rng.below(i)]);
      fixed = false;
      for (uint32_t i = 0; i < n; ++i) fixed = fixed || to[i] == i;
    }
    for (uint32_t i = 0; i < n && n >= 2; ++i) pairs.emplace_back(i, to[i]);
  } else {
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t j = 0; j < n; ++j)
        if (i != j) pairs.emplace_back(i, j);
  }
  flows_.reserve(pairs.size());
  for (const auto& [s, d] : pairs) {
    FlowSpec f;
    f.src = hosts[s];
    f.dst = hosts[d];
    f.size_bytes = p.size_bytes;
    f.start_ns =
        start_ns + (p.start_jitter_ns > 0
                        ? static_cast<TimeNs>(rng.below(static_cast<uint64_t>(p.start_jitter_ns)))
                        : 0);
    f.op = op;
    f.incast = kNotIncast;
    flows_.push_back(f);
  }
  std::stable_sort(flows_.begin(), flows_.end(),
                   [](const FlowSpec& a, const FlowSpec& b) { return a.start_ns < b.start_ns; });
}

bool MatrixGenerator::next(FlowSpec& out) noexcept {
  if (at_ >= flows_.size()) return false;
  const uint64_t id = out.id;
  out = flows_[at_++];
  out.id = id;
  return true;
}

// ---- WorkloadConfig ----

WorkloadConfig make_workload_config(const WorkloadParams& p, std::vector<HostSpec> hosts) {
  // Host checks before the CDF is read, so a wrong host count is reported even when the
  // CDF file is also bad.
  ConfigErrors errors;
  check_against_hosts(p, hosts.size(), "workload", errors);
  if (!errors.empty()) throw ConfigError(errors.format("workload"));
  if (p.load > 0) return make_workload_config(p, std::move(hosts), FlowSizeCdf::load(p.cdf_file));
  WorkloadConfig cfg;
  cfg.params = p;
  cfg.hosts = std::move(hosts);
  return cfg;
}

WorkloadConfig make_workload_config(const WorkloadParams& p, std::vector<HostSpec> hosts,
                                    FlowSizeCdf cdf) {
  ConfigErrors errors;
  check_against_hosts(p, hosts.size(), "workload", errors);
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (hosts[i].link_rate_bps == 0) {
      errors.add("workload.hosts[" + std::to_string(i) + "].link_rate_bps", "0",
                 "host link rate must be > 0");
    }
  }
  if (!errors.empty()) throw ConfigError(errors.format("workload"));
  WorkloadConfig cfg;
  cfg.params = p;
  cfg.cdf = std::make_shared<const FlowSizeCdf>(std::move(cdf));
  cfg.hosts = std::move(hosts);
  return cfg;
}

// ---- WorkloadGenerator ----

WorkloadGenerator::WorkloadGenerator(const WorkloadConfig& cfg, uint64_t run_seed) {
  const WorkloadParams& p = cfg.params;
  const uint64_t seed = run_seed + p.seed_offset;
  if (p.load > 0 && cfg.cdf) {
    background_.emplace(*cfg.cdf, cfg.hosts, p.load, p.start_ns, p.stop_ns(), p.op, seed);
  }
  std::vector<uint32_t> ids;
  ids.reserve(cfg.hosts.size());
  for (const auto& h : cfg.hosts) ids.push_back(h.id);
  if (p.matrix) matrix_.emplace(*p.matrix, ids, p.start_ns, p.op, seed);
  if (p.incast) incast_.emplace(*p.incast, std::move(ids), p.start_ns, p.stop_ns(), p.op, seed);
}

TimeNs WorkloadGenerator::next_deadline() const noexcept {
  const TimeNs b = background_ ? background_->peek_ns() : kNever;
  const TimeNs i = incast_ ? incast_->peek_ns() : kNever;
  const TimeNs m = matrix_ ? matrix_->peek_ns() : kNever;
  return std::min({b, i, m});
}

bool WorkloadGenerator::next(FlowSpec& out) noexcept {
  const TimeNs b = background_ ? background_->peek_ns() : kNever;
  const TimeNs i = incast_ ? incast_->peek_ns() : kNever;
  const TimeNs m = matrix_ ? matrix_->peek_ns() : kNever;
  if (b == kNever && i == kNever && m == kNever) return false;
  if (b <= i && b <= m) {
    background_->next(out);
    out.incast = kNotIncast;
  } else if (i <= m) {
    incast_->next(out);
  } else {
    matrix_->next(out);
  }
  out.id = next_id_++;
  return true;
}

size_t WorkloadGenerator::due(TimeNs now, FlowSpec* out, size_t max) noexcept {
  size_t n = 0;
  while (n < max && next_deadline() <= now && next(out[n])) ++n;
  return n;
}

}  // namespace rocemu::workload
