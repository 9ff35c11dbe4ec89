// Virtual-time engine: link timing (serialisation at link rate + propagation delay),
// back-to-back frames, timers, deterministic tie-breaking, periodic callbacks, seeded
// impairments.
#include "fabric/virtual_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <queue>

#include "common/rng.h"
#include "common/topology_generators.h"
#include "fabric/event_heap.h"
#include "tests/fabric/fabric_pool.h"
#include "tests/fabric/test_nodes.h"

namespace rocemu::fabric {

using tnodes::BlastHost;
using tnodes::FifoSwitch;
using tnodes::Received;

namespace {
// Two hosts joined by one link.
Topology pair(uint64_t rate_bps, TimeNs delay_ns) {
  Topology t;
  t.add_node("h0", NodeKind::kHost);
  t.add_node("h1", NodeKind::kHost);
  t.add_link(0, 1, rate_bps, delay_ns);
  return t;
}
}  // namespace

TEST(VirtualLink, A1000ByteFrameOn10GbpsWith1usDelayArrivesAt1800ns) {
  const Topology t = pair(10 * kBpsPerGbps, 1000);
  VirtualEngine e(t, {}, 1);
  BlastHost a(tnodes::test_pool(), t.node(0).ipv4, t.node(1).ipv4, 1, 1000);
  BlastHost b(tnodes::test_pool(), t.node(1).ipv4, t.node(0).ipv4, 0, 1000);
  e.attach(0, &a);
  e.attach(1, &b);
  e.run_until(kNsPerMs);
  ASSERT_EQ(b.received().size(), 1u);
  EXPECT_EQ(b.received()[0].at_ns, 1800);
  EXPECT_EQ(e.counters(PortRef{0, 0}).tx_bytes, 1000u);
  EXPECT_EQ(e.counters(PortRef{1, 0}).rx_packets, 1u);
}

TEST(VirtualLink, BackToBackFramesArriveOneSerialisationTimeApart) {
  const Topology t = pair(25 * kBpsPerGbps, 2000);
  VirtualEngine e(t, {}, 1);
  BlastHost a(tnodes::test_pool(), t.node(0).ipv4, t.node(1).ipv4, 4, 1500);
  BlastHost b(tnodes::test_pool(), t.node(1).ipv4, t.node(0).ipv4, 0, 64);
  e.attach(0, &a);
  e.attach(1, &b);
  e.run_until(kNsPerMs);
  ASSERT_EQ(b.received().size(), 4u);
  for (uint64_t k = 0; k < 4; ++k) {
    EXPECT_EQ(b.received()[k].seq, k);
    EXPECT_EQ(b.received()[k].at_ns, static_cast<TimeNs>((k + 1) * 480 + 2000));  // 1500 B @ 25G = 480 ns
  }
}

TEST(VirtualLink, StoreAndForwardThroughASwitchAddsOneSerialisationPerHop) {
  const Topology t = make_star(StarParams{2, 10 * kBpsPerGbps, 1000});
  VirtualEngine e(t, {}, 1);
  BlastHost a(tnodes::test_pool(), t.node(0).ipv4, t.node(1).ipv4, 1, 1000);
  BlastHost b(tnodes::test_pool(), t.node(1).ipv4, t.node(0).ipv4, 0, 64);
  FifoSwitch s(t, 2);
  e.attach(0, &a);
  e.attach(1, &b);
  e.attach(2, &s);
  e.run_until(kNsPerMs);
  ASSERT_EQ(b.received().size(), 1u);
  EXPECT_EQ(b.received()[0].at_ns, 2 * 1800);
}

TEST(VirtualEngine, PacedSenderIsWokenByItsTimerAtEachDeadline) {
  const Topology t = pair(10 * kBpsPerGbps, 1000);
  VirtualEngine e(t, {}, 1);
  BlastHost a(tnodes::test_pool(), t.node(0).ipv4, t.node(1).ipv4, 5, 1000, /*gap_ns=*/5000,
              /*start_ns=*/3000);
  BlastHost b(tnodes::test_pool(), t.node(1).ipv4, t.node(0).ipv4, 0, 64);
  e.attach(0, &a);
  e.attach(1, &b);
  e.run_until(kNsPerMs);
  ASSERT_EQ(b.received().size(), 5u);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(b.received()[k].at_ns, 3000 + 5000 * k + 1800);
  EXPECT_EQ(a.timer_calls(), 5u);
}

TEST(VirtualEngine, RunUntilStopsAtTheHorizonAndResumes) {
  const Topology t = pair(10 * kBpsPerGbps, 1000);
  VirtualEngine e(t, {}, 1);
  BlastHost a(tnodes::test_pool(), t.node(0).ipv4, t.node(1).ipv4, 10, 1000);
  BlastHost b(tnodes::test_pool(), t.node(1).ipv4, t.node(0).ipv4, 0, 64);
  e.attach(0, &a);
  e.attach(1, &b);
  EXPECT_EQ(e.run_until(3000), 3000);
  EXPECT_EQ(b.received().size(), 2u);  // 1800, 2600
  e.run_until(kNsPerMs);
  EXPECT_EQ(b.received().size(), 10u);
  EXPECT_EQ(b.received().back().at_ns, 10 * 800 + 1000);
}

namespace {
// Two senders into one receiver through a switch, both starting at t=0: frames collide at
// the switch egress at identical times, so the order depends only on tie-breaking.
std::vector<Received> incast_run(uint64_t seed) {
  const Topology t = make_star(StarParams{3, 10 * kBpsPerGbps, 1000});
  std::vector<LinkOptions> lo(t.links().size());
  VirtualEngine e(t, lo, seed);
  BlastHost a(tnodes::test_pool(), t.node(0).ipv4, t.node(2).ipv4, 50, 1000);
  BlastHost b(tnodes::test_pool(), t.node(1).ipv4, t.node(2).ipv4, 50, 1000);
  BlastHost c(tnodes::test_pool(), t.node(2).ipv4, t.node(0).ipv4, 0, 64);
  FifoSwitch s(t, 3);
  e.attach(0, &a);
  e.attach(1, &b);
  e.attach(2, &c);
  e.attach(3, &s);
  e.run_until(kNsPerMs);
  return c.received();
}
}  // namespace

TEST(VirtualEngine, SimultaneousEventsAreOrderedByInsertionSoRunsRepeatExactly) {
  const auto r1 = incast_run(7);
  const auto r2 = incast_run(7);
  ASSERT_EQ(r1.size(), 100u);
  EXPECT_EQ(r1, r2);
  // Arrivals at the switch tie at every 800 ns; h0's link was created first, so its frame is
  // scheduled first and wins each tie: the switch interleaves h0, h1, h0, h1, ...
  for (size_t i = 0; i + 1 < r1.size(); i += 2) {
    EXPECT_EQ(r1[i].src_ip, r1[0].src_ip);
    EXPECT_NE(r1[i + 1].src_ip, r1[0].src_ip);
  }
  // The bottleneck egress is busy without a gap: one frame per 800 ns after the first.
  for (size_t i = 1; i < r1.size(); ++i) EXPECT_EQ(r1[i].at_ns - r1[i - 1].at_ns, 800);
}

TEST(VirtualEngine, PeriodicCallbacksFireEveryPeriodInRegistrationOrder) {
  const Topology t = pair(10 * kBpsPerGbps, 1000);
  VirtualEngine e(t, {}, 1);
  BlastHost a(tnodes::test_pool(), t.node(0).ipv4, t.node(1).ipv4, 0, 64);
  BlastHost b(tnodes::test_pool(), t.node(1).ipv4, t.node(0).ipv4, 0, 64);
  e.attach(0, &a);
  e.attach(1, &b);
  std::vector<std::pair<int, TimeNs>> calls;
  e.every(10'000, [&](TimeNs now) { calls.emplace_back(1, now); });
  e.every(10'000, [&](TimeNs now) {
    calls.emplace_back(2, now);
    if (now >= 30'000) e.stop();
  });
  e.run_until(kNsPerMs);
  const std::vector<std::pair<int, TimeNs>> want = {{1, 0},      {2, 0},      {1, 10'000}, {2, 10'000},
                                                    {1, 20'000}, {2, 20'000}, {1, 30'000}, {2, 30'000}};
  EXPECT_EQ(calls, want);
  EXPECT_EQ(e.now(), 30'000);
}

TEST(VirtualEngine, SeededImpairmentsDropReorderAndDuplicateAtTheirRates) {
  const Topology t = pair(100 * kBpsPerGbps, 1000);
  std::vector<LinkOptions> lo(1);
  lo[0].impairment = LinkImpairment{0.01, 0.01, 0.01, 5000};
  auto run = [&](uint64_t seed) {
    VirtualEngine e(t, lo, seed);
    BlastHost a(tnodes::test_pool(), t.node(0).ipv4, t.node(1).ipv4, 20000, 256);
    BlastHost b(tnodes::test_pool(), t.node(1).ipv4, t.node(0).ipv4, 0, 64);
    e.attach(0, &a);
    e.attach(1, &b);
    e.run_until(kNsPerSec);
    return std::make_pair(e.stats(), b.received());
  };
  const auto [s1, r1] = run(3);
  const auto [s2, r2] = run(3);
  const auto [s3, r3] = run(4);
  // 20000 trials at p = 0.01: mean 200, sd ~14; +-5 sd.
  for (uint64_t n : {s1.lost, s1.reordered, s1.duplicated}) {
    EXPECT_GT(n, 130u);
    EXPECT_LT(n, 270u);
  }
  EXPECT_EQ(r1.size(), 20000 - s1.lost + s1.duplicated);
  EXPECT_EQ(r1, r2);   // same seed, same faults
  EXPECT_NE(r1, r3);   // another seed, other faults
  size_t out_of_order = 0;
  for (size_t i = 1; i < r1.size(); ++i) out_of_order += r1[i].seq < r1[i - 1].seq;
  EXPECT_GT(out_of_order, 100u);
}

TEST(VirtualEngine, AttachRejectsANodeWithTheWrongPortCount) {
  const Topology t = make_star(StarParams{2, 10 * kBpsPerGbps, 1000});
  VirtualEngine e(t, {}, 1);
  BlastHost a(tnodes::test_pool(), 1, 2, 0, 64);
  EXPECT_THROW(e.attach(2, &a), std::invalid_argument);
  EXPECT_THROW(e.run_until(10), std::logic_error);
}

}  // namespace rocemu::fabric

namespace rocemu::fabric {
namespace {
// A host that always reports its deadline as "now" while it has frames, even when its wire
// is busy (a legal but eager Node): the engine must not spin at one instant.
class EagerHost final : public Node {
 public:
  EagerHost(rte_mempool* pool, uint32_t n) : inner_(pool, 1, 2, n, 1000) {}
  uint16_t num_ports() const noexcept override { return 1; }
  void rx(uint16_t p, rte_mbuf* const* m, uint16_t n, TimeNs now) noexcept override { inner_.rx(p, m, n, now); }
  rte_mbuf* tx(uint16_t p, TimeNs now) noexcept override { return inner_.tx(p, now); }
  TimeNs next_deadline() const noexcept override { return inner_.sent() < 5 ? 0 : kNever; }
  void on_timer(TimeNs) noexcept override {}
 private:
  tnodes::BlastHost inner_;
};
}  // namespace

TEST(VirtualEngine, AnEagerDeadlineWhileTheWireIsBusyIsDeferredToWireFreeNotSpun) {
  Topology t;
  t.add_node("h0", NodeKind::kHost);
  t.add_node("h1", NodeKind::kHost);
  t.add_link(0, 1, 10 * kBpsPerGbps, 1000);
  VirtualEngine e(t, {}, 1);
  EagerHost a(tnodes::test_pool(), 5);
  tnodes::BlastHost b(tnodes::test_pool(), 2, 1, 0, 64);
  e.attach(0, &a);
  e.attach(1, &b);
  e.run_until(kNsPerMs);
  ASSERT_EQ(b.received().size(), 5u);
  EXPECT_EQ(b.received()[4].at_ns, 5 * 800 + 1000);
  EXPECT_GT(e.stats().deferred_timers, 0u);
  EXPECT_LT(e.stats().events, 100u);
}

namespace {
// A switch whose every tx_next_hint() is one mbuf of its own, held for its whole life.
class HintingSwitch : public tnodes::FifoSwitch {
 public:
  HintingSwitch(const Topology& t, uint32_t self)
      : FifoSwitch(t, self), hint_(rte_pktmbuf_alloc(tnodes::test_pool())) {}
  ~HintingSwitch() override { rte_pktmbuf_free(hint_); }
  const rte_mbuf* tx_next_hint(uint16_t) const noexcept override { return hint_; }

 private:
  rte_mbuf* hint_;
};
}  // namespace

// A wire-free event carries the node's tx_next_hint() for prefetching only: stopping an
// engine with such events pending and destroying it frees none of them (the node frees its
// own), so every mbuf is back in the pool exactly once; and the hint changes no result.
TEST(VirtualEngine, WireFreeHintsAreNeverFreedByTheEngineAndChangeNothing) {
  rte_mempool* pool = tnodes::test_pool();
  // Some mbufs held out: the pool's count is capped at its size, which would hide a double
  // free from a full pool.
  std::vector<rte_mbuf*> held(100);
  ASSERT_EQ(rte_pktmbuf_alloc_bulk(pool, held.data(), 100), 0);
  const unsigned before = rte_mempool_avail_count(pool);
  const Topology t = make_star(StarParams{3, 10 * kBpsPerGbps, 1000});
  auto run = [&](bool hinting, TimeNs until) {
    VirtualEngine e(t, {}, 1);
    BlastHost a(pool, t.node(0).ipv4, t.node(2).ipv4, 50, 1000);
    BlastHost b(pool, t.node(1).ipv4, t.node(2).ipv4, 50, 1000);
    BlastHost c(pool, t.node(2).ipv4, t.node(0).ipv4, 0, 64);
    std::unique_ptr<tnodes::FifoSwitch> s = hinting ? std::make_unique<HintingSwitch>(t, 3)
                                                    : std::make_unique<tnodes::FifoSwitch>(t, 3);
    e.attach(0, &a);
    e.attach(1, &b);
    e.attach(2, &c);
    e.attach(3, s.get());
    e.run_until(until);
    EXPECT_GT(e.pending_events(), 0u);  // wire-free marks among them
    return c.received();
  };
  const auto plain = run(false, 20 * kNsPerUs);
  const auto hinted = run(true, 20 * kNsPerUs);
  ASSERT_FALSE(plain.empty());
  ASSERT_EQ(plain.size(), hinted.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(plain[i].at_ns, hinted[i].at_ns);
    EXPECT_EQ(plain[i].seq, hinted[i].seq);
  }
  EXPECT_EQ(rte_mempool_avail_count(pool), before);
  for (rte_mbuf* m : held) rte_pktmbuf_free(m);
}

namespace {
// A node wired to itself (its port 0 sends to its port 1), sending `total` frames: one every
// `gap_ns` on its own, and one more for each frame that arrives on port 1, at once if the
// wire is free. So the arrival of a wire's head reaches the very node that sends on that wire
// while the frame behind the head is still to be queued (the engine queues it after the
// node's call), and the frame the node launches then goes behind it on the same wire (~300
// times in this test); the wire, ever fuller, grows its in-flight ring (16, 32, 64 ...).
class SelfWired : public Node {
 public:
  struct Arrival {
    uint16_t port;
    uint64_t seq;
    TimeNs at_ns;
  };
  SelfWired(rte_mempool* pool, uint64_t total, uint16_t frame_bytes, TimeNs gap_ns)
      : pool_(pool), total_(total), frame_bytes_(frame_bytes), gap_ns_(gap_ns) {}
  uint16_t num_ports() const noexcept override { return 2; }
  void rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept override {
    for (uint16_t i = 0; i < n; ++i) {
      uint64_t seq = 0;
      std::memcpy(&seq, rte_pktmbuf_mtod(pkts[i], const void*), sizeof(seq));
      arrivals_.push_back(Arrival{port, seq, now});
      rte_pktmbuf_free(pkts[i]);
      ++credits_;
    }
  }
  rte_mbuf* tx(uint16_t port, TimeNs now) noexcept override {
    if (port != 0 || launched_.size() == total_) return nullptr;
    if (credits_ > 0) {
      --credits_;
    } else if (now >= next_paced_ns_) {
      next_paced_ns_ = now + gap_ns_;
    } else {
      return nullptr;
    }
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    if (!m) return nullptr;
    char* d = rte_pktmbuf_append(m, frame_bytes_);
    std::memset(d, 0, frame_bytes_);
    const uint64_t seq = launched_.size();
    std::memcpy(d, &seq, sizeof(seq));
    launched_.push_back(now);
    return m;
  }
  TimeNs next_deadline() const noexcept override {
    return launched_.size() < total_ ? next_paced_ns_ : kNever;
  }
  void on_timer(TimeNs) noexcept override {}

  const std::vector<Arrival>& arrivals() const noexcept { return arrivals_; }
  const std::vector<TimeNs>& launched() const noexcept { return launched_; }

 private:
  rte_mempool* pool_;
  uint64_t total_;
  uint16_t frame_bytes_;
  TimeNs gap_ns_;
  TimeNs next_paced_ns_ = 0;
  uint64_t credits_ = 0;
  std::vector<TimeNs> launched_;
  std::vector<Arrival> arrivals_;
};
}  // namespace

TEST(VirtualEngine, AWireIntoItsOwnNodeDeliversEveryFrameOnceInOrderAtItsTime) {
  rte_mempool* pool = tnodes::test_pool();
  const unsigned before = rte_mempool_avail_count(pool);
  constexpr uint64_t kFrames = 600;
  for (const TimeNs delay_ns : {TimeNs{1000}, TimeNs{997}, TimeNs{2500}}) {
    for (const uint16_t bytes : {uint16_t{64}, uint16_t{100}, uint16_t{1500}}) {
      Topology t;
      t.add_node("loop", NodeKind::kSwitch);
      t.add_link(0, 0, 100 * kBpsPerGbps, delay_ns);
      const TimeNs ser = serialization_ns(bytes, 100 * kBpsPerGbps);
      {
        VirtualEngine e(t, {}, 1);
        SelfWired n(pool, kFrames, bytes, 3 * ser + 7);
        e.attach(0, &n);
        e.run_until(kNsPerSec);
        const std::string at = "delay " + std::to_string(delay_ns) + " ns, " + std::to_string(bytes) + " B";
        ASSERT_EQ(n.launched().size(), kFrames) << at;
        ASSERT_EQ(n.arrivals().size(), kFrames) << at;
        for (uint64_t k = 0; k < kFrames; ++k) {
          const SelfWired::Arrival& a = n.arrivals()[k];
          ASSERT_EQ(a.port, 1) << at;
          ASSERT_EQ(a.seq, k) << at;  // each once, in launch order
          ASSERT_EQ(a.at_ns, n.launched()[k] + ser + delay_ns) << at << ", frame " << k;
        }
        // Frames on the wire at once, at each launch: with small frames more than the ring's
        // first 16 slots, so it grew during the run.
        size_t most = 0, arrived = 0;
        for (size_t k = 0; k < kFrames; ++k) {
          while (arrived < kFrames && n.arrivals()[arrived].at_ns <= n.launched()[k]) ++arrived;
          most = std::max(most, k + 1 - arrived);
        }
        if (bytes < 1000) {
          EXPECT_GT(most, 16u) << at;
        }
        EXPECT_EQ(e.counters(PortRef{0, 1}).rx_packets, kFrames) << at;
        EXPECT_EQ(e.pending_events(), 0u) << at;
      }
    }
  }
  EXPECT_EQ(rte_mempool_avail_count(pool), before);
}

}  // namespace rocemu::fabric

namespace rocemu::fabric {
namespace {

// An event for the queue tests, and std::priority_queue's order for it (the reference).
struct E {
  TimeNs t;
  uint64_t seq;
};
struct Later {
  bool operator()(const E& a, const E& b) const { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }
};

// The engine's 4-ary heap pops in exactly the (t, seq) order a binary heap does: checked
// against std::priority_queue over interleaved pushes and pops with many equal times.
TEST(EventHeap, PopsInTimeThenSequenceOrderLikeAPriorityQueue) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed, "event-heap-test");
    EventHeap<E> heap;
    std::priority_queue<E, std::vector<E>, Later> ref;
    uint64_t seq = 0;
    for (int step = 0; step < 5000; ++step) {
      if (ref.empty() || rng.uniform() < 0.55) {
        const E e{static_cast<TimeNs>(rng.uniform() * 64), seq++};  // many ties in t
        heap.push(e);
        ref.push(e);
      } else {
        const E a = heap.pop(), b = ref.top();
        ref.pop();
        ASSERT_EQ(a.t, b.t) << "seed " << seed << " step " << step;
        ASSERT_EQ(a.seq, b.seq) << "seed " << seed << " step " << step;
      }
      ASSERT_EQ(heap.size(), ref.size());
    }
    while (!ref.empty()) {
      ASSERT_EQ(heap.pop().seq, ref.top().seq);
      ref.pop();
    }
    EXPECT_TRUE(heap.empty());
  }
}

// The calendar queue pops in exactly the order the heap does, over pushes that land in the
// current bucket, in later buckets of the window, beyond it (the far heap), and before the
// current bucket; small buckets and a small window make every one of those paths frequent.
TEST(CalendarQueue, PopsInTimeThenSequenceOrderLikeAPriorityQueue) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Rng rng(seed, "calendar-queue-test");
    CalendarQueue<E> q(/*width_shift=*/2, /*slots_log2=*/seed % 2 ? 3 : 7);
    std::priority_queue<E, std::vector<E>, Later> ref;
    uint64_t seq = 0;
    TimeNs now = 0;
    for (int step = 0; step < 6000; ++step) {
      if (ref.empty() || rng.uniform() < 0.55) {
        // Mostly near-future of the last pop, some far ahead, some before it.
        const double u = rng.uniform();
        TimeNs t = now + static_cast<TimeNs>(rng.uniform() * 40);
        if (u < 0.1) t = now + static_cast<TimeNs>(rng.uniform() * 4000);
        if (u > 0.95) t = std::max<TimeNs>(0, now - static_cast<TimeNs>(rng.uniform() * 30));
        const E e{t, seq++};
        q.push(e);
        ref.push(e);
      } else {
        const E a = q.pop(), b = ref.top();
        ref.pop();
        ASSERT_EQ(a.t, b.t) << "seed " << seed << " step " << step;
        ASSERT_EQ(a.seq, b.seq) << "seed " << seed << " step " << step;
        now = a.t;
      }
      ASSERT_EQ(q.size(), ref.size());
      if (!ref.empty()) {
        ASSERT_EQ(q.top().seq, ref.top().seq) << "seed " << seed << " step " << step;
      }
    }
    size_t visited = 0;
    q.for_each([&](const E&) { ++visited; });
    EXPECT_EQ(visited, ref.size());
    while (!ref.empty()) {
      ASSERT_EQ(q.pop().seq, ref.top().seq);
      ref.pop();
    }
    EXPECT_TRUE(q.empty());
  }
}

// Crowded buckets (the bucket sort's counting path: 32 or more events in one bucket), with
// sequence numbers out of push order (as a wire's queued frames keep theirs) and runs of equal
// times both short (insertion) and long (sorted): still the priority queue's order.
TEST(CalendarQueue, CrowdedBucketsPopInTimeThenSequenceOrder) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Rng rng(seed, "calendar-queue-crowded");
    CalendarQueue<E> q(/*width_shift=*/5, /*slots_log2=*/6);
    std::priority_queue<E, std::vector<E>, Later> ref;
    uint64_t next_seq = 0;
    TimeNs now = 0;
    size_t counted = 0;  // pops from buckets that held >= 32 events
    for (int round = 0; round < 60; ++round) {
      // A burst: 20-400 events over 1-40 distinct times of the next few buckets.
      const size_t n = 20 + rng.below(381);
      const uint64_t distinct = 1 + rng.below(40);
      std::vector<uint64_t> seqs(n);
      for (auto& v : seqs) v = next_seq++;
      for (size_t i = n; i > 1; --i) std::swap(seqs[i - 1], seqs[rng.below(i)]);
      for (size_t i = 0; i < n; ++i) {
        const TimeNs t = now + 1 + static_cast<TimeNs>(rng.below(distinct)) * (1 + rng.below(3));
        q.push(E{t, seqs[i]});
        ref.push(E{t, seqs[i]});
      }
      counted += n >= 32;
      // Pop most of it (pushes then land in the current bucket and the window as well).
      const size_t pops = ref.size() - ref.size() / 4;
      for (size_t i = 0; i < pops; ++i) {
        const E a = q.pop(), b = ref.top();
        ref.pop();
        ASSERT_EQ(a.t, b.t) << "seed " << seed << " round " << round;
        ASSERT_EQ(a.seq, b.seq) << "seed " << seed << " round " << round;
        now = a.t;
      }
    }
    while (!ref.empty()) {
      ASSERT_EQ(q.pop().seq, ref.top().seq) << "seed " << seed;
      ref.pop();
    }
    EXPECT_TRUE(q.empty());
    EXPECT_GT(counted, 10u);
  }
}

}  // namespace
}  // namespace rocemu::fabric
