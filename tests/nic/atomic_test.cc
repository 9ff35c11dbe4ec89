// atomic_test.cc — RC atomics end to end between two hosts in virtual time (IBTA Vol. 1
// 9.4.5 COMPARE_SWAP / FETCH_ADD, 9.7.5.1 duplicates): the operations' results in remote
// and local memory, the completion opcodes, the responder's checks (access, bounds and
// R_Key -> remote access error; a misaligned VA -> invalid request), max_rd_atomic, and
// recovery: a lost request is resent, a lost ATOMIC_ACKNOWLEDGE makes the requester resend
// the atomic and the responder answer that duplicate from its saved result without
// executing it again — over many seeds of loss, reordering and duplication a counter ends
// at exactly the number of FETCH_ADDs, each returning a distinct earlier value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "common/wire.h"
#include "nic/psn.h"
#include "tests/nic/host_pair.h"

namespace rocemu::test {
namespace {

constexpr int kAtomicAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                              IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

nic::ConnectOptions atomic_opts(uint8_t max_rd_atomic = 16) {
  nic::ConnectOptions opt;
  opt.access = kAtomicAccess;
  opt.timeout = 8;  // 1.05 ms
  opt.max_rd_atomic = max_rd_atomic;
  return opt;
}

ibv_send_wr atomic_wr(uint64_t wr_id, ibv_wr_opcode op, ibv_sge* sge, uint64_t remote_addr,
                      uint32_t rkey, uint64_t compare_add, uint64_t swap = 0) {
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.opcode = op;
  wr.sg_list = sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.atomic.remote_addr = remote_addr;
  wr.wr.atomic.rkey = rkey;
  wr.wr.atomic.compare_add = compare_add;
  wr.wr.atomic.swap = swap;
  return wr;
}

uint64_t load64(const std::vector<uint8_t>& b, size_t off) {
  uint64_t v;
  std::memcpy(&v, b.data() + off, 8);
  return v;
}
void store64(std::vector<uint8_t>& b, size_t off, uint64_t v) {
  std::memcpy(b.data() + off, &v, 8);
}

uint8_t bth_opcode(const uint8_t* f, uint32_t len) {
  return len < wire::kRoceHeadersBytes ? 0xff : f[wire::kBthOff];
}
uint32_t bth_psn(const uint8_t* f) {
  return reinterpret_cast<const wire::Bth*>(f + wire::kBthOff)->psn();
}

// One atomic from side 0 to side 1; returns its completion (status -1 if none came).
struct Single {
  ibv_wc wc{};
  bool done = false;
};
Single run_one(HostPair& hp, ibv_send_wr wr) {
  Single s;
  s.wc.status = static_cast<ibv_wc_status>(-1);
  if (hp.host[0]->post_send(hp.qpn[0], &wr, nullptr) != 0) return s;
  std::vector<ibv_wc> wcs;
  if (!hp.wait_wcs(0, 1, wcs, 50 * kNsPerMs)) return s;
  s.wc = wcs[0];
  s.done = true;
  return s;
}

TEST(Atomics, FetchAddReturnsTheOriginalAndAddsModulo2To64) {
  nic::NicParams p;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 1, atomic_opts());
  std::vector<uint8_t> remote(64, 0), local(16, 0xee);
  store64(remote, 8, 0xfffffffffffffff0ull);
  const auto rmr = hp.reg(1, remote, kAtomicAccess), lmr = hp.reg(0, local);
  ibv_sge sge{lmr.addr, 8, lmr.lkey};
  auto r =
      run_one(hp, atomic_wr(7, IBV_WR_ATOMIC_FETCH_AND_ADD, &sge, rmr.addr + 8, rmr.rkey, 0x25));
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.wc.status, IBV_WC_SUCCESS) << nic::wc_status_name(r.wc.status);
  EXPECT_EQ(r.wc.opcode, IBV_WC_FETCH_ADD);
  EXPECT_EQ(r.wc.wr_id, 7u);
  EXPECT_EQ(r.wc.byte_len, 8u);
  EXPECT_EQ(load64(local, 0), 0xfffffffffffffff0ull) << "the original value, host order";
  EXPECT_EQ(load64(remote, 8), 0x15u) << "added modulo 2^64";
  EXPECT_EQ(load64(remote, 0), 0u) << "neighbours untouched";
  EXPECT_EQ(load64(remote, 16), 0u);
  EXPECT_EQ(local[8], 0xee) << "only the 8 bytes of the SGE written";
  EXPECT_EQ(hp.host[1]->counters().atomics_executed, 1u);
  EXPECT_EQ(hp.host[1]->counters().atomic_acks_sent, 1u);
}

TEST(Atomics, CompareSwapSwapsOnlyOnEquality) {
  nic::NicParams p;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 1, atomic_opts());
  std::vector<uint8_t> remote(16, 0), local(16, 0);
  store64(remote, 0, 1111);
  const auto rmr = hp.reg(1, remote, kAtomicAccess), lmr = hp.reg(0, local);
  ibv_sge sge{lmr.addr, 8, lmr.lkey};
  // Not equal: unchanged, the original returned.
  auto r = run_one(hp, atomic_wr(1, IBV_WR_ATOMIC_CMP_AND_SWP, &sge, rmr.addr, rmr.rkey, 1112, 5));
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(r.wc.opcode, IBV_WC_COMP_SWAP);
  EXPECT_EQ(r.wc.byte_len, 8u);
  EXPECT_EQ(load64(local, 0), 1111u);
  EXPECT_EQ(load64(remote, 0), 1111u);
  // Equal: swapped.
  ibv_sge sge2{lmr.addr + 8, 8, lmr.lkey};
  r = run_one(hp, atomic_wr(2, IBV_WR_ATOMIC_CMP_AND_SWP, &sge2, rmr.addr, rmr.rkey, 1111,
                            0x8000000000000001ull));
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(load64(local, 8), 1111u);
  EXPECT_EQ(load64(remote, 0), 0x8000000000000001ull);
}

TEST(Atomics, TheOriginalValueScattersOverTwoSges) {
  nic::NicParams p;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 1, atomic_opts());
  std::vector<uint8_t> remote(8, 0), local(32, 0);
  store64(remote, 0, 0x0807060504030201ull);
  const auto rmr = hp.reg(1, remote, kAtomicAccess), lmr = hp.reg(0, local);
  ibv_sge sges[2] = {{lmr.addr, 3, lmr.lkey}, {lmr.addr + 16, 5, lmr.lkey}};
  ibv_send_wr wr = atomic_wr(1, IBV_WR_ATOMIC_FETCH_AND_ADD, sges, rmr.addr, rmr.rkey, 1);
  wr.num_sge = 2;
  auto r = run_one(hp, wr);
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.wc.status, IBV_WC_SUCCESS);
  uint8_t got[8];
  std::memcpy(got, local.data(), 3);
  std::memcpy(got + 3, local.data() + 16, 5);
  uint64_t v;
  std::memcpy(&v, got, 8);
  EXPECT_EQ(v, 0x0807060504030201ull);
}

TEST(Atomics, OnTheWireAsRxe) {
  // AtomicETH big-endian with FETCH_ADD's compare 0 and AckReq set, ATOMIC_ACKNOWLEDGE with
  // syndrome 0x1f, the request's PSN and the MSN counting messages (golden captures 11/12).
  nic::NicParams p;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 1, atomic_opts(), 500, 900);
  std::vector<uint8_t> remote(8, 0), local(8, 0);
  store64(remote, 0, 0x1122334455667788ull);
  const auto rmr = hp.reg(1, remote, kAtomicAccess), lmr = hp.reg(0, local);
  std::vector<std::vector<uint8_t>> sent[2];
  hp.wire->set_inspector(
      [&](int side, const uint8_t* f, uint32_t len) { sent[side].emplace_back(f, f + len); });
  ibv_sge sge{lmr.addr, 8, lmr.lkey};
  ASSERT_TRUE(run_one(hp, atomic_wr(1, IBV_WR_ATOMIC_FETCH_AND_ADD, &sge, rmr.addr, rmr.rkey,
                                    0x0102030405060708ull, 0xdead))
                  .done);
  ASSERT_EQ(sent[0].size(), 1u);
  ASSERT_EQ(sent[1].size(), 1u);
  const auto& rq = sent[0][0];
  const auto& ak = sent[1][0];
  EXPECT_EQ(rq.size(), 86u);
  EXPECT_EQ(ak.size(), 70u);
  nic::RocePacket q, a;
  std::vector<uint8_t> rqc = rq, akc = ak;
  ASSERT_EQ(nic::parse_roce(rqc.data(), static_cast<uint32_t>(rqc.size()), q), nic::RxDrop::kNone);
  ASSERT_EQ(nic::parse_roce(akc.data(), static_cast<uint32_t>(akc.size()), a), nic::RxDrop::kNone);
  EXPECT_EQ(q.opcode, wire::kRcFetchAdd);
  EXPECT_TRUE(q.ack_req);
  EXPECT_EQ(q.psn, 500u);
  EXPECT_EQ(q.va, rmr.addr);
  EXPECT_EQ(q.rkey, rmr.rkey);
  EXPECT_EQ(q.atomic_swap_add, 0x0102030405060708ull);
  EXPECT_EQ(q.atomic_compare, 0u) << "FETCH_ADD carries no compare value (rxe sends 0)";
  EXPECT_EQ(rq[wire::kRoceHeadersBytes + 12], 0x01) << "add data big-endian";
  EXPECT_EQ(a.opcode, wire::kRcAtomicAcknowledge);
  EXPECT_EQ(a.psn, 500u);
  EXPECT_EQ(a.syndrome, 0x1f);
  EXPECT_EQ(a.msn, 1u);
  EXPECT_EQ(a.atomic_orig, 0x1122334455667788ull);
  EXPECT_EQ(ak[wire::kRoceHeadersBytes + 4], 0x11) << "original value big-endian";
  EXPECT_TRUE(nic::icrc_ok(q));
  EXPECT_TRUE(nic::icrc_ok(a));
}

struct ErrorCase {
  const char* name;
  int mr_access;
  int qp_access;
  uint64_t offset;  // from the region's start
  bool bad_rkey;
  ibv_wc_status want;
  uint8_t want_syndrome;
};

TEST(Atomics, ResponderChecksGiveTheIbtaNakAndCompletion) {
  const std::vector<ErrorCase> cases = {
      {"misaligned", kAtomicAccess, kAtomicAccess, 4, false, IBV_WC_REM_INV_REQ_ERR, 0x61},
      {"misaligned by 1", kAtomicAccess, kAtomicAccess, 9, false, IBV_WC_REM_INV_REQ_ERR, 0x61},
      {"region without REMOTE_ATOMIC", kAtomicAccess & ~IBV_ACCESS_REMOTE_ATOMIC, kAtomicAccess, 0,
       false, IBV_WC_REM_ACCESS_ERR, 0x62},
      {"QP without REMOTE_ATOMIC", kAtomicAccess, kAtomicAccess & ~IBV_ACCESS_REMOTE_ATOMIC, 0,
       false, IBV_WC_REM_ACCESS_ERR, 0x62},
      {"past the end", kAtomicAccess, kAtomicAccess, 64, false, IBV_WC_REM_ACCESS_ERR, 0x62},
      {"straddling the end", kAtomicAccess, kAtomicAccess, 60, false, IBV_WC_REM_ACCESS_ERR, 0x62},
      {"unknown rkey", kAtomicAccess, kAtomicAccess, 0, true, IBV_WC_REM_ACCESS_ERR, 0x62},
  };
  for (const auto& c : cases) {
    for (ibv_wr_opcode op : {IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP}) {
      SCOPED_TRACE(std::string(c.name) + (op == IBV_WR_ATOMIC_CMP_AND_SWP ? " CAS" : " FAA"));
      nic::NicParams p;
      auto opt = atomic_opts();
      opt.access = c.qp_access;
      HostPair hp(p, 25 * kBpsPerGbps, 2000, 1, opt);
      std::vector<uint8_t> remote(64, 0x5a), local(8, 0), behind(8, 0);
      const auto before = remote;
      // At an 8-byte aligned IOVA, so the offsets alone decide the alignment.
      const auto rmr =
          hp.host[1]->reg_mr_iova(hp.pd[1], remote.data(), remote.size(), 0x100000, c.mr_access);
      const auto lmr = hp.reg(0, local), bmr = hp.reg(0, behind);
      std::vector<uint8_t> syndromes;
      hp.wire->set_inspector([&](int side, const uint8_t* f, uint32_t len) {
        if (side == 1 && bth_opcode(f, len) == wire::kRcAcknowledge)
          syndromes.push_back(f[wire::kRoceHeadersBytes]);
      });
      ibv_sge sge{lmr.addr, 8, lmr.lkey}, sge2{bmr.addr, 8, bmr.lkey};
      ibv_send_wr wr =
          atomic_wr(1, op, &sge, rmr.addr + c.offset, c.bad_rkey ? rmr.rkey + 0x100 : rmr.rkey,
                    0x5a5a5a5a5a5a5a5aull, 3);
      ibv_send_wr wr2 = atomic_wr(2, IBV_WR_ATOMIC_FETCH_AND_ADD, &sge2, rmr.addr, rmr.rkey, 1);
      wr.next = &wr2;
      ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
      std::vector<ibv_wc> wcs;
      ASSERT_TRUE(hp.wait_wcs(0, 2, wcs, 50 * kNsPerMs));
      EXPECT_EQ(wcs[0].status, c.want) << nic::wc_status_name(wcs[0].status);
      EXPECT_EQ(wcs[1].status, IBV_WC_WR_FLUSH_ERR) << "the WQE behind is flushed";
      EXPECT_EQ(hp.host[0]->qp_state(hp.qpn[0]), IBV_QPS_ERR);
      ASSERT_FALSE(syndromes.empty());
      EXPECT_EQ(syndromes[0], c.want_syndrome);
      EXPECT_TRUE(remote == before) << "nothing executed";
      EXPECT_EQ(hp.host[1]->counters().atomics_executed, 0u);
    }
  }
}

TEST(Atomics, PostSendRejectsAtomicsWithoutAnEightByteWritableSge) {
  nic::NicParams p;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, 1, atomic_opts());
  std::vector<uint8_t> local(64, 0), ro(64, 0);
  const auto lmr = hp.reg(0, local);
  const auto romr = hp.host[0]->reg_mr(hp.pd[0], ro.data(), ro.size(), IBV_ACCESS_REMOTE_READ);
  for (uint32_t len : {0u, 4u, 16u}) {
    ibv_sge sge{lmr.addr, len, lmr.lkey};
    ibv_send_wr wr = atomic_wr(1, IBV_WR_ATOMIC_FETCH_AND_ADD, &sge, 0, 1, 1);
    const ibv_send_wr* bad = nullptr;
    EXPECT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, &bad), EINVAL) << len;
    EXPECT_EQ(bad, &wr);
  }
  ibv_sge sge{romr.addr, 8, romr.lkey};
  ibv_send_wr wr = atomic_wr(1, IBV_WR_ATOMIC_CMP_AND_SWP, &sge, 0, 1, 1, 2);
  EXPECT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), EINVAL)
      << "the original value needs LOCAL_WRITE";
}

// At most max_rd_atomic READs and atomics outstanding at once, counted together.
TEST(Atomics, OutstandingAtomicsAndReadsRespectMaxRdAtomic) {
  for (uint8_t limit : {uint8_t{1}, uint8_t{2}, uint8_t{4}}) {
    SCOPED_TRACE(int(limit));
    nic::NicParams p;
    HostPair hp(p, 25 * kBpsPerGbps, 20000, 1, atomic_opts(limit));
    std::vector<uint8_t> remote(4096, 0), local(4096, 0);
    const auto rmr = hp.reg(1, remote, kAtomicAccess), lmr = hp.reg(0, local);
    std::set<uint32_t> outstanding;
    size_t most = 0;
    hp.wire->set_inspector([&](int side, const uint8_t* f, uint32_t len) {
      const uint8_t op = bth_opcode(f, len);
      if (side == 0 && (op == wire::kRcFetchAdd || op == wire::kRcReadRequest))
        outstanding.insert(bth_psn(f));
      if (side == 1 && (op == wire::kRcAtomicAcknowledge || op == wire::kRcReadResponseOnly))
        outstanding.erase(bth_psn(f));
      most = std::max(most, outstanding.size());
    });
    constexpr int kOps = 24;
    std::vector<ibv_sge> sges(kOps);
    std::vector<ibv_send_wr> wrs(kOps);
    for (int i = 0; i < kOps; ++i) {
      sges[i] = {lmr.addr + 64 * i, 8, lmr.lkey};
      if (i % 3 == 2) {
        wrs[i] = make_wr(i, IBV_WR_RDMA_READ, &sges[i], 1, rmr.addr + 64 * i, rmr.rkey);
      } else {
        wrs[i] = atomic_wr(i, IBV_WR_ATOMIC_FETCH_AND_ADD, &sges[i], rmr.addr, rmr.rkey, 1);
      }
      ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wrs[i], nullptr), 0);
    }
    std::vector<ibv_wc> wcs;
    ASSERT_TRUE(hp.wait_wcs(0, kOps, wcs, 100 * kNsPerMs));
    for (auto& wc : wcs) EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
    EXPECT_EQ(most, limit) << "the limit is reached and never exceeded";
    EXPECT_EQ(load64(remote, 0), 16u);
  }
}

// Targeted losses: the request, the ATOMIC_ACKNOWLEDGE (once, twice), and the ACK of an
// atomic between WRITEs. The counter must end at exactly one addition per FETCH_ADD.
struct LossCase {
  const char* name;
  std::map<uint8_t, int> drop_opcode;  // opcode -> how many of its first frames to drop
  bool with_writes;                    // WRITE, FAA, WRITE, FAA ... instead of FAAs only
};

TEST(Atomics, LostRequestsAndLostAcksExecuteEachAtomicOnce) {
  const std::vector<LossCase> cases = {
      {"request lost", {{wire::kRcFetchAdd, 1}}, false},
      {"atomic ACK lost", {{wire::kRcAtomicAcknowledge, 1}}, false},
      {"atomic ACK and its replay lost", {{wire::kRcAtomicAcknowledge, 2}}, false},
      {"three requests lost", {{wire::kRcFetchAdd, 3}}, false},
      {"atomic ACKs lost among WRITEs", {{wire::kRcAtomicAcknowledge, 2}}, true},
      {"plain ACKs lost among WRITEs", {{wire::kRcAcknowledge, 2}}, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    nic::NicParams p;
    HostPair hp(p, 25 * kBpsPerGbps, 2000, 5, atomic_opts(4));
    std::vector<uint8_t> remote(8192, 0), local(8192, 0), src = pattern(8192, 3);
    const auto rmr = hp.reg(1, remote, kAtomicAccess), lmr = hp.reg(0, local), smr = hp.reg(0, src);
    std::map<uint8_t, int> left = c.drop_opcode;
    int dropped = 0;
    hp.wire->set_filter([&](int, const uint8_t* f, uint32_t len) {
      auto it = left.find(bth_opcode(f, len));
      if (it == left.end() || it->second == 0) return false;
      --it->second;
      ++dropped;
      return true;
    });
    constexpr int kOps = 8;
    int faas = 0;
    std::vector<ibv_sge> sges(kOps);
    for (int i = 0; i < kOps; ++i) {
      ibv_send_wr wr;
      if (c.with_writes && i % 2 == 0) {
        sges[i] = {smr.addr + 1024 * i, 1024, smr.lkey};
        wr = make_wr(i, IBV_WR_RDMA_WRITE, &sges[i], 1, rmr.addr + 1024 + 512 * i, rmr.rkey);
      } else {
        sges[i] = {lmr.addr + 8 * i, 8, lmr.lkey};
        wr = atomic_wr(i, IBV_WR_ATOMIC_FETCH_AND_ADD, &sges[i], rmr.addr, rmr.rkey, 3);
        ++faas;
      }
      ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
    }
    std::vector<ibv_wc> wcs;
    ASSERT_TRUE(hp.wait_wcs(0, kOps, wcs, 200 * kNsPerMs))
        << wcs.size() << " of " << kOps << "; " << hp.host[0]->check_invariants();
    for (size_t i = 0; i < wcs.size(); ++i) {
      EXPECT_EQ(wcs[i].status, IBV_WC_SUCCESS) << nic::wc_status_name(wcs[i].status);
      EXPECT_EQ(wcs[i].wr_id, i) << "in order";
    }
    int total_drops = 0;
    for (auto& [op, n] : c.drop_opcode) total_drops += n;
    EXPECT_EQ(dropped, total_drops);
    EXPECT_EQ(load64(remote, 0), 3u * faas) << "each FETCH_ADD executed exactly once";
    EXPECT_EQ(hp.host[1]->counters().atomics_executed, static_cast<uint64_t>(faas));
    std::set<uint64_t> origs;
    for (int i = 0; i < kOps; ++i)
      if (!(c.with_writes && i % 2 == 0)) origs.insert(load64(local, 8 * i));
    EXPECT_EQ(origs.size(), static_cast<size_t>(faas)) << "every FETCH_ADD saw its own value";
    EXPECT_EQ(*origs.rbegin(), 3u * (faas - 1));
    if (c.drop_opcode.count(wire::kRcAtomicAcknowledge)) {
      EXPECT_GE(hp.host[1]->counters().atomic_replays, 1u) << "answered from the saved result";
    }
    EXPECT_EQ(hp.host[0]->check_invariants(), "");
  }
}

// Many seeds of 2% loss, reordering and duplication in both directions, FETCH_ADDs to one
// counter mixed with COMPARE_SWAPs on a second word, WRITEs and READs; the liveness
// invariant (outstanding work has a timer armed or a packet ready) checked at every step.
class AtomicSeeds : public ::testing::TestWithParam<uint64_t> {};
TEST_P(AtomicSeeds, CounterEndsAtTheNumberOfFetchAdds) {
  nic::NicParams p;
  HostPair hp(p, 25 * kBpsPerGbps, 2000, GetParam(), atomic_opts(4));
  hp.wire->set_faults({0.02, 0.02, 0.02});
  constexpr int kOps = 200;
  constexpr uint32_t kSlot = 4096;  // local bytes per operation (a READ lands 2 KiB)
  std::vector<uint8_t> remote(64 * 1024, 0), local(kOps * kSlot, 0);
  const auto rmr = hp.reg(1, remote, kAtomicAccess), lmr = hp.reg(0, local);
  Rng rng(GetParam(), "ops");
  int faas = 0, cass = 0;
  std::vector<int> kind(kOps);  // 0 FAA, 1 CAS, 2 WRITE, 3 READ
  for (int i = 0; i < kOps; ++i) {
    const uint32_t r = static_cast<uint32_t>(rng.below(10));
    kind[i] = r < 6 ? 0 : r < 8 ? 1 : r < 9 ? 2 : 3;
    ibv_sge sge{lmr.addr + kSlot * i, 8, lmr.lkey};
    ibv_send_wr wr;
    switch (kind[i]) {
      case 0:
        wr = atomic_wr(i, IBV_WR_ATOMIC_FETCH_AND_ADD, &sge, rmr.addr, rmr.rkey, 1);
        ++faas;
        break;
      case 1:
        // A chain: CAS number k expects k and stores k + 1, so it succeeds only if every
        // CAS before it ran exactly once.
        wr = atomic_wr(i, IBV_WR_ATOMIC_CMP_AND_SWP, &sge, rmr.addr + 8, rmr.rkey, cass, cass + 1);
        ++cass;
        break;
      case 2:
        sge.length = 2048;
        wr = make_wr(i, IBV_WR_RDMA_WRITE, &sge, 1, rmr.addr + 32 * 1024 + 64 * i, rmr.rkey);
        break;
      default:
        sge.length = 2048;
        wr = make_wr(i, IBV_WR_RDMA_READ, &sge, 1, rmr.addr + 16 * 1024, rmr.rkey);
        break;
    }
    ASSERT_EQ(hp.host[0]->post_send(hp.qpn[0], &wr, nullptr), 0);
  }
  std::vector<ibv_wc> wcs;
  std::string broken;
  const bool done = hp.wire->run_until(
      [&] {
        if (broken.empty()) broken = hp.host[0]->check_invariants();
        ibv_wc wc[32];
        int got;
        while ((got = hp.host[0]->poll_cq(hp.cq[0], 32, wc)) > 0)
          wcs.insert(wcs.end(), wc, wc + got);
        return wcs.size() >= static_cast<size_t>(kOps) || !broken.empty();
      },
      2 * kNsPerSec);
  ASSERT_EQ(broken, "");
  ASSERT_TRUE(done) << wcs.size() << " of " << kOps;
  for (size_t i = 0; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].status, IBV_WC_SUCCESS) << nic::wc_status_name(wcs[i].status);
    EXPECT_EQ(wcs[i].wr_id, i);
  }
  EXPECT_EQ(load64(remote, 0), static_cast<uint64_t>(faas));
  EXPECT_EQ(load64(remote, 8), static_cast<uint64_t>(cass)) << "every CAS of the chain hit";
  // The FETCH_ADDs returned 0, 1, ..., faas - 1 in posting order; the CASes 0 .. cass - 1.
  uint64_t next_faa = 0, next_cas = 0;
  for (int i = 0; i < kOps; ++i) {
    if (kind[i] == 0) {
      EXPECT_EQ(load64(local, kSlot * i), next_faa++) << "op " << i;
    } else if (kind[i] == 1) {
      EXPECT_EQ(load64(local, kSlot * i), next_cas++) << "op " << i;
    }
  }
  EXPECT_EQ(hp.host[1]->counters().atomics_executed, static_cast<uint64_t>(faas + cass));
  EXPECT_GT(hp.host[0]->counters().retransmitted_packets, 0u);
}
INSTANTIATE_TEST_SUITE_P(Seeds, AtomicSeeds, ::testing::Range(uint64_t{1}, uint64_t{41}));

}  // namespace
}  // namespace rocemu::test
