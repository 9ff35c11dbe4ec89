// [topology] from TOML: explicit nodes/links, generators, and every problem reported at once
// with its line number.
#include "fabric/topology_config.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace rocemu::fabric {

namespace {
struct Loaded {
  TopologySpec spec;
  std::vector<std::string> problems;
};

Loaded load(std::string_view text) {
  const toml::table root = toml::parse(text);
  ConfigErrors errors;
  ConfigReader top(*root["topology"].as_table(), "topology", errors);
  Loaded l;
  l.spec = read_topology(top);
  l.problems = errors.problems();
  return l;
}

bool has(const std::vector<std::string>& v, const std::string& needle) {
  return std::any_of(v.begin(), v.end(),
                     [&](const std::string& s) { return s.find(needle) != std::string::npos; });
}

std::string all(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& p : v) s += p + "\n";
  return s;
}
}  // namespace

TEST(TopologyConfig, ExplicitQuickstartBuildsTwoHostsAndOneSwitch) {
  const auto l = load(R"(
[topology]
[[topology.nodes]]
name = "a"
[[topology.nodes]]
name = "b"
ipv4 = "192.168.1.7"
[[topology.nodes]]
name = "sw"
kind = "switch"
[[topology.links]]
a = "a"
b = "sw"
rate_gbps = 10
delay_ns = 1000
[[topology.links]]
a = "b"
b = "sw"
rate_gbps = 2.5
loss = 0.01
)");
  ASSERT_TRUE(l.problems.empty()) << all(l.problems);
  const auto& t = l.spec.topology;
  EXPECT_EQ(t.nodes().size(), 3u);
  EXPECT_EQ(t.links()[0].rate_bps, 10 * kBpsPerGbps);
  EXPECT_EQ(t.links()[1].rate_bps, 2'500'000'000u);
  EXPECT_EQ(t.links()[1].delay_ns, 1000);  // default
  EXPECT_EQ(ipv4_to_string(t.node(1).ipv4), "192.168.1.7");
  ASSERT_EQ(l.spec.links.size(), 2u);
  EXPECT_DOUBLE_EQ(l.spec.links[1].impairment.loss, 0.01);
  EXPECT_DOUBLE_EQ(l.spec.links[0].impairment.loss, 0.0);
}

TEST(TopologyConfig, ClosGeneratorFromToml) {
  const auto l = load(R"(
[topology]
kind = "clos"
hosts = 8
leaves = 2
spines = 2
host_rate_gbps = 25
fabric_rate_gbps = 100
[topology.impairment]
duplicate = 0.01
)");
  ASSERT_TRUE(l.problems.empty()) << all(l.problems);
  EXPECT_EQ(l.spec.topology.nodes().size(), 12u);
  EXPECT_EQ(l.spec.topology.links().size(), 12u);
  EXPECT_DOUBLE_EQ(l.spec.links[11].impairment.duplicate, 0.01);
}

TEST(TopologyConfig, ReportsEveryProblemWithItsLine) {
  const auto l = load(R"(
[topology]
[[topology.nodes]]
name = "a"
[[topology.nodes]]
name = "sw"
kind = "swich"
[[topology.nodes]]
name = "a"
[[topology.links]]
a = "a"
b = "nowhere"
rate_gbps = 10
[[topology.links]]
a = "a"
b = "sw"
rate_gbps = 5000
delay_nss = 3
loss = 2
)");
  const auto& p = l.problems;
  EXPECT_TRUE(has(p, "topology.nodes[1].kind=swich: expected one of: host, switch (line 7)"))
      << all(p);
  EXPECT_TRUE(has(p, "topology.nodes[2].name='a': duplicate node name (line 9)")) << all(p);
  EXPECT_TRUE(has(p, "topology.links[0].b='nowhere': no node with this name (line 12)")) << all(p);
  EXPECT_TRUE(has(p, "topology.links[1].rate_gbps=5000: out of range")) << all(p);
  EXPECT_TRUE(has(p, "(line 17)")) << all(p);
  EXPECT_TRUE(has(p, "topology.links[1].delay_nss=3: unknown key (line 18)")) << all(p);
  EXPECT_TRUE(has(p, "topology.links[1].loss=2: out of range [0, 0.5] (line 19)")) << all(p);
  EXPECT_EQ(p.size(), 6u) << all(p);
}

TEST(TopologyConfig, HostsWithoutARouteAreReported) {
  const auto l = load(R"(
[topology]
[[topology.nodes]]
name = "a"
[[topology.nodes]]
name = "b"
[[topology.nodes]]
name = "s1"
kind = "switch"
[[topology.nodes]]
name = "s2"
kind = "switch"
[[topology.links]]
a = "a"
b = "s1"
rate_gbps = 10
[[topology.links]]
a = "b"
b = "s2"
rate_gbps = 10
)");
  EXPECT_TRUE(has(l.problems, "no route between hosts a->b")) << all(l.problems);
  EXPECT_TRUE(has(l.problems, "no route between hosts b->a")) << all(l.problems);
}

TEST(TopologyConfig, HostWithTwoLinksIsRejected) {
  const auto l = load(R"(
[topology]
[[topology.nodes]]
name = "a"
[[topology.nodes]]
name = "b"
[[topology.links]]
a = "a"
b = "b"
rate_gbps = 10
[[topology.links]]
a = "a"
b = "b"
rate_gbps = 10
)");
  EXPECT_TRUE(
      has(l.problems, "topology.nodes.a: a host has exactly one port (one link), this one has 2"))
      << all(l.problems);
}

TEST(TopologyConfig, UnknownGeneratorAndBadClosShapeAreErrors) {
  EXPECT_TRUE(
      has(load("[topology]\nkind = \"ring\"\n").problems, "topology.kind=ring: expected one of"));
  EXPECT_TRUE(has(load("[topology]\nkind = \"clos\"\nhosts = 10\nleaves = 4\n").problems,
                  "must be a positive multiple of leaves"));
}

TEST(TopologyConfig, FatTreeGeneratorFromToml) {
  const auto l = load(R"(
[topology]
kind = "fattree"
k = 4
host_rate_gbps = 25
core_delay_ns = 500
)");
  ASSERT_TRUE(l.problems.empty()) << all(l.problems);
  const Topology& t = l.spec.topology;
  EXPECT_EQ(t.hosts().size(), 16u);
  EXPECT_EQ(t.switches().size(), 20u);
  ASSERT_EQ(l.spec.links.size(), 48u);
  EXPECT_EQ(t.link_of(PortRef{0, 0}).rate_bps, 25 * kBpsPerGbps);
  EXPECT_EQ(t.path_info(0, 15).delay_ns, 4 * 1000 + 2 * 500);
  EXPECT_TRUE(has(load("[topology]\nkind = \"fattree\"\nk = 5\n").problems,
                  "topology.k=5: k (5) must be even"));
  EXPECT_TRUE(
      has(load("[topology]\nkind = \"fattree\"\nk = 28\n").problems, "5488 hosts, more than 4096"));
  EXPECT_TRUE(has(load("[topology]\nkind = \"fattree\"\nk = 66\n").problems,
                  "topology.k=66: out of range"));
}

TEST(TopologyConfig, ClosLinkFailuresFromTheTable) {
  const auto l = load(
      "[topology]\nkind = \"clos\"\ndown_links = [\"leaf2-spine0\"]\nfailed_links = "
      "1\nfailure_seed = 7\n");
  ASSERT_TRUE(l.problems.empty()) << all(l.problems);
  ASSERT_EQ(l.spec.links_down.size(), 2u);
  EXPECT_EQ(l.spec.links_down[0], "leaf2-spine0");
  int down = 0;
  for (const auto& link : l.spec.topology.links()) down += link.up ? 0 : 1;
  EXPECT_EQ(down, 2);
  EXPECT_TRUE(has(load("[topology]\nkind = \"clos\"\ndown_links = [\"leaf0-spine7\"]\n").problems,
                  "topology.down_links"));
  EXPECT_TRUE(has(load("[topology]\nkind = \"clos\"\nfailed_links = 6\n").problems,
                  "without cutting hosts off"));
}

}  // namespace rocemu::fabric
