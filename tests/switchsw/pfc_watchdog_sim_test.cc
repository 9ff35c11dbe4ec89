// pfc_watchdog_sim_test.cc — the switch's PFC watchdog in virtual time (suite `sim`): a host
// that never stops sending XOFF (a PFC storm) stalls, through PFC's head-of-line blocking,
// another host's flow to a third host; with [switch.pfc_watchdog] the storming port's queue
// is detected and forwarded, and the innocent flow completes. 10 Gbps links, 1 us, 1 KB.
#include <gtest/gtest.h>

#include <memory>

#include "switchsw/soft_switch.h"
#include "tests/support/eal_env.h"
#include "tests/switchsw/event_sim.h"
#include "tests/switchsw/test_host.h"

namespace rocemu::sw {
namespace {

using test::EventSim;
using test::TestHost;

constexpr uint64_t kPackets = 2000;
constexpr uint32_t kFrameBytes = 1024;

// One switch, hosts h0 (sender), h1 (innocent receiver), h2 (receiver that storms).
struct Storm {
  Topology topo;
  uint32_t s = 0;
  std::vector<std::unique_ptr<TestHost>> hosts;
  std::unique_ptr<SoftSwitch> sw;
  std::unique_ptr<EventSim> sim;

  explicit Storm(const SwitchParams& p) {
    s = topo.add_node("s", NodeKind::kSwitch);
    for (int i = 0; i < 3; ++i)
      topo.add_link(topo.add_node("h" + std::to_string(i), NodeKind::kHost), s,
                    10 * kBpsPerGbps, 1000);
    rte_mempool* pool = test::test_mempool();
    sw = std::make_unique<SoftSwitch>(p, topo, s, pool, 5);
    sim = std::make_unique<EventSim>(topo);
    sim->attach(s, sw.get());
    hosts.resize(topo.nodes().size());
    for (uint32_t h : topo.hosts()) {
      hosts[h] = std::make_unique<TestHost>(topo, h, pool);
      sim->attach(h, hosts[h].get());
    }
    // h0 sends to h2 and h1 on the lossless class; h2 pauses it forever from 10 us on
    // (XOFF every 100 us; one lasts 3.36 ms at 10 Gbps).
    host(0).add_flow(host(2).ipv4(), kPackets, kFrameBytes, 7000);
    host(0).add_flow(host(1).ipv4(), kPackets, kFrameBytes, 7001);
    host(2).add_pfc_storm(3, 10'000, 40 * kNsPerMs, 100'000);
  }
  TestHost& host(int i) { return *hosts[topo.find("h" + std::to_string(i))]; }
  uint16_t port_to(int i) const {
    for (uint16_t p = 0; p < topo.node(s).ports.size(); ++p)
      if (topo.node(topo.node(s).ports[p].peer.node).name == "h" + std::to_string(i)) return p;
    return 0;
  }
};

SwitchParams params(bool watchdog, bool drop = false) {
  SwitchParams p;
  p.buffer_bytes = 2 << 20;
  if (watchdog) p.pfc_watchdog = PfcWatchdog{1 * kNsPerMs, 2 * kNsPerMs, drop};
  return p;
}

TEST(PfcWatchdogSim, WithoutItAStormingHostStallsAnotherHostsFlow) {
  Storm net(params(false));
  net.sim->run_until(40 * kNsPerMs);
  EXPECT_GT(net.host(2).pfc_frames_sent, 300u);
  // The switch's queue to h2 filled, the switch paused h0, and h0's flow to h1 stopped.
  EXPECT_GT(net.host(0).pfc_frames_received, 0u);
  EXPECT_LT(net.host(1).rx_packets, kPackets) << "the innocent flow should be stuck";
  EXPECT_LT(net.host(2).rx_packets, kPackets);
  const auto snap = net.sw->snapshot(net.sim->now());
  EXPECT_EQ(snap.ports[net.port_to(2)].pfc_storms[3], 0u);
  EXPECT_EQ(net.sw->total_drops(), 0u);
}

TEST(PfcWatchdogSim, WithItTheStormIsContainedAndTheOtherFlowCompletes) {
  Storm net(params(true));
  net.sim->run_until(40 * kNsPerMs);
  EXPECT_EQ(net.host(1).rx_packets, kPackets);
  EXPECT_EQ(net.host(1).rx_out_of_order, 0u);
  // The storming host's own traffic is forwarded during each restore time: it all arrives.
  EXPECT_EQ(net.host(2).rx_packets, kPackets);
  const auto snap = net.sw->snapshot(net.sim->now());
  const uint64_t storms = snap.ports[net.port_to(2)].pfc_storms[3];
  EXPECT_GE(storms, 1u);
  for (uint16_t p = 0; p < snap.ports.size(); ++p) {
    if (p != net.port_to(2)) {
      EXPECT_EQ(snap.ports[p].pfc_storms[3], 0u) << "port " << p;
    }
  }
  EXPECT_EQ(net.sw->total_drops(), 0u);
  // Detected no sooner than the detection time after the queue blocked (first XOFF at 10 us).
  ::testing::Test::RecordProperty("storms", static_cast<int>(storms));
  ::testing::Test::RecordProperty("h1_last_rx_ns", static_cast<int>(net.host(1).last_rx_ns));
  EXPECT_GT(net.host(1).last_rx_ns, 1 * kNsPerMs);
}

// Action "drop" (SONiC's default): during each restore time the storming port's queue is
// discarded instead of forwarded. The innocent flow completes as with "forward"; the
// storming host loses what came up in its queue during the storms, counted as
// pfc_watchdog drops on that port and nowhere else.
TEST(PfcWatchdogSim, DropActionDiscardsTheStormingQueueAndContainsTheStorm) {
  Storm net(params(true, /*drop=*/true));
  net.sim->run_until(40 * kNsPerMs);
  EXPECT_EQ(net.host(1).rx_packets, kPackets);
  EXPECT_EQ(net.host(1).rx_out_of_order, 0u);
  const uint16_t storming = net.port_to(2);
  const uint64_t dropped = net.sw->drops(storming, RxDrop::kPfcWatchdog);
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(net.sw->total_drops(), dropped) << "only the watchdog drops";
  const auto snap = net.sw->snapshot(net.sim->now());
  EXPECT_EQ(snap.ports[storming].drops[static_cast<int>(DropReason::kPfcWatchdog)], dropped);
  // Each of h0's packets to h2 is either delivered or dropped by the watchdog.
  EXPECT_EQ(net.host(2).rx_packets + dropped, kPackets);
  EXPECT_GE(snap.ports[storming].pfc_storms[3], 1u);
  // Dropped packets release their buffer: nothing stays queued on the storming port.
  EXPECT_EQ(net.sw->queue_bytes(storming, 3), 0u);
}

}  // namespace
}  // namespace rocemu::sw
