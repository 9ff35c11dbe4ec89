// loopback_bench_test.cc — the loopback pair (apps/perftest/loopback_bench.h) over a net_ring
// wire: every message completes, the bytes really move (WRITE and SEND land in the peer's
// receive buffer, READ brings the peer's send buffer back), -b counts both directions.
#include "apps/perftest/loopback_bench.h"

#include "apps/perftest/bench_roles.h"

#include <gtest/gtest.h>

#include <cstring>

namespace rocemu::perftest {
namespace {

PerftestOptions options(const char* tool, std::vector<std::string> extra) {
  extra.push_back("--loopback");
  const ParseOutcome p = parse_perftest_args(tool, extra);
  EXPECT_EQ(p.exit_code, -1) << p.message;
  return p.opt;
}

void fill(uint8_t* p, uint32_t n, uint8_t seed) {
  for (uint32_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(seed + i * 7);
}

TEST(LoopbackBench, BidirectionalWriteCompletesEveryMessageAndMovesTheBytes) {
  const uint32_t size = 8192;
  LoopbackBench b(options("rocemu_write_bw", {"-q", "2", "-b", "-n", "50", "-s", "8192"}), size);
  for (int i = 0; i < 2; ++i)
    for (uint32_t q = 0; q < 2; ++q) fill(b.side(i).send_buf(q), size, uint8_t(10 * i + q + 1));
  const BwResult r = b.run_bw(size, 0);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.messages, 50u * 2 * 2);  // iterations x QPs x directions
  EXPECT_GT(r.row.avg_bytes_per_s, 0);
  EXPECT_GE(r.row.peak_bytes_per_s, r.row.avg_bytes_per_s);
  for (int i = 0; i < 2; ++i)
    for (uint32_t q = 0; q < 2; ++q)
      EXPECT_EQ(std::memcmp(b.side(1 - i).recv_buf(q), b.side(i).send_buf(q), size), 0)
          << "host " << i << " QP " << q;
  EXPECT_EQ(b.host(0).counters().drops_total() + b.host(1).counters().drops_total(), 0u);
}

TEST(LoopbackBench, ReadBringsThePeersSendBufferBack) {
  const uint32_t size = 20000;  // not a multiple of the MTU
  LoopbackBench b(options("rocemu_read_bw", {"-n", "20", "-s", "20000", "-m", "2048"}), size);
  fill(b.side(1).send_buf(0), size, 99);
  const BwResult r = b.run_bw(size, 0);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.messages, 20u);
  EXPECT_EQ(std::memcmp(b.side(0).recv_buf(0), b.side(1).send_buf(0), size), 0);
}

TEST(LoopbackBench, SendLatencyCountsEveryExchangeWithOrderedStatistics) {
  LoopbackBench b(options("rocemu_send_lat", {"-n", "200", "-s", "64"}), 64);
  const LatResult r = b.run_lat(64, 0);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.iters, 200u);
  EXPECT_GT(r.stats.min_us, 0);
  EXPECT_LE(r.stats.min_us, r.stats.typical_us);
  EXPECT_LE(r.stats.typical_us, r.stats.p99_us);
  EXPECT_LE(r.stats.p99_us, r.stats.max_us);
  // A second size on the same pair (as -a runs them) works too.
  const LatResult r2 = b.run_lat(2, 0);
  ASSERT_TRUE(r2.ok) << r2.error;
  EXPECT_EQ(r2.iters, 200u);
}

TEST(BwSummary, TheBandwidthRowUsesItAndDurationModeReportsNoPeak) {
  PerftestOptions o;
  o.iters = 4;
  TestState t;
  t.size = 1000;
  t.messages = 4;
  t.post_ns = {0, 10, 11, 12};
  t.completion_ns = {60, 30, 35, 40};
  t.first_post_ns = 0;
  t.last_completion_ns = 60;
  const BwRow row = bw_summary(t, o);
  EXPECT_DOUBLE_EQ(row.peak_bytes_per_s, 1000 * 1e9 / 10.0);  // the hand example above
  EXPECT_DOUBLE_EQ(row.avg_bytes_per_s, 4 * 1000 * 1e9 / 60.0);
  t.duration_ns = kNsPerSec;  // -D: perftest sets noPeak and prints 0
  EXPECT_EQ(bw_summary(t, o).peak_bytes_per_s, 0.0);
}

// stall_report (a failed server's diagnosis): after SENDs that all completed, the server's
// responders answered every PSN they took; the verdict that the peer stopped on its own comes
// only once nothing arrived for kPeerSilenceNs. A QP that took nothing gets no verdict however
// long the silence (its peer never started: not a stall).
TEST(StallReport, ThePeerStoppedOnlyAfterTheSilenceWithEveryPsnAnswered) {
  const uint32_t size = 4096;
  LoopbackBench b(options("rocemu_send_bw", {"-n", "20", "-s", "4096"}), size);
  ASSERT_TRUE(b.run_bw(size, 0).ok);
  const std::string quiet = stall_report(b.side(1), "tool", kPeerSilenceNs - 1);
  EXPECT_NE(quiet.find("tool: QP 0x"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("last answered 0x"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("tool: the peer's last request arrived 5.0 s ago"), std::string::npos)
      << quiet;
  EXPECT_EQ(quiet.find(kPeerStoppedVerdict), std::string::npos) << quiet;
  const std::string stopped = stall_report(b.side(1), "tool", kPeerSilenceNs);
  EXPECT_NE(stopped.find("tool: the peer sent nothing for 5.0 s"), std::string::npos) << stopped;
  EXPECT_NE(stopped.find(kPeerStoppedVerdict), std::string::npos) << stopped;

  // The client's responders took nothing (SEND bandwidth: the server answers with ACKs only).
  const std::string idle = stall_report(b.side(0), "tool", 60 * kNsPerSec);
  EXPECT_NE(idle.find("answered nothing"), std::string::npos) << idle;
  EXPECT_EQ(idle.find(kPeerStoppedVerdict), std::string::npos) << idle;
}

}  // namespace
}  // namespace rocemu::perftest
