// The PCI port checks of the real-time engine (fabric/port_info.h) and the run-file side of
// hardware runs (rate_gbps = "port", [testbed] hardware_pfc): pure, no NIC needed.
#include "fabric/port_info.h"

#include <gtest/gtest.h>

#include "fabric/run_config.h"

namespace rocemu::fabric {

namespace {
PortInfo good_port() {
  PortInfo p;
  p.device = "0000:03:00.0";
  p.driver = "net_ice";
  p.link_up = true;
  p.speed_mbps = 25000;
  p.full_duplex = true;
  p.max_mtu_bytes = 9702;
  p.mtu_bytes = 1088;
  return p;
}

// h0 -- s0 -- h1, the s0-h1 link at `rate`, 200 us of delay on both (large auto headroom).
std::string two_hosts_one_switch(const std::string& rate, const std::string& ports) {
  return R"(
[topology]
[[topology.nodes]]
name = "h0"
[[topology.nodes]]
name = "h1"
[[topology.nodes]]
name = "s0"
kind = "switch"
[[topology.links]]
a = "s0"
b = "h0"
rate_gbps = 10
delay_ns = 200000
a_dev = "0000:00:04.0"
b_dev = "0000:00:05.0"
[[topology.links]]
a = "s0"
b = "h1"
rate_gbps = )" +
         rate + R"(
delay_ns = 200000
[testbed]
ports = ")" +
         ports + "\"\n";
}

std::string problems_of(const std::string& text) {
  try {
    parse_run_config(toml::parse(text), "hw.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return {};
}
}  // namespace

TEST(PortInfo, EthernetMtuIsTheIbMtuPlusTheRoceHeadersBelowEthernet) {
  // IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ImmDt 4 + ICRC 4 = 64 (IBTA vol. 1 9.2, RoCEv2 A17).
  EXPECT_EQ(eth_mtu_for_ib_mtu(1024), 1088u);
  EXPECT_EQ(eth_mtu_for_ib_mtu(4096), 4160u);
  EXPECT_EQ(eth_mtu_for_ib_mtu(256), 320u);
}

TEST(PortInfo, AGoodPortIsAccepted) {
  EXPECT_EQ(check_port(good_port(), 4160, true), "");
  EXPECT_EQ(port_rate_bps(good_port()), 25'000'000'000u);
}

TEST(PortInfo, APortWithoutLinkIsRefusedWithTheReason) {
  PortInfo p = good_port();
  p.link_up = false;
  const std::string why = check_port(p, 1088, false);
  EXPECT_NE(why.find("port 0000:03:00.0 (net_ice): no link"), std::string::npos) << why;
  EXPECT_EQ(port_rate_bps(p), 0u);  // a down port has no rate, whatever it last reported
}

TEST(PortInfo, AnMtuLimitBelowTheRunsIsRefused) {
  PortInfo p = good_port();
  p.max_mtu_bytes = 1500;
  EXPECT_EQ(check_port(p, 1500, false), "");  // exactly enough is enough
  const std::string why = check_port(p, 4160, false);
  EXPECT_NE(why.find("MTU limit 1500 bytes is below the 4160 this run needs"), std::string::npos)
      << why;
}

TEST(PortInfo, RateFromThePortNeedsAReportedSpeed) {
  PortInfo p = good_port();
  p.speed_mbps = kSpeedUnknownMbps;           // virtio without the speed feature
  EXPECT_EQ(check_port(p, 1088, false), "");  // a numeric rate_gbps does not need it
  const std::string why = check_port(p, 1088, true);
  EXPECT_NE(why.find("reports no speed (unknown)"), std::string::npos) << why;
  EXPECT_EQ(port_rate_bps(p), 0u);
  p.speed_mbps = 0;
  EXPECT_NE(check_port(p, 1088, true).find("reports no speed (none)"), std::string::npos);
}

TEST(PortInfo, DescriptionNamesDriverSpeedLinkMtuPfcAndOffloads) {
  PortInfo p = good_port();
  p.pfc = "software";
  p.rx_offloads = "VLAN_STRIP IPV4_CKSUM";
  EXPECT_EQ(
      describe_port(p),
      "port 0000:03:00.0: driver net_ice, link up, speed 25 Gbps full duplex, MTU 1088 "
      "(limit 9702), PFC software\n  offloads rx: VLAN_STRIP IPV4_CKSUM\n  offloads tx: none");
  p.speed_mbps = 2500;
  EXPECT_NE(describe_port(p).find("speed 2500 Mbps"), std::string::npos);
  EXPECT_EQ(pci_ports_text({}), "");
  EXPECT_EQ(
      pci_ports_text({"a\n  b"}),
      "  PCI ports (as run: MTU set, rate_gbps = \"port\" from the speed, PFC):\n    a\n      b\n");
}

TEST(PortRate, RateGbpsPortIsReadAndGivenAProvisionalRate) {
  const RunConfig c =
      parse_run_config(toml::parse(two_hosts_one_switch("\"port\"", "pci")), "hw.toml");
  ASSERT_EQ(c.topology.links.size(), 2u);
  EXPECT_FALSE(c.topology.links[0].rate_from_port);
  EXPECT_EQ(c.topology.topology.links()[0].rate_bps, 10'000'000'000u);
  EXPECT_TRUE(c.topology.links[1].rate_from_port);
  EXPECT_EQ(c.topology.topology.links()[1].rate_bps, kPortRateProvisionalBps);
  EXPECT_EQ(check_rate_from_port(c, true), "");
}

TEST(PortRate, AnyOtherWordIsAnError) {
  const std::string p = problems_of(two_hosts_one_switch("\"fast\"", "pci"));
  EXPECT_NE(p.find("rate_gbps"), std::string::npos) << p;
  EXPECT_NE(p.find("a rate in Gbps, or \"port\""), std::string::npos) << p;
}

TEST(PortRate, NeedsTheRealTimeEngineOnPciPorts) {
  const RunConfig ring =
      parse_run_config(toml::parse(two_hosts_one_switch("\"port\"", "ring")), "hw.toml");
  EXPECT_NE(check_rate_from_port(ring, true).find("needs [testbed] ports = \"pci\" (not ring)"),
            std::string::npos);
  const RunConfig pci =
      parse_run_config(toml::parse(two_hosts_one_switch("\"port\"", "pci")), "hw.toml");
  EXPECT_NE(check_rate_from_port(pci, false).find("runs in real time only"), std::string::npos);
  const RunConfig numeric =
      parse_run_config(toml::parse(two_hosts_one_switch("25", "ring")), "hw.toml");
  EXPECT_EQ(check_rate_from_port(numeric, false), "");
}

TEST(PortRate, ReportedRatesReplaceTheProvisionalOnesAndAreCheckedAgain) {
  const RunConfig c =
      parse_run_config(toml::parse(two_hosts_one_switch("\"port\"", "pci")), "hw.toml");
  const RunConfig r = with_link_rates(c, {10'000'000'000u, 25'000'000'000u});
  EXPECT_EQ(r.topology.topology.links()[1].rate_bps, 25'000'000'000u);
  EXPECT_EQ(c.topology.topology.links()[1].rate_bps, kPortRateProvisionalBps);  // a copy
  // 1 Tbps with 200 us of delay: the auto headroom (2 x rate x delay) outgrows the 32 MB.
  try {
    with_link_rates(c, {10'000'000'000u, 1'000'000'000'000u});
    FAIL() << "a buffer too small for the reported rate was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("switch s0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("with the ports' rates"), std::string::npos) << e.what();
  }
  EXPECT_THROW(with_link_rates(c, {1}), std::invalid_argument);
}

TEST(PortRate, PciRunsSetTheMtuAndAskForHardwarePfcOnTheLosslessPriorities) {
  std::string text =
      two_hosts_one_switch("\"port\"", "pci") + "hardware_pfc = true\n[nic]\nmtu_bytes = 4096\n";
  const RunConfig c = parse_run_config(toml::parse(text), "hw.toml");
  EXPECT_TRUE(c.testbed.hardware_pfc);
  const RealtimeOptions o = realtime_options(c);
  EXPECT_EQ(o.backend, PortBackend::kPci);
  EXPECT_EQ(o.pci_mtu_bytes, 4160u);
  EXPECT_TRUE(o.hardware_pfc);
  EXPECT_EQ(o.pfc_priorities, c.switch_params.lossless_mask());
  EXPECT_NE(o.pfc_priorities, 0);
  const RealtimeOptions ring = realtime_options(
      parse_run_config(toml::parse(two_hosts_one_switch("25", "ring")), "hw.toml"));
  EXPECT_EQ(ring.pci_mtu_bytes, 0u);  // vdevs keep their own MTU
  EXPECT_FALSE(ring.hardware_pfc);
}

}  // namespace rocemu::fabric

namespace rocemu::fabric {

// The shipped hardware runs (configs/hw/): valid, on PCI ports, every link at the port's rate.
TEST(PortRate, TheHardwareConfigsLoadWithEveryLinkAtThePortsRate) {
  for (const char* name : {"loopback.toml", "loopback_switch.toml", "loopback_workload.toml"}) {
    SCOPED_TRACE(name);
    const RunConfig c = load_run_config(std::string(ROCEMU_SOURCE_ROOT) + "/configs/hw/" + name);
    EXPECT_EQ(c.testbed.backend, PortBackend::kPci);
    EXPECT_EQ(check_rate_from_port(c, true), "");
    for (const auto& l : c.topology.links) {
      EXPECT_TRUE(l.rate_from_port);
      EXPECT_FALSE(l.a_dev.empty());
      EXPECT_FALSE(l.b_dev.empty());
    }
    EXPECT_EQ(realtime_options(c).pci_mtu_bytes, 4160u);
  }
}

}  // namespace rocemu::fabric
