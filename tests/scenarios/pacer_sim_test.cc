// pacer_sim_test.cc — issue 6, pacer accuracy in the network: one QP whose rate limiter
// (the one DCQCN drives, RoceHost::set_qp_rate_bps) is pinned at 0.1, 1, 10, 25 and
// 100 Gbps sends through a SoftSwitch on 100 Gbps links; the sender port's wire rate over
// the window must be within 2% of the set rate (frame bytes, as the limiter spaces frames).
// Without the limiter the same QP runs at the 100 Gbps line rate (so the test measures the
// pacer, not the setup). Virtual time: 4 ms window after 1 ms (scaled down from seconds).
#include <cstdio>

#include <gtest/gtest.h>

#include "tests/scenarios/scenario_net.h"

namespace rocemu::scenario {
namespace {

ScenarioSpec pacer_spec(uint64_t rate_bps) {
  ScenarioSpec s;
  const uint32_t h0 = s.topo.add_node("h0", NodeKind::kHost);
  const uint32_t h1 = s.topo.add_node("h1", NodeKind::kHost);
  const uint32_t sw = s.topo.add_node("s0", NodeKind::kSwitch);
  s.topo.add_link(h0, sw, 100 * kBpsPerGbps, kNsPerUs);
  s.topo.add_link(h1, sw, 100 * kBpsPerGbps, kNsPerUs);
  s.flows.push_back(FlowSpec{h0, h1, 0, 0, rate_bps});
  s.warmup_ns = 1 * kNsPerMs;
  // Enough frames at 0.1 Gbps (46 frames/ms of 1082 B) for 2% accuracy.
  s.duration_ns = (rate_bps < kBpsPerGbps ? 20 : 4) * kNsPerMs + s.warmup_ns;
  return s;
}

class PacerInNetwork : public ::testing::TestWithParam<double> {};

TEST_P(PacerInNetwork, AchievesSetRateWithinTwoPercent) {
  const auto rate = static_cast<uint64_t>(GetParam() * 1e9);
  const ScenarioResult r = run_scenario(pacer_spec(rate));
  const double got = r.sender_tx_bps[0];
  std::printf("set %.1f Gbps: achieved %.4f Gbps (%+.3f%%), goodput %.4f Gbps\n", GetParam(),
              got / 1e9, 100.0 * (got / static_cast<double>(rate) - 1), r.goodput_bps[0] / 1e9);
  EXPECT_NEAR(got / static_cast<double>(rate), 1.0, 0.02);
  EXPECT_EQ(r.wr_errors, 0u);
}

INSTANTIATE_TEST_SUITE_P(Rates, PacerInNetwork, ::testing::Values(0.1, 1.0, 10.0, 25.0, 100.0));

TEST(PacerInNetwork, UnpacedQpRunsAtLineRate) {
  ScenarioSpec s = pacer_spec(10 * kBpsPerGbps);
  s.flows[0].fixed_rate_bps = 0;
  const ScenarioResult r = run_scenario(s);
  std::printf("unpaced: %.3f Gbps\n", r.sender_tx_bps[0] / 1e9);
  EXPECT_GT(r.sender_tx_bps[0], 95e9);  // far from the 10 Gbps the paced run holds
}

}  // namespace
}  // namespace rocemu::scenario
