// The testbed's switch process without EAL: the host plan the scripts build namespaces from
// (docs/testbed.md "Addressing"), which backends may face external nodes
// (fabric/realtime_engine.h), and the summary's CSV layout.
#include <gtest/gtest.h>

#include "common/topology_generators.h"
#include "fabric/switch_job.h"

namespace rocemu::fabric {

namespace {
RunConfig parse(std::string_view text) { return parse_run_config(toml::parse(text), "t.toml"); }
constexpr std::string_view kStar3 = R"(
[topology]
kind = "star"
hosts = 3
rate_gbps = 25
)";
}  // namespace

TEST(HostPlan, StarGivesEachHostItsTopologyAddressAndTheFacingSwitchPortMac) {
  const RunConfig c = parse(kStar3);
  const auto rows = host_plan(c);
  ASSERT_EQ(rows.size(), 3u);
  const Topology& t = c.topology.topology;
  for (uint32_t h = 0; h < 3; ++h) {
    const auto& r = rows[h];
    EXPECT_EQ(r.host, "h" + std::to_string(h));
    EXPECT_EQ(r.ipv4, t.node(h).ipv4);
    EXPECT_EQ(r.host_mac, t.node(h).ports[0].mac);
    const PortRef sw = t.node(h).ports[0].peer;
    EXPECT_EQ(r.gateway_mac, t.node(sw.node).ports[sw.port].mac);
    // Star: host i is the a end of link i, the switch the b end.
    EXPECT_EQ(r.host_dev, "re" + std::to_string(h) + "a");
    EXPECT_EQ(r.switch_dev, "re" + std::to_string(h) + "b");
    EXPECT_EQ(r.rate_bps, 25'000'000'000ull);
  }
  EXPECT_EQ(ipv4_to_string(rows[2].ipv4), "10.0.0.3");
  EXPECT_EQ(mac_to_string(rows[0].host_mac), "02:52:00:00:00:00");
  EXPECT_EQ(mac_to_string(rows[0].gateway_mac), "02:52:00:03:00:00");
}

TEST(HostPlan, TsvHasAHeaderAndOneTabSeparatedLinePerHost) {
  const std::string s = plan_tsv(host_plan(parse(kStar3)));
  EXPECT_EQ(s.substr(0, s.find('\n')),
            "host\tipv4\thost_mac\tgateway_mac\tswitch_dev\thost_dev\trate_bps");
  EXPECT_NE(
      s.find("\nh1\t10.0.0.2\t02:52:00:01:00:00\t02:52:00:03:00:01\tre1b\tre1a\t25000000000\n"),
      std::string::npos)
      << s;
}

TEST(HostPlan, ExplicitDeviceNamesAreUsedOnTheirLinkEnds) {
  const RunConfig c = parse(R"(
[topology]
[[topology.nodes]]
name = "sw"
kind = "switch"
[[topology.nodes]]
name = "alice"
ipv4 = "192.168.7.1"
[[topology.nodes]]
name = "bob"
[[topology.links]]
a = "sw"
b = "alice"
rate_gbps = 1
a_dev = "sw-alice"
b_dev = "alice0"
[[topology.links]]
a = "bob"
b = "sw"
rate_gbps = 1
[job]
from = "alice"
to = "bob"
)");
  const auto rows = host_plan(c);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].host, "alice");
  EXPECT_EQ(ipv4_to_string(rows[0].ipv4), "192.168.7.1");
  EXPECT_EQ(rows[0].switch_dev, "sw-alice");
  EXPECT_EQ(rows[0].host_dev, "alice0");
  EXPECT_EQ(rows[1].host_dev, "re1a");
  EXPECT_EQ(rows[1].switch_dev, "re1b");
}

TEST(HostPlan, HostLinkedToAHostIsAConfigurationError) {
  const RunConfig c = parse(R"(
[topology]
[[topology.nodes]]
name = "h0"
[[topology.nodes]]
name = "h1"
[[topology.links]]
a = "h0"
b = "h1"
rate_gbps = 10
)");
  try {
    host_plan(c);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("topology.nodes.h0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("needs every host linked to a switch"), std::string::npos);
  }
}

TEST(SwitchLinks, DumbbellHasOneSwitchToSwitchLinkAndStarNone) {
  const RunConfig c = parse(R"(
[topology]
kind = "dumbbell"
left_hosts = 1
right_hosts = 2
bottleneck_rate_gbps = 5
)");
  const auto rows = switch_links(c);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].link, 3u);
  EXPECT_EQ(rows[0].a_node, "s0");
  EXPECT_EQ(rows[0].b_node, "s1");
  EXPECT_EQ(rows[0].a_dev, "re3a");
  EXPECT_EQ(rows[0].b_dev, "re3b");
  EXPECT_EQ(rows[0].rate_bps, 5'000'000'000ull);
  EXPECT_EQ(switch_links_tsv(rows),
            "link\ta_node\tb_node\ta_dev\tb_dev\trate_bps\n3\ts0\ts1\tre3a\tre3b\t5000000000\n");
  EXPECT_EQ(host_plan(c).size(), 3u);
  EXPECT_TRUE(switch_links(parse(kStar3)).empty());
}

TEST(ExternalNodes, OnlyBackendsWithSeparateLinkEndsMayFaceAnotherProcess) {
  const RunConfig c = parse(kStar3);
  RealtimeOptions o;
  o.external_nodes = {true, false, false, false};
  for (auto b :
       {PortBackend::kAfPacket, PortBackend::kAfXdp, PortBackend::kTap, PortBackend::kPci}) {
    o.backend = b;
    EXPECT_EQ(check_external_nodes(c.topology.topology, o), "") << backend_name(b);
  }
  for (auto b : {PortBackend::kRing, PortBackend::kMemif}) {
    o.backend = b;
    const std::string why = check_external_nodes(c.topology.topology, o);
    EXPECT_NE(why.find("node h0 is external"), std::string::npos) << why;
    EXPECT_NE(why.find(std::string(backend_name(b)) + " ports create both ends"), std::string::npos)
        << why;
  }
  o.external_nodes.clear();
  EXPECT_EQ(check_external_nodes(c.topology.topology, o), "");  // none external: anything goes
  o.external_nodes = {true};
  EXPECT_NE(check_external_nodes(c.topology.topology, o).find("1 entries, the topology 4 nodes"),
            std::string::npos);
}

// One ethdev per link end in this process, at most RTE_MAX_ETHPORTS: a 16-host star fits,
// a 17-host star does not, unless the hosts are other processes' (their ends are not here).
TEST(PortBudget, LinkEndsInThisProcessMustFitRteMaxEthports) {
  RealtimeOptions o;
  const uint32_t max_links = max_ethdev_ports() / 2;
  const Topology fits = make_star(StarParams{max_links, 10 * kBpsPerGbps, 1000});
  EXPECT_EQ(check_port_count(fits, o), "");
  const Topology big = make_star(StarParams{max_links + 1, 10 * kBpsPerGbps, 1000});
  const std::string why = check_port_count(big, o);
  EXPECT_NE(why.find("links need " + std::to_string(2 * (max_links + 1)) + " DPDK ports"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("RTE_MAX_ETHPORTS"), std::string::npos) << why;
  o.backend = PortBackend::kAfPacket;
  o.external_nodes.assign(big.nodes().size(), false);
  for (uint32_t h : big.hosts()) o.external_nodes[h] = true;  // only the switch's ends here
  EXPECT_EQ(check_port_count(big, o), "");
}

TEST(SwitchSummary, CsvHasOneRowPerPortAndAColumnPerDropReason) {
  SwitchRunResult r;
  r.elapsed_ns = 5;
  SwitchPortStats p;
  p.node = "s0";
  p.port = 1;
  p.peer = "h1";
  p.dev = "re1b";
  p.rx_packets = 7;
  p.drops[static_cast<int>(sw::RxDrop::kNotIpv4)] = 3;
  r.ports.push_back(p);
  const std::string csv = switch_summary_csv(r);
  EXPECT_EQ(
      csv.substr(0, csv.find('\n')),
      "node,port,peer,dev,rx_packets,rx_bytes,tx_packets,tx_bytes,wire_drops,peak_queue_bytes,"
      "ecn_marked_packets,pfc_pauses_sent,pfc_pauses_received,drop_short,drop_not_ipv4,drop_bad_"
      "ihl,"
      "drop_bad_length,drop_bad_control,drop_unknown_dst,drop_ttl_expired,drop_buffer_full,"
      "drop_headroom_full,drop_pfc_watchdog,pfc_storms,mbuf_alloc_failures,elapsed_ns");
  EXPECT_NE(csv.find("\ns0,1,h1,re1b,7,0,0,0,0,0,0,0,0,0,3,0,0,0,0,0,0,0,0,0,0,5\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(switch_summary_text(r).find("not_ipv4=3"), std::string::npos);
}

}  // namespace rocemu::fabric
