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

// One data frame through the port, as DcqcnHooks::on_data_sent does it: the RP's byte
// counter (RPs recovering from a cut, so the counters are live) and the deadline tree,
// QPs in turn.
void BM_PortOnSent(benchmark::State& state) {
  const auto qps = static_cast<uint32_t>(state.range(0));
  DcqcnPort port(paper_config(), qps);
  for (uint32_t q = 0; q < qps; ++q) port.on_cnp(q, 0);
  TimeNs now = 0;
  uint32_t q = 0;
  for (auto _ : state) {
    port.on_sent(q, 1082, now);
    q = q + 1 == qps ? 0 : q + 1;
    now += 87;  // 1082 bytes at 100 Gbps
    benchmark::DoNotOptimize(port.next_deadline());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PortOnSent)->Arg(1)->Arg(16)->Arg(64);

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
