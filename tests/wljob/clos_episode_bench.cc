// Figure: one 25 ms episode of the GraphCC paper's 24-host 2-layer Clos (4 leaves, 2 spines,
// 25/100 Gbps, 1 us links, DCQCN) at 60% FbHdp load plus a periodic 16:1 incast, in the
// virtual-time engine (configs/workloads/clos24_fbhdp_incast.toml). Reports wall time per
// episode and engine events per second (target: an episode in <= 5 s on one core).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "agent/action_table.h"
#include "agent/model_file.h"
#include "agent/port_graph.h"
#include "fabric/eal.h"
#include "fabric/network_env.h"
#include "fabric/workload_job.h"
#include "tests/agent/test_weights.h"
#include "tests/support/fabric_eal.h"

namespace {

using namespace rocemu;

void BM_Clos24EpisodeFbHdp60Incast16(benchmark::State& state) {
  test::start_fabric_eal("rocemu-wljob-bench");
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

// The same episode with the [agent] loop every 100 us: none, static (the switch's own
// thresholds: the loop runs, nothing changes), graphcc (a model of seeded random weights: the
// cost of inference and set_ecn is what is measured, not the policy's quality). Target: the
// agent adds <= 10% to the episode's wall time. Also the training environment's step cost.
void BM_Clos24EpisodeAgent(benchmark::State& state) {
  test::start_fabric_eal("rocemu-wljob-bench");
  fabric::RunConfig cfg = fabric::load_run_config(std::string(ROCEMU_SOURCE_ROOT) +
                                                  "/configs/workloads/clos24_fbhdp_incast.toml");
  const char* policy = state.range(0) == 0 ? "" : state.range(0) == 1 ? "static" : "graphcc";
  std::string model;
  if (state.range(0) == 2) {
    agent::Model m;
    m.mpnn = agent::test::random_mpnn(7, 0.5f);
    model = (std::filesystem::temp_directory_path() / "rocemu-bench-graphcc.model").string();
    agent::save_model(model, m);
  }
  fabric::apply_agent_flags(cfg, policy, model, 100);
  fabric::WorkloadRunOptions opt;
  opt.progress_out = nullptr;
  double wall_s = 0, intervals = 0, changed = 0, p50 = 0, p99 = 0, median = 0;
  for (auto _ : state) {
    const fabric::WorkloadResult r = fabric::run_workload_virtual(cfg, opt);
    wall_s += static_cast<double>(r.wall_ns) / 1e9;
    intervals = static_cast<double>(r.agent.intervals);
    changed = static_cast<double>(r.agent.settings_changed);
    p50 = static_cast<double>(r.agent.step_p50_ns) / 1e3;
    p99 = static_cast<double>(r.agent.step_p99_ns) / 1e3;
    median = r.summary.overall.median;
  }
  state.SetLabel(policy[0] ? policy : "none");
  state.counters["engine_wall_s"] = benchmark::Counter(wall_s, benchmark::Counter::kAvgIterations);
  state.counters["intervals"] = intervals;
  state.counters["settings_changed"] = changed;
  state.counters["step_p50_us"] = p50;
  state.counters["step_p99_us"] = p99;
  state.counters["slowdown_median"] = median;
  if (!model.empty()) std::filesystem::remove(model);
}
BENCHMARK(BM_Clos24EpisodeAgent)
    ->ArgName("policy")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

void BM_NetworkEnvStepClos24(benchmark::State& state) {
  test::start_fabric_eal("rocemu-wljob-bench");
  fabric::RunConfig cfg = fabric::load_run_config(std::string(ROCEMU_SOURCE_ROOT) +
                                                  "/configs/workloads/clos24_fbhdp_incast.toml");
  fabric::NetworkEnv env(cfg, 100 * kNsPerUs);
  const agent::PortGraph g(env.topology());
  const auto settings = agent::make_switch_settings(g, agent::action_setting(40));
  env.reset(1);
  uint64_t steps = 0;
  for (auto _ : state) {
    if (env.step(settings).done) env.reset(steps + 2);
    ++steps;
  }
  state.counters["wall_ms_per_step"] =
      static_cast<double>(env.stats().step_wall_ns) / 1e6 / static_cast<double>(env.stats().steps);
}
BENCHMARK(BM_NetworkEnvStepClos24)->Iterations(250)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
