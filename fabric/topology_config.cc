// topology_config.cc — [topology] from TOML into Topology + LinkOptions, all errors at once.
#include "fabric/topology_config.h"

#include <cmath>
#include <cstdint>
#include <map>

#include "common/topology_generators.h"

namespace rocemu::fabric {

namespace {

constexpr double kMinRateGbps = 0.001;
constexpr double kMaxRateGbps = 1000.0;
constexpr int64_t kMaxDelayNs = kNsPerSec;
constexpr int64_t kMaxHosts = 4096;

LinkImpairment read_impairment(ConfigReader& r, const LinkImpairment& def) {
  LinkImpairment im;
  im.loss = r.number("loss", def.loss, 0.0, 0.5);
  im.reorder = r.number("reorder", def.reorder, 0.0, 0.5);
  im.duplicate = r.number("duplicate", def.duplicate, 0.0, 0.5);
  im.reorder_delay_ns = r.integer("reorder_delay_ns", def.reorder_delay_ns, 1, kMaxDelayNs);
  return im;
}

uint64_t rate(ConfigReader& r, const char* key, double def_gbps) {
  return gbps_to_bps(r.number(key, def_gbps, kMinRateGbps, kMaxRateGbps));
}

Topology read_explicit(ConfigReader& top, std::vector<LinkOptions>& opts,
                       const LinkImpairment& def_imp) {
  Topology t;
  auto nodes = top.tables("nodes");
  if (nodes.empty()) top.error("nodes", "an explicit topology needs [[topology.nodes]]");
  std::map<std::string, std::string> first_seen;
  for (auto& n : nodes) {
    const std::string name = n.required_string("name");
    const std::string kind = n.string("kind", "host", {"host", "switch"});
    const std::string ip = n.string("ipv4", "");
    if (!name.empty()) {
      if (t.find(name) >= 0) n.error("name", "duplicate node name");
      const uint32_t idx = t.add_node(name, kind == "switch" ? NodeKind::kSwitch : NodeKind::kHost);
      if (!ip.empty()) {
        if (kind != "host") {
          n.error("ipv4", "only hosts have an address");
        } else if (const auto a = parse_ipv4(ip)) {
          t.mutable_nodes()[idx].ipv4 = *a;
        } else {
          n.error("ipv4", "not a dotted IPv4 address");
        }
      }
      for (const std::string& a6 : n.string_array("ipv6", {})) {
        if (kind != "host") {
          n.error("ipv6", "only hosts have an address");
        } else if (const auto a = parse_ipv6(a6); !a || is_ipv4_mapped(*a) || (*a)[0] == 0xff) {
          n.error("ipv6", "'" + a6 + "' is not a unicast IPv6 address");
        } else {
          t.mutable_nodes()[idx].ipv6.push_back(*a);
        }
      }
    }
    n.finish();
  }
  auto links = top.tables("links");
  if (links.empty()) top.error("links", "an explicit topology needs [[topology.links]]");
  for (auto& l : links) {
    const std::string a = l.required_string("a");
    const std::string b = l.required_string("b");
    LinkOptions o;
    uint64_t rate_bps = kPortRateProvisionalBps;
    if (l.is_string("rate_gbps")) {  // "port": the PCI ports' reported speed, at start
      o.rate_from_port = l.string("rate_gbps", "") == "port";
      if (!o.rate_from_port)
        l.error("rate_gbps", "a rate in Gbps, or \"port\" (the speed the PCI port reports)");
    } else {
      rate_bps = gbps_to_bps(l.required_number("rate_gbps", kMinRateGbps, kMaxRateGbps));
    }
    const TimeNs delay_ns = l.integer("delay_ns", kNsPerUs, 0, kMaxDelayNs);
    const bool up = l.boolean("up", true);
    o.impairment = read_impairment(l, def_imp);
    o.a_dev = l.string("a_dev", "");
    o.b_dev = l.string("b_dev", "");
    const int64_t ai = a.empty() ? -1 : t.find(a);
    const int64_t bi = b.empty() ? -1 : t.find(b);
    if (!a.empty() && ai < 0) l.error("a", "no node with this name");
    if (!b.empty() && bi < 0) l.error("b", "no node with this name");
    if (ai >= 0 && ai == bi) l.error("b", "a link must join two different nodes");
    l.finish();
    if (ai < 0 || bi < 0 || ai == bi) continue;
    const uint32_t li =
        t.add_link(static_cast<uint32_t>(ai), static_cast<uint32_t>(bi), rate_bps, delay_ns);
    t.mutable_links()[li].up = up;
    opts.push_back(o);
  }
  return t;
}

}  // namespace

uint64_t gbps_to_bps(double gbps) noexcept {
  return static_cast<uint64_t>(std::llround(gbps * static_cast<double>(kBpsPerGbps)));
}

TopologySpec read_topology(ConfigReader& top) {
  TopologySpec spec;
  const std::string kind =
      top.string("kind", "explicit", {"explicit", "star", "dumbbell", "clos", "fattree"});
  LinkImpairment def_imp;
  if (auto im = top.table("impairment")) {
    def_imp = read_impairment(*im, LinkImpairment{});
    im->finish();
  }
  if (kind == "explicit") {
    spec.topology = read_explicit(top, spec.links, def_imp);
  } else if (kind == "star") {
    StarParams p;
    p.hosts = static_cast<uint32_t>(top.integer("hosts", p.hosts, 2, kMaxHosts));
    p.rate_bps = rate(top, "rate_gbps", 10);
    p.delay_ns = top.integer("delay_ns", p.delay_ns, 0, kMaxDelayNs);
    spec.topology = make_star(p);
  } else if (kind == "dumbbell") {
    DumbbellParams p;
    p.left_hosts = static_cast<uint32_t>(top.integer("left_hosts", p.left_hosts, 1, kMaxHosts));
    p.right_hosts = static_cast<uint32_t>(top.integer("right_hosts", p.right_hosts, 1, kMaxHosts));
    p.host_rate_bps = rate(top, "host_rate_gbps", 10);
    p.bottleneck_rate_bps = rate(top, "bottleneck_rate_gbps", 10);
    p.delay_ns = top.integer("delay_ns", p.delay_ns, 0, kMaxDelayNs);
    spec.topology = make_dumbbell(p);
  } else if (kind == "fattree") {
    FatTreeParams p;
    p.k = static_cast<uint32_t>(top.integer("k", p.k, 2, 64));
    p.oversubscription =
        static_cast<uint32_t>(top.integer("oversubscription", p.oversubscription, 1, 64));
    p.host_rate_bps = rate(top, "host_rate_gbps", 100);
    p.edge_rate_bps = rate(top, "edge_rate_gbps", 100);
    p.core_rate_bps = rate(top, "core_rate_gbps", 100);
    p.host_delay_ns = top.integer("host_delay_ns", p.host_delay_ns, 0, kMaxDelayNs);
    p.edge_delay_ns = top.integer("edge_delay_ns", p.edge_delay_ns, 0, kMaxDelayNs);
    p.core_delay_ns = top.integer("core_delay_ns", p.core_delay_ns, 0, kMaxDelayNs);
    const uint64_t hosts = uint64_t{p.k} * p.k * p.k / 4 * p.oversubscription;
    if (auto why = validate(p); !why.empty()) {
      top.error("k", why);
    } else if (hosts > static_cast<uint64_t>(kMaxHosts)) {
      top.error("k", "k^3/4 x oversubscription = " + std::to_string(hosts) + " hosts, more than " +
                         std::to_string(kMaxHosts));
    } else {
      spec.topology = make_fattree(p);
    }
  } else {
    ClosParams p;
    p.hosts = static_cast<uint32_t>(top.integer("hosts", p.hosts, 1, kMaxHosts));
    p.leaves = static_cast<uint32_t>(top.integer("leaves", p.leaves, 1, 1024));
    p.spines = static_cast<uint32_t>(top.integer("spines", p.spines, 1, 1024));
    p.host_rate_bps = rate(top, "host_rate_gbps", 25);
    p.fabric_rate_bps = rate(top, "fabric_rate_gbps", 100);
    p.delay_ns = top.integer("delay_ns", p.delay_ns, 0, kMaxDelayNs);
    ClosFailures fail;
    fail.named = top.string_array("down_links", {});
    fail.random = static_cast<uint32_t>(top.integer("failed_links", 0, 0, 1024 * 1024));
    fail.seed = static_cast<uint64_t>(top.integer("failure_seed", 1, 0, INT64_MAX));
    if (auto why = validate(p); !why.empty()) {
      top.error("hosts", why);
    } else {
      spec.topology = make_clos(p);
      try {
        spec.links_down = fail_clos_links(spec.topology, p, fail);
      } catch (const std::invalid_argument& e) {
        top.error(fail.named.empty() ? "failed_links" : "down_links", e.what());
      }
    }
  }
  if (kind != "explicit") {
    spec.links.assign(spec.topology.links().size(), LinkOptions{def_imp, {}, {}});
  }
  top.finish();
  if (top.errors().empty()) check_topology(spec.topology, top.path(), top.errors());
  return spec;
}

void check_topology(const Topology& t, const std::string& path, ConfigErrors& errors) {
  if (t.hosts().size() < 2) errors.add(path, "", "needs at least two hosts");
  for (const auto& n : t.nodes()) {
    if (n.kind == NodeKind::kHost && n.ports.size() != 1)
      errors.add(
          path + ".nodes." + n.name, "",
          "a host has exactly one port (one link), this one has " + std::to_string(n.ports.size()));
    if (n.kind == NodeKind::kSwitch && n.ports.empty())
      errors.add(path + ".nodes." + n.name, "", "switch has no link");
  }
  const auto hs = t.hosts();
  for (size_t i = 0; i < hs.size(); ++i)
    for (size_t j = i + 1; j < hs.size(); ++j)
      if (t.node(hs[i]).ipv4 == t.node(hs[j]).ipv4)
        errors.add(path + ".nodes." + t.node(hs[j]).name + ".ipv4",
                   ipv4_to_string(t.node(hs[j]).ipv4), "same address as " + t.node(hs[i]).name);
  for (size_t i = 0; i < hs.size(); ++i)
    for (const Ipv6Addr& a : t.node(hs[i]).ipv6)
      if (t.find_host_by_ipv6(a) != static_cast<int64_t>(hs[i]))
        errors.add(path + ".nodes." + t.node(hs[i]).name + ".ipv6", ipv6_to_string(a),
                   "same address as " + t.node(static_cast<uint32_t>(t.find_host_by_ipv6(a))).name);
  const auto pairs = t.unreachable_host_pairs();
  constexpr size_t kMaxListed = 20;
  for (size_t i = 0; i < pairs.size() && i < kMaxListed; ++i)
    errors.add(path, "", "no route between hosts " + pairs[i]);
  if (pairs.size() > kMaxListed)
    errors.add(
        path, "",
        "and " + std::to_string(pairs.size() - kMaxListed) + " more host pairs without a route");
}

}  // namespace rocemu::fabric
