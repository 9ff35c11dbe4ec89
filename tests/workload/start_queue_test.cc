// start_queue_test.cc — generator flows held per host until their start
// (start_queue.h): the first pull fixes the time origin, a pull takes exactly the flows
// starting before now + lookahead, each host's FIFO hands out its flows at their start,
// and a per-host process keeps only its own host's flows.
#include "fabric/workload/start_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace rocemu::workload {
namespace {

constexpr TimeNs kUs = kNsPerUs;

// 4 hosts (nodes 20..23, node 24 is not a host). Every 10 us from 0 to 50 us (6 events) 3
// senders each send 1000 bytes to host 0 (node 20): flows 3k, 3k+1, 3k+2 start at 10k us.
WorkloadConfig incast_every_10us() {
  WorkloadParams p;
  p.duration_ns = 60 * kUs;
  p.incast = IncastParams{.senders = 3,
                          .size_bytes = 1000,
                          .mode = IncastMode::kPeriodic,
                          .period_ns = 10 * kUs,
                          .receiver = 0};
  std::vector<HostSpec> hosts;
  for (uint32_t i = 0; i < 4; ++i) hosts.push_back({20 + i, 25 * kBpsPerGbps});
  return make_workload_config(p, hosts);
}

std::vector<FlowSpec> all_flows(const WorkloadConfig& cfg, uint64_t seed) {
  WorkloadGenerator g(cfg, seed);
  std::vector<FlowSpec> out;
  FlowSpec f;
  while (g.next(f)) out.push_back(f);
  return out;
}

TEST(StartQueue, TheFirstPullFixesTheOriginAndTakesFlowsStartingBeforeNowPlusLookahead) {
  const WorkloadConfig cfg = incast_every_10us();
  StartQueue q(cfg, 1, 25);
  q.pull(5 * kUs, 10 * kUs);  // origin 5 us: takes workload times [0, 10) us -> event 0
  EXPECT_EQ(q.pulled(), 3u);
  for (uint32_t h = 1; h < 4; ++h) EXPECT_EQ(q.next_start(h), 5 * kUs) << h;
  EXPECT_EQ(q.next_start(0), kNever) << "host 0 only receives";
  q.pull(6 * kUs, 9 * kUs);  // engine time 15 us is not before 6 + 9: event 1 stays out
  EXPECT_EQ(q.pulled(), 3u);
  q.pull(6 * kUs, 9 * kUs + 1);  // now it is
  EXPECT_EQ(q.pulled(), 6u);
  EXPECT_EQ(q.last_start_ns(), kNever) << "not exhausted yet";
  EXPECT_FALSE(q.exhausted());
  q.pull(100 * kUs, 0);
  EXPECT_EQ(q.pulled(), 18u);
  EXPECT_TRUE(q.exhausted());
  EXPECT_EQ(q.last_start_ns(), 55 * kUs);  // event 5 at 50 us + the 5 us origin
}

TEST(StartQueue, EachHostGetsItsFlowsInGeneratorOrderAtTheirStartShiftedByTheOrigin) {
  const WorkloadConfig cfg = incast_every_10us();
  const std::vector<FlowSpec> want = all_flows(cfg, 3);
  ASSERT_EQ(want.size(), 18u);
  StartQueue q(cfg, 3, 25);
  q.pull(1000, 60 * kUs);  // everything
  std::vector<FlowSpec> got;
  FlowSpec f;
  // next_start(h) against a model: the start of host h's first flow not yet handed out.
  const auto model_next = [&](uint32_t h) {
    TimeNs t = kNever;
    for (const FlowSpec& w : want) {
      const bool handed = std::any_of(got.begin(), got.end(), [&](const FlowSpec& g) { return g.id == w.id; });
      if (w.src == 20 + h && !handed) t = std::min(t, w.start_ns + 1000);
    }
    return t;
  };
  for (TimeNs now = 0; now <= 60 * kUs + 1000; now += 500) {
    for (uint32_t h = 0; h < 4; ++h) {
      EXPECT_EQ(q.next_start(h), model_next(h)) << "host " << h << " at " << now;
      while (q.pop_due(h, now, f)) {  // at the first poll at or after its start
        EXPECT_LE(f.start_ns, now);
        EXPECT_GT(f.start_ns + 500, now);
        got.push_back(f);
      }
      EXPECT_EQ(q.next_start(h), model_next(h)) << "host " << h << " at " << now;
    }
  }
  ASSERT_EQ(got.size(), want.size());
  for (const FlowSpec& g : got) {
    FlowSpec w = want[g.id];
    w.start_ns += 1000;
    EXPECT_EQ(g, w) << "flow " << g.id;
  }
  for (size_t i = 1; i < got.size(); ++i) {
    if (got[i].src == got[i - 1].src) {
      EXPECT_LT(got[i - 1].id, got[i].id);
    }
  }
}

TEST(StartQueue, AFlowIsNotHandedOutBeforeItsStart) {
  const WorkloadConfig cfg = incast_every_10us();
  StartQueue q(cfg, 1, 25);
  q.pull(0, 20 * kUs);
  FlowSpec f;
  const uint32_t h = static_cast<uint32_t>(all_flows(cfg, 1)[3].src - 20);  // a sender of event 1
  while (q.pop_due(h, 0, f)) {
  }
  EXPECT_EQ(q.next_start(h), 10 * kUs);
  EXPECT_FALSE(q.pop_due(h, 10 * kUs - 1, f));
  EXPECT_TRUE(q.pop_due(h, 10 * kUs, f));
  EXPECT_EQ(f.start_ns, 10 * kUs);
  EXPECT_EQ(q.next_start(h), kNever);
}

TEST(StartQueue, APerHostProcessKeepsOnlyItsHostsFlowsButSeesTheLastStartOfAll) {
  const WorkloadConfig cfg = incast_every_10us();
  const std::vector<FlowSpec> all = all_flows(cfg, 1);
  uint64_t mine = 0;
  for (const FlowSpec& f : all) mine += f.src == 22;
  StartQueue q(cfg, 1, 25, /*local_host=*/2);  // node 22
  q.pull(0, kNsPerSec);
  EXPECT_EQ(q.pulled(), mine);
  for (uint32_t h : {0u, 1u, 3u}) EXPECT_EQ(q.next_start(h), kNever) << h;
  EXPECT_EQ(q.last_start_ns(), all.back().start_ns);
}

}  // namespace
}  // namespace rocemu::workload
