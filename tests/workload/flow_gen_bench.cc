// flow_gen_bench.cc — Google Benchmark: flow generation rate (flows per second of CPU)
// for the merged workload stream and for raw CDF sampling.
#include <benchmark/benchmark.h>

#include "fabric/workload/flow_generator.h"

namespace rocemu::workload {
namespace {

WorkloadConfig config(const char* file, uint32_t hosts) {
  WorkloadParams p;
  p.load = 0.6;
  p.duration_ns = kNever / 4;  // effectively endless
  std::vector<HostSpec> h;
  for (uint32_t i = 0; i < hosts; ++i) h.push_back({i, 100 * kBpsPerGbps});
  return make_workload_config(p, std::move(h),
                              FlowSizeCdf::load(std::string("configs/workloads/") + file));
}

void BM_WorkloadNext(benchmark::State& state, const char* file) {
  const auto cfg = config(file, static_cast<uint32_t>(state.range(0)));
  WorkloadGenerator g(cfg, 1);
  FlowSpec f;
  for (auto _ : state) {
    g.next(f);
    benchmark::DoNotOptimize(f);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_WorkloadNext, websearch, "WebSearch_distribution.txt")->Arg(24)->Arg(256);
BENCHMARK_CAPTURE(BM_WorkloadNext, googlerpc, "GoogleRPC2008.txt")->Arg(24);

void BM_CdfSample(benchmark::State& state, const char* file) {
  const auto cdf = FlowSizeCdf::load(std::string("configs/workloads/") + file);
  Rng rng(1, "bench");
  for (auto _ : state) benchmark::DoNotOptimize(cdf.sample(rng));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_CdfSample, websearch, "WebSearch_distribution.txt");
BENCHMARK_CAPTURE(BM_CdfSample, googlerpc, "GoogleRPC2008.txt");

}  // namespace
}  // namespace rocemu::workload

BENCHMARK_MAIN();
