// pfc_state_test.cc — 802.1Qbb frames and the receive-side pause: quanta x 512 bit times,
// XON (quanta 0), replacement by a later frame, paused-time accounting.
#include "common/pfc_state.h"

#include <gtest/gtest.h>

namespace rocemu {
namespace {

TEST(PfcFrame, RoundTripsClassEnableAndQuanta) {
  uint8_t buf[kPfcFrameBytes];
  const uint8_t mac[6] = {2, 0x52, 0, 1, 0, 2};
  std::array<uint16_t, kNumPriorities> q{};
  q[3] = 0xffff;
  q[5] = 7;
  write_pfc_frame(buf, mac, (1u << 3) | (1u << 4), q);
  const wire::PfcFrame* f = parse_pfc_frame(buf, sizeof buf);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->class_enable(), 0x18);
  EXPECT_EQ(f->quanta(3), 0xffff);
  EXPECT_EQ(f->quanta(4), 0);  // enabled with quanta 0: XON
  EXPECT_EQ(f->quanta(5), 0);  // not enabled: zeroed
  EXPECT_EQ(std::memcmp(buf, wire::kPfcDstMac.data(), 6), 0);
  EXPECT_EQ(parse_pfc_frame(buf, kPfcFrameBytes - 1), nullptr);
}

TEST(PfcPauseState, PausesForQuantaTimes512BitTimes) {
  // 0xffff quanta at 100 Gbps: 65535 x 512 / 1e11 s = 335.5392 us.
  EXPECT_EQ(pfc_quanta_ns(0xffff, 100 * kBpsPerGbps), 335'540);
  EXPECT_EQ(pfc_quanta_ns(1, 10 * kBpsPerGbps), 52);  // 51.2 ns rounded up
  uint8_t buf[kPfcFrameBytes];
  const uint8_t mac[6] = {};
  std::array<uint16_t, kNumPriorities> q{};
  q[3] = 1000;
  write_pfc_frame(buf, mac, 1u << 3, q);
  PfcPauseState st;
  const uint64_t rate = 10 * kBpsPerGbps;
  st.on_frame(*parse_pfc_frame(buf, sizeof buf), rate, 1000);
  const TimeNs dur = 51'200;  // 1000 x 512 bits at 10 Gbps
  EXPECT_TRUE(st.paused(3, 1000));
  EXPECT_TRUE(st.paused(3, 1000 + dur - 1));
  EXPECT_FALSE(st.paused(3, 1000 + dur));
  EXPECT_FALSE(st.paused(2, 1000));
  EXPECT_EQ(st.paused_mask(2000), 1u << 3);
  EXPECT_EQ(st.next_expiry(0xff, 2000), 1000 + dur);
  EXPECT_EQ(st.paused_ns(3, 1000 + dur + 5000), static_cast<uint64_t>(dur));
  EXPECT_EQ(st.pauses_received(3), 1u);
}

TEST(PfcPauseState, XonEndsThePauseAndPausedTimeCountsOnlyThePausedPart) {
  uint8_t buf[kPfcFrameBytes];
  const uint8_t mac[6] = {};
  std::array<uint16_t, kNumPriorities> q{};
  q[3] = 0xffff;
  PfcPauseState st;
  write_pfc_frame(buf, mac, 1u << 3, q);
  st.on_frame(*parse_pfc_frame(buf, sizeof buf), 25 * kBpsPerGbps, 10'000);
  EXPECT_EQ(st.paused_ns(3, 12'000), 2000u);
  q[3] = 0;
  write_pfc_frame(buf, mac, 1u << 3, q);
  st.on_frame(*parse_pfc_frame(buf, sizeof buf), 25 * kBpsPerGbps, 13'000);
  EXPECT_FALSE(st.paused(3, 13'000));
  EXPECT_EQ(st.paused_ns(3, 50'000), 3000u);
  EXPECT_EQ(st.pauses_received(3), 1u);  // XON is not a pause
}

// The watchdog against its rule: a priority paused with packets waiting for detection_ns
// without a break starts a storm; pauses are ignored for restore_ns; then obeyed again.
TEST(PfcWatchdog, DetectsAfterTheDetectionTimeIgnoresPausesForTheRestoreTime) {
  uint8_t buf[kPfcFrameBytes];
  const uint8_t mac[6] = {};
  std::array<uint16_t, kNumPriorities> q{};
  q[3] = 0xffff;  // 3.36 ms at 10 Gbps
  write_pfc_frame(buf, mac, 1u << 3, q);
  const auto& f = *parse_pfc_frame(buf, sizeof buf);
  const uint64_t rate = 10 * kBpsPerGbps;
  PfcPauseState st;
  EXPECT_EQ(st.watch(1u << 3, 0), 0u) << "off by default";
  st.set_watchdog(PfcWatchdog{1'000'000, 2'000'000});
  st.on_frame(f, rate, 0);
  // Paused but nothing waiting: no detection, however long.
  EXPECT_EQ(st.watch(0, 500'000), 0u);
  EXPECT_EQ(st.watch(0, 2'000'000), 0u);
  // Packets from 2.1 ms on (the pause refreshed at 2 ms): detection at 3.1 ms exactly.
  st.on_frame(f, rate, 2'000'000);
  EXPECT_EQ(st.watch(1u << 3, 2'100'000), 0u);
  EXPECT_EQ(st.next_expiry(1u << 3, 2'100'000), 3'100'000) << "the detection instant";
  EXPECT_EQ(st.watch(1u << 3, 3'099'999), 0u);
  EXPECT_TRUE(st.paused(3, 3'099'999));
  EXPECT_EQ(st.watch(1u << 3, 3'100'000), 1u << 3);
  EXPECT_FALSE(st.paused(3, 3'100'000));
  EXPECT_TRUE(st.in_storm(3, 3'100'000));
  EXPECT_EQ(st.storms(3), 1u);
  // XOFFs during the restore time are counted but ignored.
  const uint64_t before = st.pauses_received(3);
  st.on_frame(f, rate, 4'000'000);
  EXPECT_EQ(st.pauses_received(3), before + 1);
  EXPECT_FALSE(st.paused(3, 4'000'000));
  EXPECT_EQ(st.watch(1u << 3, 4'000'000), 0u);
  // After 5.1 ms pauses are obeyed again and detection starts over.
  EXPECT_FALSE(st.in_storm(3, 5'100'000));
  st.on_frame(f, rate, 5'200'000);
  EXPECT_TRUE(st.paused(3, 5'200'000));
  EXPECT_EQ(st.watch(1u << 3, 5'200'000), 0u);
  EXPECT_EQ(st.watch(1u << 3, 6'200'000), 1u << 3);
  EXPECT_EQ(st.storms(3), 2u);
  // A gap (queue empty) restarts the detection time.
  PfcPauseState g;
  g.set_watchdog(PfcWatchdog{1'000'000, 2'000'000});
  g.on_frame(f, rate, 0);
  EXPECT_EQ(g.watch(1u << 3, 0), 0u);
  EXPECT_EQ(g.watch(0, 900'000), 0u);
  EXPECT_EQ(g.watch(1u << 3, 1'000'000), 0u);
  EXPECT_EQ(g.watch(1u << 3, 1'999'999), 0u);
  EXPECT_EQ(g.watch(1u << 3, 2'000'000), 1u << 3);
}

}  // namespace
}  // namespace rocemu
