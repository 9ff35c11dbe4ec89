// cm_fuzz_test.cc — a seeded corpus of hostile networks between two rdma_cm state machines
// (see cm_fuzz_harness.h): MADs dropped, duplicated, garbled, forged at live connections,
// time passing and the applications accepting, rejecting and disconnecting. Every MAD sent
// is well formed, events follow the state machine, and the timers stop once the network is
// silent.
#include <gtest/gtest.h>

#include <set>

#include "common/rng.h"
#include "tests/nic/cm_fuzz_harness.h"

namespace rocemu::test {
namespace {

TEST(CmFuzz, HostileNetworksKeepTheStateMachineWellFormedAndItsTimersFinite) {
  CmFuzzHarness h;
  Rng r(2026, "cm-corpus");
  std::set<int> kinds[2];
  uint64_t duplicates = 0, malformed = 0, unexpected = 0;
  for (int input = 0; input < 1500; ++input) {
    h.start();
    const int steps = static_cast<int>(r.below(60));
    for (int step = 0; step < steps; ++step) {
      uint8_t arg[cm::kMadBytes];
      for (auto& b : arg) b = static_cast<uint8_t>(r.next());
      // Mostly the network's plain work (deliver, drop, time) and the applications; now and
      // then a duplicate, a garbled MAD, a raw one or one aimed at a live connection.
      static constexpr uint8_t kOps[] = {0, 0, 1, 1, 2, 6, 6, 7, 7, 3, 4, 5, 5};
      const uint8_t op = static_cast<uint8_t>(kOps[r.below(sizeof kOps)] | (r.below(2) << 7) |
                                              (r.below(8) == 0 ? 0x40 : 0));
      const size_t len = (op & 7) == 4 && r.below(4) == 0 ? r.below(cm::kMadBytes + 1) : cm::kMadBytes;
      ASSERT_EQ(h.step(op, arg, len), "") << "input " << input << ", step " << step;
    }
    ASSERT_EQ(h.finish(), "") << "input " << input;
    for (int s = 0; s < 2; ++s) {
      for (const auto& e : h.events(s)) kinds[s].insert(static_cast<int>(e.kind));
      duplicates += h.side(s).counters().duplicates;
      malformed += h.side(s).counters().malformed;
      unexpected += h.side(s).counters().unexpected;
    }
  }
  // Every event kind, on both sides, and every kind of refusal.
  for (int s = 0; s < 2; ++s)
    for (auto k : {cm::CmEventKind::kConnectRequest, cm::CmEventKind::kEstablished, cm::CmEventKind::kRejected,
                   cm::CmEventKind::kTimedOut, cm::CmEventKind::kDisconnected})
      EXPECT_TRUE(kinds[s].count(static_cast<int>(k))) << "side " << s << ": " << cm::cm_event_name(k);
  EXPECT_GT(duplicates, 0u);
  EXPECT_GT(malformed, 0u);
  EXPECT_GT(unexpected, 0u);
}

}  // namespace
}  // namespace rocemu::test
