// read_recovery_test.cc — RDMA READ as requester recovers from lost responses (IBTA Vol. 1
// 9.7.5.1.4 duplicate READ, 9.7.6.1.3 local ACK timeout): one lost response at every
// position (FIRST, a MIDDLE, LAST, the ONLY of a one-packet READ), a burst, a lost replay,
// and losses across several outstanding READs. The requester re-requests from the missing
// PSN; the responder answers as Linux rxe does (MIDDLE .. LAST for a re-request from inside
// the READ), and the requester must take that replay, complete with the data intact and
// never run into IBV_WC_RETRY_EXC_ERR. Before the fix it took only FIRST/ONLY as the first
// answer of a re-request and spent a retry every timeout until the QP failed.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "common/wire.h"
#include "nic/opcode_table.h"
#include "nic/psn.h"
#include "tests/nic/host_pair.h"

namespace rocemu::test {
namespace {

constexpr uint32_t kPsn0 = 1000;  // side 0's first PSN: READ response PSNs are known

bool is_read_response(uint8_t op) {
  return op >= wire::kRcReadResponseFirst && op <= wire::kRcReadResponseOnly;
}

struct ReadCase {
  const char* name;
  std::vector<uint32_t> read_bytes;  // READs posted back to back
  std::map<uint32_t, int> drop;      // PSN offset from kPsn0 -> times to drop it
  bool needs_timeout;                // no later response reveals the loss
};

void run_case(const ReadCase& c, uint32_t mtu) {
  SCOPED_TRACE(std::string(c.name) + " mtu " + std::to_string(mtu));
  nic::NicParams p;
  p.mtu_bytes = mtu;
  nic::ConnectOptions opt;
  opt.timeout = 8;  // 1.05 ms
  opt.retry_cnt = 7;
  opt.max_rd_atomic = 4;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 3, opt, kPsn0, 77);
  uint32_t total = 0;
  for (uint32_t b : c.read_bytes) total += b;
  auto remote = pattern(total, 9);
  std::vector<uint8_t> local(total, 0);
  const auto lmr = hp.reg(0, local), rmr = hp.reg(1, remote);

  std::map<uint32_t, int> left = c.drop;
  std::vector<std::pair<uint32_t, uint8_t>> replays;  // (offset, opcode) of re-sent responses
  std::set<uint32_t> seen;
  uint64_t dropped = 0;
  hp.wire->set_filter([&](int side, const uint8_t* f, uint32_t len) {
    if (side != 1 || len < wire::kRoceHeadersBytes) return false;
    const auto* bth = reinterpret_cast<const wire::Bth*>(f + wire::kBthOff);
    if (!is_read_response(bth->opcode)) return false;
    const uint32_t off = static_cast<uint32_t>(nic::psn_diff(bth->psn(), kPsn0));
    if (!seen.insert(off).second) replays.emplace_back(off, bth->opcode);
    auto it = left.find(off);
    if (it == left.end() || it->second == 0) return false;
    --it->second;
    ++dropped;
    return true;
  });
  uint32_t at = 0;
  for (size_t i = 0; i < c.read_bytes.size(); ++i) {
    ibv_sge sge{lmr.addr + at, c.read_bytes[i], lmr.lkey};
    ibv_send_wr wr = make_wr(i, IBV_WR_RDMA_READ, &sge, 1, rmr.addr + at, rmr.rkey);
    ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
    at += c.read_bytes[i];
  }
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, c.read_bytes.size(), wcs, 100 * kNsPerMs))
      << "completions " << wcs.size() << " of " << c.read_bytes.size()
      << ", invariants: " << hp.host[0]->check_invariants();
  for (size_t i = 0; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].status, IBV_WC_SUCCESS) << nic::wc_status_name(wcs[i].status);
    EXPECT_EQ(wcs[i].wr_id, i);
    EXPECT_EQ(wcs[i].opcode, IBV_WC_RDMA_READ);
  }
  EXPECT_TRUE(local == remote) << "READ data";
  EXPECT_EQ(hp.host[0]->qp_state(hp.qpn[0]), IBV_QPS_RTS);
  EXPECT_EQ(hp.host[0]->check_invariants(), "");
  uint64_t want_dropped = 0;
  for (auto& [off, n] : c.drop) want_dropped += static_cast<uint64_t>(n);
  EXPECT_EQ(dropped, want_dropped) << "every planned loss happened";
  const auto& c0 = hp.host[0]->counters();
  if (c.needs_timeout) {
    EXPECT_GE(c0.timeouts, 1u);
  } else {
    EXPECT_EQ(c0.timeouts, 0u) << "a later response reveals the gap: no timeout needed";
  }
  EXPECT_LE(c0.timeouts, 3u) << "recovery must not spend the retry budget";
  // The first re-sent response of a re-request from inside a READ is MIDDLE (or LAST), as
  // rxe answers; from a READ's first PSN it is FIRST (or ONLY).
  uint32_t base = 0;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // [first, npkts) per READ
  for (uint32_t b : c.read_bytes) {
    const uint32_t n = b == 0 ? 1 : (b + mtu - 1) / mtu;
    ranges.emplace_back(base, n);
    base += n;  // a READ takes as many PSNs as it has responses
  }
  for (auto [off, op] : replays) {
    for (auto [first, n] : ranges) {
      if (off < first || off >= first + n) continue;
      const uint32_t flags = nic::op_info(op).flags;
      EXPECT_TRUE(nic::read_response_position_ok(flags, off - first, n))
          << "replay at offset " << off << " has opcode 0x" << std::hex << int(op);
    }
  }
}

class ReadRecovery : public ::testing::TestWithParam<uint32_t> {};

TEST_P(ReadRecovery, OneLostResponseAtEveryPositionAndBursts) {
  const uint32_t mtu = GetParam();
  const uint32_t n = 64;  // responses of the 64-packet READ
  const uint32_t big = n * mtu;
  const std::vector<ReadCase> cases = {
      {"first", {big}, {{0, 1}}, false},
      {"second", {big}, {{1, 1}}, false},
      {"middle", {big}, {{n / 2, 1}}, false},
      {"last", {big}, {{n - 1, 1}}, true},
      {"burst of 8",
       {big},
       {{20, 1}, {21, 1}, {22, 1}, {23, 1}, {24, 1}, {25, 1}, {26, 1}, {27, 1}},
       false},
      {"the last 4", {big}, {{n - 4, 1}, {n - 3, 1}, {n - 2, 1}, {n - 1, 1}}, true},
      {"middle and its replay", {big}, {{n / 2, 2}}, true},
      {"every 10th", {big}, {{5, 1}, {15, 1}, {25, 1}, {35, 1}, {45, 1}, {55, 1}}, false},
      {"only of a one-packet READ", {mtu / 2}, {{0, 1}}, true},
      {"a partial last packet", {big - mtu / 2}, {{n - 1, 1}, {n / 3, 1}}, true},
      // Four READs outstanding at once (max_rd_atomic 4): losses in the second and fourth.
      {"four outstanding",
       {big / 4, big / 4, big / 4, big / 4},
       {{n / 4 + 3, 1}, {3 * n / 4 + 1, 1}},
       false},
      {"four outstanding, a FIRST lost", {big / 4, big / 4, big / 4, big / 4}, {{n / 4, 1}}, false},
  };
  for (const ReadCase& c : cases) run_case(c, mtu);
}

INSTANTIATE_TEST_SUITE_P(Mtus, ReadRecovery, ::testing::Values(256u, 1024u, 4096u));

// READs over a lossy, reordering, duplicating link over many seeds (the 1% cases of
// reliability_test mix READs with other operations; these are READs only, 64 KiB each).
class ReadSeeds : public ::testing::TestWithParam<uint64_t> {};
TEST_P(ReadSeeds, ReadsThroughTwoPercentLossReorderAndDuplication) {
  nic::NicParams p;
  nic::ConnectOptions opt;
  opt.timeout = 8;
  opt.max_rd_atomic = 4;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, GetParam(), opt);
  hp.wire->set_faults({0.02, 0.02, 0.02});
  constexpr uint32_t kRead = 64 * 1024, kReads = 32;
  auto remote = pattern(kRead * kReads, GetParam());
  std::vector<uint8_t> local(remote.size(), 0);
  const auto lmr = hp.reg(0, local), rmr = hp.reg(1, remote);
  for (uint32_t i = 0; i < kReads; ++i) {
    ibv_sge sge{lmr.addr + i * kRead, kRead, lmr.lkey};
    ibv_send_wr wr = make_wr(i, IBV_WR_RDMA_READ, &sge, 1, rmr.addr + i * kRead, rmr.rkey);
    ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
  }
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, kReads, wcs, 2 * kNsPerSec))
      << wcs.size() << " of " << kReads << "; " << hp.host[0]->check_invariants();
  for (auto& wc : wcs) EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << nic::wc_status_name(wc.status);
  EXPECT_TRUE(local == remote);
  EXPECT_GT(hp.host[0]->counters().retransmitted_packets, 0u);
}
INSTANTIATE_TEST_SUITE_P(Seeds, ReadSeeds, ::testing::Range(uint64_t{1}, uint64_t{21}));

// A zero-length READ names no memory (IBTA C9-88: R_Key and VA are not checked): it completes
// with nothing copied, also with a null address and a key that names no region.
TEST(ZeroLength, ReadAndWriteOfZeroBytesCompleteWithoutTouchingMemory) {
  nic::NicParams p;
  HostPair hp(p);
  std::vector<uint8_t> local(64, 0xAB);
  const auto lmr = hp.reg(0, local);
  ibv_sge sge{lmr.addr, 0, lmr.lkey};
  ibv_send_wr rd = make_wr(1, IBV_WR_RDMA_READ, &sge, 1, 0, 0x12345);
  ibv_send_wr wr = make_wr(2, IBV_WR_RDMA_WRITE, &sge, 1, 0, 0x54321);
  rd.next = &wr;
  ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &rd, nullptr), 0);
  std::vector<ibv_wc> wcs;
  ASSERT_TRUE(hp.wait_wcs(0, 2, wcs, 10 * kNsPerMs));
  EXPECT_EQ(wcs[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wcs[1].status, IBV_WC_SUCCESS);
  EXPECT_TRUE(std::all_of(local.begin(), local.end(), [](uint8_t b) { return b == 0xAB; }));
}

}  // namespace
}  // namespace rocemu::test
