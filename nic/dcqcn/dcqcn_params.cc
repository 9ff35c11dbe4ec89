// dcqcn_params.cc — parsing and validation of DCQCN parameters (see dcqcn_params.h).
#include "nic/dcqcn/dcqcn_params.h"

#include <cmath>
#include <sstream>

namespace rocemu::dcqcn {

namespace {
constexpr int64_t kMaxIntervalUs = 1'000'000;  // 1 s: anything longer is a typo
constexpr double kMaxRateMbps = 1e7;           // 10 Tbps

TimeNs us_to_ns(int64_t us) { return static_cast<TimeNs>(us) * kNsPerUs; }
}  // namespace

const char* alpha_update_name(AlphaUpdate a) noexcept {
  return a == AlphaUpdate::kOnCnp ? "on_cnp" : "periodic";
}

DcqcnParams parse_dcqcn_params(ConfigReader& r) {
  DcqcnParams p;
  const DcqcnParams d;
  p.cnp_interval_us = r.integer("cnp_interval_us", d.cnp_interval_us, 0, kMaxIntervalUs);
  p.cnp_dscp = r.integer("cnp_dscp", d.cnp_dscp, 0, 63);
  p.cnp_priority = r.integer("cnp_priority", d.cnp_priority, 0, 7);
  p.g = r.number("g", d.g, 1e-9, 1.0);
  p.initial_alpha = r.number("initial_alpha", d.initial_alpha, 0.0, 1.0);
  const std::string au =
      r.string("alpha_update", alpha_update_name(d.alpha_update), {"on_cnp", "periodic"});
  p.alpha_update = au == "periodic" ? AlphaUpdate::kPeriodic : AlphaUpdate::kOnCnp;
  p.alpha_interval_us = r.integer("alpha_interval_us", d.alpha_interval_us, 1, kMaxIntervalUs);
  p.rate_decrease_interval_us =
      r.integer("rate_decrease_interval_us", d.rate_decrease_interval_us, 0, kMaxIntervalUs);
  p.rate_increase_timer_us =
      r.integer("rate_increase_timer_us", d.rate_increase_timer_us, 1, kMaxIntervalUs);
  p.byte_counter_kb = r.integer("byte_counter_kb", d.byte_counter_kb, 0, int64_t{1} << 30);
  p.fast_recovery_stages = r.integer("fast_recovery_stages", d.fast_recovery_stages, 0, 1000);
  p.rate_ai_mbps = r.number("rate_ai_mbps", d.rate_ai_mbps, 0.0, kMaxRateMbps);
  p.rate_hai_mbps = r.number("rate_hai_mbps", d.rate_hai_mbps, 0.0, kMaxRateMbps);
  p.min_rate_mbps = r.number("min_rate_mbps", d.min_rate_mbps, 0.1, kMaxRateMbps);
  p.rate_reference_gbps = r.number("rate_reference_gbps", d.rate_reference_gbps, 0.0, 1e4);
  p.clamp_target_rate = r.boolean("clamp_target_rate", d.clamp_target_rate);
  p.window_kb = r.integer("window_kb", d.window_kb, 0, int64_t{1} << 20);
  r.removed("pacer_burst_kb",
            "it set the credit of a DCQCN pacer that no run used; every QP is paced by the "
            "RoCE host's rate limiter, which banks no credit (docs/dcqcn.md, Pacing): "
            "delete the line");

  if (p.rate_hai_mbps < p.rate_ai_mbps) {
    std::ostringstream os;
    os << "below rate_ai_mbps=" << p.rate_ai_mbps << " (hyper increase must not be slower)";
    r.error("rate_hai_mbps", os.str());
  }
  if (p.rate_reference_gbps > 0 && p.rate_reference_gbps < 0.001) {
    r.error("rate_reference_gbps", "must be 0 (no scaling) or at least 0.001");
  }
  r.finish();
  return p;
}

DcqcnConfig make_dcqcn_config(const DcqcnParams& p, uint64_t line_rate_bps) {
  if (line_rate_bps == 0) throw ConfigError("dcqcn: line rate of the port is 0");
  const double line = static_cast<double>(line_rate_bps);
  const double min_rate_bps = p.min_rate_mbps * static_cast<double>(kBpsPerMbps);
  if (min_rate_bps > line) {
    std::ostringstream os;
    os << "dcqcn.min_rate_mbps=" << p.min_rate_mbps << ": exceeds the port's line rate of "
       << line / static_cast<double>(kBpsPerMbps) << " Mbps";
    throw ConfigError(os.str());
  }
  DcqcnConfig c;
  c.line_rate_bps = line_rate_bps;
  c.cnp_interval_ns = us_to_ns(p.cnp_interval_us);
  c.cnp_dscp = static_cast<uint8_t>(p.cnp_dscp);
  c.cnp_priority = static_cast<uint8_t>(p.cnp_priority);
  c.g = p.g;
  c.initial_alpha = p.initial_alpha;
  c.alpha_update = p.alpha_update;
  c.alpha_interval_ns = us_to_ns(p.alpha_interval_us);
  c.rate_decrease_interval_ns = us_to_ns(p.rate_decrease_interval_us);
  c.rate_increase_timer_ns = us_to_ns(p.rate_increase_timer_us);
  c.byte_counter_bytes = static_cast<uint64_t>(p.byte_counter_kb) * 1024;
  c.fast_recovery_stages = static_cast<uint32_t>(p.fast_recovery_stages);
  // HPCC's simulator sets R_AI = 5 Mbps x bw/25G: the profile says rate_ai_mbps = 5 and
  // rate_reference_gbps = 25, and a 100G port gets 20 Mbps.
  const double scale =
      p.rate_reference_gbps > 0 ? line / (p.rate_reference_gbps * kBpsPerGbps) : 1.0;
  c.rate_ai_bps = p.rate_ai_mbps * static_cast<double>(kBpsPerMbps) * scale;
  c.rate_hai_bps = p.rate_hai_mbps * static_cast<double>(kBpsPerMbps) * scale;
  c.min_rate_bps = min_rate_bps;
  c.clamp_target_rate = p.clamp_target_rate;
  c.window_bytes = static_cast<uint64_t>(p.window_kb) * 1024;
  return c;
}

EcnSetting parse_ecn_reference(ConfigReader& r) {
  EcnSetting e;
  const int64_t kmin_kb = r.integer("kmin_kb", e.kmin_bytes / 1024, 0, 1 << 21);
  const int64_t kmax_kb = r.integer("kmax_kb", e.kmax_bytes / 1024, 0, 1 << 21);
  e.pmax = r.number("pmax", e.pmax, 0.0, 1.0);
  e.kmin_bytes = static_cast<uint32_t>(kmin_kb * 1024);
  e.kmax_bytes = static_cast<uint32_t>(kmax_kb * 1024);
  if (kmin_kb > kmax_kb) r.error("kmin_kb", "exceeds kmax_kb=" + std::to_string(kmax_kb));
  if (!(e.pmax > 0)) r.error("pmax", "must be in (0, 1]");
  r.finish();
  return e;
}

DcqcnProfile load_dcqcn_profile(const std::string& path) {
  const toml::table t = parse_toml_file(path);
  ConfigErrors errors;
  ConfigReader root(t, "", errors);
  DcqcnProfile prof;
  if (auto d = root.table("dcqcn")) prof.dcqcn = parse_dcqcn_params(*d);
  if (auto e = root.table("ecn")) prof.ecn = parse_ecn_reference(*e);
  root.finish();
  if (!errors.empty()) throw ConfigError(errors.format(path));
  return prof;
}

}  // namespace rocemu::dcqcn
