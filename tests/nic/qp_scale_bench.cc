// qp_scale_bench.cc — what a host pays to create its n-th queue pair when it already has
// many (a workload with a QP pair per flow and thousands of flows in flight, issue 15:
// "compact per-QP state for 1,000s of QPs per host"). BM_CreateQpsOneByOne: each QP is
// created, connected to a peer and followed by next_deadline(), as the engines ask after
// every call, on hosts growing to 256, 1,024 and 4,096 QPs; BM_CreateQpsIntoFreedSlots: the
// same number re-created into the slots of destroyed ones. ns per QP, flat in n (it grew
// linearly: docs/nic.md, "Thousands of QPs per host").
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <memory>
#include <vector>

#include "nic/roce_host.h"
#include "tests/support/eal_env.h"

namespace rocemu {
namespace {

// Two hosts on a link, room for `n` QPs each. Each benchmark iteration builds hosts or QPs
// afresh; glibc would hand the last ones' memory back to the kernel and fault it in again
// (1-10 us per QP here, varying with the heap's layout), which is not what a long run with
// many flows pays: the heap is kept.
struct Setup {
  Topology topo;
  nic::NicParams params;
  explicit Setup(uint32_t n) {
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    topo.add_node("a", NodeKind::kHost);
    topo.add_node("b", NodeKind::kHost);
    topo.add_link(0, 1, 100 * kBpsPerGbps, 1000);
    params.max_qps = n;
  }
  std::unique_ptr<nic::RoceHost> host(uint32_t index) const {
    return std::make_unique<nic::RoceHost>(params, topo, index, test::test_mempool(), 1);
  }
  /// A PD and CQ on `h`, and the attributes of a flow's own QP there.
  static nic::QpInitAttr flow_qp(nic::RoceHost& h) {
    nic::QpInitAttr a;
    a.pd = h.alloc_pd();
    a.send_cq = a.recv_cq = h.create_cq(16);
    a.max_send_wr = a.max_recv_wr = 2;
    return a;
  }
};

void set_ns_per_qp(benchmark::State& state, double qps_per_iteration) {
  state.counters["ns_per_qp"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * qps_per_iteration,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_CreateQpsOneByOne(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  const Setup setup(n);
  std::unique_ptr<nic::RoceHost> a, b;
  for (auto _ : state) {
    state.PauseTiming();  // set-up, and the last iteration's hosts going away, are not the figure
    a.reset();
    b.reset();
    a = setup.host(0);
    b = setup.host(1);
    const nic::QpInitAttr attr_a = Setup::flow_qp(*a), attr_b = Setup::flow_qp(*b);
    state.ResumeTiming();
    for (uint32_t q = 0; q < n; ++q) {
      const uint32_t qa = a->create_qp(attr_a), qb = b->create_qp(attr_b);
      if (qa == 0 || qb == 0 || nic::connect_rc(*a, qa, b->local_info(qb), {}) != 0 ||
          nic::connect_rc(*b, qb, a->local_info(qa), {}) != 0) {
        state.SkipWithError("create or connect failed");
        return;
      }
      benchmark::DoNotOptimize(a->next_deadline());
      benchmark::DoNotOptimize(b->next_deadline());
    }
  }
  set_ns_per_qp(state, 2.0 * n);
}
BENCHMARK(BM_CreateQpsOneByOne)->Arg(256)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);

// The same, into the slots of n destroyed QPs (flows that ended): each creation takes the
// lowest free slot.
void BM_CreateQpsIntoFreedSlots(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  const Setup setup(n);
  const std::unique_ptr<nic::RoceHost> a = setup.host(0);
  const nic::QpInitAttr attr = Setup::flow_qp(*a);
  std::vector<uint32_t> qpns(n);
  for (auto _ : state) {
    state.PauseTiming();
    for (uint32_t& q : qpns)
      if (q != 0) (void)a->destroy_qp(q);
    state.ResumeTiming();
    for (uint32_t& q : qpns) {
      q = a->create_qp(attr);
      if (q == 0) {
        state.SkipWithError("create failed");
        return;
      }
      benchmark::DoNotOptimize(a->next_deadline());
    }
  }
  set_ns_per_qp(state, n);
}
BENCHMARK(BM_CreateQpsIntoFreedSlots)->Arg(256)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rocemu

BENCHMARK_MAIN();
