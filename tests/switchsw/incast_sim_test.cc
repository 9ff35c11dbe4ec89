// incast_sim_test.cc — seeded virtual-time scenarios of the soft switch (suite `sim`):
// a 16:1 incast over two switches with PFC (no loss, pauses propagate to the upstream switch
// and its hosts, everything delivered in order), the same incast lossy (drops counted),
// ECN marks only above Kmin, the CSV queue series, and a captured PFC frame dissected by
// tshark. Links 10 Gbps (100 Gbps between the switches), 1 us delay, 1 KB frames.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "fabric/pcapng_capture.h"
#include "switchsw/queue_series.h"
#include "switchsw/soft_switch.h"
#include "tests/support/eal_env.h"
#include "tests/switchsw/event_sim.h"
#include "tests/switchsw/test_host.h"

namespace rocemu::sw {
namespace {

using test::EventSim;
using test::TestHost;

constexpr uint64_t k10G = 10 * kBpsPerGbps;
constexpr int kSenders = 16;
constexpr uint64_t kPacketsPerSender = 300;
constexpr uint32_t kFrameBytes = 1024;

// Senders 0-7 hang off leaf switch A, senders 8-15 and the receiver off switch B; A-B is
// 100 Gbps so A's uplink is never the bottleneck: B's port to the receiver is (16:1).
struct Incast {
  Topology topo;
  uint32_t a = 0, b = 0, receiver = 0;
  std::vector<uint32_t> senders;
  uint16_t b_port_to_a = 0, b_port_to_receiver = 0, a_port_to_b = 0;
  std::vector<std::unique_ptr<TestHost>> hosts;  // by topology index (null for switches)
  std::unique_ptr<SoftSwitch> sw_a, sw_b;
  std::unique_ptr<EventSim> sim;

  explicit Incast(const SwitchParams& p) {
    a = topo.add_node("A", NodeKind::kSwitch);
    b = topo.add_node("B", NodeKind::kSwitch);
    topo.add_link(a, b, 100 * kBpsPerGbps, 1000);
    a_port_to_b = 0;
    b_port_to_a = 0;
    for (int i = 0; i < kSenders; ++i) {
      const uint32_t h = topo.add_node("h" + std::to_string(i), NodeKind::kHost);
      topo.add_link(h, i < kSenders / 2 ? a : b, k10G, 1000);
      senders.push_back(h);
    }
    receiver = topo.add_node("rx", NodeKind::kHost);
    topo.add_link(receiver, b, k10G, 1000);
    b_port_to_receiver = static_cast<uint16_t>(topo.node(b).ports.size() - 1);
    rte_mempool* pool = test::test_mempool();
    sw_a = std::make_unique<SoftSwitch>(p, topo, a, pool, 11);
    sw_b = std::make_unique<SoftSwitch>(p, topo, b, pool, 11);
    sim = std::make_unique<EventSim>(topo);
    sim->attach(a, sw_a.get());
    sim->attach(b, sw_b.get());
    hosts.resize(topo.nodes().size());
    for (uint32_t h : topo.hosts()) {
      hosts[h] = std::make_unique<TestHost>(topo, h, pool);
      sim->attach(h, hosts[h].get());
    }
    for (int i = 0; i < kSenders; ++i)
      hosts[senders[i]]->add_flow(topo.node(receiver).ipv4, kPacketsPerSender, kFrameBytes,
                                  static_cast<uint16_t>(5000 + i));
  }
  TestHost& rx() { return *hosts[receiver]; }
  TestHost& sender(int i) { return *hosts[senders[i]]; }
};

SwitchParams small_buffer(bool pfc) {
  SwitchParams p;
  p.buffer_bytes = 2 << 20;  // small enough that 16 x 300 KB cannot all be queued
  p.pfc = pfc;
  return p;
}

TEST(IncastSim, WithPfcNothingIsDroppedPausesPropagateUpstreamAndAllIsDelivered) {
  Incast net(small_buffer(true));
  net.sim->run_until(100 * kNsPerMs);
  const uint64_t total = kSenders * kPacketsPerSender;
  EXPECT_EQ(net.sw_a->total_drops(), 0u);
  EXPECT_EQ(net.sw_b->total_drops(), 0u);
  EXPECT_EQ(net.rx().rx_packets, total);
  EXPECT_EQ(net.rx().rx_out_of_order, 0u);
  EXPECT_EQ(net.rx().rx_bad, 0u);
  const auto sa = net.sw_a->snapshot(net.sim->now());
  const auto sb = net.sw_b->snapshot(net.sim->now());
  // B, the congestion point, paused A (on the A-B link) and its own hosts...
  EXPECT_GT(sb.ports[net.b_port_to_a].pfc_pauses_sent[3], 0u);
  EXPECT_GT(sa.ports[net.a_port_to_b].pfc_pauses_received[3], 0u);
  EXPECT_GT(sa.ports[net.a_port_to_b].paused_ns[3], 0u);
  // ...and A, backed up behind the paused uplink, paused its hosts in turn.
  uint64_t a_sent = 0;
  for (uint16_t p = 1; p < sa.ports.size(); ++p) a_sent += sa.ports[p].pfc_pauses_sent[3];
  EXPECT_GT(a_sent, 0u);
  for (int i = 0; i < kSenders / 2; ++i)
    EXPECT_GT(net.sender(i).pfc_frames_received, 0u) << "sender " << i;
  // The bottleneck ran at line rate: 4.8 MB at 10 Gbps takes 3.93 ms (+ a few us of path).
  const double ideal_ns = static_cast<double>(total * kFrameBytes) * 8 / 10.0;
  EXPECT_LT(static_cast<double>(net.rx().last_rx_ns), ideal_ns * 1.02 + 20'000);
  ::testing::Test::RecordProperty("b_pauses_to_a", static_cast<int>(sb.ports[net.b_port_to_a].pfc_pauses_sent[3]));
  ::testing::Test::RecordProperty("a_pauses_to_hosts", static_cast<int>(a_sent));
  ::testing::Test::RecordProperty("b_peak_queue_bytes",
                                  static_cast<int>(sb.ports[net.b_port_to_receiver].peak_queue_bytes[3]));
  ::testing::Test::RecordProperty("last_rx_ns", static_cast<int>(net.rx().last_rx_ns));
  // Headroom was never exceeded and buffers were released to zero.
  EXPECT_EQ(net.sw_b->mmu().total_used_bytes(), 0u);
  EXPECT_EQ(net.sw_a->mmu().total_used_bytes(), 0u);
}

// The watchdog at its defaults (200 ms / 200 ms) never mistakes a 16:1 incast's PFC for a
// storm: the same pauses, the same delivery, no storm on any port of either switch.
TEST(IncastSim, NormalPfcNeverTripsTheWatchdog) {
  SwitchParams p = small_buffer(true);
  p.pfc_watchdog = PfcWatchdog{200 * kNsPerMs, 200 * kNsPerMs};
  Incast net(p);
  net.sim->run_until(100 * kNsPerMs);
  EXPECT_EQ(net.rx().rx_packets, kSenders * kPacketsPerSender);
  EXPECT_EQ(net.sw_a->total_drops() + net.sw_b->total_drops(), 0u);
  for (const SoftSwitch* sw : {net.sw_a.get(), net.sw_b.get()}) {
    const auto snap = sw->snapshot(net.sim->now());
    for (const auto& port : snap.ports)
      for (uint64_t s : port.pfc_storms) EXPECT_EQ(s, 0u);
  }
  const auto sa = net.sw_a->snapshot(net.sim->now());
  EXPECT_GT(sa.ports[net.a_port_to_b].pfc_pauses_received[3], 0u) << "PFC did act";
}

TEST(IncastSim, WithoutPfcTheLossyClassDropsAndCountsIt) {
  Incast net(small_buffer(false));
  net.sim->run_until(100 * kNsPerMs);
  const uint64_t total = kSenders * kPacketsPerSender;
  const auto sb = net.sw_b->snapshot(net.sim->now());
  const uint64_t dropped = sb.ports[net.b_port_to_receiver].drops[static_cast<int>(DropReason::kBufferFull)];
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(net.sw_b->drops(net.b_port_to_receiver, RxDrop::kBufferFull), dropped);
  EXPECT_EQ(net.sw_a->total_drops(), 0u);
  EXPECT_EQ(net.rx().rx_packets + dropped, total);
  for (const auto& port : sb.ports)
    for (uint64_t s : port.pfc_pauses_sent) EXPECT_EQ(s, 0u);
  for (int i = 0; i < kSenders; ++i) EXPECT_EQ(net.sender(i).pfc_frames_received, 0u);
}

TEST(IncastSim, EcnMarksAppearOnlyAboveKmin) {
  SwitchParams p = small_buffer(true);
  p.ecn.kmin_kb = 40;
  p.ecn.kmax_kb = 400;
  p.ecn.pmax = 0.2;
  Incast net(p);
  // Only B marks: A's thresholds are out of reach, so every CE seen is B's decision.
  for (uint16_t port = 0; port < net.sw_a->num_ports(); ++port)
    ASSERT_EQ(net.sw_a->set_ecn(port, EcnSetting{~0u, ~0u, 1.0}), "");
  uint64_t marked = 0, unmarked_below = 0, marked_below = 0;
  net.sim->set_tx_tap([&](uint32_t node, uint16_t port, rte_mbuf* m, TimeNs) {
    if (node != net.b || port != net.b_port_to_receiver) return;
    const uint32_t left = net.sw_b->queue_bytes(port, 3);  // what the packet left behind
    const bool ce = test::ipv4_of(m)->ecn() == wire::kEcnCe;
    marked += ce;
    if (left <= 40 * 1024) (ce ? marked_below : unmarked_below) += 1;
  });
  net.sim->run_until(100 * kNsPerMs);
  EXPECT_GT(marked, 100u);
  EXPECT_EQ(marked_below, 0u);
  EXPECT_GT(unmarked_below, 0u);
  EXPECT_EQ(net.rx().rx_ce_packets, marked);
  EXPECT_EQ(net.sw_b->snapshot(0).ports[net.b_port_to_receiver].ecn_marked_packets, marked);
}

TEST(IncastSim, QueueSeriesRecordsTheBottleneckQueueAndFullUtilisation) {
  Incast net(small_buffer(true));
  const std::string path = "/tmp/rocemu_switch_series_" + std::to_string(getpid()) + ".csv";
  {
    QueueSeriesWriter w(path, net.topo.node(net.b).name, {net.b_port_to_receiver}, 100 * kNsPerUs);
    net.sim->set_probe(100 * kNsPerUs, [&](TimeNs now) { w.sample(*net.sw_b, now); });
    net.sim->run_until(100 * kNsPerMs);
    EXPECT_GE(w.rows(), 35u);  // ~3.9 ms of traffic at one row per 100 us
  }
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("time_ns,node,port,queue_bytes", 0), 0u);
  int busy_rows = 0, full_rows = 0;
  uint64_t max_q = 0;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string f[10];
    for (auto& x : f) std::getline(ss, x, ',');
    EXPECT_EQ(f[1], "B") << "the node column names the switch";
    const double util = std::stod(f[6]);
    const uint64_t q = std::stoull(f[3]);
    max_q = std::max(max_q, q);
    EXPECT_LE(util, 1.0001) << line;
    if (q > 0) {
      ++busy_rows;
      full_rows += util > 0.99;
    }
  }
  EXPECT_GT(max_q, 100'000u);
  EXPECT_GE(full_rows, busy_rows - 2);  // the first row has no previous sample
  std::remove(path.c_str());
}

TEST(IncastSim, CapturedPfcFrameIsDissectedByTsharkWithTheRightClassEnableVector) {
  Incast net(small_buffer(true));
  const std::string path = "/tmp/rocemu_switch_pfc_" + std::to_string(getpid()) + ".pcapng";
  {
    fabric::PcapngCapture cap(path, {"B-to-A", "B-to-rx"});
    net.sim->set_tx_tap([&](uint32_t node, uint16_t port, rte_mbuf* m, TimeNs now) {
      if (node != net.b) return;
      if (port == net.b_port_to_a) cap.capture(m, 0, fabric::PcapngCapture::Direction::kOut, now);
      if (port == net.b_port_to_receiver && cap.captured() < 50)
        cap.capture(m, 1, fabric::PcapngCapture::Direction::kOut, now);
    });
    net.sim->run_until(100 * kNsPerMs);
    EXPECT_GT(cap.captured(), 0u);
    EXPECT_EQ(cap.dropped(), 0u);
  }
  const std::string cmd = "/usr/bin/tshark -r " + path +
                          " -Y 'macc.opcode == 0x0101' -T fields -E separator=, -e frame.interface_name"
                          " -e eth.dst -e macc.cbfc.enbv -e macc.cbfc.pause_time.c3 2>/dev/null";
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, f)) out += buf;
  ASSERT_EQ(pclose(f), 0) << out;
  std::stringstream ss(out);
  std::string line;
  int xoff = 0, xon = 0;
  while (std::getline(ss, line)) {
    EXPECT_EQ(line.rfind("B-to-A,01:80:c2:00:00:01,0x0008,", 0), 0u) << line;
    xoff += line.ends_with(",65535");
    xon += line.ends_with(",0");
  }
  EXPECT_GT(xoff, 0) << out;
  EXPECT_GT(xon, 0) << out;
  // Data frames on the other interface dissect as RoCEv2 (UDP 4791 -> InfiniBand BTH).
  const std::string cmd2 = "/usr/bin/tshark -r " + path +
                           " -Y 'infiniband && ip.dsfield.dscp == 26' -T fields -e frame.interface_name 2>/dev/null | sort | uniq -c";
  f = popen(cmd2.c_str(), "r");
  ASSERT_NE(f, nullptr);
  out.clear();
  while (fgets(buf, sizeof buf, f)) out += buf;
  pclose(f);
  EXPECT_NE(out.find("B-to-rx"), std::string::npos) << out;
  if (!HasFailure()) std::remove(path.c_str());
}

}  // namespace
}  // namespace rocemu::sw
