// fairness_sim_test.cc — issue 6, the fixed point of DCQCN's fluid model (Zhu et al.,
// SIGCOMM 2015, section 4) in the packet-level network: N = 2, 4, 8, 16 long flows from
// N hosts through one SoftSwitch into one receiver's 25 Gbps port (all links 25 Gbps,
// 1 us), DCQCN paper profile (configs/dcqcn/paper.toml), switch RED-ECN Kmin 5 KB, Kmax
// 200 KB, Pmax 1%, PFC on. Measured over [50, 200) ms of virtual time (scaled down from
// the paper's seconds; DCQCN's alpha time constant is 256 K = 14 ms).
//
// Queue bound: once the queue passes Kmax every frame is marked, so every flow gets a CNP
// within tau = cnp_interval (50 us) + feedback delay (<= 10 us: 4 hops of 1 us + frame
// times; CNPs ride the strict-priority control class) and is cut. Before its cut a flow
// can be at most one hyper-increase step R_HAI (400 Mbps) above its share, so the excess
// arrival rate is at most N R_HAI and the overshoot above Kmax at most N R_HAI tau / 8,
// plus one frame in flight per sender: q_max <= Kmax + N (R_HAI tau / 8 + 1082 B).
#include <algorithm>
#include <cstdio>

#include <gtest/gtest.h>

#include "tests/scenarios/scenario_net.h"

namespace rocemu::scenario {
namespace {

constexpr uint64_t kRate = 25 * kBpsPerGbps;

ScenarioSpec fairness_spec(uint32_t n, bool dcqcn) {
  ScenarioSpec s;
  const uint32_t sw = s.topo.add_node("s0", NodeKind::kSwitch);
  std::vector<uint32_t> senders;
  for (uint32_t i = 0; i < n; ++i) senders.push_back(s.topo.add_node("h" + std::to_string(i), NodeKind::kHost));
  const uint32_t rx = s.topo.add_node("r", NodeKind::kHost);
  for (uint32_t h : senders) s.topo.add_link(h, sw, kRate, kNsPerUs);
  s.topo.add_link(rx, sw, kRate, kNsPerUs);
  for (uint32_t h : senders) s.flows.push_back(FlowSpec{h, rx});
  s.watch.push_back(PortRef{sw, static_cast<uint16_t>(n)});  // the switch port towards r
  s.dcqcn = dcqcn;
  s.dcqcn_params = dcqcn_profile("paper");
  s.warmup_ns = 50 * kNsPerMs;
  s.duration_ns = 200 * kNsPerMs;
  s.trace = trace_path("fairness_n" + std::to_string(n) + (dcqcn ? "_dcqcn" : "_off"));
  return s;
}

double queue_bound_bytes(uint32_t n, const ScenarioSpec& s) {
  const double tau_s = (50 + 10) * 1e-6;
  return s.sw.ecn.kmax_kb * 1024 + n * (s.dcqcn_params.rate_hai_mbps * 1e6 * tau_s / 8 + 1082);
}

class FixedPoint : public ::testing::TestWithParam<uint32_t> {};

TEST_P(FixedPoint, FlowsShareTheBottleneckFairlyWithBoundedQueue) {
  const uint32_t n = GetParam();
  const ScenarioSpec on_spec = fairness_spec(n, true);
  const ScenarioResult on = run_scenario(on_spec);
  const ScenarioResult off = run_scenario(fairness_spec(n, false));
  const double bound = queue_bound_bytes(n, on_spec);
  const double share = static_cast<double>(kRate) / n;
  for (const auto* r : {&on, &off}) {
    const auto [lo, hi] = std::minmax_element(r->sender_tx_bps.begin(), r->sender_tx_bps.end());
    std::printf("N=%u %s: flows %.3f-%.3f of C/N, Jain %.5f, util %.4f, queue mean %.1f KB max %.1f KB "
                "(bound %.1f KB), pauses %llu, marked %llu, cnps %llu, drops %llu, retx %llu\n",
                n, r == &on ? "DCQCN" : "off  ", *lo / share, *hi / share, jain_index(r->sender_tx_bps),
                r->ports[0].utilisation, r->ports[0].mean_queue_bytes / 1024,
                r->ports[0].max_queue_bytes / 1024.0, bound / 1024,
                static_cast<unsigned long long>(r->pfc_pauses_sent),
                static_cast<unsigned long long>(r->ecn_marked),
                static_cast<unsigned long long>(r->cnps_sent),
                static_cast<unsigned long long>(r->switch_drops),
                static_cast<unsigned long long>(r->retransmitted));
  }
  for (double b : on.sender_tx_bps) EXPECT_NEAR(b / share, 1.0, 0.10);
  EXPECT_GE(jain_index(on.sender_tx_bps), 0.99);
  EXPECT_GE(on.ports[0].utilisation, 0.95);
  EXPECT_LE(static_cast<double>(on.ports[0].max_queue_bytes), bound);
  EXPECT_EQ(on.switch_drops, 0u);
  // Without DCQCN nothing holds the queue near Kmax: it grows to what the flows keep in
  // flight (8 x 64 KB WRITEs each), far above the bound.
  EXPECT_GT(static_cast<double>(off.ports[0].max_queue_bytes), bound);
}

INSTANTIATE_TEST_SUITE_P(Flows, FixedPoint, ::testing::Values(2u, 4u, 8u, 16u));

}  // namespace
}  // namespace rocemu::scenario
