// switch_params.cc — parsing and validation of the [switch] table (see switch_params.h).
#include "switchsw/switch_params.h"

#include <cmath>
#include <optional>
#include <string>

namespace rocemu::sw {

uint8_t SwitchParams::lossless_mask() const noexcept {
  if (!pfc) return 0;
  uint8_t m = 0;
  for (const auto& c : classes)
    if (c.lossless) m = static_cast<uint8_t>(m | (1u << c.priority));
  return m;
}

uint8_t SwitchParams::control_mask() const noexcept {
  uint8_t m = 0;
  for (const auto& c : classes)
    if (c.control) m = static_cast<uint8_t>(m | (1u << c.priority));
  return m;
}

std::array<uint8_t, 64> SwitchParams::dscp_map() const noexcept {
  std::array<uint8_t, 64> m;
  m.fill(static_cast<uint8_t>(default_priority));
  for (const auto& c : classes)
    for (int d : c.dscp) m[d] = static_cast<uint8_t>(c.priority);
  return m;
}

EcnSetting SwitchParams::ecn_for_port(uint16_t port, uint64_t rate_bps) const noexcept {
  for (const auto& o : ecn_ports)
    if (o.port == port) return o.setting;
  return scaled_ecn(ecn, rate_bps);
}

EcnSetting scaled_ecn(const EcnParams& ecn, uint64_t rate_bps) noexcept {
  const double scale = ecn.scale_with_bandwidth
                           ? static_cast<double>(rate_bps) / (ecn.reference_gbps * kBpsPerGbps)
                           : 1.0;
  EcnSetting s;
  s.kmin_bytes = static_cast<uint32_t>(std::llround(ecn.kmin_kb * 1024 * scale));
  s.kmax_bytes = static_cast<uint32_t>(std::llround(ecn.kmax_kb * 1024 * scale));
  s.pmax = ecn.pmax;
  return s;
}

namespace {

constexpr double kMaxKb = 4.0 * 1024 * 1024;  // 4 GB: thresholds are uint32 bytes

EcnParams parse_ecn(ConfigReader& r) {
  EcnParams e;
  e.enabled = r.boolean("enabled", e.enabled);
  e.kmin_kb = r.number("kmin_kb", e.kmin_kb, 0, kMaxKb);
  e.kmax_kb = r.number("kmax_kb", e.kmax_kb, 0, kMaxKb);
  e.pmax = r.number("pmax", e.pmax, 0, 1);
  if (e.pmax <= 0) r.error("pmax", "must be in (0, 1]");
  if (e.kmin_kb > e.kmax_kb) r.error("kmin_kb", "exceeds kmax_kb=" + format_number(e.kmax_kb));
  const std::string scale = r.string("scale", "none", {"none", "bandwidth"});
  e.scale_with_bandwidth = scale == "bandwidth";
  e.reference_gbps = r.number("reference_gbps", e.reference_gbps, 0.001, 1e6);
  return e;
}

}  // namespace

std::optional<EcnParams> read_ecn_profile(ConfigReader& r, std::string_view key,
                                          const std::string& source) {
  const std::string path = resolve_beside(r.string(key, ""), source);
  try {
    const toml::table t = parse_toml_file(path);
    ConfigReader root(t, "", r.errors());
    std::optional<EcnParams> out;
    if (auto pe = root.table("ecn")) {
      out = parse_ecn(*pe);
      pe->finish();
    } else {
      r.error(key, "profile has no [ecn] table");
    }
    root.finish();
    return out;
  } catch (const ConfigError& e) {
    r.error(key, e.what());
  }
  return std::nullopt;
}

SwitchParams parse_switch_params(ConfigReader& r, const std::string& source) {
  SwitchParams p;
  p.buffer_bytes = static_cast<uint64_t>(r.number("buffer_mb", 32, 0.0625, 65536) * (1 << 20));
  p.reserve_bytes = static_cast<uint32_t>(r.number("reserve_kb", 4, 0, 1024) * 1024);
  p.alpha = r.number("alpha", p.alpha, 1.0 / 65536, 64);
  p.egress_alpha = r.number("egress_alpha", p.egress_alpha, 1.0 / 65536, 64);
  p.headroom_bytes = static_cast<uint32_t>(r.number("headroom_kb", 0, 0, 1 << 20) * 1024);
  if (r.has("headroom_slack_bytes"))
    p.headroom_slack_bytes = static_cast<uint32_t>(r.integer("headroom_slack_bytes", 0, 0, 1 << 24));
  p.resume_offset_bytes =
      static_cast<uint32_t>(r.integer("resume_offset_bytes", p.resume_offset_bytes, 0, 1 << 24));
  p.pfc = r.boolean("pfc", p.pfc);
  p.pause_quanta = static_cast<uint16_t>(r.integer("pause_quanta", p.pause_quanta, 1, 0xffff));
  if (auto w = r.table("pfc_watchdog"))
    p.pfc_watchdog = parse_pfc_watchdog(*w, {"forward", "drop"});
  p.default_priority = static_cast<int>(r.integer("default_priority", p.default_priority, 0, 7));
  p.cnp_priority = static_cast<int>(r.integer("cnp_priority", p.cnp_priority, 0, 7));
  p.acks_to_control = r.boolean("acks_to_control", p.acks_to_control);
  p.scheduler = r.string("scheduler", p.scheduler, {"dwrr", "rr"});
  p.dwrr_quantum_bytes =
      static_cast<uint32_t>(r.integer("dwrr_quantum_bytes", p.dwrr_quantum_bytes, 1518, 1 << 20));

  if (r.has("classes")) {
    p.classes.clear();
    uint8_t seen_prio = 0;
    std::array<int, 64> dscp_owner;
    dscp_owner.fill(-1);
    for (auto& c : r.tables("classes")) {
      ClassParams cp;
      cp.name = c.required_string("name");
      cp.priority = static_cast<int>(c.required_integer("priority", 0, 7));
      for (int64_t d : c.integer_array("dscp", {}, 0, 63)) cp.dscp.push_back(static_cast<int>(d));
      cp.lossless = c.boolean("lossless", false);
      cp.control = c.boolean("control", false);
      cp.weight = static_cast<uint32_t>(c.integer("weight", 1, 1, 1000));
      if (cp.lossless && cp.control)
        c.error("control", "a class cannot be both lossless and control");
      if ((seen_prio >> cp.priority) & 1) c.error("priority", "priority used by another class");
      seen_prio = static_cast<uint8_t>(seen_prio | (1u << cp.priority));
      for (int d : cp.dscp) {
        if (dscp_owner[d] >= 0) c.error("dscp", "dscp " + std::to_string(d) + " mapped twice");
        dscp_owner[d] = cp.priority;
      }
      c.finish();
      p.classes.push_back(std::move(cp));
    }
  }

  const bool has_profile = r.has("ecn_profile");
  const bool has_ecn = r.has("ecn");
  if (has_profile && has_ecn)
    r.error("ecn_profile", "give either ecn_profile or [switch.ecn], not both");
  std::optional<ConfigReader> ecn = r.table("ecn");
  if (has_profile) {
    if (auto e = read_ecn_profile(r, "ecn_profile", source)) p.ecn = *e;
  }
  if (ecn) {
    p.ecn = parse_ecn(*ecn);
    for (auto& o : ecn->tables("ports")) {
      EcnPortOverride po;
      po.port = static_cast<uint16_t>(o.required_integer("port", 0, 65535));
      po.setting.kmin_bytes = static_cast<uint32_t>(o.required_number("kmin_kb", 0, kMaxKb) * 1024);
      po.setting.kmax_bytes = static_cast<uint32_t>(o.required_number("kmax_kb", 0, kMaxKb) * 1024);
      po.setting.pmax = o.required_number("pmax", 0, 1);
      if (auto why = po.setting.validate(); !why.empty()) o.error("kmin_kb", why);
      o.finish();
      p.ecn_ports.push_back(po);
    }
    ecn->finish();
  }
  if ((p.control_mask() >> p.cnp_priority & 1) == 0) {
    r.error("cnp_priority", "priority " + std::to_string(p.cnp_priority) +
                                " is not a control class (CNPs need strict priority)");
  }
  r.finish();
  return p;
}

}  // namespace rocemu::sw
