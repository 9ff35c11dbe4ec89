// agent_bench.cc — what acting and training cost: the torch-free fast path against LibTorch,
// and one DQN gradient step on 32 graphs.
//
// Acting benchmarks run on two topologies (benchmark argument): 0 = the GraphCC paper's Clos
// (40 agent ports, 96 edges), 1 = the K=16 fat tree (320 switches, 5,120 agent ports, 65,536
// edges). `per_port` is CPU time per agent port per step. A control step is what
// fabric/ecn_controller.cc runs each interval: EcnAgent::decide on one snapshot per switch
// (features from counter differences, the policy's greedy actions, per-switch settings).
// Target (issue 15): a GraphCC step <= 0.25 us per port at the fat tree's 5,120 ports.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "agent/dqn_trainer.h"
#include "agent/fast_mpnn.h"
#include "agent/model_file.h"
#include "agent/policy.h"
#include "agent/queue_env.h"
#include "common/rng.h"
#include "common/topology_generators.h"
#include "tests/agent/clos.h"
#include "tests/agent/test_weights.h"

namespace rocemu::agent {
namespace {

// The GraphCC weights (benchmark argument): 0 = seeded random, 1 = the shipped trained model
// (configs/models/graphcc_clos24.model). The fast path skips hidden units a ReLU left at zero
// in a whole tile, so its cost depends on the weights: random ones leave almost none dead,
// a trained model many.
MpnnWeights bench_weights(int64_t which) {
  if (which == 0) return test::random_mpnn(1);
  return load_model(ROCEMU_SOURCE_ROOT "/configs/models/graphcc_clos24.model").mpnn;
}
const char* weights_name(int64_t which) { return which == 0 ? "random" : "trained"; }

Topology bench_topology(int64_t which) {
  if (which == 0) return test::paper_clos();
  FatTreeParams p;
  p.k = 16;
  return make_fattree(p);
}

void count_ports(benchmark::State& state, int ports) {
  state.counters["ports"] = ports;
  state.counters["per_port"] = benchmark::Counter(
      ports, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Second argument: the build (0 = generic x86-64, 1 = AVX2+FMA, 2 = AVX-512; a build this CPU
// cannot run is skipped), so the builds are compared side by side in one run; third: the
// weights (bench_weights); fourth: whether dead units are skipped (FastMpnn's
// skip_dead_units; 1 is what the agent runs).
void BM_FastInferenceGraphCc(benchmark::State& state) {
  const auto build = static_cast<SimdBuild>(state.range(1));
  if (!simd_build_supported(build)) {
    state.SkipWithError("this CPU cannot run that build");
    return;
  }
  const bool skip = state.range(3) != 0;
  state.SetLabel(std::string(simd_build_name(build)) + " " + weights_name(state.range(2)) +
                 (skip ? "" : " all units"));
  const PortGraph g(bench_topology(state.range(0)));
  FastMpnn net(bench_weights(state.range(2)), g, build, skip);
  const auto f = test::random_rows(2, g.num_agents(), kNumFeatures);
  std::vector<uint16_t> a(g.num_agents());
  for (auto _ : state) {
    net.greedy(f.data(), a.data());
    benchmark::DoNotOptimize(a.data());
  }
  count_ports(state, g.num_agents());
}
BENCHMARK(BM_FastInferenceGraphCc)->ArgsProduct({{0, 1}, {1, 2}, {0, 1}, {1, 0}});

void BM_FastInferenceAcc(benchmark::State& state) {
  const PortGraph g(bench_topology(state.range(0)));
  const int n = g.num_agents();
  FastAccNets nets(test::random_acc(1, n));
  const auto f = test::random_rows(2, n, kNumFeatures);
  const auto s = test::random_rows(3, n, kNumSettingFeatures);
  std::vector<uint16_t> a(n);
  for (auto _ : state) {
    nets.greedy(f.data(), s.data(), a.data());
    benchmark::DoNotOptimize(a.data());
  }
  count_ports(state, n);
}
BENCHMARK(BM_FastInferenceAcc)->Arg(0)->Arg(1);

// Whole control step: snapshots -> features -> greedy actions -> per-switch settings. Each
// iteration's snapshots are one interval later with every port's counters advanced by what
// the test environment's port sent and marked in one interval, so every feature is live.
void control_step(benchmark::State& state, ModelKind kind) {
  const Topology topo = bench_topology(state.range(0));
  const PortGraph g(topo);
  Model m;
  m.kind = kind;
  std::unique_ptr<EcnPolicy> policy;
  if (kind == ModelKind::kGraphCc) {
    const bool skip = state.range(2) != 0;
    state.SetLabel(std::string(weights_name(state.range(1))) + (skip ? "" : " all units"));
    policy = std::make_unique<GraphCcPolicy>(bench_weights(state.range(1)), g, skip);
  } else {
    m.acc = test::random_acc(1, g.num_agents());
    policy = make_policy(m, g);
  }
  EcnAgent agent(topo, FeatureConfig{}, std::move(policy));
  QueueEnv env(topo, QueueEnvConfig{});
  const auto first = env.reset(1);
  auto snaps = env.step(make_switch_settings(g)).snapshots;
  struct Sent {
    uint64_t tx_bytes, marked_bytes;
  };
  std::vector<Sent> per_interval;
  for (size_t i = 0; i < snaps.size(); ++i)
    for (size_t p = 0; p < snaps[i].ports.size(); ++p)
      per_interval.push_back(
          {snaps[i].ports[p].tx_bytes - first[i].ports[p].tx_bytes,
           snaps[i].ports[p].ecn_marked_bytes - first[i].ports[p].ecn_marked_bytes});
  agent.decide(first);
  for (auto _ : state) {
    size_t k = 0;
    for (auto& s : snaps) {
      s.at_ns += 100'000;
      for (auto& c : s.ports) {
        c.tx_bytes += per_interval[k].tx_bytes;
        c.ecn_marked_bytes += per_interval[k++].marked_bytes;
      }
    }
    benchmark::DoNotOptimize(agent.decide(snaps).data());
  }
  count_ports(state, g.num_agents());
}
void BM_FastControlStepGraphCc(benchmark::State& s) { control_step(s, ModelKind::kGraphCc); }
void BM_FastControlStepAcc(benchmark::State& s) { control_step(s, ModelKind::kAccPerPort); }
BENCHMARK(BM_FastControlStepGraphCc)->ArgsProduct({{0, 1}, {0, 1}, {1, 0}});
BENCHMARK(BM_FastControlStepAcc)->Arg(0)->Arg(1);

void BM_TorchInferenceGraphCc(benchmark::State& state) {
  const PortGraph g(bench_topology(state.range(0)));
  DqnConfig d;
  d.replay_capacity = 4;  // not used; the default holds 4,096 steps of 5,120 ports
  DqnTrainer t(g, d, RewardConfig{}, FeatureConfig{});
  const auto f = test::random_rows(2, g.num_agents(), kNumFeatures);
  std::vector<uint16_t> a(g.num_agents());
  for (auto _ : state) {
    t.torch_greedy(f.data(), nullptr, a.data());
    benchmark::DoNotOptimize(a.data());
  }
  count_ports(state, g.num_agents());
}
BENCHMARK(BM_TorchInferenceGraphCc)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void train_step(benchmark::State& state, ModelKind kind) {
  const PortGraph g(test::paper_clos());
  DqnConfig d;
  d.kind = kind;
  d.batch_graphs = 32;
  DqnTrainer t(g, d, RewardConfig{}, FeatureConfig{});
  Rng rng(1, "bench");
  const int n = g.num_agents();
  for (int i = 0; i < 256; ++i) {
    const auto obs = test::random_rows(2 * i, n, kObsDim);
    const auto next = test::random_rows(2 * i + 1, n, kObsDim);
    std::vector<uint16_t> a(n);
    std::vector<float> r(n);
    for (int v = 0; v < n; ++v) {
      a[v] = static_cast<uint16_t>(rng.below(kNumActions));
      r[v] = static_cast<float>(rng.uniform());
    }
    t.replay().push(obs, a, r, next);
  }
  for (auto _ : state) benchmark::DoNotOptimize(t.train_batch());
}
void BM_TrainStepGraphCcBatch32(benchmark::State& s) { train_step(s, ModelKind::kGraphCc); }
void BM_TrainStepAccBatch32(benchmark::State& s) { train_step(s, ModelKind::kAccPerPort); }
BENCHMARK(BM_TrainStepGraphCcBatch32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TrainStepAccBatch32)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rocemu::agent

BENCHMARK_MAIN();
