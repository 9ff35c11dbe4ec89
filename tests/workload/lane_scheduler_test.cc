// lane_scheduler_test.cc — flows onto the lanes of their host pair (lane_scheduler.h), with
// a fake transport that records every call: fewest outstanding bytes first, at most 32 work
// requests per lane, a FIFO per pair, waiting flows posted when a lane frees, one lane per
// flow connected at the start and destroyed at the completion, failures.
#include "fabric/workload/lane_scheduler.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace rocemu::workload {
namespace {

// Hosts 0, 1, 2 are nodes 10, 11, 12 (node 13 is, say, a switch).
const std::vector<HostSpec> kHosts{
    {10, 25 * kBpsPerGbps}, {11, 25 * kBpsPerGbps}, {12, 25 * kBpsPerGbps}};
constexpr size_t kNodes = 14;

struct FakeTransport final : LaneTransport {
  struct Call {
    uint64_t flow;
    uint32_t a, b, src_qpn, dst_qpn;
  };
  std::vector<Call> posts;
  std::vector<Call> disconnects;
  std::set<uint64_t> refuse;   // flow ids whose post the "NIC" refuses
  uint32_t free_pairs = 1000;  // connect() succeeds while this is > 0
  uint32_t next_qpn = 0x11;

  bool post(const FlowSpec& f, uint32_t a, uint32_t b, uint32_t src,
            uint32_t dst) noexcept override {
    posts.push_back({f.id, a, b, src, dst});
    return !refuse.count(f.id);
  }
  bool connect(uint32_t a, uint32_t b, uint32_t& src, uint32_t& dst) noexcept override {
    (void)a;
    (void)b;
    if (free_pairs == 0) return false;
    --free_pairs;
    src = next_qpn++;
    dst = next_qpn++;
    return true;
  }
  void disconnect(uint32_t a, uint32_t b, uint32_t src, uint32_t dst) noexcept override {
    disconnects.push_back({0, a, b, src, dst});
    ++free_pairs;
  }
  std::vector<uint64_t> posted_ids() const {
    std::vector<uint64_t> v;
    for (const Call& c : posts) v.push_back(c.flow);
    return v;
  }
};

FlowSpec flow(uint64_t id, uint32_t src_node, uint32_t dst_node, uint64_t bytes = 1000) {
  return FlowSpec{.id = id, .src = src_node, .dst = dst_node, .size_bytes = bytes};
}

TEST(LaneScheduler, PostsOnTheLaneWithTheFewestOutstandingBytesTiesToTheLowest) {
  FakeTransport t;
  LaneScheduler s(kHosts, kNodes, false, t);
  for (uint32_t lane = 0; lane < 3; ++lane) s.add_lane(0, 1, 100 + lane, 200 + lane);
  // Bytes out per lane after each start: [1000,0,0] [1000,500,0] [1000,500,200]
  // [1000,500,300] [1000,500,800] [1000,1100,800] [1000,1100,1400].
  const uint64_t sizes[] = {1000, 500, 200, 100, 500, 600, 600};
  for (uint64_t i = 0; i < 7; ++i) s.start(flow(i, 10, 11, sizes[i]));
  std::vector<uint32_t> lanes;
  for (const auto& c : t.posts) lanes.push_back(c.src_qpn - 100);
  EXPECT_EQ(lanes, (std::vector<uint32_t>{0, 1, 2, 2, 2, 1, 2}));
  EXPECT_EQ(t.posts[0].a, 0u);
  EXPECT_EQ(t.posts[0].b, 1u);
  EXPECT_EQ(t.posts[0].dst_qpn, 200u);
  EXPECT_EQ(s.lanes(0, 1)[2].outstanding, 4u);
  EXPECT_EQ(s.lanes(0, 1)[2].outstanding_bytes, 1400u);
  EXPECT_EQ(s.started(), 7u);
  EXPECT_EQ(s.posted(), 7u);
  EXPECT_EQ(s.in_nic(), 7u);
  EXPECT_EQ(s.waiting(), 0u);
}

TEST(LaneScheduler, ALaneTakesThirtyTwoWorkRequestsThenFlowsWaitAndGoInStartOrder) {
  FakeTransport t;
  LaneScheduler s(kHosts, kNodes, false, t);
  s.add_lane(0, 1, 0x11, 0x12);
  for (uint64_t i = 0; i < 40; ++i) s.start(flow(i, 10, 11));
  EXPECT_EQ(s.posted(), LaneScheduler::kMaxOutstandingPerLane);
  EXPECT_EQ(s.waiting(), 8u);
  EXPECT_TRUE(s.on_completion(5, 0));  // frees one slot: the oldest waiting flow goes
  EXPECT_EQ(t.posts.back().flow, 32u);
  EXPECT_EQ(s.waiting(), 7u);
  EXPECT_TRUE(s.on_completion(0, 0));
  EXPECT_TRUE(s.on_completion(1, 0));
  EXPECT_EQ(t.posted_ids().back(), 34u);
  EXPECT_EQ(s.started(), 40u);
  EXPECT_EQ(s.in_nic(), 32u);
}

TEST(LaneScheduler, KeepsStateOnlyForPairsInUseAndALongQueueDrainsInStartOrder) {
  FakeTransport t;
  LaneScheduler s(kHosts, kNodes, false, t);
  s.add_lane(0, 1, 0x11, 0x12);
  EXPECT_EQ(s.pairs_in_use(), 1u);
  EXPECT_TRUE(s.lanes(2, 0).empty());  // asking makes no state
  EXPECT_EQ(s.pairs_in_use(), 1u);
  // 32 posted, 300 waiting: completing them one by one posts the rest in start order (the
  // queue's consumed prefix is compacted on the way: no flow is lost or repeated).
  for (uint64_t i = 0; i < 332; ++i) s.start(flow(i, 10, 11));
  EXPECT_EQ(s.waiting(), 300u);
  for (uint64_t i = 0; i < 332; ++i) ASSERT_TRUE(s.on_completion(i, 0)) << i;
  std::vector<uint64_t> want(332);
  for (uint64_t i = 0; i < 332; ++i) want[i] = i;
  EXPECT_EQ(t.posted_ids(), want);
  EXPECT_EQ(s.waiting(), 0u);
  EXPECT_EQ(s.in_nic(), 0u);
  s.start(flow(332, 10, 11));  // the emptied queue takes flows again
  EXPECT_EQ(t.posted_ids().back(), 332u);
  EXPECT_EQ(s.pairs_in_use(), 1u);
}

TEST(LaneScheduler, PairsAreIndependent) {
  FakeTransport t;
  LaneScheduler s(kHosts, kNodes, false, t);
  s.add_lane(0, 1, 1, 2);
  s.add_lane(1, 0, 3, 4);
  s.add_lane(0, 2, 5, 6);
  for (uint64_t i = 0; i < 33; ++i) s.start(flow(i, 10, 11));  // 0 -> 1 full, one waits
  s.start(flow(33, 11, 10));
  s.start(flow(34, 10, 12));
  EXPECT_EQ(s.waiting(), 1u);
  ASSERT_EQ(t.posts.size(), 34u);
  EXPECT_EQ(t.posts[32].src_qpn, 3u);   // 1 -> 0
  EXPECT_EQ(t.posts[33].src_qpn, 5u);   // 0 -> 2
  EXPECT_TRUE(s.on_completion(33, 0));  // a completion on 1 -> 0 posts nothing of 0 -> 1
  EXPECT_EQ(t.posts.size(), 34u);
  EXPECT_EQ(s.waiting(), 1u);
}

TEST(LaneScheduler, OneLanePerFlowConnectsAtTheStartAndDisconnectsAtTheCompletion) {
  FakeTransport t;
  LaneScheduler s(kHosts, kNodes, true, t);
  s.start(flow(0, 10, 11));
  s.start(flow(1, 10, 11));
  ASSERT_EQ(t.posts.size(), 2u);
  EXPECT_EQ(t.posts[0].src_qpn, 0x11u);
  EXPECT_EQ(t.posts[0].dst_qpn, 0x12u);
  EXPECT_EQ(t.posts[1].src_qpn, 0x13u);
  EXPECT_EQ(s.lanes(0, 1).size(), 2u);
  EXPECT_TRUE(s.on_completion(0, 0));
  ASSERT_EQ(t.disconnects.size(), 1u);
  EXPECT_EQ(t.disconnects[0].src_qpn, 0x11u);
  EXPECT_EQ(t.disconnects[0].dst_qpn, 0x12u);
  EXPECT_EQ(s.lanes(0, 1)[0].src_qpn, 0u) << "the slot is free again";
  s.start(flow(2, 10, 11));  // reuses slot 0 with a new pair
  EXPECT_EQ(s.lanes(0, 1).size(), 2u);
  EXPECT_EQ(s.lanes(0, 1)[0].src_qpn, 0x15u);
  EXPECT_EQ(s.lanes_connected(), 3u);
}

TEST(LaneScheduler, WithoutConnectionsFlowsWaitAndAreRetriedInPairOrder) {
  FakeTransport t;
  t.free_pairs = 1;
  LaneScheduler s(kHosts, kNodes, true, t);
  s.start(flow(0, 10, 11));  // takes the only connection
  s.start(flow(1, 11, 12));  // waits (1 -> 2)
  s.start(flow(2, 10, 12));  // waits (0 -> 2)
  s.start(flow(3, 10, 11));  // waits (0 -> 1)
  EXPECT_EQ(s.waiting(), 3u);
  t.free_pairs = 5;
  s.start(flow(4, 10, 11));  // behind flow 3: no connection is tried while 0 -> 1 waits
  EXPECT_EQ(t.posted_ids(), (std::vector<uint64_t>{0}));
  t.free_pairs = 0;
  // Flow 0 completes: its pair is disconnected (one free) and the waiting flows are retried
  // in (a, b) order: 0 -> 1 (flows 3 then 4), 0 -> 2, 1 -> 2; only flow 3 gets one.
  EXPECT_TRUE(s.on_completion(0, 0));
  EXPECT_EQ(t.posted_ids(), (std::vector<uint64_t>{0, 3}));
  EXPECT_TRUE(s.on_completion(3, 0));
  EXPECT_EQ(t.posted_ids(), (std::vector<uint64_t>{0, 3, 4}));
  EXPECT_TRUE(s.on_completion(4, 0));
  EXPECT_EQ(t.posted_ids(), (std::vector<uint64_t>{0, 3, 4, 2}));
  EXPECT_TRUE(s.on_completion(2, 0));
  EXPECT_EQ(t.posted_ids(), (std::vector<uint64_t>{0, 3, 4, 2, 1}));
  EXPECT_EQ(s.waiting(), 0u);
  EXPECT_EQ(s.lanes_connected(), 5u);
}

TEST(LaneScheduler, ARefusedPostIsAFailureAndTakesNoSlot) {
  FakeTransport t;
  t.refuse = {1};
  LaneScheduler s(kHosts, kNodes, false, t);
  s.add_lane(2, 0, 7, 8);
  s.add_lane(2, 0, 9, 10);
  s.start(flow(0, 12, 10, 100));
  s.start(flow(1, 12, 10, 4096));  // refused on lane 1
  s.start(flow(2, 12, 10, 100));   // lane 1 is still empty
  EXPECT_EQ(t.posts[2].src_qpn, 9u);
  EXPECT_EQ(s.posted(), 2u);
  EXPECT_EQ(s.failed(), 1u);
  EXPECT_EQ(s.in_nic(), 2u);
  ASSERT_EQ(s.failures().size(), 1u);
  const FlowFailure& f = s.failures()[0];
  EXPECT_EQ(f.flow.id, 1u);
  EXPECT_EQ(f.flow.src, 12u);  // node ids, as FlowSpec carries them
  EXPECT_EQ(f.flow.dst, 10u);
  EXPECT_EQ(f.flow.size_bytes, 4096u);
  EXPECT_EQ(f.status, -1);
  EXPECT_FALSE(s.on_completion(1, 0)) << "never posted: no completion is expected";
}

TEST(LaneScheduler, AnErrorCompletionIsAFailureAndStillFreesItsLane) {
  FakeTransport t;
  LaneScheduler s(kHosts, kNodes, false, t);
  s.add_lane(1, 2, 3, 4);
  for (uint64_t i = 0; i < 33; ++i) s.start(flow(i, 11, 12, 10 + i));
  EXPECT_FALSE(s.on_completion(7, 12));  // IBV_WC_RETRY_EXC_ERR
  EXPECT_EQ(t.posts.back().flow, 32u);
  EXPECT_EQ(s.failed(), 1u);
  ASSERT_EQ(s.failures().size(), 1u);
  EXPECT_EQ(s.failures()[0].flow.id, 7u);
  EXPECT_EQ(s.failures()[0].flow.size_bytes, 17u);
  EXPECT_EQ(s.failures()[0].status, 12);
  EXPECT_FALSE(s.on_completion(7, 0)) << "a flow completes once";
  EXPECT_FALSE(s.on_completion(999, 0));
  EXPECT_EQ(s.failed(), 1u);
}

TEST(LaneScheduler, KeepsTheFirstSixtyFourFailuresAndCountsThemAll) {
  FakeTransport t;
  for (uint64_t i = 0; i < 70; ++i) t.refuse.insert(i);
  LaneScheduler s(kHosts, kNodes, false, t);
  s.add_lane(0, 1, 1, 2);
  for (uint64_t i = 0; i < 70; ++i) s.start(flow(i, 10, 11));
  EXPECT_EQ(s.failed(), 70u);
  ASSERT_EQ(s.failures().size(), LaneScheduler::kMaxFailures);
  for (size_t i = 0; i < s.failures().size(); ++i) EXPECT_EQ(s.failures()[i].flow.id, i);
  EXPECT_EQ(s.posted(), 0u);
  EXPECT_EQ(s.started(), 70u);
}

}  // namespace
}  // namespace rocemu::workload
