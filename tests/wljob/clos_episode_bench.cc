// Figure: one 25 ms episode of the GraphCC paper's 24-host 2-layer Clos (4 leaves, 2 spines,
// 25/100 Gbps, 1 us links, DCQCN) at 60% FbHdp load plus a periodic 16:1 incast, in the
// virtual-time engine (configs/workloads/clos24_fbhdp_incast.toml). Reports wall time per
// episode and engine events per second (target: an episode in <= 5 s on one core).
#include <benchmark/benchmark.h>

#include <string>

#include "fabric/eal.h"
#include "fabric/workload_job.h"

namespace {

using namespace rocemu;

void BM_Clos24EpisodeFbHdp60Incast16(benchmark::State& state) {
  static const bool eal = [] {
    fabric::EalOptions o;
    o.program = "rocemu-wljob-bench";
    o.user_args = {"--log-level", "lib.eal:error"};
    fabric::eal_start(o);
    return true;
  }();
  (void)eal;
  fabric::RunConfig cfg = fabric::load_run_config(std::string(ROCEMU_SOURCE_ROOT) +
                                                  "/configs/workloads/clos24_fbhdp_incast.toml");
  cfg.workload_qps_per_pair = static_cast<uint32_t>(state.range(0));
  fabric::WorkloadRunOptions opt;
  opt.progress_out = nullptr;
  double events = 0, wall_s = 0, finished = 0, unfinished = 0, median = 0, p99 = 0;
  for (auto _ : state) {
    const fabric::WorkloadResult r = fabric::run_workload_virtual(cfg, opt);
    events += static_cast<double>(r.events);
    wall_s += static_cast<double>(r.wall_ns) / 1e9;
    finished = static_cast<double>(r.summary.flows_finished);
    unfinished = static_cast<double>(r.summary.flows_unfinished);
    median = r.summary.overall.median;
    p99 = r.summary.overall.p99;
  }
  state.counters["events"] = benchmark::Counter(events, benchmark::Counter::kAvgIterations);
  state.counters["events_per_s"] = events / wall_s;
  state.counters["engine_wall_s"] = benchmark::Counter(wall_s, benchmark::Counter::kAvgIterations);
  state.counters["flows_done"] = finished;
  state.counters["flows_unfinished"] = unfinished;
  state.counters["slowdown_median"] = median;
  state.counters["slowdown_p99"] = p99;
}
BENCHMARK(BM_Clos24EpisodeFbHdp60Incast16)
    ->ArgName("qps_per_pair")
    ->Arg(1)
    ->Arg(4)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
