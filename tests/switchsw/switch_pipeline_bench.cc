// switch_pipeline_bench.cc — cost of the full soft-switch pipeline on one core: parse,
// route (+ ECMP hash), classify, MMU ingress/egress admission, enqueue, scheduling, dequeue,
// MMU release, PFC checks, RED-ECN decision, counters. Bursts of 32 frames of 1 KB, rx of
// the burst then 32 tx calls. Each iteration also restores the 34 bytes of Ethernet + IPv4
// header the switch rewrote (TTL, MACs, ECN), so the figures include that small copy.
// Reports Mpps (items_per_second) and TSC cycles per packet.
#include <benchmark/benchmark.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <array>
#include <cstring>

#include "common/time_ns.h"
#include "switchsw/soft_switch.h"
#include "tests/support/eal_env.h"
#include "tests/switchsw/frames.h"

namespace rocemu::sw {
namespace {

constexpr int kBurst = 32;

constexpr uint32_t kHeaderBytes = wire::kUdpOff;  // Ethernet + IPv4

void run_pipeline(benchmark::State& state, int paths) {
  rte_mempool* pool = test::test_mempool();
  // h0 - s0 - (paths x next switch) - ... : with paths > 1 every packet takes the ECMP hash.
  Topology t;
  const uint32_t s0 = t.add_node("s0", NodeKind::kSwitch);
  const uint32_t h0 = t.add_node("h0", NodeKind::kHost);
  const uint32_t h1 = t.add_node("h1", NodeKind::kHost);
  t.add_link(h0, s0, 100 * kBpsPerGbps, 1000);
  if (paths == 1) {
    t.add_link(s0, h1, 100 * kBpsPerGbps, 1000);
  } else {
    const uint32_t s9 = t.add_node("s9", NodeKind::kSwitch);
    for (int i = 0; i < paths; ++i) {
      const uint32_t m = t.add_node("m" + std::to_string(i), NodeKind::kSwitch);
      t.add_link(s0, m, 100 * kBpsPerGbps, 1000);
      t.add_link(m, s9, 100 * kBpsPerGbps, 1000);
    }
    t.add_link(s9, h1, 100 * kBpsPerGbps, 1000);
  }
  SoftSwitch sw(SwitchParams{}, t, s0, pool, 1);
  std::array<rte_mbuf*, kBurst> burst;
  std::array<std::array<uint8_t, kHeaderBytes>, kBurst> headers;
  for (int i = 0; i < kBurst; ++i) {
    test::FrameSpec f;
    f.src_mac = t.node(h0).ports[0].mac;
    f.dst_mac = t.node(s0).ports[0].mac;
    f.src_ip = t.node(h0).ipv4;
    f.dst_ip = t.node(h1).ipv4;
    f.udp_sport = static_cast<uint16_t>(49152 + i);
    f.frame_bytes = 1024;
    burst[i] = test::make_frame(pool, f);
    std::memcpy(headers[i].data(), rte_pktmbuf_mtod(burst[i], uint8_t*), kHeaderBytes);
  }
  std::array<rte_mbuf*, kBurst> out{};
  TimeNs now = 0;
  uint64_t packets = 0;
  const uint64_t start = rte_rdtsc();
  const int64_t cpu_start = thread_cpu_ns();
  for (auto _ : state) {
    for (int i = 0; i < kBurst; ++i)
      std::memcpy(rte_pktmbuf_mtod(burst[i], uint8_t*), headers[i].data(), kHeaderBytes);
    sw.rx(0, burst.data(), kBurst, now);
    int n = 0;
    for (uint16_t port = 1; port < sw.num_ports() && n < kBurst; ++port)
      while (rte_mbuf* m = sw.tx(port, now)) out[n++] = m;
    if (n != kBurst) {
      state.SkipWithError("switch lost packets");
      break;
    }
    // Feed the same mbufs again next round. Their Ethernet + IPv4 headers are identical
    // (flows differ in the UDP port, which the switch does not touch), so any saved
    // header restores any of them.
    for (int i = 0; i < kBurst; ++i) burst[i] = out[i];
    now += 1000;
    packets += kBurst;
  }
  const uint64_t cycles = rte_rdtsc() - start;
  const double cpu_ns = static_cast<double>(thread_cpu_ns() - cpu_start);
  const double ghz = static_cast<double>(rte_get_tsc_hz()) / 1e9;
  state.SetItemsProcessed(static_cast<int64_t>(packets));
  // Wall-clock TSC cycles include time the shared VM deschedules us; CPU-time cycles
  // (thread CPU ns x TSC GHz) are the pipeline's own cost.
  state.counters["wall_cycles_per_pkt"] = packets ? static_cast<double>(cycles) / packets : 0;
  state.counters["cpu_cycles_per_pkt"] = packets ? cpu_ns * ghz / packets : 0;
  for (rte_mbuf* m : burst) rte_pktmbuf_free(m);
}

void BM_SwitchPipeline_OnePath(benchmark::State& state) { run_pipeline(state, 1); }
void BM_SwitchPipeline_FourWayEcmp(benchmark::State& state) { run_pipeline(state, 4); }
BENCHMARK(BM_SwitchPipeline_OnePath);
BENCHMARK(BM_SwitchPipeline_FourWayEcmp);

}  // namespace
}  // namespace rocemu::sw

BENCHMARK_MAIN();
