// write_goodput_bench.cc — RC WRITE goodput of two RoceHosts on one core, back to back with
// mbufs handed directly from one's tx() to the other's rx() (no wire model: the CPU is the
// only limit), for 4 KiB..1 MiB messages at MTU 1024 and 4096; next to the raw wire loop
// of the same frames (alloc, copy, ICRC, "tx", "rx" with ICRC check, free) in the same run.
// Gbps counts payload bytes. Targets (issue 15, 1 MiB messages): 50 Gbps at MTU 1024, 100 Gbps
// at MTU 4096. Figures: docs/nic.md.
// rte_vect.h of DPDK 22.11 lacks the extern "C" guard.
extern "C" {
#include <rte_vect.h>
}

#include <benchmark/benchmark.h>
#include <rte_mbuf.h>

#include <memory>
#include <vector>

#include "common/icrc.h"
#include "nic/packet.h"
#include "nic/roce_host.h"
#include "tests/support/eal_env.h"

namespace rocemu {
namespace {

struct Pair {
  Topology topo;
  std::unique_ptr<nic::RoceHost> h[2];
  uint32_t cq[2]{}, qpn[2]{};
  std::vector<uint8_t> src, dst;
  nic::MrInfo smr, dmr;

  Pair(uint32_t mtu, size_t bytes) : src(bytes, 0x5a), dst(bytes, 0) {
    topo.add_node("a", NodeKind::kHost);
    topo.add_node("b", NodeKind::kHost);
    topo.add_link(0, 1, 100 * kBpsPerGbps, 0);
    nic::NicParams p;
    p.mtu_bytes = mtu;
    uint32_t pd[2];
    for (int i = 0; i < 2; ++i) {
      h[i] = std::make_unique<nic::RoceHost>(p, topo, i, test::test_mempool(), 1);
      pd[i] = h[i]->alloc_pd();
      cq[i] = h[i]->create_cq(1024);
      nic::QpInitAttr a;
      a.pd = pd[i];
      a.send_cq = a.recv_cq = cq[i];
      a.max_send_wr = 512;
      qpn[i] = h[i]->create_qp(a);
    }
    nic::ConnectOptions opt;
    opt.path_mtu = nic::mtu_enum(mtu);
    for (int i = 0; i < 2; ++i) nic::connect_rc(*h[i], qpn[i], h[1 - i]->local_info(qpn[1 - i]), opt);
    smr = h[0]->reg_mr(pd[0], src.data(), src.size(), IBV_ACCESS_LOCAL_WRITE);
    dmr = h[1]->reg_mr(pd[1], dst.data(), dst.size(),
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  }

  /// Posts `n` WRITEs of `msg` bytes (the last signaled) and pumps until it completes.
  void write_batch(uint32_t n, uint32_t msg) {
    for (uint32_t i = 0; i < n; ++i) {
      ibv_sge sge{smr.addr + (uint64_t{i} * msg) % (src.size() - msg + 1), msg, smr.lkey};
      ibv_send_wr wr{};
      wr.opcode = IBV_WR_RDMA_WRITE;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      wr.send_flags = i + 1 == n ? IBV_SEND_SIGNALED : 0;
      wr.wr.rdma.remote_addr = dmr.addr + (uint64_t{i} * msg) % (dst.size() - msg + 1);
      wr.wr.rdma.rkey = dmr.rkey;
      h[0]->post_send(qpn[0], &wr, nullptr);
    }
    ibv_wc wc;
    while (h[0]->poll_cq(cq[0], 1, &wc) == 0) {
      for (int k = 0; k < 32; ++k) {
        rte_mbuf* m = h[0]->tx(0, 0);
        if (!m) break;
        h[1]->rx(0, &m, 1, 0);
      }
      while (rte_mbuf* m = h[1]->tx(0, 0)) h[0]->rx(0, &m, 1, 0);
    }
  }
};

void BM_RcWriteGoodput(benchmark::State& st) {
  const auto mtu = static_cast<uint32_t>(st.range(0));
  const auto msg = static_cast<uint32_t>(st.range(1));
  const uint32_t batch = std::max<uint32_t>(1, (1u << 20) / msg);
  Pair pair(mtu, 2u << 20);
  uint64_t bytes = 0;
  for (auto _ : st) {
    pair.write_batch(batch, msg);
    bytes += uint64_t{batch} * msg;
  }
  st.counters["Gbps"] = benchmark::Counter(static_cast<double>(bytes) * 8 / 1e9,
                                           benchmark::Counter::kIsRate);
  st.counters["Mpps"] = benchmark::Counter(
      static_cast<double>(pair.h[0]->counters().tx_packets) / 1e6, benchmark::Counter::kIsRate);
}

/// The raw wire loop: per frame alloc, copy headers + MTU payload, ICRC, hand over, check
/// ICRC, free. The ceiling the transport is measured against.
void BM_RawWireLoop(benchmark::State& st) {
  const auto mtu = static_cast<uint32_t>(st.range(0));
  rte_mempool* pool = test::test_mempool();
  std::vector<uint8_t> payload(mtu, 0x5a);
  const nic::FrameTemplate t = nic::make_template({});
  uint64_t bytes = 0, bad = 0;
  for (auto _ : st) {
    for (int i = 0; i < 256; ++i) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool);
      auto* f = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(nic::frame_bytes(0, mtu))));
      const uint32_t at = nic::write_headers(f, t, wire::kRcWriteMiddle, static_cast<uint32_t>(i),
                                             false, false, 0, mtu, 0);
      std::memcpy(f + at, payload.data(), mtu);
      nic::seal_frame(f);
      // "rx"
      nic::RocePacket p;
      auto* g = rte_pktmbuf_mtod(m, uint8_t*);
      if (nic::parse_roce(g, rte_pktmbuf_data_len(m), p) != nic::RxDrop::kNone || !nic::icrc_ok(p)) ++bad;
      rte_pktmbuf_free(m);
      bytes += mtu;
    }
  }
  if (bad) st.SkipWithError("ICRC mismatch in the raw loop");
  st.counters["Gbps"] = benchmark::Counter(static_cast<double>(bytes) * 8 / 1e9,
                                           benchmark::Counter::kIsRate);
}

BENCHMARK(BM_RawWireLoop)->Arg(1024)->Arg(4096)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RcWriteGoodput)
    ->ArgsProduct({{1024, 4096}, {4096, 65536, 1 << 20}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rocemu

int main(int argc, char** argv) {
  rocemu::test::test_mempool();
  // The fastest CRC the CPU allows: 512-bit VPCLMULQDQ lanes need the 512-bit SIMD limit that
  // --force-max-simd-bitwidth=512 would give; else PCLMULQDQ.
  rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
  rocemu::icrc_select_fastest();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
