// incast_dpdk_test.cc — the soft switch in real time over DPDK net_ring ports (suite
// `dpdk`): a small 4:1 incast through fabric's RealtimeEngine (one lcore, TSC time, port
// rate emulated at 1 Gbps). With PFC: no drop anywhere, every frame delivered in order,
// XOFF sent and obeyed by the senders. Without: the lossy class drops and counts it.
// Headroom is set to 64 KB here: in real time on a shared 2-vCPU VM the reaction to an
// XOFF includes poll-loop and scheduling delays, not just the link round trip.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <memory>
#include <vector>

#include "fabric/eal.h"
#include "fabric/realtime_engine.h"
#include "switchsw/soft_switch.h"
#include "tests/switchsw/test_host.h"

namespace rocemu::sw {
namespace {

constexpr uint64_t k1G = kBpsPerGbps;
constexpr int kSenders = 4;
constexpr uint64_t kPackets = 200;
constexpr uint32_t kFrameBytes = 1024;

struct RealtimeIncast {
  Topology topo;
  uint32_t sw = 0, receiver = 0;
  std::vector<uint32_t> senders;
  std::unique_ptr<fabric::RealtimeEngine> engine;
  std::vector<std::unique_ptr<test::TestHost>> hosts;
  std::unique_ptr<SoftSwitch> sw_node;

  explicit RealtimeIncast(const SwitchParams& p) {
    fabric::EalOptions eal;
    eal.program = "rocemu-switch-dpdk-test";
    eal.user_args = {"--log-level", "lib.eal:error"};
    fabric::eal_start(eal);
    sw = topo.add_node("s0", NodeKind::kSwitch);
    for (int i = 0; i < kSenders; ++i) {
      senders.push_back(topo.add_node("h" + std::to_string(i), NodeKind::kHost));
      topo.add_link(senders.back(), sw, k1G, 1000);
    }
    receiver = topo.add_node("rx", NodeKind::kHost);
    topo.add_link(receiver, sw, k1G, 1000);
    engine = std::make_unique<fabric::RealtimeEngine>(
        topo, std::vector<fabric::LinkOptions>(topo.links().size()), fabric::RealtimeOptions{});
    sw_node = std::make_unique<SoftSwitch>(p, topo, sw, engine->pool(), 3);
    engine->attach(sw, sw_node.get());
    hosts.resize(topo.nodes().size());
    for (uint32_t h : topo.hosts()) {
      hosts[h] = std::make_unique<test::TestHost>(topo, h, engine->pool());
      engine->attach(h, hosts[h].get());
    }
    for (int i = 0; i < kSenders; ++i)
      hosts[senders[i]]->add_flow(topo.node(receiver).ipv4, kPackets, kFrameBytes,
                                  static_cast<uint16_t>(7000 + i));
  }
  ~RealtimeIncast() {
    // Nodes hold mbufs of the engine's pool: release them before the engine goes.
    sw_node.reset();
    hosts.clear();
    engine.reset();
  }
  test::TestHost& rx() { return *hosts[receiver]; }

  /// Runs until the receiver has `expect` frames or the senders are done and 50 ms passed.
  void run(uint64_t expect) {
    TimeNs quiet_since = -1;
    engine->every(kNsPerMs, [&](TimeNs now) {
      if (rx().rx_packets >= expect) engine->stop();
      uint64_t sent = 0;
      for (uint32_t s : senders) sent += hosts[s]->tx_packets;
      if (sent == kSenders * kPackets && quiet_since < 0) quiet_since = now;
      if (quiet_since >= 0 && now - quiet_since > 50 * kNsPerMs) engine->stop();
    });
    engine->run_for(10 * kNsPerSec);
  }
};

SwitchParams params(bool pfc) {
  SwitchParams p;
  p.buffer_bytes = 512 * 1024;
  p.headroom_bytes = 64 * 1024;
  p.pfc = pfc;
  return p;
}

TEST(IncastDpdk, WithPfcOverNetRingNothingIsDroppedAndAllIsDeliveredInOrder) {
  RealtimeIncast net(params(true));
  const uint64_t total = kSenders * kPackets;
  net.run(total);
  EXPECT_EQ(net.rx().rx_packets, total);
  EXPECT_EQ(net.rx().rx_out_of_order, 0u);
  EXPECT_EQ(net.rx().rx_bad, 0u);
  EXPECT_EQ(net.sw_node->total_drops(), 0u);
  const auto snap = net.sw_node->snapshot(0);
  uint64_t pauses = 0, received = 0;
  for (int i = 0; i < kSenders; ++i) {
    pauses += snap.ports[i].pfc_pauses_sent[3];
    received += net.hosts[net.senders[i]]->pfc_frames_received;
  }
  EXPECT_GT(pauses, 0u);
  EXPECT_GT(received, 0u);
  for (uint16_t port = 0; port < net.sw_node->num_ports(); ++port)
    EXPECT_EQ(net.engine->counters(PortRef{net.sw, port}).dropped, 0u);
}

TEST(IncastDpdk, WithoutPfcOverNetRingTheLossyClassDropsAndCountsIt) {
  RealtimeIncast net(params(false));
  const uint64_t total = kSenders * kPackets;
  net.run(total);
  const uint64_t dropped = net.sw_node->drops(kSenders, RxDrop::kBufferFull);
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(net.rx().rx_packets + dropped, total);
  for (int i = 0; i < kSenders; ++i) EXPECT_EQ(net.hosts[net.senders[i]]->pfc_frames_received, 0u);
}

}  // namespace
}  // namespace rocemu::sw
