// realtime_dpdk_test.cc — issue 6 in real time: the same SoftSwitch, RoceHost and DCQCN
// code over DPDK net_ring wires (fabric/realtime_engine.h, one lcore polling every node),
// at scaled link rates: two senders on 1 Gbps links into one receiver's 1 Gbps port,
// RED-ECN 5/200 KB/1%, DCQCN paper profile. CNPs must flow and the two senders converge to
// equal halves of what the bottleneck port delivers (on a loaded 2-core VM the poll loop,
// not the emulated 1 Gbps, may limit that port: measured 0.74 Gbps at 2 Gbps links under
// load 9); with DCQCN off no CNP exists and the queue sits far higher. What the port
// carries is a wall-time rate, so it is judged per share of a core the loop got in the
// window (CI measured 0.28 of line rate while qemu guests shared the cores). Wall time:
// 2 x 0.6 s. Never skips: an EAL failure fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "tests/scenarios/scenario_net.h"

namespace rocemu::scenario {
namespace {

constexpr uint64_t kRate = 1 * kBpsPerGbps;

ScenarioSpec two_to_one(bool dcqcn) {
  ScenarioSpec s;
  const uint32_t sw = s.topo.add_node("s0", NodeKind::kSwitch);
  const uint32_t h0 = s.topo.add_node("h0", NodeKind::kHost);
  const uint32_t h1 = s.topo.add_node("h1", NodeKind::kHost);
  const uint32_t r = s.topo.add_node("r", NodeKind::kHost);
  s.topo.add_link(h0, sw, kRate, kNsPerUs);
  s.topo.add_link(h1, sw, kRate, kNsPerUs);
  s.topo.add_link(r, sw, kRate, kNsPerUs);
  s.flows = {FlowSpec{h0, r}, FlowSpec{h1, r}};
  s.watch = {PortRef{sw, 2}};
  s.dcqcn = dcqcn;
  s.dcqcn_params = dcqcn_profile("paper");
  s.realtime = true;
  s.poll_ns = 20 * kNsPerUs;
  s.sample_ns = 20 * kNsPerUs;
  s.warmup_ns = 200 * kNsPerMs;
  s.duration_ns = 600 * kNsPerMs;
  return s;
}

TEST(RealtimeDcqcn, CnpsFlowAndRatesConvergeOverNetRing) {
  const ScenarioResult on = run_scenario(two_to_one(true));
  const ScenarioResult off = run_scenario(two_to_one(false));
  for (const auto* r : {&on, &off})
    std::printf("%s: h0 %.3f h1 %.3f Gbps, Jain %.4f, util %.3f, queue mean %.0f KB max %.0f KB, "
                "CNPs sent %llu received %llu, drops %llu, retx %llu\n",
                r == &on ? "DCQCN" : "off  ", r->sender_tx_bps[0] / 1e9, r->sender_tx_bps[1] / 1e9,
                jain_index(r->sender_tx_bps), r->ports[0].utilisation,
                r->ports[0].mean_queue_bytes / 1024, r->ports[0].max_queue_bytes / 1024.0,
                static_cast<unsigned long long>(r->cnps_sent),
                static_cast<unsigned long long>(r->cnps_received),
                static_cast<unsigned long long>(r->switch_drops),
                static_cast<unsigned long long>(r->retransmitted));
  EXPECT_GT(on.cnps_sent, 0u);
  EXPECT_GT(on.cnps_received, 0u);
  const double share = on.ports[0].utilisation * static_cast<double>(kRate) / 2.0;
  std::printf("bottleneck delivered %.3f Gbps: share %.3f Gbps; the loop had %.2f of a core\n",
              2 * share / 1e9, share / 1e9, on.window_cpu_share);
  // The real-time path carries real traffic: over 30% of line rate per core-second.
  ASSERT_GT(on.window_cpu_share, 0.0);
  EXPECT_GT(on.ports[0].utilisation / std::min(1.0, on.window_cpu_share), 0.3);
  for (double b : on.sender_tx_bps) EXPECT_NEAR(b / share, 1.0, 0.2);
  EXPECT_GE(jain_index(on.sender_tx_bps), 0.95);
  EXPECT_EQ(off.cnps_sent, 0u);
  EXPECT_LT(on.ports[0].mean_queue_bytes * 2, off.ports[0].mean_queue_bytes);
}

}  // namespace
}  // namespace rocemu::scenario
