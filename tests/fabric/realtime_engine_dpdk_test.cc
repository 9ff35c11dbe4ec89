// The real-time engine's loop itself (suite `dpdk`, net_ring wires in one process): poll(),
// one iteration for callers with their own loop, and frames the ethdev refuses (its tx
// ring full) kept and offered again in order, never dropped. Never skips: EAL failure fails.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <vector>

#include "common/topology.h"
#include "fabric/realtime_engine.h"
#include "tests/fabric/test_nodes.h"
#include "tests/support/fabric_eal.h"

namespace rocemu::fabric {
namespace {

Topology two_hosts(uint64_t rate_bps) {
  Topology t;
  const uint32_t a = t.add_node("h0", NodeKind::kHost);
  const uint32_t b = t.add_node("h1", NodeKind::kHost);
  t.add_link(a, b, rate_bps, 0);
  t.mutable_nodes()[a].ipv4 = 0x0a000001;
  t.mutable_nodes()[b].ipv4 = 0x0a000002;
  return t;
}

/// Polls `e` (poll(): one iteration at a time) until `done()` or 30 s of wall time (a generous
/// bound for a loaded machine: the frames below need a few ms).
template <class Done>
bool poll_until(RealtimeEngine& e, Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    e.poll();
    if (std::chrono::steady_clock::now() > give_up) return false;
  }
  return true;
}

/// A receiver slower than the wire: it spins `spin_us` per burst before taking it.
class SlowHost : public tnodes::BlastHost {
 public:
  SlowHost(rte_mempool* pool, uint32_t ip, int64_t spin_us)
      : BlastHost(pool, ip, 0, 0, 64), spin_us_(spin_us) {}
  void rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept override {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
    while (std::chrono::steady_clock::now() < until) {
    }
    BlastHost::rx(port, pkts, n, now);
  }

 private:
  int64_t spin_us_;
};

TEST(RealtimeLoop, RefusedFramesAreOfferedAgainInOrderNotDropped) {
  test::start_fabric_eal("rocemu-realtime-engine-test", "0,1");
  // h0 (main lcore) sends a frame per iteration into a 16-slot ring wire (15 frames);
  // h1 (worker lcore 1) drains it 32 frames per 200 us at most: the ring fills and the
  // ethdev refuses h0's frames, which must arrive all the same, in order.
  const Topology t = two_hosts(100'000'000'000ULL);
  RealtimeOptions o;
  o.ring_size = 16;
  o.pool_mbufs = 4095;
  o.node_lcore = {0, 1};
  RealtimeEngine e(t, {}, o);
  constexpr uint64_t kFrames = 600;
  tnodes::BlastHost h0(e.pool(), 0x0a000001, 0x0a000002, kFrames, 1000);
  SlowHost h1(e.pool(), 0x0a000002, 200);
  e.attach(0, &h0);
  e.attach(1, &h1);
  // run_for joins the worker when it returns, so h1 is read only between runs. 60 s in all:
  // the frames need about 10 ms on a quiet machine.
  for (int i = 0; i < 600 && h1.received_count() < kFrames; ++i) e.run_for(100 * kNsPerMs);
  ASSERT_EQ(h1.received_count(), kFrames);
  EXPECT_GT(e.stats().tx_refused, 0u);
  EXPECT_EQ(e.counters(PortRef{0, 0}).dropped, 0u);
  EXPECT_EQ(e.counters(PortRef{0, 0}).tx_packets, kFrames);
  ASSERT_EQ(h1.received().size(), kFrames);
  for (uint64_t i = 0; i < kFrames; ++i) ASSERT_EQ(h1.received()[i].seq, i) << "at " << i;
}

TEST(RealtimeLoop, PollNeedsEveryNodeAttachedAndResetClockRestartsTime) {
  test::start_fabric_eal("rocemu-realtime-engine-test", "0,1");
  const Topology t = two_hosts(10'000'000'000ULL);
  RealtimeOptions o;
  o.pool_mbufs = 1023;
  RealtimeEngine e(t, {}, o);
  tnodes::BlastHost h0(e.pool(), 0x0a000001, 0x0a000002, 10, 1000);
  tnodes::BlastHost h1(e.pool(), 0x0a000002, 0x0a000001, 0, 1000);
  e.attach(0, &h0);
  EXPECT_THROW(e.poll(), std::logic_error);  // h1 has no node
  e.attach(1, &h1);
  // Time 0 moves to now: after a 200 ms wait, engine time is back far below it (the TSC's
  // rate estimate differs from the steady clock's by a fraction of a percent).
  const auto wait_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (std::chrono::steady_clock::now() < wait_until) {
  }
  ASSERT_GE(e.now_ns(), 190 * kNsPerMs);
  e.reset_clock();
  EXPECT_LT(e.now_ns(), 100 * kNsPerMs);
  int periodic = 0;
  e.every(kNsPerMs, [&](TimeNs) { ++periodic; });
  ASSERT_TRUE(poll_until(e, [&] { return h1.received_count() == 10 && periodic >= 2; }));
  EXPECT_EQ(e.stats().tx_refused, 0u);
}

}  // namespace
}  // namespace rocemu::fabric
