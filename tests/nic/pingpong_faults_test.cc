// pingpong_faults_test.cc — the go-back-N liveness cases (IBTA Vol. 1 9.7.5.1, 9.7.6.1.3) in
// virtual time: an ibv_rc_pingpong-style loop (one 4 KiB SEND in flight each way, the next
// posted only when the previous pong arrived) over a link that loses, reorders or duplicates
// frames. Before the fix, an ACK for a first transmission that overtook its resend moved
// una_psn past sq_psn and the QP wedged in RTS with no timer armed (1% loss: after ~12,700
// iterations). After every engine step both hosts' invariants are checked (a QP with
// outstanding work has a packet ready or its timer armed), so a wedge is reported the moment
// it forms, with the QP's state, instead of as a time-out.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "nic/psn.h"
#include "tests/nic/host_pair.h"

namespace rocemu::test {
namespace {

struct PingPongResult {
  uint32_t iterations = 0;
  std::string wedge;  // first invariant violation seen, "" if none
  uint64_t retransmitted = 0, timeouts = 0;
  bool data_ok = true;
};

/// Runs `iters` ping-pong rounds of `msg` bytes; stops at the first invariant violation, at
/// a completion error or when `limit_ns` of virtual time pass without finishing.
struct LinkShape {
  uint64_t rate_bps;
  TimeNs delay_ns;
  uint32_t mtu;
};
// A resend of 16 packets takes longer than the round trip, so the ACK of the first
// transmission arrives while the resend is still behind it (the deadlock's precondition);
// and the rc_pingpong default shape, 4 packets per message on a 2 us link.
constexpr LinkShape kSlowResend{10 * kBpsPerGbps, 300, 256};
constexpr LinkShape kDefault{25 * kBpsPerGbps, 2000, 1024};

PingPongResult run_pingpong(uint64_t seed, WireFaults faults, uint32_t iters, uint32_t msg,
                            TimeNs limit_ns, LinkShape shape) {
  nic::NicParams p;
  p.mtu_bytes = shape.mtu;
  nic::ConnectOptions opt;
  opt.timeout = 8;  // 1.05 ms: a lost last packet costs one timeout
  opt.retry_cnt = 7;
  HostPair hp(p, shape.rate_bps, shape.delay_ns, seed, opt);
  hp.wire->set_faults(faults);
  std::vector<uint8_t> buf[2] = {pattern(msg, seed * 2 + 1), pattern(msg, seed * 2 + 2)};
  std::vector<uint8_t> rbuf[2] = {std::vector<uint8_t>(msg), std::vector<uint8_t>(msg)};
  nic::MrInfo smr[2], rmr[2];
  for (int s = 0; s < 2; ++s) {
    smr[s] = hp.reg(s, buf[s]);
    rmr[s] = hp.reg(s, rbuf[s]);
  }
  const auto post_recv = [&](int s) {
    ibv_sge sge{rmr[s].addr, msg, rmr[s].lkey};
    ibv_recv_wr rw{};
    rw.wr_id = 100 + s;
    rw.sg_list = &sge;
    rw.num_sge = 1;
    return hp.host[s]->post_recv(hp.qpn[s], &rw, nullptr);
  };
  const auto post_send = [&](int s, uint32_t i) {
    buf[s][0] = static_cast<uint8_t>(i);  // each message differs from the one before
    ibv_sge sge{smr[s].addr, msg, smr[s].lkey};
    ibv_send_wr wr = make_wr(i, IBV_WR_SEND, &sge, 1);
    return hp.host[s]->post_send(hp.qpn[s], &wr, nullptr);
  };
  PingPongResult r;
  EXPECT_EQ(post_recv(0), 0);
  EXPECT_EQ(post_recv(1), 0);
  EXPECT_EQ(post_send(0, 0), 0);
  // Side 1 answers each ping; side 0 sends the next ping when the pong arrived. Each side
  // reposts its receive before answering, as rc_pingpong does.
  bool failed = false;
  const auto step = [&] {
    for (int s = 0; s < 2 && !failed; ++s) {
      ibv_wc wc[8];
      int n = hp.host[s]->poll_cq(hp.cq[s], 8, wc);
      for (int k = 0; k < n; ++k) {
        if (wc[k].status != IBV_WC_SUCCESS) {
          r.wedge = "side " + std::to_string(s) + " completion status " +
                    nic::wc_status_name(wc[k].status);
          failed = true;
          return;
        }
        if (wc[k].opcode != IBV_WC_RECV) continue;
        if (rbuf[s] != buf[1 - s]) r.data_ok = false;
        EXPECT_EQ(post_recv(s), 0);
        if (s == 1) {
          EXPECT_EQ(post_send(1, r.iterations), 0);
        } else if (++r.iterations < iters) {
          EXPECT_EQ(post_send(0, r.iterations), 0);
        }
      }
    }
    for (int s = 0; s < 2 && !failed; ++s) {
      std::string v = hp.host[s]->check_invariants();
      if (!v.empty()) {
        r.wedge = "side " + std::to_string(s) + ": " + v;
        failed = true;
      }
    }
  };
  hp.wire->run_until(
      [&] {
        step();
        return failed || r.iterations >= iters;
      },
      limit_ns);
  if (r.wedge.empty() && r.iterations < iters)
    r.wedge = "no progress: " + std::to_string(r.iterations) + " iterations in the time limit";
  const auto& c0 = hp.host[0]->counters();
  const auto& c1 = hp.host[1]->counters();
  r.retransmitted = c0.retransmitted_packets + c1.retransmitted_packets;
  r.timeouts = c0.timeouts + c1.timeouts;
  return r;
}

void expect_completes(uint64_t seed, WireFaults f, uint32_t iters, LinkShape shape) {
  // Budget: ~4 us per round trip plus ~1 ms per timeout; a run losing 1% of ~10 frames per
  // round times out on about 1 round in 40, so 20,000 rounds take ~0.6 s of virtual time.
  const PingPongResult r = run_pingpong(seed, f, iters, 4096, 60 * kNsPerSec, shape);
  std::printf(
      "mtu %u seed %lu loss %.3f reorder %.3f dup %.3f: %u rounds, %lu resent, %lu timeouts\n",
      shape.mtu, static_cast<unsigned long>(seed), f.loss, f.reorder, f.duplicate, r.iterations,
      static_cast<unsigned long>(r.retransmitted), static_cast<unsigned long>(r.timeouts));
  EXPECT_EQ(r.wedge, "") << "seed " << seed << " after " << r.iterations << " rounds";
  EXPECT_EQ(r.iterations, iters);
  EXPECT_TRUE(r.data_ok) << "a received message differed from the one sent";
  if (f.loss > 0 || f.reorder > 0) {
    EXPECT_GT(r.retransmitted, 0u) << "the faults cost nothing";
  }
}

// The issue's own reproductions: 20,000 rounds at 1% loss (wedged after ~12,700 before the
// fix) and at 5% reordering.
TEST(PingPongFaults, TwentyThousandRoundsAtOnePercentLoss) {
  expect_completes(1, {0.01, 0, 0}, 20000, kSlowResend);
  expect_completes(1, {0.01, 0, 0}, 20000, kDefault);
}
TEST(PingPongFaults, TwentyThousandRoundsAtFivePercentReordering) {
  expect_completes(1, {0, 0.05, 0}, 20000, kSlowResend);
  expect_completes(1, {0, 0.05, 0}, 20000, kDefault);
}

// Many seeds, shorter runs, each fault alone and all together.
class PingPongSeeds : public ::testing::TestWithParam<uint64_t> {};
TEST_P(PingPongSeeds, LossReorderDuplicationAloneAndTogether) {
  const uint64_t seed = GetParam();
  for (const LinkShape& shape : {kSlowResend, kDefault}) {
    expect_completes(seed, {0.02, 0, 0}, 1500, shape);
    expect_completes(seed, {0, 0.05, 0}, 1500, shape);
    expect_completes(seed, {0, 0, 0.05}, 1500, shape);
    expect_completes(seed, {0.01, 0.03, 0.03}, 1500, shape);
  }
}
INSTANTIATE_TEST_SUITE_P(Seeds, PingPongSeeds, ::testing::Range(uint64_t{2}, uint64_t{22}));

}  // namespace
}  // namespace rocemu::test
