// qp_scale_bench.cc — what a host pays to create its n-th queue pair when it already has
// many (a workload with a QP pair per flow and thousands of flows in flight, issue 15:
// "compact per-QP state for 1,000s of QPs per host"). Each QP is created, connected to a
// peer and followed by next_deadline(), as the engines ask after every call; ns per QP for
// hosts growing to 256, 1,024 and 4,096 QPs. Flat in n since the per-QP deadline trees grow
// in place (MinTree::grow); before, each new QP made every QP's deadline stale. Figures:
// docs/nic.md.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <memory>
#include <vector>

#include "nic/roce_host.h"
#include "tests/support/eal_env.h"

namespace rocemu {
namespace {

void BM_CreateQpsOneByOne(benchmark::State& state) {
  // Each iteration builds two hosts afresh; glibc would hand the last ones' memory back to
  // the kernel and fault it in again (1-10 us per QP here, varying with the heap's layout),
  // which is not what a long run with many flows pays. Keep the heap.
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  const auto n = static_cast<uint32_t>(state.range(0));
  Topology topo;
  topo.add_node("a", NodeKind::kHost);
  topo.add_node("b", NodeKind::kHost);
  topo.add_link(0, 1, 100 * kBpsPerGbps, 1000);
  nic::NicParams p;
  p.max_qps = n;
  std::unique_ptr<nic::RoceHost> a, b;
  for (auto _ : state) {
    state.PauseTiming();  // set-up, and the last iteration's hosts going away, are not the figure
    a.reset();
    b.reset();
    a = std::make_unique<nic::RoceHost>(p, topo, 0, test::test_mempool(), 1);
    b = std::make_unique<nic::RoceHost>(p, topo, 1, test::test_mempool(), 1);
    nic::QpInitAttr attr[2];
    for (int i = 0; i < 2; ++i) {
      nic::RoceHost& h = i == 0 ? *a : *b;
      attr[i].pd = h.alloc_pd();
      attr[i].send_cq = attr[i].recv_cq = h.create_cq(16);
      attr[i].max_send_wr = attr[i].max_recv_wr = 2;  // a flow's own pair
    }
    state.ResumeTiming();
    for (uint32_t q = 0; q < n; ++q) {
      const uint32_t qa = a->create_qp(attr[0]), qb = b->create_qp(attr[1]);
      if (qa == 0 || qb == 0 || nic::connect_rc(*a, qa, b->local_info(qb), {}) != 0 ||
          nic::connect_rc(*b, qb, a->local_info(qa), {}) != 0) {
        state.SkipWithError("create or connect failed");
        return;
      }
      benchmark::DoNotOptimize(a->next_deadline());
      benchmark::DoNotOptimize(b->next_deadline());
    }
  }
  state.counters["ns_per_qp"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * 2 * n,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_CreateQpsOneByOne)->Arg(256)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);

// The same, into the slots of n destroyed QPs (flows that ended): each creation takes the
// lowest free slot.
void BM_CreateQpsIntoFreedSlots(benchmark::State& state) {
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  const auto n = static_cast<uint32_t>(state.range(0));
  Topology topo;
  topo.add_node("a", NodeKind::kHost);
  topo.add_node("b", NodeKind::kHost);
  topo.add_link(0, 1, 100 * kBpsPerGbps, 1000);
  nic::NicParams p;
  p.max_qps = n;
  nic::RoceHost a(p, topo, 0, test::test_mempool(), 1);
  nic::QpInitAttr attr;
  attr.pd = a.alloc_pd();
  attr.send_cq = attr.recv_cq = a.create_cq(16);
  attr.max_send_wr = attr.max_recv_wr = 2;
  std::vector<uint32_t> qpns(n);
  for (auto _ : state) {
    state.PauseTiming();
    for (uint32_t& q : qpns)
      if (q != 0) (void)a.destroy_qp(q);
    state.ResumeTiming();
    for (uint32_t& q : qpns) {
      q = a.create_qp(attr);
      if (q == 0) {
        state.SkipWithError("create failed");
        return;
      }
      benchmark::DoNotOptimize(a.next_deadline());
    }
  }
  state.counters["ns_per_qp"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * n,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_CreateQpsIntoFreedSlots)->Arg(256)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rocemu

BENCHMARK_MAIN();
