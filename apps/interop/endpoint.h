// endpoint.h — one rocemu RoceHost on one DPDK port facing a real RoCEv2 peer (the rxe guest).
//
// The poll loop of the interop tool: receive a burst, answer ARP for our own address (no
// kernel interface owns it), hand the rest to the RoceHost (rx), fire its timers, and send
// what it has (tx) — frames the port refuses are kept and offered again, never dropped. The
// clock (TSC) is read once per iteration and passed down as `now`, as in fabric's engines.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "apps/interop/dpdk_port.h"
#include "apps/interop/side_channel.h"
#include "fabric/idle_backoff.h"
#include "common/rng.h"
#include "common/topology.h"
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

class Endpoint {
 public:
  /// Neither is owned; both must outlive the endpoint.
  Endpoint(ExternalPort& port, nic::RoceHost& host, const EndpointAddress& self) noexcept
      : port_(port), host_(host), self_(self) {}

  /// One poll iteration (rx, ARP, timers, tx). Returns the `now` it used. With an idle
  /// backoff set, an iteration that follows 256 idle ones sleeps until the host's next
  /// deadline, at most `max_sleep_ns` (fabric/idle_backoff.h).
  TimeNs poll() noexcept;
  /// Turns the idle backoff on (max_sleep_ns > 0) or off (0, the default: busy polling).
  void set_idle_sleep(TimeNs max_sleep_ns) noexcept {
    idle_ = fabric::IdleBackoff({.max_sleep_ns = max_sleep_ns});
  }

  /// Receives exactly n side-channel bytes while polling the port: the peer may need us
  /// meanwhile (rxe resolves our MAC by ARP when its QP goes to RTR, before it replies).
  /// Throws std::runtime_error after timeout_ms or if the channel fails.
  void recv_polling(TcpChannel& ch, void* buf, size_t n, int timeout_ms);

  /// Fault injection for the loss tests: drops each RoCEv2 READ response received (opcodes
  /// 0x0D-0x10) with probability `loss`, drawn from a stream seeded by `seed`, before the
  /// RoceHost sees it, as a lossy link between the peer and us would. 0 (the default): none.
  void set_read_response_loss(double loss, uint64_t seed) noexcept {
    read_response_loss_ = loss;
    loss_rng_ = Rng(seed, "interop-read-response-loss");
  }
  uint64_t read_responses_dropped() const noexcept { return read_responses_dropped_; }

  uint64_t arp_replies() const noexcept { return arp_replies_; }
  uint64_t port_tx_retries() const noexcept { return tx_retries_; }
  /// The RoceHost's counters and ours as one human-readable line per non-zero item.
  std::string counters_report() const;

 private:
  static constexpr uint16_t kBurst = 32;
  ExternalPort& port_;
  nic::RoceHost& host_;
  EndpointAddress self_;
  std::array<rte_mbuf*, kBurst> pending_{};
  uint16_t pending_n_ = 0;
  uint64_t arp_replies_ = 0, tx_retries_ = 0;
  double read_response_loss_ = 0;
  Rng loss_rng_{0};
  uint64_t read_responses_dropped_ = 0;
  fabric::IdleBackoff idle_{fabric::IdleBackoffParams{}};
};

/// Name of a work completion status: nic::wc_status_name (nic/roce_host.h).
using nic::wc_status_name;

/// "aa:bb:cc:dd:ee:ff" -> MAC; false if malformed.
bool parse_mac(const std::string& s, MacAddr& out) noexcept;

}  // namespace rocemu::interop
