// switch_null_e2e.cc — the soft switch end to end over DPDK net_null ports on one lcore:
// the figure "full switch pipeline in cycles per packet and Mpps" of docs/switch.md, with
// real ethdev rx/tx bursts around it (scripts/bench_switch_null.sh runs it next to
// dpdk-testpmd macswap on the same kind of ports).
//
// Topology: a star, 4 hosts around one switch, 400 Gbps links (rate is not the bound; the
// switch does not pace, the engine would). Switch port i is net_null<i> (size=1024). One
// poll loop: TSC read once per iteration (-> `now` in ns); rte_eth_rx_burst(32) from each
// port; net_null hands out mbufs whose data it never writes, so the 54 bytes of Eth/IPv4
// (DSCP 26, ECT(0))/UDP 4791/BTH of a valid frame from host i to host i+1 are copied into
// each (timed on its own: `header copy`); SoftSwitch::rx(port, burst); then per port up to
// 32 SoftSwitch::tx() into rte_eth_tx_burst (net_null frees them: a sink).
// Two phases of the same length: `io` (rx + header copy + tx, no switch) and `switch`
// (the whole loop); their difference is the switch's own cost.
// Output: Mpps through the switch (frames sent to the null ports / wall time) and cycles
// per packet, wall-clock TSC and thread-CPU (CPU ns x TSC GHz; on a shared VM wall cycles
// include descheduled time).
//
// usage: switch_null_e2e [SECONDS] [-- EAL args]   (exit 2 on usage errors, 1 on setup)
// Units: ns, TSC cycles, bytes.
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/time_ns.h"
#include "fabric/eal.h"
#include "switchsw/soft_switch.h"
#include "tests/switchsw/frames.h"

namespace rocemu::sw {
namespace {

constexpr int kBurst = 32;
constexpr int kHosts = 4;
constexpr uint32_t kFrameBytes = 1024;
constexpr uint32_t kTemplateBytes = wire::kRoceHeadersBytes;  // 54
constexpr uint32_t kPoolMbufs = 8191;
constexpr uint16_t kRingDescs = 512;

struct PhaseResult {
  uint64_t rx_frames = 0;
  uint64_t tx_frames = 0;
  uint64_t loops = 0;
  uint64_t wall_cycles = 0;
  uint64_t copy_cycles = 0;
  double cpu_ns = 0;
};

void print_phase(const char* name, const PhaseResult& r) {
  const double hz = static_cast<double>(rte_get_tsc_hz());
  const double secs = static_cast<double>(r.wall_cycles) / hz;
  const double pkts = r.tx_frames ? static_cast<double>(r.tx_frames) : 1;
  std::printf(
      "%s: rx %lu tx %lu frames in %.3f s: %.3f Mpps, %.1f wall cycles/pkt, %.1f CPU "
      "cycles/pkt (CPU %.0f%% of wall), header copy %.1f cycles/pkt\n",
      name, static_cast<unsigned long>(r.rx_frames), static_cast<unsigned long>(r.tx_frames),
      secs, static_cast<double>(r.tx_frames) / secs / 1e6,
      static_cast<double>(r.wall_cycles) / pkts, r.cpu_ns * hz / 1e9 / pkts,
      100.0 * r.cpu_ns / (secs * 1e9),
      static_cast<double>(r.copy_cycles) / (r.rx_frames ? static_cast<double>(r.rx_frames) : 1));
}

class NullBench {
 public:
  explicit NullBench(const std::vector<std::string>& eal_user_args) {
    sw_index_ = topo_.add_node("s0", NodeKind::kSwitch);
    for (int i = 0; i < kHosts; ++i) {
      hosts_[i] = topo_.add_node("h" + std::to_string(i), NodeKind::kHost);
      topo_.add_link(hosts_[i], sw_index_, 400 * kBpsPerGbps, 1000);
    }
    fabric::EalOptions eal;
    eal.program = "switch_null_e2e";
    eal.no_huge_memory_mb = 1024;  // only for the log line: the flags below win
    bool mem_given = false;
    for (const std::string& a : eal_user_args)
      mem_given = mem_given || a == "--no-huge" || a == "--in-memory" || a == "-m";
    if (!mem_given && !fabric::hugepages_available())
      eal.user_args = {"--no-huge", "-m", "1024", "--no-shconf"};
    for (int i = 0; i < kHosts; ++i)
      eal.user_args.push_back("--vdev=net_null" + std::to_string(i) +
                              ",size=" + std::to_string(kFrameBytes));
    eal.user_args.insert(eal.user_args.end(), eal_user_args.begin(), eal_user_args.end());
    fabric::eal_start(eal);

    pool_ = rte_pktmbuf_pool_create("null_e2e", kPoolMbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                    SOCKET_ID_ANY);
    if (!pool_) throw std::runtime_error(std::string("mbuf pool: ") + rte_strerror(rte_errno));
    // Switch port i is the link to host i (added in that order); net_null<i> is port i.
    for (int i = 0; i < kHosts; ++i) {
      const std::string name = "net_null" + std::to_string(i);
      if (rte_eth_dev_get_port_by_name(name.c_str(), &eth_port_[i]) != 0)
        throw std::runtime_error(name + ": no such ethdev (is the net_null PMD installed?)");
      setup_port(eth_port_[i]);
      // Host i sends to host i+1 through switch port i: valid RoCEv2 write-middle frame.
      const TopoNode& h = topo_.node(hosts_[i]);
      test::FrameSpec f;
      f.src_mac = h.ports[0].mac;
      f.dst_mac = topo_.node(sw_index_).ports[i].mac;
      f.src_ip = h.ipv4;
      f.dst_ip = topo_.node(hosts_[(i + 1) % kHosts]).ipv4;
      f.udp_sport = static_cast<uint16_t>(49152 + i);
      f.frame_bytes = kFrameBytes;
      rte_mbuf* m = test::make_frame(pool_, f);
      if (!m) throw std::runtime_error("mbuf pool empty at start");
      std::memcpy(templates_[i].data(), rte_pktmbuf_mtod(m, uint8_t*), kTemplateBytes);
      rte_pktmbuf_free(m);
    }
    sw_ = std::make_unique<SoftSwitch>(SwitchParams{}, topo_, sw_index_, pool_, 1);
  }

  ~NullBench() {
    sw_.reset();  // holds mbufs of pool_
    for (uint16_t p : eth_port_) {
      rte_eth_dev_stop(p);
      rte_eth_dev_close(p);
    }
    rte_mempool_free(pool_);
    fabric::eal_stop();
  }

  /// Polls every port for `seconds`; with `through_switch` false, frames go straight back
  /// out of the port they came in on (the io baseline).
  PhaseResult run(double seconds, bool through_switch) {
    PhaseResult r;
    const uint64_t hz = rte_get_tsc_hz();
    const uint64_t start = rte_rdtsc();
    const uint64_t end = start + static_cast<uint64_t>(seconds * static_cast<double>(hz));
    const int64_t cpu_start = thread_cpu_ns();
    std::array<std::array<rte_mbuf*, kBurst>, kHosts> in;
    std::array<uint16_t, kHosts> n_in{};
    std::array<rte_mbuf*, kBurst> out;
    uint64_t tsc = start;
    while (tsc < end) {
      // ns since start: cycles * 1e9 / hz, split to avoid overflowing 64 bits.
      const uint64_t dc = tsc - start;
      const TimeNs now = static_cast<TimeNs>(dc / hz * 1'000'000'000 + dc % hz * 1'000'000'000 / hz);
      for (int i = 0; i < kHosts; ++i) n_in[i] = rte_eth_rx_burst(eth_port_[i], 0, in[i].data(), kBurst);
      const uint64_t copy_start = rte_rdtsc();
      for (int i = 0; i < kHosts; ++i)
        for (uint16_t k = 0; k < n_in[i]; ++k)
          std::memcpy(rte_pktmbuf_mtod(in[i][k], uint8_t*), templates_[i].data(), kTemplateBytes);
      r.copy_cycles += rte_rdtsc() - copy_start;
      for (int i = 0; i < kHosts; ++i) {
        r.rx_frames += n_in[i];
        if (!through_switch) {
          const uint16_t sent = rte_eth_tx_burst(eth_port_[i], 0, in[i].data(), n_in[i]);
          for (uint16_t k = sent; k < n_in[i]; ++k) rte_pktmbuf_free(in[i][k]);
          r.tx_frames += sent;
          continue;
        }
        sw_->rx(static_cast<uint16_t>(i), in[i].data(), n_in[i], now);
      }
      if (through_switch) {
        for (int i = 0; i < kHosts; ++i) {
          uint16_t n = 0;
          while (n < kBurst) {
            rte_mbuf* m = sw_->tx(static_cast<uint16_t>(i), now);
            if (!m) break;
            out[n++] = m;
          }
          const uint16_t sent = rte_eth_tx_burst(eth_port_[i], 0, out.data(), n);
          for (uint16_t k = sent; k < n; ++k) rte_pktmbuf_free(out[k]);
          r.tx_frames += sent;
        }
      }
      ++r.loops;
      tsc = rte_rdtsc();
    }
    r.wall_cycles = tsc - start;
    r.cpu_ns = static_cast<double>(thread_cpu_ns() - cpu_start);
    return r;
  }

  const SoftSwitch& sw() const { return *sw_; }

 private:
  void setup_port(uint16_t port) {
    rte_eth_conf conf{};
    int rc = rte_eth_dev_configure(port, 1, 1, &conf);
    if (rc == 0) rc = rte_eth_rx_queue_setup(port, 0, kRingDescs, SOCKET_ID_ANY, nullptr, pool_);
    if (rc == 0) rc = rte_eth_tx_queue_setup(port, 0, kRingDescs, SOCKET_ID_ANY, nullptr);
    if (rc == 0) rc = rte_eth_dev_start(port);
    if (rc != 0)
      throw std::runtime_error("ethdev port " + std::to_string(port) + ": " + rte_strerror(-rc));
  }

  Topology topo_;
  uint32_t sw_index_ = 0;
  std::array<uint32_t, kHosts> hosts_{};
  std::array<uint16_t, kHosts> eth_port_{};
  std::array<std::array<uint8_t, kTemplateBytes>, kHosts> templates_{};
  rte_mempool* pool_ = nullptr;
  std::unique_ptr<SoftSwitch> sw_;
};

int run_main(int argc, char** argv) {
  double seconds = 3;
  std::vector<std::string> eal_args;
  int i = 1;
  if (i < argc && std::strcmp(argv[i], "--") != 0) {
    char* endp = nullptr;
    seconds = std::strtod(argv[i], &endp);
    if (*endp != '\0' || !(seconds > 0)) {
      std::fprintf(stderr, "SECONDS=%s: not a positive number\nusage: %s [SECONDS] [-- EAL args]\n",
                   argv[i], argv[0]);
      return 2;
    }
    ++i;
  }
  if (i < argc && std::strcmp(argv[i], "--") == 0) ++i;
  for (; i < argc; ++i) eal_args.emplace_back(argv[i]);

  NullBench bench(eal_args);
  const PhaseResult io = bench.run(seconds, false);
  const PhaseResult full = bench.run(seconds, true);
  std::printf("switch_null_e2e: 4 x net_null (size=%u), star of 4 hosts + 1 switch, 1 lcore, "
              "bursts of %d, TSC %.3f GHz\n",
              kFrameBytes, kBurst, static_cast<double>(rte_get_tsc_hz()) / 1e9);
  print_phase("io (rx + header copy + tx, no switch)", io);
  print_phase("switch (rx + header copy + SoftSwitch rx/tx + tx)", full);
  const double io_cpu = io.cpu_ns / static_cast<double>(io.tx_frames ? io.tx_frames : 1);
  const double full_cpu = full.cpu_ns / static_cast<double>(full.tx_frames ? full.tx_frames : 1);
  std::printf("switch own cost: %.1f CPU cycles/pkt (switch phase - io phase); drops in switch: %lu\n",
              (full_cpu - io_cpu) * static_cast<double>(rte_get_tsc_hz()) / 1e9,
              static_cast<unsigned long>(bench.sw().total_drops()));
  // Machine-readable line for scripts/bench_switch_null.sh.
  std::printf("RESULT switch_pps=%.0f io_pps=%.0f\n",
              static_cast<double>(full.tx_frames) * static_cast<double>(rte_get_tsc_hz()) /
                  static_cast<double>(full.wall_cycles),
              static_cast<double>(io.tx_frames) * static_cast<double>(rte_get_tsc_hz()) /
                  static_cast<double>(io.wall_cycles));
  return 0;
}

}  // namespace
}  // namespace rocemu::sw

int main(int argc, char** argv) {
  try {
    return rocemu::sw::run_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "switch_null_e2e: %s\n", e.what());
    return 1;
  }
}
