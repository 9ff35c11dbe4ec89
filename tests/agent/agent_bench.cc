// agent_bench.cc — inference and training cost on the GraphCC paper's Clos (40 agents,
// 96 edges): torch-free fast path vs LibTorch, and one DQN gradient step on 32 graphs.
// Target (ARCHITECTURE.md): a full inference step well under the 100 us control interval;
// the fast path <= 20 us on one core.
#include <benchmark/benchmark.h>

#include "agent/dqn_trainer.h"
#include "agent/fast_mpnn.h"
#include "agent/policy.h"
#include "agent/queue_env.h"
#include "common/rng.h"
#include "tests/agent/clos.h"
#include "tests/agent/test_weights.h"

namespace rocemu::agent {
namespace {

void BM_FastInferenceGraphCc(benchmark::State& state) {
  const PortGraph g(test::paper_clos());
  FastMpnn net(test::random_mpnn(1), g);
  const auto f = test::random_rows(2, g.num_agents(), kNumFeatures);
  std::vector<uint16_t> a(g.num_agents());
  for (auto _ : state) {
    net.greedy(f.data(), a.data());
    benchmark::DoNotOptimize(a.data());
  }
}
BENCHMARK(BM_FastInferenceGraphCc);

// Whole control step: snapshots -> features -> greedy actions -> per-switch settings.
void BM_FastDecideGraphCc(benchmark::State& state) {
  const auto topo = test::paper_clos();
  const PortGraph g(topo);
  EcnAgent agent(topo, FeatureConfig{}, std::make_unique<GraphCcPolicy>(test::random_mpnn(1), g));
  QueueEnv env(topo, QueueEnvConfig{});
  auto snaps = env.reset(1);
  const auto settings = make_switch_settings(g);
  auto next = env.step(settings).snapshots;
  agent.decide(snaps);
  for (auto _ : state) {
    for (auto& s : next) s.at_ns += 100'000;  // keep time advancing
    benchmark::DoNotOptimize(agent.decide(next).data());
  }
}
BENCHMARK(BM_FastDecideGraphCc);

void BM_FastInferenceAcc(benchmark::State& state) {
  FastAccNets nets(test::random_acc(1, 40));
  const auto f = test::random_rows(2, 40, kNumFeatures);
  const auto s = test::random_rows(3, 40, kNumSettingFeatures);
  std::vector<uint16_t> a(40);
  for (auto _ : state) {
    nets.greedy(f.data(), s.data(), a.data());
    benchmark::DoNotOptimize(a.data());
  }
}
BENCHMARK(BM_FastInferenceAcc);

void BM_TorchInferenceGraphCc(benchmark::State& state) {
  const PortGraph g(test::paper_clos());
  DqnTrainer t(g, DqnConfig{}, RewardConfig{}, FeatureConfig{});
  const auto f = test::random_rows(2, g.num_agents(), kNumFeatures);
  std::vector<uint16_t> a(g.num_agents());
  for (auto _ : state) {
    t.torch_greedy(f.data(), nullptr, a.data());
    benchmark::DoNotOptimize(a.data());
  }
}
BENCHMARK(BM_TorchInferenceGraphCc)->Unit(benchmark::kMicrosecond);

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
