// test_nodes.h — minimal nodes for testing and benchmarking the engines without the real
// switch and NIC: a host that sends numbered IPv4 frames and records what it receives, and
// an output-queued switch that forwards on the destination address (shortest-path ports
// from the topology, first equal-cost port). Test-only: they allocate per packet.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "common/node.h"
#include "common/topology.h"

struct rte_mempool;

namespace rocemu::fabric::tnodes {

struct Received {
  uint32_t src_ip;
  uint64_t seq;
  TimeNs at_ns;
  bool operator==(const Received&) const = default;
};

/// One-port host. Sends `count` frames of `frame_bytes` to `dst_ip`, the first at
/// `start_ns`, then one every `gap_ns` (0: whenever the wire is free).
class BlastHost : public Node {
 public:
  BlastHost(rte_mempool* pool, uint32_t ip, uint32_t dst_ip, uint64_t count, uint32_t frame_bytes,
            TimeNs gap_ns = 0, TimeNs start_ns = 0);
  uint16_t num_ports() const noexcept override { return 1; }
  void rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept override;
  rte_mbuf* tx(uint16_t port, TimeNs now) noexcept override;
  TimeNs next_deadline() const noexcept override;
  void on_timer(TimeNs) noexcept override { ++timer_calls_; }

  const std::vector<Received>& received() const noexcept { return received_; }
  uint64_t sent() const noexcept { return sent_; }
  uint64_t timer_calls() const noexcept { return timer_calls_; }
  uint64_t received_count() const noexcept { return received_count_; }
  /// Keep only a count of arrivals (benchmarks).
  void set_record(bool on) noexcept { record_ = on; }

 private:
  rte_mempool* pool_;
  uint32_t ip_, dst_ip_;
  uint64_t count_;
  uint32_t frame_bytes_;
  TimeNs gap_ns_;
  TimeNs next_send_ns_;
  uint64_t sent_ = 0;
  uint64_t timer_calls_ = 0;
  uint64_t received_count_ = 0;
  bool record_ = true;
  std::vector<Received> received_;
};

/// Output-queued switch: unlimited FIFO per egress port; drops frames with no route.
class FifoSwitch : public Node {
 public:
  FifoSwitch(const Topology& topo, uint32_t self);
  ~FifoSwitch() override;
  uint16_t num_ports() const noexcept override { return static_cast<uint16_t>(queues_.size()); }
  void rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept override;
  rte_mbuf* tx(uint16_t port, TimeNs now) noexcept override;
  TimeNs next_deadline() const noexcept override { return kNever; }
  void on_timer(TimeNs) noexcept override {}

  uint64_t peak_queue_bytes(uint16_t port) const { return peak_.at(port); }
  uint64_t no_route() const noexcept { return no_route_; }

 private:
  std::vector<std::pair<uint32_t, uint16_t>> routes_;  // (host ip, port)
  std::vector<std::deque<rte_mbuf*>> queues_;
  std::vector<uint64_t> bytes_, peak_;
  uint64_t no_route_ = 0;
};

}  // namespace rocemu::fabric::tnodes
