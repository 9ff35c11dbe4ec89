// incast_sim_test.cc — issue 6, 16:1 incast with PFC (Zhu et al., SIGCOMM 2015, section
// 6: DCQCN cuts PAUSE frames from millions to thousands). 16 hosts each RDMA-WRITE 4 MB
// to one receiver through one SoftSwitch (25 Gbps links, 1 us, PFC on, lossless RoCE class,
// RED-ECN 5/200 KB/1%). With DCQCN (paper profile) the switch must send far fewer PAUSE
// frames than without (at least 10x fewer), lose nothing, and every flow must complete.
// Scaled down: 64 MB in total, ~21 ms at 25 Gbps. Switch buffer 12 MB (the paper's
// Trident II): with the 32 MB default the ingress thresholds (1/8 of the free buffer) are
// never reached by this incast (measured: no PAUSE with or without DCQCN).
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/scenarios/scenario_net.h"

namespace rocemu::scenario {
namespace {

constexpr uint64_t kRate = 25 * kBpsPerGbps;
constexpr uint32_t kSenders = 16;

ScenarioSpec incast(bool dcqcn) {
  ScenarioSpec s;
  const uint32_t sw = s.topo.add_node("s0", NodeKind::kSwitch);
  for (uint32_t i = 0; i < kSenders; ++i) s.topo.add_node("h" + std::to_string(i), NodeKind::kHost);
  const uint32_t rx = s.topo.add_node("r", NodeKind::kHost);
  for (uint32_t i = 0; i < kSenders; ++i) s.topo.add_link(1 + i, sw, kRate, kNsPerUs);
  s.topo.add_link(rx, sw, kRate, kNsPerUs);
  for (uint32_t i = 0; i < kSenders; ++i) s.flows.push_back(FlowSpec{1 + i, rx, 4ull << 20});
  s.watch.push_back(PortRef{sw, static_cast<uint16_t>(kSenders)});
  s.sw.buffer_bytes = 12ull << 20;
  s.dcqcn = dcqcn;
  s.dcqcn_params = dcqcn_profile("paper");
  s.warmup_ns = 0;
  s.duration_ns = 100 * kNsPerMs;
  s.stop_when_complete = true;
  s.trace = trace_path(std::string("incast_") + (dcqcn ? "dcqcn" : "off"));
  return s;
}

TEST(Incast16To1, DcqcnCutsPauseFramesWithoutLoss) {
  const ScenarioResult on = run_scenario(incast(true));
  const ScenarioResult off = run_scenario(incast(false));
  for (const auto* r : {&on, &off}) {
    TimeNs last = 0;
    for (TimeNs f : r->finish_ns) last = std::max(last, f);
    std::printf(
        "%s: PAUSE frames %llu, complete %d, last flow done %.2f ms, drops %llu/%llu, "
        "retx %llu, queue mean %.0f KB max %.0f KB, cnps %llu\n",
        r == &on ? "DCQCN" : "off  ", static_cast<unsigned long long>(r->pfc_pauses_sent),
        r->all_complete, last / 1e6, static_cast<unsigned long long>(r->switch_drops),
        static_cast<unsigned long long>(r->wire_drops),
        static_cast<unsigned long long>(r->retransmitted), r->ports[0].mean_queue_bytes / 1024,
        r->ports[0].max_queue_bytes / 1024.0, static_cast<unsigned long long>(r->cnps_sent));
  }
  EXPECT_TRUE(on.all_complete);
  EXPECT_EQ(on.switch_drops + on.wire_drops + on.nic_drops, 0u);
  EXPECT_EQ(on.retransmitted, 0u);
  EXPECT_GT(off.pfc_pauses_sent, 0u);
  EXPECT_LE(on.pfc_pauses_sent * 10, off.pfc_pauses_sent);
  // PFC alone is lossless too: what DCQCN changes is the pausing.
  EXPECT_TRUE(off.all_complete);
  EXPECT_EQ(off.switch_drops, 0u);
}

// The GraphCC paper's host model (Bernardez et al., section 5): DCQCN "with a fixed window
// that limits the in-flight bytes to the maximum BDP of the network". Here the BDP is
// 25 Gbps x 4 us (two 1 us links, both ways) = 12.5 KB; a 16 KB window per QP keeps the 16
// senders' in-flight data near 256 KB, far below the switch's PFC thresholds: no PAUSE at
// all, where DCQCN alone still pauses (its queue peaks at ~3.4 MB before the rate cuts take
// hold). A 4 MB shared buffer, so that those peaks reach the PFC threshold.
TEST(Incast16To1, TheBdpWindowRemovesThePausesDcqcnAloneLeaves) {
  ScenarioSpec with = incast(true), without = incast(true);
  with.sw.buffer_bytes = without.sw.buffer_bytes = 4ull << 20;
  with.dcqcn_params.window_kb = 16;
  with.trace = trace_path("incast_dcqcn_window");
  without.trace = trace_path("incast_dcqcn_4mb");
  const ScenarioResult w = run_scenario(with);
  const ScenarioResult alone = run_scenario(without);
  TimeNs last_w = 0, last_a = 0;
  for (TimeNs f : w.finish_ns) last_w = std::max(last_w, f);
  for (TimeNs f : alone.finish_ns) last_a = std::max(last_a, f);
  std::printf(
      "DCQCN + 16 KB window: PAUSE %llu, last flow %.2f ms, queue max %.0f KB; DCQCN alone: "
      "PAUSE %llu, last flow %.2f ms, queue max %.0f KB\n",
      static_cast<unsigned long long>(w.pfc_pauses_sent), last_w / 1e6,
      w.ports[0].max_queue_bytes / 1024.0, static_cast<unsigned long long>(alone.pfc_pauses_sent),
      last_a / 1e6, alone.ports[0].max_queue_bytes / 1024.0);
  EXPECT_GT(alone.pfc_pauses_sent, 0u) << "the scenario must pause without the window";
  EXPECT_EQ(w.pfc_pauses_sent, 0u);
  EXPECT_TRUE(w.all_complete);
  EXPECT_EQ(w.switch_drops + w.wire_drops + w.nic_drops, 0u);
  EXPECT_EQ(w.retransmitted, 0u);
  EXPECT_LE(w.ports[0].max_queue_bytes, 16u * 16 * 1024 + 64 * 1024)
      << "queue bounded by the windows";
  // The bottleneck stays busy: 64 MB through 25 Gbps takes ~21.5 ms; the window costs at most 10%.
  EXPECT_LT(static_cast<double>(last_w), 1.1 * static_cast<double>(last_a) + 1e6);
}

}  // namespace
}  // namespace rocemu::scenario
