// parking_lot_sim_test.cc — issue 6, DCQCN's multi-bottleneck case (Zhu et al., SIGCOMM
// 2015, section 5, parking lot): three switches in a chain s0 - s1 - s2, all links
// 25 Gbps, 1 us. Flow L (s0 -> s2) crosses both inter-switch links; flow A (s0 -> s1)
// shares s0->s1 with it and flow B (s1 -> s2) shares s1->s2. Max-min fair share: 12.5 Gbps
// each. RED-like marking (Kmin 5 KB, Kmax 200 KB, Pmax 1%) must be fairer than cut-off
// marking (Kmin = Kmax = 40 KB: every frame above 40 KB marked), which marks the two-hop
// flow at both hops. DCQCN paper profile; window [30, 130) ms of virtual time. With DCQCN
// off no frame is ECN-capable, so the two markings give identical runs: the difference is
// DCQCN's.
#include <cstdio>

#include <gtest/gtest.h>

#include "tests/scenarios/scenario_net.h"

namespace rocemu::scenario {
namespace {

constexpr uint64_t kRate = 25 * kBpsPerGbps;

ScenarioSpec parking_lot(bool dcqcn, bool cutoff) {
  ScenarioSpec s;
  Topology& t = s.topo;
  const uint32_t s0 = t.add_node("s0", NodeKind::kSwitch);
  const uint32_t s1 = t.add_node("s1", NodeKind::kSwitch);
  const uint32_t s2 = t.add_node("s2", NodeKind::kSwitch);
  t.add_link(s0, s1, kRate, kNsPerUs);  // s0 port 0, s1 port 0
  t.add_link(s1, s2, kRate, kNsPerUs);  // s1 port 1, s2 port 0
  const uint32_t hl = t.add_node("hl", NodeKind::kHost), ha = t.add_node("ha", NodeKind::kHost);
  const uint32_t ra = t.add_node("ra", NodeKind::kHost), hb = t.add_node("hb", NodeKind::kHost);
  const uint32_t rl = t.add_node("rl", NodeKind::kHost), rb = t.add_node("rb", NodeKind::kHost);
  t.add_link(hl, s0, kRate, kNsPerUs);
  t.add_link(ha, s0, kRate, kNsPerUs);
  t.add_link(ra, s1, kRate, kNsPerUs);
  t.add_link(hb, s1, kRate, kNsPerUs);
  t.add_link(rl, s2, kRate, kNsPerUs);
  t.add_link(rb, s2, kRate, kNsPerUs);
  s.flows = {FlowSpec{hl, rl}, FlowSpec{ha, ra}, FlowSpec{hb, rb}};
  s.watch = {PortRef{s0, 0}, PortRef{s1, 1}};
  if (cutoff) {
    s.sw.ecn.kmin_kb = 40;
    s.sw.ecn.kmax_kb = 40;
  }
  s.dcqcn = dcqcn;
  s.dcqcn_params = dcqcn_profile("paper");
  s.warmup_ns = 30 * kNsPerMs;
  s.duration_ns = 130 * kNsPerMs;
  s.trace = trace_path(std::string("parking_lot_") + (cutoff ? "cutoff" : "red") + (dcqcn ? "_dcqcn" : "_off"));
  return s;
}

void print(const char* name, const ScenarioResult& r) {
  std::printf("%-14s L %.3f A %.3f B %.3f Gbps, Jain %.5f, util %.3f/%.3f, queues max %.0f/%.0f KB, "
              "pauses %llu, cnps %llu\n",
              name, r.sender_tx_bps[0] / 1e9, r.sender_tx_bps[1] / 1e9, r.sender_tx_bps[2] / 1e9,
              jain_index(r.sender_tx_bps), r.ports[0].utilisation, r.ports[1].utilisation,
              r.ports[0].max_queue_bytes / 1024.0, r.ports[1].max_queue_bytes / 1024.0,
              static_cast<unsigned long long>(r.pfc_pauses_sent),
              static_cast<unsigned long long>(r.cnps_sent));
}

TEST(ParkingLot, RedMarkingIsFairerThanCutoffMarking) {
  const ScenarioResult red = run_scenario(parking_lot(true, false));
  const ScenarioResult cut = run_scenario(parking_lot(true, true));
  const ScenarioResult red_off = run_scenario(parking_lot(false, false));
  const ScenarioResult cut_off = run_scenario(parking_lot(false, true));
  print("RED+DCQCN", red);
  print("cutoff+DCQCN", cut);
  print("RED, off", red_off);
  print("cutoff, off", cut_off);
  EXPECT_GT(jain_index(red.sender_tx_bps), jain_index(cut.sender_tx_bps));
  EXPECT_EQ(red.switch_drops + cut.switch_drops, 0u);
  // DCQCN off: the marking setting changes nothing at all.
  EXPECT_EQ(red_off.sender_tx_bps, cut_off.sender_tx_bps);
  EXPECT_EQ(red_off.cnps_sent + cut_off.cnps_sent, 0u);
}

}  // namespace
}  // namespace rocemu::scenario
