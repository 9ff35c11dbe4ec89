// loopback_bench.h — perftest's six tests between two rocemu endpoints in one process.
//
// Two nic::RoceHost nodes joined by one link of fabric's real-time engine (a net_ring wire:
// two rte_rings cross-connected with rte_eth_from_rings, port-rate emulation at
// --link_gbps), everything polled on the calling lcore. Host 0 is the client (requester),
// host 1 the server; with -b both request. The test logic runs inside the poll loop: each
// host is wrapped in a node that, after every rx burst and before every tx, lets the bench
// post work requests and poll completions with the engine's `now` (read once per poll
// iteration from the TSC). Ping-pong latency follows perftest: WRITE polls the last byte of
// the receive buffer, SEND waits for the receive completion, READ times one READ. WRITE and
// SEND latency is half the round trip, READ the full round trip. Bandwidth: average = bytes
// completed / (last completion - first post); peak = the best window of tx_depth
// consecutive completions (at least 2). Times in ns, reported in us.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/perftest/perftest_options.h"
#include "apps/perftest/perftest_report.h"
#include "common/time_ns.h"
#include "nic/roce_host.h"

namespace rocemu::fabric {
class RealtimeEngine;
}

namespace rocemu::perftest {

struct BwResult {
  BwRow row;
  uint64_t messages = 0;  // completed by every requester and QP
  bool ok = false;
  std::string error;      // the failed completion's status when !ok
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
  /// memory regions (room for `max_size_bytes` per QP each way) and num_qps connected RC QP
  /// pairs. Throws std::runtime_error with the reason on failure.
  LoopbackBench(const PerftestOptions& opt, uint32_t max_size_bytes);
  ~LoopbackBench();
  LoopbackBench(const LoopbackBench&) = delete;
  LoopbackBench& operator=(const LoopbackBench&) = delete;

  /// One bandwidth test of `size_bytes` messages: opt.iters per QP, or for `duration_ns`
  /// when non-zero. Gives up after `timeout_ns` of no progress.
  BwResult run_bw(uint32_t size_bytes, TimeNs duration_ns);
  /// One latency test: opt.iters exchanges, or for `duration_ns` when non-zero.
  LatResult run_lat(uint32_t size_bytes, TimeNs duration_ns);

  const nic::RoceHost& host(int i) const { return *hosts_[i]; }

  struct Side;  // per host: buffers, MR, QPs, CQs (loopback_bench.cc)

 private:
  class DrivenNode;
  struct Test;
  void drive(TimeNs now) noexcept;

  PerftestOptions opt_;
  uint32_t region_half_bytes_ = 0;
  std::unique_ptr<fabric::RealtimeEngine> engine_;
  std::unique_ptr<nic::RoceHost> hosts_[2];
  std::unique_ptr<DrivenNode> nodes_[2];
  std::unique_ptr<Side> sides_[2];
  Test* test_ = nullptr;  // the running test, or nullptr between tests
};

}  // namespace rocemu::perftest
