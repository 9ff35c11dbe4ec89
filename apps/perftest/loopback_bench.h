// loopback_bench.h — perftest's six tests between two rocemu endpoints in one process.
//
// Two nic::RoceHost nodes joined by one link of fabric's real-time engine (a net_ring wire:
// two rte_rings cross-connected with rte_eth_from_rings, port-rate emulation at
// --link_gbps), everything polled on the calling lcore. Host 0 plays the client, host 1 the
// server (bench_roles.h); with -b both request. Each host is wrapped in a node that, after
// every rx burst and once per poll iteration before tx, runs its role's step with the
// engine's `now` (the TSC read once per poll iteration).
#pragma once

#include <cstdint>
#include <memory>

#include "apps/perftest/bench_roles.h"

namespace rocemu::fabric {
class RealtimeEngine;
}

namespace rocemu::perftest {

struct BwResult {
  BwRow row;
  uint64_t messages = 0;  // completed by every requester and QP
  bool ok = false;
  std::string error;  // why the test failed when !ok
};

struct LatResult {
  LatencyStats stats;
  uint64_t iters = 0;
  bool ok = false;
  std::string error;
};

class LoopbackBench {
 public:
  /// Starts EAL (once per process, with opt.eal_args), creates the engine, both hosts, their
  /// regions (room for `max_size_bytes` per QP each way) and num_qps connected RC QP pairs.
  /// Throws std::runtime_error with the reason on failure.
  LoopbackBench(const PerftestOptions& opt, uint32_t max_size_bytes);
  ~LoopbackBench();
  LoopbackBench(const LoopbackBench&) = delete;
  LoopbackBench& operator=(const LoopbackBench&) = delete;

  /// One bandwidth test of `size_bytes` messages: opt.iters per QP, or for `duration_ns`
  /// when non-zero.
  BwResult run_bw(uint32_t size_bytes, TimeNs duration_ns);
  /// One latency test: opt.iters exchanges, or for `duration_ns` when non-zero.
  LatResult run_lat(uint32_t size_bytes, TimeNs duration_ns);

  const nic::RoceHost& host(int i) const { return *hosts_[i]; }
  /// Host i's buffers (0 client, 1 server), for filling and checking data in tests.
  Side& side(int i) noexcept { return sides_[i]; }

 private:
  class DrivenNode;
  void drive(TimeNs now) noexcept;

  PerftestOptions opt_;
  std::unique_ptr<fabric::RealtimeEngine> engine_;
  std::unique_ptr<nic::RoceHost> hosts_[2];
  std::unique_ptr<DrivenNode> nodes_[2];
  Side sides_[2];
  TestState state_;
  bool running_ = false;
  bool side_done_[2] = {false, false};
};

}  // namespace rocemu::perftest
