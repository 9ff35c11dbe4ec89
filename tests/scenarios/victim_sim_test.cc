// victim_sim_test.cc — issue 6, PFC congestion spreading and its victim flow (Zhu et al.,
// SIGCOMM 2015, section 2: PFC pauses a whole link, hurting flows that never cross the
// congested port). Two switches s0 - s1 joined by 100 Gbps; host links 25 Gbps, 1 us.
// Incast: 8 senders under s0 and 8 under s1 write to r (under s1): r's port is the
// congested one. Victim: v (under s0) writes to w (under s1); it shares the s0->s1 link
// and s0's egress queue with 8 incast flows but never crosses r's port. Its fair
// (max-min) share is its NIC's 25 Gbps: the s0->s1 link carries 25 + 8 x 25/16 = 37.5 Gbps.
// With DCQCN (paper profile) the victim keeps >= 90% of it; without, PFC pauses from s1
// stop it with the incast. Window [20, 60) ms of virtual time.
#include <cstdio>

#include <gtest/gtest.h>

#include "tests/scenarios/scenario_net.h"

namespace rocemu::scenario {
namespace {

constexpr uint64_t kRate = 25 * kBpsPerGbps;

ScenarioSpec victim(bool dcqcn) {
  ScenarioSpec s;
  Topology& t = s.topo;
  const uint32_t s0 = t.add_node("s0", NodeKind::kSwitch);
  const uint32_t s1 = t.add_node("s1", NodeKind::kSwitch);
  t.add_link(s0, s1, 100 * kBpsPerGbps, kNsPerUs);  // port 0 of both
  const uint32_t r = t.add_node("r", NodeKind::kHost);
  t.add_link(r, s1, kRate, kNsPerUs);  // s1 port 1
  const uint32_t v = t.add_node("v", NodeKind::kHost), w = t.add_node("w", NodeKind::kHost);
  t.add_link(v, s0, kRate, kNsPerUs);
  t.add_link(w, s1, kRate, kNsPerUs);
  s.flows.push_back(FlowSpec{v, w});
  for (uint32_t i = 0; i < 16; ++i) {
    const uint32_t h = t.add_node("h" + std::to_string(i), NodeKind::kHost);
    t.add_link(h, i < 8 ? s0 : s1, kRate, kNsPerUs);
    s.flows.push_back(FlowSpec{h, r});
  }
  s.watch = {PortRef{s1, 1}, PortRef{s0, 0}};
  s.dcqcn = dcqcn;
  s.dcqcn_params = dcqcn_profile("paper");
  s.warmup_ns = 20 * kNsPerMs;
  s.duration_ns = 60 * kNsPerMs;
  s.trace = trace_path(std::string("victim_") + (dcqcn ? "dcqcn" : "off"));
  return s;
}

TEST(VictimFlow, DcqcnSuppressesPfcCongestionSpreading) {
  const ScenarioResult on = run_scenario(victim(true));
  const ScenarioResult off = run_scenario(victim(false));
  const double fair = static_cast<double>(kRate);
  for (const auto* r : {&on, &off}) {
    double incast = 0;
    for (size_t f = 1; f < r->sender_tx_bps.size(); ++f) incast += r->sender_tx_bps[f];
    std::printf("%s: victim %.3f Gbps (%.1f%% of fair), incast total %.3f Gbps, r port util %.3f, "
                "PAUSE frames %llu, drops %llu\n",
                r == &on ? "DCQCN" : "off  ", r->sender_tx_bps[0] / 1e9,
                100 * r->sender_tx_bps[0] / fair, incast / 1e9, r->ports[0].utilisation,
                static_cast<unsigned long long>(r->pfc_pauses_sent),
                static_cast<unsigned long long>(r->switch_drops));
  }
  EXPECT_GE(on.sender_tx_bps[0], 0.9 * fair);
  EXPECT_LT(off.sender_tx_bps[0], 0.9 * fair);
  EXPECT_EQ(on.switch_drops, 0u);
}

}  // namespace
}  // namespace rocemu::scenario
