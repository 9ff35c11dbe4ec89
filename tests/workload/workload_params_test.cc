// workload_params_test.cc — the [workload] TOML table: values, defaults and every problem
// reported as path=value: reason (line N); host-dependent checks; bad CDF files.
#include "fabric/workload/workload_params.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "fabric/workload/flow_generator.h"

namespace rocemu::workload {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Parsed {
  WorkloadParams p;
  std::vector<std::string> problems;
};

Parsed parse(std::string_view text) {
  const toml::table t = toml::parse(text);
  ConfigErrors errs;
  ConfigReader root(t, "", errs);
  Parsed out;
  auto w = root.table("workload");
  if (w) out.p = parse_workload_params(*w);
  root.finish();
  out.problems = errs.problems();
  return out;
}

TEST(WorkloadParams, ReadsEveryKey) {
  const auto r = parse(R"([workload]
cdf_file = "configs/workloads/WebSearch_distribution.txt"
load = 0.6
start_us = 10
duration_us = 25000
op = "send"
seed_offset = 3
[workload.incast]
senders = 8
size_bytes = 65536
mode = "periodic"
period_us = 500
offset_us = 1.5
receiver = 2
)");
  ASSERT_TRUE(r.problems.empty()) << r.problems.front();
  EXPECT_EQ(r.p.cdf_file, "configs/workloads/WebSearch_distribution.txt");
  EXPECT_DOUBLE_EQ(r.p.load, 0.6);
  EXPECT_EQ(r.p.start_ns, 10'000);
  EXPECT_EQ(r.p.duration_ns, 25'000'000);
  EXPECT_EQ(r.p.stop_ns(), 25'010'000);
  EXPECT_EQ(r.p.op, FlowOp::kSend);
  EXPECT_EQ(r.p.seed_offset, 3u);
  ASSERT_TRUE(r.p.incast.has_value());
  EXPECT_EQ(r.p.incast->senders, 8u);
  EXPECT_EQ(r.p.incast->size_bytes, 65536u);
  EXPECT_EQ(r.p.incast->mode, IncastMode::kPeriodic);
  EXPECT_EQ(r.p.incast->period_ns, 500'000);
  EXPECT_EQ(r.p.incast->offset_ns, 1'500);
  EXPECT_EQ(r.p.incast->receiver, 2);
}

TEST(WorkloadParams, DefaultsAndPoissonIncast) {
  const auto r = parse(R"([workload]
cdf_file = "x.txt"
duration_us = 100
[workload.incast]
senders = 2
size_bytes = 1000
mode = "poisson"
rate_hz = 250.5
)");
  ASSERT_TRUE(r.problems.empty()) << r.problems.front();
  EXPECT_DOUBLE_EQ(r.p.load, 0.5);
  EXPECT_EQ(r.p.start_ns, 0);
  EXPECT_EQ(r.p.op, FlowOp::kWrite);
  EXPECT_EQ(r.p.seed_offset, 0u);
  EXPECT_EQ(r.p.incast->mode, IncastMode::kPoisson);
  EXPECT_DOUBLE_EQ(r.p.incast->rate_hz, 250.5);
  EXPECT_EQ(r.p.incast->receiver, -1);
}

TEST(WorkloadParams, ReportsEveryProblemWithPathValueAndLine) {
  const auto r = parse(R"([workload]
load = 1.5
cdf_file = "x.txt"
op = "read"
typo = 1
[workload.incast]
senders = 0
size_bytes = 1000
period_us = 100
rate_hz = 5
)");
  EXPECT_THAT(r.problems,
              ElementsAre("workload.load=1.5: out of range [0, 1] (line 2)",
                          "workload.duration_us: required key is missing (line 1)",
                          "workload.op=read: expected one of: write, send (line 4)",
                          "workload.incast.senders=0: out of range [1, 65535] (line 7)",
                          "workload.incast.rate_hz=5: only for mode = \"poisson\" (periodic uses "
                          "period_us) (line 10)",
                          "workload.typo=1: unknown key (line 5)"));
}

TEST(WorkloadParams, AnIncastLargerThanOneRdmaMessageIsRefused) {
  const auto r = parse(
      "[workload]\nload = 0\nduration_us = 10\n[workload.incast]\nsenders = 2\n"
      "size_bytes = 1099511627776\nperiod_us = 100\n");
  EXPECT_THAT(r.problems, ElementsAre("workload.incast.size_bytes=1099511627776: out of range "
                                      "[1, 2147483648] (line 6)"));
  EXPECT_TRUE(parse("[workload]\nload = 0\nduration_us = 10\n[workload.incast]\nsenders = 2\n"
                    "size_bytes = 2147483648\nperiod_us = 100\n")
                  .problems.empty());
}

TEST(WorkloadParams, CdfFileIsRequiredOnlyWithBackgroundLoad) {
  auto r = parse("[workload]\nload = 0.3\nduration_us = 10\n");
  EXPECT_THAT(r.problems, ElementsAre("workload.cdf_file: required key is missing (line 1)"));
  r = parse("[workload]\nload = 0\nduration_us = 10\n");
  EXPECT_TRUE(r.problems.empty());
}

// [workload.matrix] alone: no load, CDF or duration needed; its keys checked like the rest.
TEST(WorkloadParams, MatrixAloneNeedsNoLoadCdfOrDuration) {
  auto r = parse(
      "[workload]\n[workload.matrix]\npattern = \"all_to_all\"\nsize_bytes = 65536\n"
      "start_jitter_us = 2.5\n");
  ASSERT_TRUE(r.problems.empty()) << r.problems.front();
  EXPECT_EQ(r.p.load, 0.0);
  ASSERT_TRUE(r.p.matrix.has_value());
  EXPECT_EQ(r.p.matrix->pattern, MatrixPattern::kAllToAll);
  EXPECT_EQ(r.p.matrix->size_bytes, 65536u);
  EXPECT_EQ(r.p.matrix->start_jitter_ns, 2500);
  r = parse("[workload]\n[workload.matrix]\nsize_bytes = 10\n");
  ASSERT_TRUE(r.problems.empty());
  EXPECT_EQ(r.p.matrix->pattern, MatrixPattern::kPermutation) << "the default pattern";
  r = parse("[workload]\n[workload.matrix]\npattern = \"ring\"\ntypo = 1\n");
  EXPECT_THAT(r.problems,
              ElementsAre("workload.matrix.pattern=ring: expected one of: permutation, all_to_all "
                          "(line 3)",
                          "workload.matrix.size_bytes: required key is missing (line 2)",
                          "workload.matrix.typo=1: unknown key (line 4)"));
  WorkloadParams p;
  p.matrix = MatrixParams{};
  ConfigErrors errs;
  check_against_hosts(p, 1, "workload", errs);
  EXPECT_THAT(errs.problems(), ElementsAre("workload.matrix.pattern=permutation: needs at least 2 "
                                           "hosts, topology has 1"));
}

TEST(WorkloadParams, HostChecksNameTheKeyAndTheHostCount) {
  WorkloadParams p;
  p.load = 0.5;
  p.incast = IncastParams{.senders = 4, .size_bytes = 10, .receiver = 4};
  ConfigErrors errs;
  check_against_hosts(p, 4, "workload", errs);
  EXPECT_THAT(errs.problems(),
              ElementsAre("workload.incast.senders=4: exceeds hosts - 1 (topology has 4 hosts)",
                          "workload.incast.receiver=4: not a host index (topology has 4 hosts)"));
  WorkloadParams bg;
  bg.load = 0.2;
  ConfigErrors one;
  check_against_hosts(bg, 1, "workload", one);
  EXPECT_THAT(one.problems(),
              ElementsAre("workload.load=0.2: background flows need at least 2 hosts, "
                          "topology has 1"));
}

TEST(WorkloadConfig, BadCdfFileIsReportedWithFileAndLine) {
  const std::string path = ::testing::TempDir() + "workload_bad_cdf.txt";
  {
    std::ofstream f(path);
    f << "0 0\n100 60\n50 80\n200 100\n";
  }
  WorkloadParams p;
  p.load = 0.5;
  p.duration_ns = kNsPerMs;
  p.cdf_file = path;
  try {
    make_workload_config(p, {{0, 1'000'000'000}, {1, 1'000'000'000}});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path + ":3: flow size 50 decreases"));
  }
  std::remove(path.c_str());
}

TEST(WorkloadConfig, TooFewHostsIsReportedBeforeTheCdfIsRead) {
  WorkloadParams p;
  p.load = 0.5;
  p.duration_ns = kNsPerMs;
  p.cdf_file = "configs/workloads/NoSuchFile.txt";
  try {
    make_workload_config(p, {{0, 1'000'000'000}});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("workload.load=0.5: background flows need at least 2 hosts"));
  }
}

}  // namespace
}  // namespace rocemu::workload

namespace rocemu::workload {
namespace {

TEST(WorkloadParams, ShippedExampleParsesAndBuildsFor24Hosts) {
  const toml::table t = parse_toml_file("configs/workloads/example.toml");
  ConfigErrors errs;
  ConfigReader root(t, "", errs);
  auto w = root.table("workload");
  ASSERT_TRUE(w.has_value());
  const WorkloadParams p = parse_workload_params(*w);
  root.finish();
  ASSERT_TRUE(errs.empty()) << errs.format("example.toml");
  std::vector<HostSpec> hosts;
  for (uint32_t i = 0; i < 24; ++i) hosts.push_back({i, 25'000'000'000});
  const WorkloadConfig cfg = make_workload_config(p, hosts);
  ASSERT_TRUE(cfg.cdf);
  EXPECT_DOUBLE_EQ(cfg.cdf->mean_bytes(), 1711250.0);
  WorkloadGenerator g(cfg, 1);
  FlowSpec f;
  uint64_t incast = 0, background = 0;
  while (g.next(f)) ++(f.incast == kNotIncast ? background : incast);
  EXPECT_EQ(incast, 5u * 8u) << "events at 0, 5, 10, 15, 20 ms of 8 senders each";
  // 24 hosts x 0.6 * 25e9 / (8 * 1,711,250) flows/s x 25 ms = 657.4 flows, Poisson sd 25.6.
  EXPECT_NEAR(static_cast<double>(background), 657.4, 5 * 25.6);
}

}  // namespace
}  // namespace rocemu::workload
