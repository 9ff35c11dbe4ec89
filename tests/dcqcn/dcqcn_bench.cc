// dcqcn_bench.cc — per-packet and per-event cost of the DCQCN pure logic (Google
// Benchmark; built, not run by `meson test`: `build/tests/dcqcn/dcqcn_bench`).
#include <benchmark/benchmark.h>

#include "nic/dcqcn/dcqcn_port.h"

namespace rocemu::dcqcn {
namespace {

const DcqcnConfig& paper_config() {
  static const DcqcnConfig cfg = make_dcqcn_config(DcqcnParams{}, 100 * kBpsPerGbps);
  return cfg;
}

// One frame through the port: pick + on_sent (pacer spacing, RP byte counter, window), with
// the RP recovering from a cut so its counters are live.
void BM_PortPickAndSend(benchmark::State& state) {
  const auto qps = static_cast<uint32_t>(state.range(0));
  DcqcnPort port(paper_config(), qps);
  for (uint32_t q = 0; q < qps; ++q) {
    port.set_backlogged(q, true);
    port.on_cnp(q, 0);
  }
  TimeNs now = 0;
  for (auto _ : state) {
    const int32_t q = port.pick(now);
    if (q >= 0) port.on_sent(static_cast<uint32_t>(q), 1082, now);
    now += 87;  // 1082 bytes at 100 Gbps
    benchmark::DoNotOptimize(q);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PortPickAndSend)->Arg(1)->Arg(16)->Arg(64);

void BM_RpCnpAndRecovery(benchmark::State& state) {
  DcqcnRp rp(paper_config());
  TimeNs now = 0;
  for (auto _ : state) {
    rp.on_cnp(now);
    now += 60 * kNsPerUs;
    rp.on_timer(now);
    benchmark::DoNotOptimize(rp.rate_bps());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RpCnpAndRecovery);

void BM_NpOnCePacket(benchmark::State& state) {
  Np np(50 * kNsPerUs);
  NpFlow flows[64];
  TimeNs now = 0;
  uint32_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(np.on_ce_packet(flows[i++ & 63], now));
    now += 10;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NpOnCePacket);

}  // namespace
}  // namespace rocemu::dcqcn

BENCHMARK_MAIN();
