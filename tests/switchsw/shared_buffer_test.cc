// shared_buffer_test.cc — the MMU against its closed forms: dynamic threshold
// T = alpha x (pool - used), a lone queue's share alpha/(1+alpha) of the pool, headroom only
// for lossless priorities, PFC XOFF/XON with the resume-offset hysteresis.
#include "switchsw/shared_buffer.h"

#include <gtest/gtest.h>

namespace rocemu::sw {
namespace {

constexpr int kLossless = 3;
constexpr int kLossy = 0;

SharedBufferConfig small_config() {
  SharedBufferConfig c;
  c.buffer_bytes = 1 << 20;
  c.reserve_bytes = 4096;
  c.alpha_q16 = 65536 / 8;
  c.egress_alpha_q16 = 65536 / 8;
  c.resume_offset_bytes = 3072;
  c.lossless_mask = 1u << kLossless;
  c.headroom_bytes = {10000, 10000};
  return c;
}

TEST(SharedBuffer, PoolIsBufferMinusHeadroomAndReserves) {
  SharedBuffer b(small_config());
  EXPECT_EQ(b.shared_pool_bytes(), (1u << 20) - 2 * 10000 - 2 * 8 * 4096);
  EXPECT_EQ(b.ingress_threshold(), b.shared_pool_bytes() / 8);
}

TEST(SharedBuffer, DynamicThresholdIsAlphaTimesFreeSharedPool) {
  SharedBuffer b(small_config());
  const uint64_t pool = b.shared_pool_bytes();
  for (int i = 0; i < 30; ++i) b.ingress_update(0, kLossy, 1000);  // 4096 reserve + 25904 shared
  EXPECT_EQ(b.ingress_bytes(0, kLossy), 30000u);
  EXPECT_EQ(b.shared_used_bytes(), 30000u - 4096);
  EXPECT_EQ(b.ingress_threshold(), (pool - (30000 - 4096)) / 8);
  // A second queue's use lowers everyone's threshold.
  for (int i = 0; i < 10; ++i) b.ingress_update(1, kLossy, 1000);
  EXPECT_EQ(b.ingress_threshold(), (pool - (30000 - 4096) - (10000 - 4096)) / 8);
}

TEST(SharedBuffer, LoneLossyQueueGetsAlphaOverOnePlusAlphaOfThePool) {
  SharedBuffer b(small_config());
  const uint64_t pool = b.shared_pool_bytes();
  int admitted = 0;
  while (b.ingress_check(0, kLossy, 1000) == Admit::kOk) {
    b.ingress_update(0, kLossy, 1000);
    ++admitted;
    ASSERT_LT(admitted, 10000);
  }
  EXPECT_EQ(b.ingress_check(0, kLossy, 1000), Admit::kBufferFull);
  const uint64_t s = b.ingress_shared_bytes(0, kLossy);
  // s <= alpha (pool - s)  <=>  s <= pool / 9, and one more packet would exceed it.
  EXPECT_LE(s, pool / 9);
  EXPECT_GT(s + 1000, (pool - s) / 8);
  EXPECT_EQ(b.headroom_used_bytes(0, kLossy), 0u);
}

TEST(SharedBuffer, LosslessQueueUsesHeadroomAndDropsOnlyWhenItIsExhausted) {
  SharedBuffer b(small_config());
  while (b.ingress_shared_bytes(0, kLossless) + 1000 <= b.ingress_threshold())
    b.ingress_update(0, kLossless, 1000);
  // Over the shared limit a lossless packet is still admitted, into headroom.
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(b.ingress_check(0, kLossless, 1000), Admit::kOk) << i;
    b.ingress_update(0, kLossless, 1000);
  }
  EXPECT_EQ(b.headroom_used_bytes(0, kLossless), 10000u);
  EXPECT_EQ(b.ingress_check(0, kLossless, 1000), Admit::kHeadroomFull);
  EXPECT_EQ(b.ingress_check(0, kLossy, 1000), Admit::kOk);  // other queue's reserve is free
  // Release drains headroom first, then shared, and returns every byte.
  const uint64_t held = b.ingress_bytes(0, kLossless) + b.headroom_used_bytes(0, kLossless);
  b.ingress_release(0, kLossless, 1000);
  EXPECT_EQ(b.headroom_used_bytes(0, kLossless), 9000u);
  for (uint64_t left = held - 1000; left > 0; left -= 1000) b.ingress_release(0, kLossless, 1000);
  EXPECT_EQ(b.shared_used_bytes(), 0u);
  EXPECT_EQ(b.total_used_bytes(), 0u);
  EXPECT_EQ(b.ingress_bytes(0, kLossless), 0u);
}

TEST(SharedBuffer, PausesAtThresholdAndResumesOnlyBelowItByTheResumeOffset) {
  SharedBuffer b(small_config());
  int n = 0;
  while (!b.should_pause(0, kLossless)) {
    b.ingress_update(0, kLossless, 500);
    ++n;
    ASSERT_LT(n, 10000);
  }
  EXPECT_TRUE(b.headroom_used_bytes(0, kLossless) > 0 ||
              b.ingress_shared_bytes(0, kLossless) >= b.ingress_threshold());
  EXPECT_FALSE(b.should_resume(0, kLossless));
  // Drain 100 B at a time: XON exactly when headroom is empty and shared + offset <= T.
  while (!b.should_resume(0, kLossless)) {
    const uint64_t s = b.ingress_shared_bytes(0, kLossless);
    EXPECT_TRUE(b.headroom_used_bytes(0, kLossless) > 0 || s + 3072 > b.ingress_threshold());
    b.ingress_release(0, kLossless, 100);
  }
  const uint64_t s = b.ingress_shared_bytes(0, kLossless);
  EXPECT_LE(s + 3072, b.ingress_threshold());
  EXPECT_EQ(b.headroom_used_bytes(0, kLossless), 0u);
  EXPECT_FALSE(b.should_pause(0, kLossless));
  // Inside the hysteresis band (T - offset < shared < T) a paused queue stays paused and an
  // unpaused one is not paused: one 2 KB packet lands there.
  b.ingress_update(0, kLossless, 2048);
  EXPECT_FALSE(b.should_pause(0, kLossless));
  EXPECT_FALSE(b.should_resume(0, kLossless));
}

TEST(SharedBuffer, LossyEgressQueueIsLimitedByItsDynamicThreshold) {
  SharedBuffer b(small_config());
  uint64_t q = 0;
  while (b.egress_check(1, kLossy, 1000) == Admit::kOk) {
    b.egress_update(1, kLossy, 1000);
    q += 1000;
    ASSERT_LT(q, 1u << 21);
  }
  EXPECT_EQ(q, b.egress_threshold() / 1000 * 1000);
  EXPECT_EQ(b.egress_check(1, kLossless, 1000), Admit::kOk);  // lossless egress unlimited
}

TEST(SharedBuffer, ConfigWithoutSharedPoolIsRejected) {
  auto c = small_config();
  c.buffer_bytes = 80000;
  EXPECT_NE(c.validate(), "");
  EXPECT_EQ(small_config().validate(), "");
}

}  // namespace
}  // namespace rocemu::sw
