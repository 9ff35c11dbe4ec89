// host_pair.h — two RoceHosts on a back-to-back link with one connected RC QP each, their
// PD/CQs, and helpers to register buffers and wait for completions. For tests and benchmarks.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "nic/roce_host.h"
#include "tests/nic/back_to_back.h"
#include "tests/support/eal_env.h"

namespace rocemu::test {

inline std::vector<uint8_t> pattern(size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  Rng r(seed);
  for (auto& b : v) b = static_cast<uint8_t>(r.next());
  return v;
}

struct HostPair {
  Topology topo;
  std::unique_ptr<nic::RoceHost> host[2];
  uint32_t pd[2]{}, cq[2]{}, qpn[2]{};
  std::unique_ptr<BackToBack> wire;

  /// `pool`: the hosts' mbufs (null: test_mempool()'s, with 9 KB rooms).
  HostPair(const nic::NicParams& p, uint64_t rate_bps = 100 * kBpsPerGbps, TimeNs delay_ns = 1000,
           uint64_t seed = 1, nic::ConnectOptions opt = {}, int64_t psn0 = -1, int64_t psn1 = -1,
           rte_mempool* pool = nullptr) {
    topo.add_node("h0", NodeKind::kHost);
    topo.add_node("h1", NodeKind::kHost);
    topo.add_link(0, 1, rate_bps, delay_ns);
    if (!pool) pool = test_mempool();
    for (int i = 0; i < 2; ++i) {
      host[i] = std::make_unique<nic::RoceHost>(p, topo, i, pool, seed);
      pd[i] = host[i]->alloc_pd();
      cq[i] = host[i]->create_cq(4096);
      nic::QpInitAttr a;
      a.pd = pd[i];
      a.send_cq = a.recv_cq = cq[i];
      a.max_send_wr = a.max_recv_wr = 1024;
      a.max_send_sge = a.max_recv_sge = 4;
      a.initial_psn = i == 0 ? psn0 : psn1;
      qpn[i] = host[i]->create_qp(a);
    }
    // opt.path_mtu left 0: connect_rc takes the host's mtu_bytes (checked by the MTU tests).
    // opt.sgid_index other than 1: an IPv6 path between the two hosts' GIDs of that index.
    for (int i = 0; i < 2; ++i) {
      nic::QpInfo peer = host[1 - i]->local_info(qpn[1 - i]);
      ibv_gid g{};
      if (opt.sgid_index != 1 && host[1 - i]->gid(opt.sgid_index, g)) peer.gid = nic::ipv6_of(g);
      EXPECT_EQ(nic::connect_rc(*host[i], qpn[i], peer, opt), 0);
    }
    wire = std::make_unique<BackToBack>(*host[0], *host[1], rate_bps, delay_ns, seed, pool);
  }

  nic::MrInfo reg(int side, std::vector<uint8_t>& buf,
                  int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                               IBV_ACCESS_REMOTE_READ) {
    return host[side]->reg_mr(pd[side], buf.data(), buf.size(), access);
  }

  /// One RDMA WRITE of `n` pattern bytes (seed `seed`) from side 0 into a buffer of side 1,
  /// run until it completes or `limit_ns`: the completion status (-1 if none came) and
  /// whether the destination then equals the source.
  struct WriteOutcome {
    int status = -1;
    bool data_ok = false;
  };
  WriteOutcome write_once(size_t n, uint64_t seed, TimeNs limit_ns) {
    auto a = pattern(n, seed);
    std::vector<uint8_t> b(n, 0);
    const auto amr = reg(0, a), bmr = reg(1, b);
    ibv_sge sge{amr.addr, static_cast<uint32_t>(n), amr.lkey};
    ibv_send_wr wr{};
    wr.wr_id = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = bmr.addr;
    wr.wr.rdma.rkey = bmr.rkey;
    WriteOutcome o;
    if (host[0]->post_send(qpn[0], &wr, nullptr) != 0) return o;
    std::vector<ibv_wc> wcs;
    if (!wait_wcs(0, 1, wcs, limit_ns)) return o;
    o.status = wcs[0].status;
    o.data_ok = a == b;
    return o;
  }

  /// Runs until `n` completions were polled from side's CQ (appended to out) or the limit.
  bool wait_wcs(int side, size_t n, std::vector<ibv_wc>& out, TimeNs limit_ns) {
    return wire->run_until(
        [&] {
          ibv_wc wc[32];
          int got;
          while ((got = host[side]->poll_cq(cq[side], 32, wc)) > 0)
            out.insert(out.end(), wc, wc + got);
          return out.size() >= n;
        },
        limit_ns);
  }
};

inline ibv_send_wr make_wr(uint64_t wr_id, ibv_wr_opcode op, ibv_sge* sge, int num_sge,
                           uint64_t remote_addr = 0, uint32_t rkey = 0) {
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.opcode = op;
  wr.sg_list = sge;
  wr.num_sge = num_sge;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote_addr;
  wr.wr.rdma.rkey = rkey;
  return wr;
}

}  // namespace rocemu::test
