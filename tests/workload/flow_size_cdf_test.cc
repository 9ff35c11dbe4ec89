// flow_size_cdf_test.cc — piecewise-linear CDFs: exact means, interpolation, inverse
// sampling against the closed form, and malformed files reported with file:line.
#include "fabric/workload/flow_size_cdf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/config.h"

namespace rocemu::workload {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kDir = "configs/workloads/";

TEST(FlowSizeCdf, MeanIsTheTrapezoidRuleAndMatchesHpccMeans) {
  // SOURCES.md (HPCC CustomRand.getAvg): FbHdp 120,421 B, WebSearch 1,711,250 B,
  // AliStorage 40,870 B. The exact sums are 120,420.75 and 40,869.8 before rounding.
  const auto fb = FlowSizeCdf::load(kDir + "FbHdp_distribution.txt");
  const auto ws = FlowSizeCdf::load(kDir + "WebSearch_distribution.txt");
  const auto ali = FlowSizeCdf::load(kDir + "AliStorage2019.txt");
  EXPECT_NEAR(fb.mean_bytes(), 120420.75, 1e-6);
  EXPECT_NEAR(ws.mean_bytes(), 1711250.0, 1e-6);
  EXPECT_NEAR(ali.mean_bytes(), 40869.8, 1e-6);
  EXPECT_EQ(std::llround(fb.mean_bytes()), 120421);
  EXPECT_EQ(std::llround(ws.mean_bytes()), 1711250);
  EXPECT_EQ(std::llround(ali.mean_bytes()), 40870);
}

TEST(FlowSizeCdf, MomentsOfHandCdfWithPointMass) {
  // 20% point mass at 10 B, then uniform on [10, 30] with 80%:
  // mean = 0.2*10 + 0.8*20 = 18; E[X^2] = 0.2*100 + 0.8*(100+300+900)/3 = 20 + 346.67.
  const auto c = FlowSizeCdf::parse("10 20\n30 100\n", "hand");
  EXPECT_DOUBLE_EQ(c.mean_bytes(), 18.0);
  const double ex2 = 20.0 + 0.8 * 1300.0 / 3.0;
  EXPECT_NEAR(c.stddev_bytes(), std::sqrt(ex2 - 18.0 * 18.0), 1e-9);
  EXPECT_DOUBLE_EQ(c.quantile(0.0), 10.0);
  EXPECT_DOUBLE_EQ(c.quantile(0.2), 10.0);
  EXPECT_DOUBLE_EQ(c.quantile(0.6), 20.0);
  EXPECT_DOUBLE_EQ(c.cdf_at(9.99), 0.0);
  EXPECT_DOUBLE_EQ(c.cdf_at(10.0), 0.2);
}

TEST(FlowSizeCdf, InterpolatesLinearlyBetweenKnotsAndInvertsExactly) {
  const auto c = FlowSizeCdf::parse("0 0\n100 50\n300 100\n", "hand");
  EXPECT_DOUBLE_EQ(c.mean_bytes(), 0.5 * 50 + 0.5 * 200);
  EXPECT_DOUBLE_EQ(c.cdf_at(50), 0.25);
  EXPECT_DOUBLE_EQ(c.cdf_at(100), 0.5);
  EXPECT_DOUBLE_EQ(c.cdf_at(200), 0.75);
  EXPECT_DOUBLE_EQ(c.cdf_at(1e9), 1.0);
  EXPECT_DOUBLE_EQ(c.quantile(0.25), 50);
  EXPECT_DOUBLE_EQ(c.quantile(0.75), 200);
  EXPECT_DOUBLE_EQ(c.quantile(1.0), 300);
  for (double p = 0.01; p < 1.0; p += 0.01) EXPECT_NEAR(c.cdf_at(c.quantile(p)), p, 1e-12);
}

TEST(FlowSizeCdf, QuantilesStayInsideTheirSegmentDespiteRounding) {
  // Found by fuzz_cdf: (b - a) * (p - Fa) / (Fb - Fa) rounded quantile(1) of this CDF to
  // 6,229,795.0000000009, above its largest flow.
  const auto c = FlowSizeCdf::parse(
      "0 0\n4000 22\n32000 90.47\n64000 93.\n256000 97.53\n6229795 100\n", "fuzzed");
  EXPECT_EQ(c.quantile(1.0), 6229795.0);
  const auto& k = c.knots();
  for (int i = 0; i <= 4096; ++i) {
    const double p = i / 4096.0;
    const double q = c.quantile(p);
    EXPECT_GE(q, c.min_bytes()) << "p = " << p;
    EXPECT_LE(q, c.max_bytes()) << "p = " << p;
    const double f = c.cdf_at(q);
    EXPECT_GE(f, 0.0) << "p = " << p;
    EXPECT_LE(f, 1.0) << "p = " << p;
  }
  for (size_t i = 1; i < k.size(); ++i) {
    // The size at the top of each segment is the segment's end, never past it.
    EXPECT_LE(c.quantile(k[i].cdf), k[i].size_bytes) << "knot " << i;
    EXPECT_LE(c.cdf_at(std::nextafter(k[i].size_bytes, 0.0)), k[i].cdf) << "knot " << i;
  }
}

TEST(FlowSizeCdf, CommentsAndBlankLinesAreIgnored) {
  const auto c = FlowSizeCdf::parse("# size pct\n\n0 0   # origin\n\t1000\t100\r\n", "c");
  ASSERT_EQ(c.knots().size(), 2u);
  EXPECT_DOUBLE_EQ(c.mean_bytes(), 500);
}

// The sample is max(1, round(X)), so for an integer knot x >= 1,
// P(sample <= x) = F(x + 0.5) exactly; the empirical CDF must match within 5 binomial sd.
void check_sampling(const std::string& file) {
  SCOPED_TRACE(file);
  const auto cdf = FlowSizeCdf::load(kDir + file);
  Rng rng(12345, file);
  constexpr int kN = 1'000'000;
  std::vector<uint64_t> samples(kN);
  double sum = 0;
  for (auto& s : samples) {
    s = cdf.sample(rng);
    sum += static_cast<double>(s);
  }
  const double se = cdf.stddev_bytes() / std::sqrt(static_cast<double>(kN));
  EXPECT_NEAR(sum / kN, cdf.mean_bytes(), 3 * se) << "mean " << cdf.mean_bytes() << " se " << se;
  std::sort(samples.begin(), samples.end());
  for (const auto& k : cdf.knots()) {
    if (k.size_bytes < 1) continue;
    const auto x = static_cast<uint64_t>(k.size_bytes);
    const double empirical =
        static_cast<double>(std::upper_bound(samples.begin(), samples.end(), x) - samples.begin()) /
        kN;
    const double expected = cdf.cdf_at(k.size_bytes + 0.5);
    const double sd = std::sqrt(expected * (1 - expected) / kN);
    EXPECT_NEAR(empirical, expected, 5 * sd + 1e-9) << "knot " << k.size_bytes;
  }
  EXPECT_GE(samples.front(), 1u);
  EXPECT_LE(samples.back(), static_cast<uint64_t>(cdf.max_bytes()));
}

TEST(FlowSizeCdf, SampleMeanWithin3StandardErrorsAndEmpiricalCdfMatchesAtKnots) {
  check_sampling("WebSearch_distribution.txt");
  check_sampling("FbHdp_distribution.txt");
  check_sampling("AliStorage2019.txt");
  check_sampling("GoogleRPC2008.txt");
}

std::string error_of(const std::string& text) {
  try {
    FlowSizeCdf::parse(text, "bad.txt");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(FlowSizeCdf, MalformedCdfIsReportedWithFileAndLine) {
  EXPECT_THAT(error_of("0 0\n100 50\n50 60\n300 100\n"),
              StartsWith("bad.txt:3: flow size 50 decreases"));
  EXPECT_THAT(error_of("0 0\n100 50\n200 40\n300 100\n"),
              StartsWith("bad.txt:3: CDF percent 40 decreases"));
  EXPECT_THAT(error_of("0 0\n100 50\n300 99.5\n"),
              StartsWith("bad.txt:3: last CDF percent is 99.5"));
  EXPECT_THAT(error_of("0 0\n\nabc 50\n300 100\n"),
              StartsWith("bad.txt:3: flow size 'abc' is not a number"));
  EXPECT_THAT(error_of("0 0\n100 5x\n"), StartsWith("bad.txt:2: CDF percent '5x' is not a number"));
  EXPECT_THAT(error_of("0 0\n100 50 7\n"),
              StartsWith("bad.txt:2: expected `<size bytes> <CDF percent>`"));
  EXPECT_THAT(error_of("0 0\n100 150\n"),
              StartsWith("bad.txt:2: CDF percent 150 is outside [0, 100]"));
  EXPECT_THAT(error_of("-5 0\n100 100\n"), StartsWith("bad.txt:1: flow size -5 is negative"));
  EXPECT_THAT(error_of("# nothing\n\n"), StartsWith("bad.txt:2: no knots"));
  EXPECT_THAT(error_of("0 0\n0 100\n"), StartsWith("bad.txt:2: largest flow size must be > 0"));
  // Sizes that would allocate all memory or overflow the sampler are refused at load.
  EXPECT_THAT(error_of("0 0\n1e10 100\n"),
              StartsWith("bad.txt:2: flow size 1e10 exceeds 2147483648"));
  EXPECT_THAT(error_of("0 0\n1e20 100\n"), StartsWith("bad.txt:2: flow size 1e20 exceeds"));
  EXPECT_NO_THROW(FlowSizeCdf::parse("0 0\n2147483648 100\n", "ok.txt"))
      << "2^31 itself is allowed";
}

TEST(FlowSizeCdf, MissingFileNamesThePath) {
  try {
    FlowSizeCdf::load("configs/workloads/NoSuchWorkload.txt");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), StartsWith("configs/workloads/NoSuchWorkload.txt: cannot read"));
    EXPECT_THAT(e.what(), HasSubstr("No such file"));
  }
}

// Only regular files of bounded size: /dev/zero would be read forever, a FIFO would block
// waiting for a writer, a directory makes no sense.
TEST(FlowSizeCdf, DevicesFifosAndDirectoriesAreRefusedAtOnce) {
  const std::string fifo = ::testing::TempDir() + "flow_size_cdf_test.fifo";
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string p : {std::string("/dev/zero"), std::string("/tmp"), fifo}) {
    try {
      FlowSizeCdf::load(p);
      ADD_FAILURE() << p << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(),
                  StartsWith(p + ": cannot read flow-size CDF file (not a regular file)"));
    }
  }
  std::remove(fifo.c_str());
}

TEST(FlowSizeCdf, AFileOverTheSizeLimitIsRefusedUnread) {
  const std::string big = ::testing::TempDir() + "flow_size_cdf_test.big";
  {
    FILE* f = std::fopen(big.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    // A sparse file: the limit is checked against its size before a byte is read.
    ASSERT_EQ(::ftruncate(::fileno(f), static_cast<off_t>(kMaxCdfFileBytes + 1)), 0);
    std::fclose(f);
  }
  try {
    FlowSizeCdf::load(big);
    ADD_FAILURE() << "accepted a file over kMaxCdfFileBytes";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("larger than the limit of " + std::to_string(kMaxCdfFileBytes)));
  }
  std::remove(big.c_str());
}

}  // namespace
}  // namespace rocemu::workload
