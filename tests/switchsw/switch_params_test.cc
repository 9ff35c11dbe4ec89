// switch_params_test.cc — [switch] parsing: defaults, every problem reported with its path,
// ECN profiles from configs/ecn/ scaled by port bandwidth. Runs from the project root.
#include "switchsw/switch_params.h"

#include <gtest/gtest.h>

namespace rocemu::sw {
namespace {

SwitchParams parse(const std::string& text, ConfigErrors& errs) {
  const toml::table t = toml::parse(text);
  ConfigReader root(t, "", errs);
  auto sw = root.table("switch");
  if (!sw) return {};
  return parse_switch_params(*sw);
}

TEST(SwitchParams, DefaultFileGivesLosslessRdmaAndStrictControl) {
  ConfigErrors errs;
  const toml::table t = parse_toml_file("configs/switch/default.toml");
  ConfigReader root(t, "", errs);
  auto sw = root.table("switch");
  ASSERT_TRUE(sw.has_value());
  const SwitchParams p = parse_switch_params(*sw);
  ASSERT_TRUE(errs.empty()) << errs.format("default.toml");
  EXPECT_EQ(p.buffer_bytes, 32u << 20);
  EXPECT_EQ(p.lossless_mask(), 1u << 3);
  EXPECT_EQ(p.control_mask(), 1u << 6);
  EXPECT_EQ(p.dscp_map()[26], 3);
  EXPECT_EQ(p.dscp_map()[48], 6);
  EXPECT_EQ(p.dscp_map()[0], 0);
  EXPECT_EQ(p.ecn_for_port(0, 100 * kBpsPerGbps), (EcnSetting{5 * 1024, 200 * 1024, 0.01}));
}

// The automatic headroom slack is three frames of the largest size on the links (at least
// 1536 bytes each, the old fixed 4,608 bytes); headroom_slack_bytes, when given, is used as is
// (0 included).
TEST(SwitchParams, HeadroomSlackIsThreeFramesOfTheMtuUnlessGiven) {
  ConfigErrors errs;
  SwitchParams p = parse("[switch]\nbuffer_mb = 4\n", errs);
  ASSERT_TRUE(errs.empty()) << errs.format("t");
  EXPECT_EQ(p.headroom_slack_bytes, SwitchParams::kAutoSlack);
  EXPECT_EQ(p.slack_bytes(), 3u * 1536);
  p.max_frame_bytes = max_frame_bytes_for_mtu(1024);
  EXPECT_EQ(p.slack_bytes(), 3u * 1536) << "frames of MTU 1024 fit in 1536 bytes";
  p.max_frame_bytes = max_frame_bytes_for_mtu(4096);
  EXPECT_EQ(p.slack_bytes(), 3u * (4096 + 128));
  SwitchParams given = parse("[switch]\nheadroom_slack_bytes = 0\n", errs);
  ASSERT_TRUE(errs.empty()) << errs.format("t");
  given.max_frame_bytes = max_frame_bytes_for_mtu(4096);
  EXPECT_EQ(given.slack_bytes(), 0u);
}

TEST(SwitchParams, PfcWatchdogTable) {
  ConfigErrors errs;
  EXPECT_FALSE(parse("[switch]\n", errs).pfc_watchdog.on()) << "off without the table";
  const SwitchParams d = parse("[switch.pfc_watchdog]\n", errs);
  EXPECT_EQ(d.pfc_watchdog.detection_ns, 200 * kNsPerMs);
  EXPECT_EQ(d.pfc_watchdog.restore_ns, 200 * kNsPerMs);
  const SwitchParams p =
      parse("[switch.pfc_watchdog]\ndetection_ms = 1.5\nrestore_ms = 10\n", errs);
  EXPECT_EQ(p.pfc_watchdog.detection_ns, 1'500'000);
  EXPECT_EQ(p.pfc_watchdog.restore_ns, 10 * kNsPerMs);
  EXPECT_FALSE(p.pfc_watchdog.drop) << "forward by default";
  EXPECT_TRUE(parse("[switch.pfc_watchdog]\naction = \"drop\"\n", errs).pfc_watchdog.drop);
  EXPECT_FALSE(parse("[switch.pfc_watchdog]\nenabled = false\n", errs).pfc_watchdog.on());
  ASSERT_TRUE(errs.empty()) << errs.format("t");
  ConfigErrors bad;
  parse("[switch.pfc_watchdog]\ndetection_ms = 0\naction = \"pause\"\ntypo = 1\n", bad);
  const std::string all = bad.format("t");
  EXPECT_NE(all.find("switch.pfc_watchdog.detection_ms=0"), std::string::npos) << all;
  EXPECT_NE(all.find("switch.pfc_watchdog.action=pause"), std::string::npos) << all;
  EXPECT_NE(all.find("switch.pfc_watchdog.typo"), std::string::npos) << all;
}

TEST(SwitchParams, PfcOffMakesEveryClassLossy) {
  ConfigErrors errs;
  const SwitchParams p = parse("[switch]\npfc = false\n", errs);
  ASSERT_TRUE(errs.empty()) << errs.format("t");
  EXPECT_EQ(p.lossless_mask(), 0);
}

TEST(SwitchParams, ReportsEveryProblemWithPathAndLine) {
  ConfigErrors errs;
  parse(
      "[switch]\nalpha = -1\nscheduler = \"wfq\"\ntypo = 3\n"
      "[[switch.classes]]\nname = \"a\"\npriority = 3\ndscp = [26]\nlossless = true\ncontrol = true\n"
      "[[switch.classes]]\nname = \"b\"\npriority = 3\ndscp = [26, 99]\n"
      "[switch.ecn]\nkmin_kb = 300\nkmax_kb = 200\n",
      errs);
  const std::string all = errs.format("t");
  EXPECT_NE(all.find("switch.alpha=-1: out of range"), std::string::npos) << all;
  EXPECT_NE(all.find("switch.scheduler=wfq: expected one of: dwrr, rr"), std::string::npos) << all;
  EXPECT_NE(all.find("switch.typo=3: unknown key (line 4)"), std::string::npos) << all;
  EXPECT_NE(all.find("switch.classes[0].control=true: a class cannot be both"), std::string::npos) << all;
  EXPECT_NE(all.find("switch.classes[1].priority=3: priority used by another class"), std::string::npos) << all;
  EXPECT_NE(all.find("switch.classes[1].dscp[1]=99: out of range"), std::string::npos) << all;
  EXPECT_NE(all.find("dscp 26 mapped twice"), std::string::npos) << all;
  EXPECT_NE(all.find("switch.ecn.kmin_kb=300: exceeds kmax_kb=200 ("), std::string::npos) << all;
  EXPECT_NE(all.find("switch.cnp_priority: priority 6 is not a control class"), std::string::npos) << all;  // no control class
}

TEST(SwitchParams, HpccProfileScalesWithPortBandwidth) {
  ConfigErrors errs;
  const SwitchParams p =
      parse("[switch]\necn_profile = \"configs/ecn/hpcc_alibaba.toml\"\n", errs);
  ASSERT_TRUE(errs.empty()) << errs.format("t");
  EXPECT_EQ(p.ecn_for_port(0, 25 * kBpsPerGbps), (EcnSetting{100 * 1024, 400 * 1024, 0.2}));
  EXPECT_EQ(p.ecn_for_port(0, 100 * kBpsPerGbps), (EcnSetting{400 * 1024, 1600 * 1024, 0.2}));
}

TEST(SwitchParams, DctcpProfileIsACutOffAtThirtyKbPerTenGbps) {
  ConfigErrors errs;
  const SwitchParams p = parse("[switch]\necn_profile = \"configs/ecn/dctcp.toml\"\n", errs);
  ASSERT_TRUE(errs.empty()) << errs.format("t");
  EXPECT_EQ(p.ecn_for_port(0, 40 * kBpsPerGbps), (EcnSetting{120 * 1024, 120 * 1024, 1.0}));
}

TEST(SwitchParams, DcqcnProfileAndPerPortOverride) {
  ConfigErrors errs;
  const SwitchParams p = parse(
      "[switch]\n[switch.ecn]\nkmin_kb = 5\nkmax_kb = 200\npmax = 0.01\n"
      "[[switch.ecn.ports]]\nport = 2\nkmin_kb = 10\nkmax_kb = 20\npmax = 0.5\n",
      errs);
  ASSERT_TRUE(errs.empty()) << errs.format("t");
  EXPECT_EQ(p.ecn_for_port(2, 25 * kBpsPerGbps), (EcnSetting{10 * 1024, 20 * 1024, 0.5}));
  EXPECT_EQ(p.ecn_for_port(1, 25 * kBpsPerGbps), (EcnSetting{5 * 1024, 200 * 1024, 0.01}));
  ConfigErrors errs2;
  const SwitchParams d = parse("[switch]\necn_profile = \"configs/ecn/dcqcn.toml\"\n", errs2);
  ASSERT_TRUE(errs2.empty()) << errs2.format("t");
  EXPECT_EQ(d.ecn_for_port(0, 100 * kBpsPerGbps), (EcnSetting{5 * 1024, 200 * 1024, 0.01}));
}

TEST(SwitchParams, MissingProfileIsAConfigError) {
  ConfigErrors errs;
  parse("[switch]\necn_profile = \"configs/ecn/nope.toml\"\n", errs);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_NE(errs.problems()[0].find("switch.ecn_profile"), std::string::npos);
}

}  // namespace
}  // namespace rocemu::sw
