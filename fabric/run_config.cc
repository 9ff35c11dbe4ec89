// run_config.cc — one pass over every table of a run's TOML, all problems reported at once.
#include "fabric/run_config.h"

#include <algorithm>
#include <bit>
#include <filesystem>
#include <limits>

#include "agent/model_file.h"
#include "agent/policy.h"
#include "fabric/workload/flow_size_cdf.h"
#include "switchsw/soft_switch.h"

namespace rocemu::fabric {

namespace {

void read_job(ConfigReader& j, const Topology& t, WriteJobParams& job) {
  j.string("kind", "write", {"write"});
  job.from = j.string("from", job.from);
  job.to = j.string("to", job.to);
  job.bytes =
      static_cast<uint64_t>(j.integer("bytes", static_cast<int64_t>(job.bytes), 1, 1ll << 32));
  job.message_bytes = static_cast<uint64_t>(
      j.integer("message_bytes", static_cast<int64_t>(job.message_bytes), 1, 1ll << 31));
  job.pattern_seed =
      static_cast<uint64_t>(j.integer("pattern_seed", 0, 0, std::numeric_limits<int64_t>::max()));
  if (!t.nodes().empty()) {
    for (const char* key : {"from", "to"}) {
      const std::string& name = std::string(key) == "from" ? job.from : job.to;
      const int64_t i = t.find(name);
      if (i < 0)
        j.error(key, "no host named '" + name + "' in the topology");
      else if (t.node(static_cast<uint32_t>(i)).kind != NodeKind::kHost)
        j.error(key, "'" + name + "' is a switch, not a host");
    }
    if (job.from == job.to) j.error("to", "from and to must be different hosts");
  }
  j.finish();
}

// "node:port" of the topology; ok = false if the node or the port does not exist.
PortRef parse_port_ref(const Topology& t, const std::string& s, bool& ok) {
  ok = false;
  const auto colon = s.rfind(':');
  if (colon == std::string::npos) return {};
  const int64_t n = t.find(s.substr(0, colon));
  if (n < 0) return {};
  try {
    const int p = std::stoi(s.substr(colon + 1));
    if (p < 0 || static_cast<size_t>(p) >= t.node(static_cast<uint32_t>(n)).ports.size()) return {};
    ok = true;
    return PortRef{static_cast<uint32_t>(n), static_cast<uint16_t>(p)};
  } catch (const std::exception&) {
    return {};
  }
}

void read_dcqcn(ConfigReader& d, const std::string& source, RunConfig& cfg) {
  cfg.dcqcn_enabled = d.boolean("enabled", true);
  if (!d.has("profile")) {
    cfg.dcqcn = dcqcn::parse_dcqcn_params(d);
    return;
  }
  const std::string path = resolve_beside(d.string("profile", ""), source);
  d.finish();  // with a profile, any other key is unknown
  try {
    cfg.dcqcn = dcqcn::load_dcqcn_profile(path).dcqcn;
  } catch (const std::exception& e) {
    d.error("profile", e.what() + where_looked(path, source));
  }
}

constexpr const char* kAgentPolicies[] = {"static",    "graphcc", "acc",
                                          "alternate", "stall",   "throw"};
constexpr const char* kAgentPolicyList =
    "must be one of static, graphcc, acc, alternate, stall, throw";

/// Loads the model of a graphcc/acc policy and checks it against the topology's port graph;
/// the reason of a refusal, or "".
std::string load_agent_model(AgentRunParams& a, const Topology& t, const std::string& source) {
  if (a.policy != "graphcc" && a.policy != "acc") return "";
  if (a.model_path.empty())
    return "policy '" + a.policy + "' needs a model file (model = \"PATH\")";
  try {
    auto m = std::make_shared<agent::Model>(agent::load_model(a.model_path));
    if (a.policy != agent::model_kind_name(m->kind))
      return "'" + a.model_path + "' is " +
             (m->kind == agent::ModelKind::kGraphCc ? "a GraphCC" : "an ACC") +
             " model, not one for policy '" + a.policy + "'";
    if (!t.nodes().empty()) (void)agent::make_policy(*m, agent::PortGraph(t));
    a.model = std::move(m);
  } catch (const std::exception& e) {
    return e.what() + where_looked(a.model_path, source);
  }
  return "";
}

void read_agent(ConfigReader& g, const std::string& source, const Topology& t, AgentRunParams& a) {
  a.policy = g.required_string("policy");
  bool known = false;
  for (const char* p : kAgentPolicies) known = known || a.policy == p;
  if (!known) {
    g.error("policy", kAgentPolicyList);
    a.policy.clear();
  }
  a.interval_ns = g.integer("interval_us", a.interval_ns / kNsPerUs, 1, 60'000'000) * kNsPerUs;
  a.record = g.boolean("record", false);
  if (g.has("model")) {
    if (a.policy != "graphcc" && a.policy != "acc")
      g.error("model", "only graphcc and acc take a model");
    a.model_path = resolve_beside(g.string("model", ""), source);
  }
  if (g.has("profile")) {
    if (a.policy != "static") g.error("profile", "only the static policy takes an ECN profile");
    a.profile = sw::read_ecn_profile(g, "profile", source);
  }
  if (g.has("actions")) {
    if (a.policy != "alternate" && a.policy != "stall" && a.policy != "throw")
      g.error("actions", "only the alternate (and stall, throw) test policies take actions");
    const auto v = g.integer_array("actions", {0, 119}, 0, agent::kNumActions - 1);
    if (v.size() != 2)
      g.error("actions", "give exactly two action ids");
    else
      a.alternate = {static_cast<int>(v[0]), static_cast<int>(v[1])};
  }
  if (const std::string why = load_agent_model(a, t, source); !why.empty()) g.error("model", why);
  g.finish();
}

void check_switch_buffers(const RunConfig& cfg, ConfigErrors& errors) {
  const Topology& t = cfg.topology.topology;
  for (uint32_t n : t.switches()) {
    if (auto why = sw::shared_buffer_config(cfg.switch_params, t, n).validate(); !why.empty())
      errors.add("switch.buffer_mb", std::to_string(cfg.switch_params.buffer_bytes >> 20),
                 "switch " + t.node(n).name + ": " + why);
  }
}

}  // namespace

uint32_t virtual_pool_mbufs(const RunConfig& cfg) {
  if (cfg.testbed.pool_mbufs_given) return cfg.testbed.pool_mbufs;
  const Topology& t = cfg.topology.topology;
  const sw::SwitchParams& sp = cfg.switch_params;
  const double frame = std::max<uint32_t>(1536, sp.max_frame_bytes);
  const int lossless = std::popcount(static_cast<unsigned>(sp.lossless_mask()));
  double n = 64.0 * static_cast<double>(t.hosts().size());
  for (uint32_t s : t.switches()) {
    // A shared pool under dynamic thresholds holds at most B x k a / (1 + k a) for k queues
    // at their threshold a x (free); the headroom comes on top.
    const double ka = static_cast<double>(t.node(s).ports.size()) * std::max(sp.alpha, sp.egress_alpha);
    double bytes = static_cast<double>(sp.buffer_bytes) * ka / (1 + ka);
    for (uint32_t h : sw::shared_buffer_config(sp, t, s).headroom_bytes)
      bytes += static_cast<double>(h) * lossless;
    n += bytes / frame;
  }
  for (const TopoLink& l : t.links())
    n += 2 * (static_cast<double>(bytes_in(l.delay_ns, l.rate_bps)) / frame + 2);
  return static_cast<uint32_t>(std::clamp(n, static_cast<double>(TestbedParams{}.pool_mbufs),
                                          static_cast<double>((1u << 22) - 1)));
}

RealtimeOptions realtime_options(const RunConfig& cfg) {
  RealtimeOptions o;
  o.backend = cfg.testbed.backend;
  o.pool_mbufs = cfg.testbed.pool_mbufs;
  o.idle_sleep_ns = cfg.testbed.idle_sleep_ns;
  if (o.backend == PortBackend::kPci) {
    o.pci_mtu_bytes = eth_mtu_for_ib_mtu(cfg.nic_params.mtu_bytes);
    o.hardware_pfc = cfg.testbed.hardware_pfc;
    o.pfc_priorities = cfg.switch_params.pfc ? cfg.switch_params.lossless_mask() : 0;
    o.pfc_pause_quanta = cfg.switch_params.pause_quanta;
  }
  return o;
}

std::string check_rate_from_port(const RunConfig& cfg, bool realtime) {
  for (uint32_t li = 0; li < cfg.topology.links.size(); ++li) {
    if (!cfg.topology.links[li].rate_from_port) continue;
    const std::string where = "topology link " + std::to_string(li) + ": rate_gbps = \"port\" ";
    if (!realtime)
      return where +
             "takes the speed a PCI port reports, so it runs in real time only "
             "(rocemu-testbed); give the rate in Gbps to run it in virtual time";
    if (cfg.testbed.backend != PortBackend::kPci)
      return where +
             "takes the speed a PCI port reports: it needs [testbed] ports = \"pci\" "
             "(not " +
             backend_name(cfg.testbed.backend) + ")";
  }
  return {};
}

RunConfig with_link_rates(const RunConfig& cfg, const std::vector<uint64_t>& link_rate_bps) {
  RunConfig out = cfg;
  auto& links = out.topology.topology.mutable_links();
  if (link_rate_bps.size() != links.size())
    throw std::invalid_argument("with_link_rates: " + std::to_string(link_rate_bps.size()) +
                                " rates for " + std::to_string(links.size()) + " links");
  for (size_t i = 0; i < links.size(); ++i) links[i].rate_bps = link_rate_bps[i];
  ConfigErrors errors;
  check_switch_buffers(out, errors);
  if (!errors.empty()) throw ConfigError(errors.format(cfg.source + " (with the ports' rates)"));
  return out;
}

void apply_agent_flags(RunConfig& cfg, const std::string& policy, const std::string& model,
                       int64_t interval_us, const std::string& profile) {
  ConfigErrors errors;
  AgentRunParams& a = cfg.agent;
  if (!policy.empty()) {
    bool known = false;
    for (const char* p : kAgentPolicies) known = known || policy == p;
    if (!known) errors.add("--policy", policy, kAgentPolicyList);
    if (policy != a.policy) {
      a.model.reset();
      if (policy != "static") a.profile.reset();
    }
    a.policy = policy;
  }
  if (!model.empty()) {
    if (!a.on())
      errors.add("--agent-model", model, "needs --policy graphcc|acc (or an [agent] table)");
    a.model_path = model;
    a.model.reset();
  }
  if (interval_us != 0) {
    if (interval_us < 1 || interval_us > 60'000'000)
      errors.add("--agent-interval-us", std::to_string(interval_us), "must be in [1, 60000000]");
    a.interval_ns = interval_us * kNsPerUs;
  }
  if (!profile.empty()) {
    if (a.policy != "static") {
      errors.add("--agent-profile", profile, "only the static policy takes an ECN profile");
    } else {
      toml::table t;
      t.insert("--agent-profile", profile);
      ConfigReader r(t, "", errors);
      a.profile = sw::read_ecn_profile(r, "--agent-profile");
    }
  }
  if (errors.empty() && a.on() && !a.model) {
    if (const std::string why = load_agent_model(a, cfg.topology.topology, ""); !why.empty())
      errors.add("--agent-model", a.model_path, why);
  }
  if (!errors.empty()) throw ConfigError(errors.format("command line"));
}

RunConfig parse_run_config(const toml::table& root, const std::string& source) {
  RunConfig cfg;
  cfg.source = source;
  ConfigErrors errors;
  ConfigReader r(root, "", errors);

  if (auto run = r.table("run")) {
    cfg.seed =
        static_cast<uint64_t>(run->integer("seed", 1, 0, std::numeric_limits<int64_t>::max()));
    run->string("name", "");
    run->finish();
  }
  if (auto top = r.table("topology")) {
    cfg.topology = read_topology(*top);
  } else {
    errors.add("topology", "", "required table [topology] is missing");
  }
  const Topology& t = cfg.topology.topology;
  if (auto s = r.table("switch")) cfg.switch_params = sw::parse_switch_params(*s, source);
  if (auto n = r.table("nic")) cfg.nic_params = nic::parse_nic_params(*n);
  cfg.switch_params.max_frame_bytes = sw::max_frame_bytes_for_mtu(cfg.nic_params.mtu_bytes);
  if (auto d = r.table("dcqcn")) {
    read_dcqcn(*d, source, cfg);
    if (cfg.dcqcn_enabled) cfg.nic_params.ecn_capable = true;  // DCQCN needs ECT(0) data
  }
  if (auto w = r.table("workload")) {
    cfg.workload_qps_per_pair = static_cast<uint32_t>(w->integer("qps_per_pair", 1, 1, 64));
    cfg.workload_qp_per_flow = w->boolean("qp_per_flow", false);
    if (cfg.workload_qp_per_flow && w->has("qps_per_pair"))
      w->error("qp_per_flow", "give either qp_per_flow or qps_per_pair");
    cfg.workload = workload::parse_workload_params(*w);
    if (!cfg.workload->cdf_file.empty()) {
      // Read now, before anything starts: a missing or malformed CDF is a configuration
      // error naming the key and where the file was looked for.
      const std::string given = cfg.workload->cdf_file;
      cfg.workload->cdf_file = resolve_beside(given, source);
      try {
        (void)workload::FlowSizeCdf::load(cfg.workload->cdf_file);
      } catch (const ConfigError& e) {
        w->error("cdf_file", e.what() + where_looked(given, source));
      }
    }
    if (!t.nodes().empty()) {
      workload::check_against_hosts(*cfg.workload, t.hosts().size(), "workload", errors);
      // The QP plan: every host has qps_per_pair requester and responder QPs per other host.
      const uint64_t need =
          2ull * (t.hosts().size() > 0 ? t.hosts().size() - 1 : 0) * cfg.workload_qps_per_pair;
      if (need > cfg.nic_params.max_qps && !cfg.workload_qp_per_flow)  // per flow: no mesh
        errors.add("workload.qps_per_pair", std::to_string(cfg.workload_qps_per_pair),
                   "the QP plan needs " + std::to_string(need) + " QPs per host (2 x " +
                       std::to_string(t.hosts().size() - 1) +
                       " peers x qps_per_pair), more than [nic] max_qps = " +
                       std::to_string(cfg.nic_params.max_qps));
    }
  }
  if (auto j = r.table("job")) {
    read_job(*j, t, cfg.job);
  } else if (!t.nodes().empty() && !cfg.workload) {
    // Defaults name h0 and h1: check them like explicit values.
    toml::table empty;
    ConfigReader j2(empty, "job", errors);
    read_job(j2, t, cfg.job);
  }
  if (auto s = r.table("sim")) {
    cfg.sim.until_ns =
        s->integer("until_us", cfg.sim.until_ns / kNsPerUs, 1, 3'600'000'000) * kNsPerUs;
    s->finish();
  }
  if (auto tb = r.table("testbed")) {
    const std::string ports = tb->string("ports", "ring", kBackendNames);
    parse_backend(ports, cfg.testbed.backend);
    cfg.testbed.time_limit_ns = static_cast<TimeNs>(tb->number("time_limit_s", 30, 0.001, 3600) *
                                                    static_cast<double>(kNsPerSec));
    cfg.testbed.pool_mbufs_given = tb->has("pool_mbufs");
    cfg.testbed.pool_mbufs =
        static_cast<uint32_t>(tb->integer("pool_mbufs", cfg.testbed.pool_mbufs, 1023, 1 << 22));
    cfg.testbed.idle_sleep_ns = tb->integer("idle_sleep_us", 0, 0, 10000) * kNsPerUs;
    cfg.testbed.eal_args = tb->string_array("eal_args", {});
    cfg.testbed.hardware_pfc = tb->boolean("hardware_pfc", false);
    if (auto pl = tb->table("placement")) {
      for (uint32_t i = 0; i < t.nodes().size(); ++i) {
        const auto& name = t.node(i).name;
        if (pl->has(name))
          cfg.testbed.placement[name] = static_cast<uint32_t>(pl->integer(name, 0, 0, 1023));
      }
      pl->finish();  // names of no node are reported as unknown keys
    }
    tb->finish();
  }
  if (auto c = r.table("capture")) {
    const auto names = c->string_array("ports", {});
    for (const auto& s : names) {
      bool ok = false;
      const PortRef p = parse_port_ref(t, s, ok);
      if (!ok) {
        c->error("ports", "'" + s + "' is not node:port of the topology");
        continue;
      }
      cfg.capture.ports.push_back(p);
      cfg.capture.names.push_back(s);
    }
    cfg.capture.file = c->string("file", cfg.capture.file);
    c->finish();
  }
  if (auto tm = r.table("telemetry")) {
    cfg.telemetry.interval_ns = tm->integer("interval_us", 0, 0, 3'600'000'000) * kNsPerUs;
    cfg.telemetry.dcqcn_interval_ns =
        tm->integer("dcqcn_interval_us", 0, 0, 3'600'000'000) * kNsPerUs;
    if (cfg.telemetry.dcqcn_interval_ns > 0 && !cfg.dcqcn_enabled)
      tm->error("dcqcn_interval_us", "traces DCQCN, which this run does not use (no [dcqcn])");
    tm->finish();
  }
  if (auto g = r.table("agent")) read_agent(*g, source, t, cfg.agent);
  // Every switch's buffer must hold its headroom and reserves: say so now, not when the
  // switch is built (in a testbed that is a log file nobody reads).
  check_switch_buffers(cfg, errors);
  // A workload run's main-lcore callback posts flows on every host (WorkloadFabric::pull)
  // and snapshots every switch (sample_queues): a node polled by another lcore would race.
  if (cfg.workload)
    for (const auto& [name, lcore] : cfg.testbed.placement)
      if (lcore != 0)
        errors.add("testbed.placement." + name, std::to_string(lcore),
                   "a [workload] run keeps every node on the main lcore 0 (its flow scheduler "
                   "and queue sampling run there and touch every host and switch)");
  if (const auto from = t.find(cfg.job.from); !cfg.workload && from >= 0) {
    if (auto it = cfg.testbed.placement.find(cfg.job.from);
        it != cfg.testbed.placement.end() && it->second != 0)
      errors.add("testbed.placement." + cfg.job.from, std::to_string(it->second),
                 "the job's sending host must stay on the main lcore 0 (the job runs there)");
  }
  r.finish();
  if (!errors.empty()) throw ConfigError(errors.format(source));
  return cfg;
}

RunConfig load_run_config(const std::string& path) {
  return parse_run_config(parse_toml_file(path), path);
}

}  // namespace rocemu::fabric
