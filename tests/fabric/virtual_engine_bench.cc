// Virtual-time engine speed: events per second on a saturated 2-host link (one sender
// blasting 1000-byte frames back to back at 100 Gbps; every frame is a tx, a wire-free and
// an arrival event). Figure for docs/engines.md; not a timed test.
#include <benchmark/benchmark.h>

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

}  // namespace rocemu::fabric

BENCHMARK_MAIN();
