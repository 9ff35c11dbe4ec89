// incast_sim_test.cc — issue 6, 16:1 incast with PFC (Zhu et al., SIGCOMM 2015, section
// 6: DCQCN cuts PAUSE frames from millions to thousands). 16 hosts each RDMA-WRITE 4 MB
// to one receiver through one SoftSwitch (25 Gbps links, 1 us, PFC on, lossless RoCE class,
// RED-ECN 5/200 KB/1%). With DCQCN (paper profile) the switch must send far fewer PAUSE
// frames than without (at least 10x fewer), lose nothing, and every flow must complete.
// Scaled down: 64 MB in total, ~21 ms at 25 Gbps. Switch buffer 12 MB (the paper's
// Trident II): with the 32 MB default the ingress thresholds (1/8 of the free buffer) are
// never reached by this incast (measured: no PAUSE with or without DCQCN).
#include <cstdio>

#include <gtest/gtest.h>

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
    std::printf("%s: PAUSE frames %llu, complete %d, last flow done %.2f ms, drops %llu/%llu, "
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

}  // namespace
}  // namespace rocemu::scenario
