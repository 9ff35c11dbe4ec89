// test_host.h — a test-only host Node for switch scenarios: sends RoCEv2-shaped UDP frames
// (ECT(0), DSCP of the RDMA class, PSN-numbered) at line rate to chosen destinations,
// obeys 802.1Qbb PFC frames it receives (PfcPauseState), and counts what it receives
// (data, CE marks, PSN order per source, PFC frames). Not a RoCE endpoint: no transport.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <map>
#include <vector>

#include "common/node.h"
#include "common/pfc_state.h"
#include "common/topology.h"
#include "tests/switchsw/frames.h"

namespace rocemu::test {

class TestHost final : public Node {
 public:
  TestHost(const Topology& topo, uint32_t node, rte_mempool* pool)
      : pool_(pool),
        rate_bps_(topo.links()[topo.node(node).ports.at(0).link].rate_bps),
        ipv4_(topo.node(node).ipv4) {
    const TopoPort& p = topo.node(node).ports[0];
    mac_ = p.mac;
    peer_mac_ = topo.node(p.peer.node).ports[p.peer.port].mac;
  }

  /// Queues a flow of `packets` frames of `frame_bytes` to `dst_ip`, sent back to back at
  /// line rate from `start_ns`, on UDP source port `sport`, priority `prio` (DSCP `dscp`).
  void add_flow(uint32_t dst_ip, uint64_t packets, uint32_t frame_bytes, uint16_t sport,
                TimeNs start_ns = 0, uint8_t dscp = 26, int prio = 3) {
    flows_.push_back(Flow{dst_ip, packets, frame_bytes, sport, start_ns, dscp, prio, 0});
  }

  /// A PFC storm: XOFF frames (quanta 0xffff) for `prio` every `period_ns` in [start, end),
  /// as a host with a stuck receive path sends them.
  void add_pfc_storm(int prio, TimeNs start_ns, TimeNs end_ns, TimeNs period_ns) {
    storm_prio_ = prio;
    storm_next_ns_ = start_ns;
    storm_end_ns_ = end_ns;
    storm_period_ns_ = period_ns;
  }

  uint16_t num_ports() const noexcept override { return 1; }

  void rx(uint16_t, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept override {
    last_now_ = now;
    for (uint16_t i = 0; i < n; ++i) {
      rte_mbuf* m = pkts[i];
      const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
      if (const wire::PfcFrame* f = parse_pfc_frame(d, rte_pktmbuf_data_len(m))) {
        pause_.on_frame(*f, rate_bps_, now);
        ++pfc_frames_received;
      } else {
        const auto* ip = reinterpret_cast<const wire::Ipv4*>(d + wire::kIpOff);
        const auto* bth = reinterpret_cast<const wire::Bth*>(d + wire::kBthOff);
        ++rx_packets;
        rx_bytes += rte_pktmbuf_pkt_len(m);
        if (ip->ecn() == wire::kEcnCe) ++rx_ce_packets;
        if (ip->dst() != ipv4_ || ip->checksum() != ip->compute_checksum()) ++rx_bad;
        const uint64_t key = uint64_t{ip->src()} << 16 | reinterpret_cast<const wire::Udp*>(
                                                             d + wire::kUdpOff)->src_port();
        uint32_t& expect = next_psn_[key];
        if (bth->psn() != expect) ++rx_out_of_order;
        expect = bth->psn() + 1;
        last_rx_ns = now;
      }
      rte_pktmbuf_free(m);
    }
  }

  rte_mbuf* tx(uint16_t, TimeNs now) noexcept override {
    last_now_ = now;
    if (storm_next_ns_ < storm_end_ns_ && now >= storm_next_ns_) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool_);
      if (!m) return nullptr;
      auto* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kPfcFrameBytes));
      std::array<uint16_t, kNumPriorities> quanta{};
      quanta[storm_prio_] = 0xffff;
      write_pfc_frame(d, mac_.data(), static_cast<uint16_t>(1u << storm_prio_), quanta);
      storm_next_ns_ += storm_period_ns_;
      ++pfc_frames_sent;
      return m;
    }
    for (size_t k = 0; k < flows_.size(); ++k) {
      Flow& f = flows_[(rr_ + k) % flows_.size()];
      if (f.sent == f.packets || now < f.start_ns || pause_.paused(f.prio, now)) continue;
      FrameSpec s;
      s.src_mac = mac_;
      s.dst_mac = peer_mac_;
      s.src_ip = ipv4_;
      s.dst_ip = f.dst_ip;
      s.dscp = f.dscp;
      s.udp_sport = f.sport;
      s.psn = static_cast<uint32_t>(f.sent);
      s.frame_bytes = f.frame_bytes;
      rte_mbuf* m = make_frame(pool_, s);
      if (!m) return nullptr;
      ++f.sent;
      ++tx_packets;
      rr_ = (rr_ + k + 1) % flows_.size();
      return m;
    }
    return nullptr;
  }

  TimeNs next_deadline() const noexcept override {
    TimeNs t = storm_next_ns_ < storm_end_ns_ ? storm_next_ns_ : kNever;
    for (const Flow& f : flows_) {
      if (f.sent == f.packets) continue;
      if (f.start_ns > last_now_) t = std::min(t, f.start_ns);
      const TimeNs end = pause_.pause_end(f.prio);
      if (end > last_now_) t = std::min(t, end);
    }
    return t;
  }
  void on_timer(TimeNs now) noexcept override { last_now_ = now; }

  const PfcPauseState& pause() const noexcept { return pause_; }
  uint32_t ipv4() const noexcept { return ipv4_; }

  uint64_t tx_packets = 0;
  uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t rx_ce_packets = 0;
  uint64_t rx_out_of_order = 0;
  uint64_t rx_bad = 0;
  uint64_t pfc_frames_received = 0;
  uint64_t pfc_frames_sent = 0;
  TimeNs last_rx_ns = 0;

 private:
  struct Flow {
    uint32_t dst_ip;
    uint64_t packets;
    uint32_t frame_bytes;
    uint16_t sport;
    TimeNs start_ns;
    uint8_t dscp;
    int prio;
    uint64_t sent;
  };
  rte_mempool* pool_;
  uint64_t rate_bps_;
  uint32_t ipv4_;
  MacAddr mac_{};
  MacAddr peer_mac_{};
  std::vector<Flow> flows_;
  size_t rr_ = 0;
  PfcPauseState pause_;
  std::map<uint64_t, uint32_t> next_psn_;
  int storm_prio_ = 3;
  TimeNs storm_next_ns_ = kNever, storm_end_ns_ = 0, storm_period_ns_ = 0;
  TimeNs last_now_ = 0;
};

}  // namespace rocemu::test
