// endpoint.h — one rocemu RoceHost on one DPDK port of a kernel interface, facing a RoCEv2
// peer in another process or a QEMU guest (the rxe guest, another perftest tool): the
// interop tool's, the perftest tools' network mode.
//
// The loop is fabric's real-time engine (fabric/realtime_engine.h) over a two-host topology
// whose peer is an external node: one af_packet (or af_xdp) port, the engine's wire-rate
// emulation at the link's rate, `now` from the TSC once per iteration, refused frames
// offered again. The tools drive it with poll(), one iteration of that loop, between their
// own steps. What the engine does not do is tool-specific and sits in the node the engine
// polls, in front of the RoceHost: answering ARP for our own address and IPv6 Neighbor
// Solicitations for the RoceHost's IPv6 GIDs (no kernel interface owns them), and the loss tests'
// READ-response drops.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "apps/interop/side_channel.h"
#include "common/node.h"
#include "common/rng.h"
#include "common/topology.h"
#include "fabric/realtime_engine.h"
#include "nic/roce_host.h"

namespace rocemu::interop {

struct EndpointAddress {
  uint32_t ipv4 = 0;  // host order: our RoCE address
  MacAddr mac{};
};

/// A two-host topology (rocemu <-> peer) whose node 0 is the RoceHost's: its port carries our
/// MAC, the peer's port the peer's MAC (the RoceHost sends every frame to its port's peer).
Topology two_host_topology(const EndpointAddress& self, const EndpointAddress& peer,
                           uint64_t link_rate_bps);

/// The endpoint's port: the kernel interface and how its DPDK port is made.
struct EndpointPort {
  std::string iface;
  fabric::PortBackend backend = fabric::PortBackend::kAfPacket;  // or kAfXdp
  uint32_t pool_mbufs = 8191;
  uint32_t mbuf_data_bytes = 2048;          // without headroom: frames of IB MTU 1024
  fabric::AfPacketRing af_packet{4096, 0};  // framesz 0: the PMD's 2048
  uint64_t link_rate_bps = 10'000'000'000ULL;
  /// Idle backoff (fabric/idle_backoff.h): after 256 idle iterations poll() sleeps until the
  /// host's next event, at most this long. 0 = busy polling.
  TimeNs idle_sleep_ns = 0;
};

class Endpoint {
 public:
  /// Opens the port (EAL must be running: fabric::eal_start) over two_host_topology(self,
  /// peer). Throws std::runtime_error with the reason (no such interface, the PMD's error).
  Endpoint(const EndpointPort& port, const EndpointAddress& self, const EndpointAddress& peer);
  /// The RoceHost must be gone first (it holds mbufs of pool()).
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  /// The pool the RoceHost allocates from; the topology it is built on (node 0 is ours).
  rte_mempool* pool() const noexcept { return engine_->pool(); }
  const Topology& topology() const noexcept { return topo_; }
  /// Puts `host` (node 0 of topology(); not owned, outlives every poll()) on the port.
  void attach(nic::RoceHost& host);

  /// One iteration of the engine's loop (rx, ARP, timers, tx, idle backoff). Returns the
  /// `now` the host was given.
  TimeNs poll() { return engine_->poll(); }
  /// The engine's clock (the time base of the host).
  TimeNs now_ns() const noexcept { return engine_->now_ns(); }

  /// Receives exactly n side-channel bytes while polling the port: the peer may need us
  /// meanwhile (rxe resolves our MAC by ARP when its QP goes to RTR, before it replies).
  /// Throws std::runtime_error after timeout_ms or if the channel fails.
  void recv_polling(TcpChannel& ch, void* buf, size_t n, int timeout_ms);

  /// Fault injection for the loss tests: drops each RoCEv2 READ response received (opcodes
  /// 0x0D-0x10) with probability `loss`, drawn from a stream seeded by `seed`, before the
  /// RoceHost sees it, as a lossy link between the peer and us would. 0 (the default): none.
  void set_read_response_loss(double loss, uint64_t seed) noexcept {
    front_.read_response_loss = loss;
    front_.loss_rng = Rng(seed, "interop-read-response-loss");
  }
  uint64_t read_responses_dropped() const noexcept { return front_.read_responses_dropped; }

  uint64_t arp_replies() const noexcept { return front_.arp_replies; }
  uint64_t nd_replies() const noexcept { return front_.nd_replies; }
  /// Frames the port refused at an attempt (offered again; RealtimeStats::tx_refused).
  uint64_t port_tx_retries() const noexcept { return engine_->stats().tx_refused; }
  /// The RoceHost's counters and ours as one human-readable line per non-zero item.
  std::string counters_report() const;

 private:
  /// The node the engine polls: ARP for our address and the READ-response drops, then the
  /// RoceHost. ARP replies leave before the host's frames.
  struct Front final : Node {
    nic::RoceHost* host = nullptr;
    EndpointAddress self;
    static constexpr uint16_t kMaxArp = 8;
    std::array<rte_mbuf*, kMaxArp> arp{};
    uint16_t arp_head = 0, arp_n = 0;
    uint64_t arp_replies = 0;  // ARP replies and Neighbor Advertisements sent
    uint64_t nd_replies = 0;   // of which Neighbor Advertisements
    double read_response_loss = 0;
    Rng loss_rng{0};
    uint64_t read_responses_dropped = 0;

    ~Front() override;
    uint16_t num_ports() const noexcept override { return 1; }
    void rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept override;
    rte_mbuf* tx(uint16_t port, TimeNs now) noexcept override;
    TimeNs next_deadline() const noexcept override { return arp_n > 0 ? 0 : host->next_deadline(); }
    void on_timer(TimeNs now) noexcept override {
      if (host->next_deadline() <= now) host->on_timer(now);
    }
  };

  Topology topo_;
  std::unique_ptr<fabric::RealtimeEngine> engine_;
  Front front_;
};

/// Name of a work completion status: nic::wc_status_name (nic/roce_host.h).
using nic::wc_status_name;

}  // namespace rocemu::interop
