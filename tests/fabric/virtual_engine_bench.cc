// Virtual-time engine speed: events per second on a saturated 2-host link (one sender
// blasting 1000-byte frames back to back at 100 Gbps; every frame is a tx, a wire-free and
// an arrival event). Figure for docs/engines.md; not a timed test.
//
// BM_MemoryLatency: what one cache line read at random costs on this machine when the data
// a run touches is 2, 8 or 32 MiB, on 4 KiB pages or advised transparent huge pages. A
// large fabric's events each touch a few lines of state spread over megabytes, so its cost
// per event depends on this curve (docs/engines.md, fourteenth step); the stride:4096 rows, one
// line per page, measure the TLB's reach. scripts/bench_scale.sh prints them beside its figures.
//
// BM_CoreSpeed: what this core gives the process. unroll:8, a chain of dependent additions
// (one a cycle on every x86-64 core): the clock, in cycles per ns. unroll:1, a loop of one
// addition per iteration: one iteration a cycle on a core of its own, but its taken branch
// every cycle shares the core's front end with whatever runs on the core's other hardware
// thread. On a VM whose vCPUs share physical cores with other guests the second swings: on
// one 2-vCPU VM here (AMD Zen 5) both vCPUs had a 3.1-3.3 GHz clock, but the loop ran at 3.3
// per ns on one and 1.8 on the other, and the GraphCC control step took 263-276 and 362-368 ns
// per port on them in the same minutes. scripts/bench_scale.sh prints both before and after
// its runs.
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

// range(0): working set in MiB; range(1): 1 = transparent huge pages advised, 0 = refused;
// range(2): bytes per line used (64: every line; 4096: one line per 4 KiB page, at a random
// place in it so the lines spread over the cache's sets: 32 MiB of pages then hold 512 KiB of
// lines, which fit in the cache, and what is measured is the TLB's reach). The lines form
// one random cycle (Sattolo's shuffle), each holding the next one's address, so every read
// waits for the one before: latency, not bandwidth.
static void BM_MemoryLatency(benchmark::State& state) {
  constexpr size_t kHuge = size_t{2} << 20, kSteps = size_t{1} << 16;
  const size_t bytes = static_cast<size_t>(state.range(0)) << 20;
  const auto block = static_cast<size_t>(state.range(2));
  void* raw = ::mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    state.SkipWithError("mmap failed");
    return;
  }
  char* base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1));
  ::madvise(base, bytes, state.range(1) != 0 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  const size_t n = bytes / block;
  Rng rng(1, "memory_latency");
  std::vector<char*> line(n);  // the line used in each block
  for (size_t i = 0; i < n; ++i) line[i] = base + i * block + rng.below(block / 64) * 64;
  for (size_t i = n - 1; i > 0; --i) std::swap(line[i], line[rng.below(i)]);  // Sattolo
  for (size_t i = 0; i < n; ++i) *reinterpret_cast<char**>(line[i]) = line[(i + 1) % n];
  char* p = line[0];
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
    ->ArgsProduct({{2, 8, 32}, {0, 1}, {64}})
    ->Args({32, 0, 4096})
    ->Args({32, 1, 4096})
    ->ArgNames({"MiB", "thp", "stride"})
    ->Unit(benchmark::kMillisecond);

static void BM_CoreSpeed(benchmark::State& state) {
  constexpr int64_t kAdds = int64_t{1} << 24;
  const bool unrolled = state.range(0) == 8;
  uint64_t x = 0;
  std::chrono::nanoseconds spent{0};
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    if (unrolled) {
      for (int64_t i = 0; i < kAdds; i += 8) {
        // Each addition waits for the one before (the empty asm keeps the compiler from
        // merging them); the loop's own counter runs beside the chain.
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) {
          x += 1;
          asm volatile("" : "+r"(x));
        }
      }
    } else {
#pragma GCC unroll 1
      for (int64_t i = 0; i < kAdds; ++i) {
        x += 1;
        asm volatile("" : "+r"(x));
      }
    }
    spent += std::chrono::steady_clock::now() - t0;
  }
  benchmark::DoNotOptimize(x);
  state.counters["adds_per_ns"] = static_cast<double>(state.iterations()) *
                                  static_cast<double>(kAdds) / static_cast<double>(spent.count());
}
BENCHMARK(BM_CoreSpeed)->ArgName("unroll")->Arg(8)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace rocemu::fabric

BENCHMARK_MAIN();
