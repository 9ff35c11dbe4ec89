#include "common/config.h"

#include <gtest/gtest.h>

namespace rocemu {

namespace {
toml::table parse(std::string_view s) { return toml::parse(s); }
}  // namespace

TEST(Config, ReadsTypedValuesWithDefaults) {
  auto t = parse("a = 3\nb = 2.5\nc = true\nd = \"x\"\n");
  ConfigErrors errs;
  ConfigReader r(t, "", errs);
  EXPECT_EQ(r.integer("a", 0, 0, 10), 3);
  EXPECT_DOUBLE_EQ(r.number("b", 0, 0, 10), 2.5);
  EXPECT_TRUE(r.boolean("c", false));
  EXPECT_EQ(r.string("d", ""), "x");
  EXPECT_EQ(r.integer("missing", 7, 0, 10), 7);
  r.finish();
  EXPECT_TRUE(errs.empty()) << errs.format("t");
}

TEST(Config, ReportsEveryProblemWithPathValueReasonAndLine) {
  auto t = parse("[switch]\nbuffer_mb = 900\nkmin_kb = \"five\"\ntypo = 1\n");
  ConfigErrors errs;
  ConfigReader root(t, "", errs);
  auto sw = root.table("switch");
  ASSERT_TRUE(sw.has_value());
  sw->integer("buffer_mb", 32, 1, 512);
  sw->integer("kmin_kb", 5, 0, 100000);
  sw->finish();
  root.finish();
  ASSERT_EQ(errs.size(), 3u);
  EXPECT_EQ(errs.problems()[0], "switch.buffer_mb=900: out of range [1, 512] (line 2)");
  EXPECT_EQ(errs.problems()[1], "switch.kmin_kb='five': expected an integer (line 3)");
  EXPECT_EQ(errs.problems()[2], "switch.typo=1: unknown key (line 4)");
}

TEST(Config, ArraysOfTablesCarryTheirIndexInThePath) {
  auto t = parse("[[links]]\na = \"h0\"\n[[links]]\na = 5\n");
  ConfigErrors errs;
  ConfigReader root(t, "", errs);
  auto links = root.tables("links");
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].required_string("a"), "h0");
  links[1].required_string("a");
  links[1].required_number("rate_gbps", 0.001, 1000);
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_EQ(errs.problems()[0], "links[1].a=5: expected a string (line 4)");
  EXPECT_EQ(errs.problems()[1], "links[1].rate_gbps: required key is missing (line 3)");
}

TEST(Config, StringChoicesAreListed) {
  auto t = parse("mode = \"fast\"\n");
  ConfigErrors errs;
  ConfigReader r(t, "", errs);
  EXPECT_EQ(r.string("mode", "a", {"a", "b"}), "a");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs.problems()[0], "mode=fast: expected one of: a, b (line 1)");
}

TEST(Config, NumbersInMessagesReadAsWritten) {
  EXPECT_EQ(format_number(200.0), "200");
  EXPECT_EQ(format_number(0.01), "0.01");
  EXPECT_EQ(format_number(1e-9), "1e-09");
  EXPECT_EQ(format_number(-5.5), "-5.5");
  EXPECT_EQ(format_number(2.0 / 3.0), "0.6666666666666666") << "round-trips, not 6 digits";
}

TEST(Config, MissingFileIsAClearError) {
  try {
    parse_toml_file("/nonexistent/rocemu.toml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/rocemu.toml: cannot read"), std::string::npos);
  }
}

}  // namespace rocemu
