// flow_generator_test.cc — Poisson arrivals (mean, exponential shape), offered load against
// the target, destinations, incast events, ordering and determinism for a seed.
#include "fabric/workload/flow_generator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

namespace rocemu::workload {
namespace {

const std::string kDir = "configs/workloads/";

std::vector<HostSpec> hosts(uint32_t n, uint64_t rate_bps, uint32_t first_id = 100) {
  std::vector<HostSpec> h;
  for (uint32_t i = 0; i < n; ++i) h.push_back({first_id + i, rate_bps});
  return h;
}

WorkloadParams background(double load, TimeNs duration_ns) {
  WorkloadParams p;
  p.load = load;
  p.duration_ns = duration_ns;
  return p;
}

std::vector<FlowSpec> drain(WorkloadGenerator& g) {
  std::vector<FlowSpec> out;
  FlowSpec f;
  while (g.next(f)) out.push_back(f);
  return out;
}

TEST(PoissonFlowGenerator, RateFollowsTheLoadDefinition) {
  const auto cdf = FlowSizeCdf::load(kDir + "WebSearch_distribution.txt");
  PoissonFlowGenerator g(cdf, {{0, 25 * kBpsPerGbps}, {1, 100 * kBpsPerGbps}}, 0.6, 0, kNsPerSec,
                         FlowOp::kWrite, 1);
  // lambda = load * rate / (8 * mean) = 0.6 * 25e9 / (8 * 1,711,250) = 1095.69 flows/s.
  EXPECT_NEAR(g.lambda_per_sec(0), 0.6 * 25e9 / (8 * 1711250.0), 1e-9);
  EXPECT_NEAR(g.lambda_per_sec(1), 4 * g.lambda_per_sec(0), 1e-9);
}

TEST(PoissonFlowGenerator, InterArrivalsAreExponentialWithMeanOneOverLambda) {
  const auto cdf = FlowSizeCdf::parse("1000 100\n", "const");  // every flow is 1000 B
  // 2 hosts at 10 Gbps, load 0.8: lambda = 0.8e10 / 8000 = 1e6 flows/s per host (1 us).
  PoissonFlowGenerator g(cdf, hosts(2, 10 * kBpsPerGbps), 0.8, 0, 200 * kNsPerMs, FlowOp::kWrite,
                         7);
  const double mean_ns = 1e9 / g.lambda_per_sec(0);
  ASSERT_NEAR(mean_ns, 1000.0, 1e-9);
  std::vector<double> gaps;
  TimeNs last = -1;
  FlowSpec f;
  while (g.next(f)) {
    if (f.src != 100) continue;
    if (last >= 0) gaps.push_back(static_cast<double>(f.start_ns - last));
    last = f.start_ns;
  }
  const double n = static_cast<double>(gaps.size());
  ASSERT_GT(n, 150000);
  double sum = 0;
  for (double x : gaps) sum += x;
  // Exponential: sd = mean, so the sample mean is within 3 * mean / sqrt(n). Times are
  // floored to whole ns, which shifts no gap mean (the floors telescope).
  EXPECT_NEAR(sum / n, mean_ns, 3 * mean_ns / std::sqrt(n));
  // Shape: Kolmogorov-Smirnov distance to 1 - exp(-x / mean) below the 1% critical value
  // (1.63 / sqrt(n)) plus the 1 ns discretisation (at most 1/mean in CDF).
  std::sort(gaps.begin(), gaps.end());
  double d = 0;
  for (size_t i = 0; i < gaps.size(); ++i) {
    const double F = 1 - std::exp(-gaps[i] / mean_ns);
    d = std::max({d, std::abs(F - i / n), std::abs(F - (i + 1) / n)});
  }
  EXPECT_LT(d, 1.63 / std::sqrt(n) + 1.0 / mean_ns);
}

void check_offered_load(const std::string& file, double load, TimeNs duration_ns) {
  SCOPED_TRACE(file);
  constexpr uint64_t kRate = 25 * kBpsPerGbps;
  constexpr uint32_t kHosts = 8;
  const auto cfg = make_workload_config(background(load, duration_ns), hosts(kHosts, kRate),
                                        FlowSizeCdf::load(kDir + file));
  WorkloadGenerator g(cfg, 2024);
  std::map<uint32_t, double> bytes_by_src;
  double bytes = 0;
  uint64_t flows = 0;
  FlowSpec f;
  while (g.next(f)) {
    ASSERT_GE(f.start_ns, 0);
    ASSERT_LT(f.start_ns, duration_ns);
    bytes += static_cast<double>(f.size_bytes);
    bytes_by_src[f.src] += static_cast<double>(f.size_bytes);
    ++flows;
  }
  const double capacity_bytes = kHosts * static_cast<double>(kRate) / 8 * duration_ns / 1e9;
  // Compound Poisson: relative sd of the total = sqrt(E[X^2]) / E[X] / sqrt(flows) (~0.6%).
  const double offered = bytes / capacity_bytes;
  EXPECT_NEAR(offered, load, 0.03 * load) << flows << " flows";
  for (const auto& [src, b] : bytes_by_src) {
    EXPECT_NEAR(b / (capacity_bytes / kHosts), load, 0.08 * load) << "host " << src;
  }
}

TEST(WorkloadGenerator, OfferedLoadEqualsTargetOverALongSeededWindow) {
  check_offered_load("WebSearch_distribution.txt", 0.6, 20 * kNsPerSec);  // ~175k flows
  check_offered_load("FbHdp_distribution.txt", 0.3, 4 * kNsPerSec);       // ~250k flows
}

TEST(WorkloadGenerator, DestinationsAreUniformAmongOtherHostsAndNeverSelf) {
  constexpr uint32_t kHosts = 6;
  const auto cfg =
      make_workload_config(background(0.5, 50 * kNsPerMs), hosts(kHosts, 100 * kBpsPerGbps),
                           FlowSizeCdf::parse("0 0\n2000 100\n", "small"));
  WorkloadGenerator g(cfg, 3);
  std::map<std::pair<uint32_t, uint32_t>, double> pairs;
  std::map<uint32_t, double> per_src;
  for (const FlowSpec& f : drain(g)) {
    ASSERT_NE(f.src, f.dst);
    ASSERT_GE(f.dst, 100u);
    ASSERT_LT(f.dst, 100u + kHosts);
    pairs[{f.src, f.dst}] += 1;
    per_src[f.src] += 1;
  }
  ASSERT_EQ(per_src.size(), kHosts);
  for (const auto& [pair, count] : pairs) {
    const double n = per_src[pair.first];
    const double p = 1.0 / (kHosts - 1);
    EXPECT_NEAR(count, n * p, 5 * std::sqrt(n * p * (1 - p)));
  }
  EXPECT_EQ(pairs.size(), kHosts * (kHosts - 1));
}

TEST(WorkloadGenerator, PeriodicIncastHasCountSizeAndDistinctSenders) {
  WorkloadParams p = background(0, 10 * kNsPerMs);
  p.start_ns = 5 * kNsPerUs;
  p.incast = IncastParams{.senders = 7,
                          .size_bytes = 65536,
                          .mode = IncastMode::kPeriodic,
                          .period_ns = kNsPerMs,
                          .offset_ns = 0};
  const auto cfg = make_workload_config(p, hosts(8, 25 * kBpsPerGbps));
  WorkloadGenerator g(cfg, 11);
  const auto flows = drain(g);
  ASSERT_EQ(flows.size(), 10u * 7u);  // events at 5 us + k ms, k = 0..9
  std::map<uint32_t, std::vector<FlowSpec>> events;
  for (const FlowSpec& f : flows) events[f.incast].push_back(f);
  ASSERT_EQ(events.size(), 10u);
  std::set<uint32_t> receivers;
  for (const auto& [k, ev] : events) {
    std::set<uint32_t> senders;
    for (const FlowSpec& f : ev) {
      EXPECT_EQ(f.size_bytes, 65536u);
      EXPECT_EQ(f.start_ns, p.start_ns + k * kNsPerMs);
      EXPECT_EQ(f.dst, ev.front().dst);
      EXPECT_NE(f.src, f.dst);
      senders.insert(f.src);
    }
    EXPECT_EQ(senders.size(), 7u) << "senders of one event are distinct";
    receivers.insert(ev.front().dst);
  }
  EXPECT_GT(receivers.size(), 1u) << "receiver = -1 draws a receiver per event";
}

TEST(WorkloadGenerator, IncastWithFixedReceiverNeverPicksItAsSender) {
  WorkloadParams p = background(0, 5 * kNsPerMs);
  p.incast = IncastParams{.senders = 3,
                          .size_bytes = 1000,
                          .mode = IncastMode::kPeriodic,
                          .period_ns = 10 * kNsPerUs,
                          .receiver = 2};
  const auto cfg = make_workload_config(p, hosts(4, 25 * kBpsPerGbps));
  WorkloadGenerator g(cfg, 5);
  const auto flows = drain(g);
  ASSERT_EQ(flows.size(), 500u * 3u);
  for (const FlowSpec& f : flows) {
    EXPECT_EQ(f.dst, 102u);
    EXPECT_NE(f.src, 102u);
  }
}

TEST(WorkloadGenerator, PoissonIncastEventCountMatchesRate) {
  WorkloadParams p = background(0, kNsPerSec);
  p.incast = IncastParams{
      .senders = 2, .size_bytes = 4096, .mode = IncastMode::kPoisson, .rate_hz = 10000};
  const auto cfg = make_workload_config(p, hosts(5, 25 * kBpsPerGbps));
  WorkloadGenerator g(cfg, 9);
  const auto flows = drain(g);
  ASSERT_EQ(flows.size() % 2, 0u);
  const double events = flows.size() / 2.0;
  EXPECT_NEAR(events, 10000, 4 * std::sqrt(10000.0));
  EXPECT_EQ(flows.back().incast + 1, events);
}

TEST(WorkloadGenerator, MergedStreamIsTimeOrderedWithSequentialIds) {
  WorkloadParams p = background(0.7, 2 * kNsPerMs);
  p.op = FlowOp::kSend;
  p.incast = IncastParams{.senders = 4,
                          .size_bytes = 30000,
                          .mode = IncastMode::kPeriodic,
                          .period_ns = 100 * kNsPerUs};
  const auto cfg = make_workload_config(p, hosts(8, 100 * kBpsPerGbps),
                                        FlowSizeCdf::load(kDir + "FbHdp_distribution.txt"));
  WorkloadGenerator g(cfg, 1);
  const auto flows = drain(g);
  ASSERT_GT(flows.size(), 1000u);
  size_t incast = 0;
  for (size_t i = 0; i < flows.size(); ++i) {
    EXPECT_EQ(flows[i].id, i);
    EXPECT_EQ(flows[i].op, FlowOp::kSend);
    if (i > 0) {
      EXPECT_GE(flows[i].start_ns, flows[i - 1].start_ns);
    }
    incast += flows[i].incast != kNotIncast;
  }
  EXPECT_EQ(incast, 20u * 4u);
  EXPECT_EQ(g.next_deadline(), kNever);
  EXPECT_EQ(g.flows_generated(), flows.size());
}

TEST(WorkloadGenerator, DueReturnsExactlyTheFlowsStartedByNow) {
  const auto cfg = make_workload_config(background(0.5, kNsPerMs), hosts(4, 25 * kBpsPerGbps),
                                        FlowSizeCdf::load(kDir + "AliStorage2019.txt"));
  WorkloadGenerator all(cfg, 77);
  const auto expected = drain(all);
  WorkloadGenerator g(cfg, 77);
  std::vector<FlowSpec> got;
  FlowSpec burst[4];
  for (TimeNs now = 0; g.next_deadline() != kNever; now += 10 * kNsPerUs) {
    size_t n;
    while ((n = g.due(now, burst, 4)) > 0) {
      for (size_t i = 0; i < n; ++i) {
        EXPECT_LE(burst[i].start_ns, now);
        EXPECT_GT(burst[i].start_ns, now - 10 * kNsPerUs);
        got.push_back(burst[i]);
      }
    }
    EXPECT_GT(g.next_deadline(), now);
  }
  EXPECT_EQ(got, expected);
}

TEST(WorkloadGenerator, SameSeedReplaysExactlyAndOtherSeedsDiffer) {
  WorkloadParams p = background(0.5, 3 * kNsPerMs);
  p.incast =
      IncastParams{.senders = 3, .size_bytes = 8000, .mode = IncastMode::kPoisson, .rate_hz = 2000};
  const auto cfg = make_workload_config(p, hosts(6, 25 * kBpsPerGbps),
                                        FlowSizeCdf::load(kDir + "WebSearch_distribution.txt"));
  WorkloadGenerator a(cfg, 42), b(cfg, 42), c(cfg, 43);
  const auto fa = drain(a);
  EXPECT_GT(fa.size(), 10u);
  EXPECT_EQ(fa, drain(b));
  EXPECT_NE(fa, drain(c));
  WorkloadParams shifted = p;
  shifted.seed_offset = 1;
  const auto cfg2 = make_workload_config(shifted, hosts(6, 25 * kBpsPerGbps),
                                         FlowSizeCdf::load(kDir + "WebSearch_distribution.txt"));
  WorkloadGenerator d(cfg2, 42);
  const auto fd = drain(d);
  WorkloadGenerator c2(cfg, 43);
  EXPECT_EQ(fd, drain(c2)) << "seed_offset adds to the run seed";
}

}  // namespace
}  // namespace rocemu::workload

namespace rocemu::workload {
namespace {

WorkloadParams matrix(MatrixPattern pattern, uint64_t size, TimeNs jitter_ns = 0) {
  WorkloadParams p;
  p.load = 0;
  p.start_ns = 5 * kNsPerUs;
  p.duration_ns = kNsPerUs;
  p.matrix = MatrixParams{pattern, size, jitter_ns};
  return p;
}

// A permutation: every host sends exactly one flow and receives exactly one, never to
// itself; a seed replays it, another seed draws another one.
TEST(MatrixGenerator, PermutationIsADerangementReplayedBySeed) {
  const auto cfg = make_workload_config(matrix(MatrixPattern::kPermutation, 4096), hosts(64, 1));
  WorkloadGenerator g(cfg, 11);
  const auto flows = drain(g);
  ASSERT_EQ(flows.size(), 64u);
  std::set<uint32_t> srcs, dsts;
  for (size_t i = 0; i < flows.size(); ++i) {
    const FlowSpec& f = flows[i];
    EXPECT_EQ(f.id, i);
    EXPECT_NE(f.src, f.dst);
    EXPECT_EQ(f.size_bytes, 4096u);
    EXPECT_EQ(f.start_ns, 5 * kNsPerUs) << "no jitter: every flow at the start";
    EXPECT_EQ(f.incast, kNotIncast);
    srcs.insert(f.src);
    dsts.insert(f.dst);
  }
  EXPECT_EQ(srcs.size(), 64u);
  EXPECT_EQ(dsts.size(), 64u);
  WorkloadGenerator again(cfg, 11), other(cfg, 12);
  EXPECT_EQ(drain(again), flows);
  EXPECT_NE(drain(other), flows);
  // Two hosts: the only derangement is the swap.
  WorkloadGenerator two(make_workload_config(matrix(MatrixPattern::kPermutation, 1), hosts(2, 1)),
                        1);
  const auto f2 = drain(two);
  ASSERT_EQ(f2.size(), 2u);
  EXPECT_EQ(f2[0].dst, f2[1].src);
  EXPECT_EQ(f2[1].dst, f2[0].src);
}

TEST(MatrixGenerator, AllToAllCoversEveryOrderedPairOnceWithinTheJitter) {
  const TimeNs jitter = 20 * kNsPerUs;
  const auto cfg =
      make_workload_config(matrix(MatrixPattern::kAllToAll, 1000, jitter), hosts(9, 1));
  WorkloadGenerator g(cfg, 3);
  const auto flows = drain(g);
  ASSERT_EQ(flows.size(), 9u * 8u);
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  TimeNs last = 0;
  std::set<TimeNs> starts;
  for (const FlowSpec& f : flows) {
    EXPECT_NE(f.src, f.dst);
    pairs.insert({f.src, f.dst});
    EXPECT_GE(f.start_ns, 5 * kNsPerUs);
    EXPECT_LT(f.start_ns, 5 * kNsPerUs + jitter);
    EXPECT_GE(f.start_ns, last) << "in start-time order";
    last = f.start_ns;
    starts.insert(f.start_ns);
  }
  EXPECT_EQ(pairs.size(), 72u);
  EXPECT_GT(starts.size(), 50u) << "the jitter spreads the starts";
}

// With background flows and a matrix the merged stream stays in start order, ids 0, 1, ...
TEST(MatrixGenerator, MergesWithBackgroundInStartOrder) {
  WorkloadParams p = matrix(MatrixPattern::kPermutation, 2048, 50 * kNsPerUs);
  p.load = 0.3;
  p.duration_ns = 100 * kNsPerUs;
  const auto cfg = make_workload_config(p, hosts(8, 100 * kBpsPerGbps),
                                        FlowSizeCdf::load(kDir + "WebSearch_distribution.txt"));
  WorkloadGenerator g(cfg, 5);
  const auto flows = drain(g);
  size_t matrix_flows = 0;
  for (size_t i = 0; i < flows.size(); ++i) {
    EXPECT_EQ(flows[i].id, i);
    if (i > 0) {
      EXPECT_GE(flows[i].start_ns, flows[i - 1].start_ns);
    }
    matrix_flows += flows[i].size_bytes == 2048 && flows[i].start_ns < 55 * kNsPerUs;
  }
  EXPECT_GE(matrix_flows, 8u);
  EXPECT_GT(flows.size(), 8u);
}

}  // namespace
}  // namespace rocemu::workload
