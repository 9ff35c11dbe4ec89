// Virtual-time engine speed: events per second on a saturated 2-host link (one sender
// blasting 1000-byte frames back to back at 100 Gbps; every frame is a tx, a wire-free and
// an arrival event). Figure for docs/engines.md; not a timed test.
//
// BM_MemoryLatency: what one cache line read at random costs on this machine when the data
// a run touches is 2, 8 or 32 MiB, on 4 KiB pages or advised transparent huge pages. A
// large fabric's events each touch a few lines of state spread over megabytes, so its cost
// per event follows this curve (docs/engines.md, "what bounds K=16"); scripts/bench_scale.sh
// prints it beside its figures.
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/rng.h"

#include "fabric/virtual_engine.h"
#include "tests/fabric/test_nodes.h"
#include "tests/fabric/fabric_pool.h"

namespace rocemu::fabric {

static void BM_VirtualEngineSaturatedLink(benchmark::State& state) {
  Topology t;
  t.add_node("h0", NodeKind::kHost);
  t.add_node("h1", NodeKind::kHost);
  t.add_link(0, 1, 100 * kBpsPerGbps, 1000);
  const uint64_t frames = static_cast<uint64_t>(state.range(0));
  uint64_t events = 0;
  int64_t wall_ns = 0;
  for (auto _ : state) {
    VirtualEngine e(t, {}, 1);
    tnodes::BlastHost a(tnodes::test_pool(), t.node(0).ipv4, t.node(1).ipv4, frames, 1000);
    tnodes::BlastHost b(tnodes::test_pool(), t.node(1).ipv4, t.node(0).ipv4, 0, 64);
    b.set_record(false);
    e.attach(0, &a);
    e.attach(1, &b);
    e.run_until(kNsPerSec);
    if (b.received_count() != frames) state.SkipWithError("frames lost");
    events += e.stats().events;
    wall_ns += e.stats().wall_ns;
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["engine_events_per_s"] = static_cast<double>(events) * 1e9 / static_cast<double>(wall_ns);
  state.counters["events_per_frame"] = static_cast<double>(events) / static_cast<double>(state.iterations() * frames);
}
BENCHMARK(BM_VirtualEngineSaturatedLink)->Arg(100000)->Unit(benchmark::kMillisecond);

// range(0): working set in MiB; range(1): 1 = transparent huge pages advised, 0 = refused.
// The lines form one random cycle (Sattolo's shuffle), each holding the next one's address,
// so every read waits for the one before: latency, not bandwidth.
static void BM_MemoryLatency(benchmark::State& state) {
  constexpr size_t kLine = 64, kHuge = size_t{2} << 20, kSteps = size_t{1} << 16;
  const size_t bytes = static_cast<size_t>(state.range(0)) << 20;
  void* raw = ::mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    state.SkipWithError("mmap failed");
    return;
  }
  char* base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1));
  ::madvise(base, bytes, state.range(1) != 0 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  const size_t n = bytes / kLine;
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  Rng rng(1, "memory_latency");
  for (size_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(i)]);  // Sattolo
  for (size_t i = 0; i < n; ++i)
    *reinterpret_cast<char**>(base + order[i] * kLine) = base + order[(i + 1) % n] * kLine;
  char* p = base + order[0] * kLine;
  for (size_t i = 0; i < n; ++i) p = *reinterpret_cast<char**>(p);  // warm: one lap
  std::chrono::nanoseconds spent{0};
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < kSteps; ++i) p = *reinterpret_cast<char**>(p);
    benchmark::DoNotOptimize(p);
    spent += std::chrono::steady_clock::now() - t0;
  }
  state.counters["ns_per_line"] = static_cast<double>(spent.count()) /
                                  static_cast<double>(state.iterations() * kSteps);
  ::munmap(raw, bytes + kHuge);
}
BENCHMARK(BM_MemoryLatency)
    ->ArgsProduct({{2, 8, 32}, {0, 1}})
    ->ArgNames({"MiB", "thp"})
    ->Unit(benchmark::kMillisecond);

}  // namespace rocemu::fabric

BENCHMARK_MAIN();
