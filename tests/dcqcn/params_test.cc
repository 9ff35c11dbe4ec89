// params_test.cc — [dcqcn] TOML parsing, validation, line-rate scaling, the two profiles.
#include <gtest/gtest.h>

#include "nic/dcqcn/dcqcn_params.h"

namespace rocemu::dcqcn {
namespace {

DcqcnParams parse(std::string_view text, ConfigErrors& errs) {
  static toml::table t;  // ConfigReader keeps a pointer; keep the table alive per call
  t = toml::parse(text);
  ConfigReader root(t, "", errs);
  auto d = root.table("dcqcn");
  DcqcnParams p;
  if (d) p = parse_dcqcn_params(*d);
  root.finish();
  return p;
}

TEST(DcqcnParams, PaperProfileFileHasThePaperValues) {
  const DcqcnProfile prof = load_dcqcn_profile("configs/dcqcn/paper.toml");
  const DcqcnParams& p = prof.dcqcn;
  EXPECT_EQ(p.rate_increase_timer_us, 55);
  EXPECT_EQ(p.alpha_interval_us, 55);
  EXPECT_EQ(p.byte_counter_kb, 10240);
  EXPECT_DOUBLE_EQ(p.g, 1.0 / 256);
  EXPECT_EQ(p.cnp_interval_us, 50);
  EXPECT_DOUBLE_EQ(p.rate_ai_mbps, 40);
  EXPECT_EQ(p.fast_recovery_stages, 5);
  EXPECT_EQ(p.alpha_update, AlphaUpdate::kOnCnp);
  EXPECT_EQ(p.rate_decrease_interval_us, 0);
  ASSERT_TRUE(prof.ecn.has_value());
  EXPECT_EQ(prof.ecn->kmin_bytes, 5u * 1024);
  EXPECT_EQ(prof.ecn->kmax_bytes, 200u * 1024);
  EXPECT_DOUBLE_EQ(prof.ecn->pmax, 0.01);
}

TEST(DcqcnParams, HpccMellanoxProfileFileHasTheSimulatorValues) {
  const DcqcnProfile prof = load_dcqcn_profile("configs/dcqcn/hpcc_mellanox.toml");
  const DcqcnConfig c = make_dcqcn_config(prof.dcqcn, 100 * kBpsPerGbps);
  EXPECT_EQ(c.cnp_interval_ns, 0);  // congestion signalled in every marked packet's ACK
  EXPECT_EQ(c.alpha_update, AlphaUpdate::kPeriodic);
  EXPECT_EQ(c.alpha_interval_ns, 1'000);
  EXPECT_EQ(c.rate_decrease_interval_ns, 4'000);
  EXPECT_EQ(c.rate_increase_timer_ns, 300'000);
  EXPECT_EQ(c.byte_counter_bytes, 0u);
  EXPECT_EQ(c.fast_recovery_stages, 1u);
  EXPECT_DOUBLE_EQ(c.rate_ai_bps, 20e6);    // 5 Mbps x 100/25
  EXPECT_DOUBLE_EQ(c.rate_hai_bps, 200e6);  // 50 Mbps x 100/25
  EXPECT_DOUBLE_EQ(c.min_rate_bps, 1e9);
  EXPECT_FALSE(c.clamp_target_rate);
}

TEST(DcqcnParams, DefaultsAreThePaperProfile) {
  const DcqcnProfile prof = load_dcqcn_profile("configs/dcqcn/paper.toml");
  const DcqcnConfig a = make_dcqcn_config(prof.dcqcn, 25 * kBpsPerGbps);
  const DcqcnConfig b = make_dcqcn_config(DcqcnParams{}, 25 * kBpsPerGbps);
  EXPECT_EQ(a.rate_increase_timer_ns, b.rate_increase_timer_ns);
  EXPECT_EQ(a.byte_counter_bytes, b.byte_counter_bytes);
  EXPECT_DOUBLE_EQ(a.rate_ai_bps, b.rate_ai_bps);
  EXPECT_DOUBLE_EQ(a.rate_hai_bps, b.rate_hai_bps);
  EXPECT_DOUBLE_EQ(a.min_rate_bps, b.min_rate_bps);
  EXPECT_EQ(a.cnp_interval_ns, b.cnp_interval_ns);
}

TEST(DcqcnParams, ReportsEveryProblemWithPathValueAndLine) {
  ConfigErrors errs;
  parse(
      "[dcqcn]\n"
      "g = 0\n"
      "alpha_update = \"sometimes\"\n"
      "cnp_dscp = 64\n"
      "rate_ai_mbps = 100\n"
      "rate_hai_mbps = 50\n"
      "byte_counter_kb = -1\n"
      "timer_us = 55\n",
      errs);
  ASSERT_EQ(errs.size(), 6u) << errs.format("t");
  // In the order the parser reads the keys.
  EXPECT_EQ(errs.problems()[0], "dcqcn.cnp_dscp=64: out of range [0, 63] (line 4)");
  EXPECT_EQ(errs.problems()[1], "dcqcn.g=0: out of range [1e-09, 1] (line 2)");
  EXPECT_EQ(errs.problems()[2],
            "dcqcn.alpha_update=sometimes: expected one of: on_cnp, periodic (line 3)");
  EXPECT_EQ(errs.problems()[3], "dcqcn.byte_counter_kb=-1: out of range [0, 1073741824] (line 7)");
  EXPECT_EQ(errs.problems()[4],
            "dcqcn.rate_hai_mbps=50: below rate_ai_mbps=100 (hyper increase must not be "
            "slower) (line 6)");
  EXPECT_EQ(errs.problems()[5], "dcqcn.timer_us=55: unknown key (line 8)");
}

TEST(DcqcnParams, MinimumRateAboveLineRateIsRefused) {
  DcqcnParams p;
  p.min_rate_mbps = 2000;
  EXPECT_THROW(make_dcqcn_config(p, 1 * kBpsPerGbps), ConfigError);
  EXPECT_THROW(make_dcqcn_config(DcqcnParams{}, 0), ConfigError);
  EXPECT_NO_THROW(make_dcqcn_config(p, 25 * kBpsPerGbps));
}

TEST(DcqcnParams, EcnReferenceTableIsChecked) {
  const toml::table t = toml::parse("[ecn]\nkmin_kb = 300\nkmax_kb = 200\npmax = 0\n");
  ConfigErrors errs;
  ConfigReader root(t, "", errs);
  auto e = root.table("ecn");
  ASSERT_TRUE(e.has_value());
  parse_ecn_reference(*e);
  ASSERT_EQ(errs.size(), 2u) << errs.format("t");
  EXPECT_EQ(errs.problems()[0], "ecn.kmin_kb=300: exceeds kmax_kb=200 (line 2)");
  EXPECT_EQ(errs.problems()[1], "ecn.pmax=0: must be in (0, 1] (line 4)");
}

TEST(DcqcnParams, ProfileLoaderNamesTheFileAndRejectsUnknownTables) {
  try {
    load_dcqcn_profile("configs/dcqcn/does_not_exist.toml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("does_not_exist.toml"), std::string::npos);
  }
}

}  // namespace
}  // namespace rocemu::dcqcn
