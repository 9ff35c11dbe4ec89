// endpoint.cc — the interop tool's poll loop around one RoceHost (see endpoint.h).
#include "apps/interop/endpoint.h"

#include <rte_mbuf.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "apps/interop/arp_reply.h"
#include "common/wire.h"
#include "nic/packet.h"

namespace rocemu::interop {

Topology two_host_topology(const EndpointAddress& self, const EndpointAddress& peer,
                           uint64_t link_rate_bps) {
  Topology t;
  const uint32_t a = t.add_node("rocemu", NodeKind::kHost);
  const uint32_t b = t.add_node("peer", NodeKind::kHost);
  t.add_link(a, b, link_rate_bps, 0);
  auto& nodes = t.mutable_nodes();
  nodes[a].ipv4 = self.ipv4;
  nodes[a].ports[0].mac = self.mac;
  nodes[b].ipv4 = peer.ipv4;
  nodes[b].ports[0].mac = peer.mac;
  return t;
}

namespace {
/// A RoCEv2 (IPv4, UDP 4791) RDMA READ response: FIRST, MIDDLE, LAST or ONLY.
bool is_read_response(const uint8_t* frame, uint32_t len) noexcept {
  using namespace wire;
  if (len < kRoceHeadersBytes) return false;
  if (reinterpret_cast<const Ethernet*>(frame)->ethertype() != kEtherTypeIpv4) return false;
  const auto* ip = reinterpret_cast<const Ipv4*>(frame + kIpOff);
  const auto* udp = reinterpret_cast<const Udp*>(frame + kUdpOff);
  if (ip->protocol != kIpProtoUdp || udp->dst_port() != kRoceV2Port) return false;
  const uint8_t op = reinterpret_cast<const Bth*>(frame + kBthOff)->opcode;
  return op >= kRcReadResponseFirst && op <= kRcReadResponseOnly;
}
}  // namespace

Endpoint::Endpoint(const EndpointPort& port, const EndpointAddress& self,
                   const EndpointAddress& peer)
    : topo_(two_host_topology(self, peer, port.link_rate_bps)) {
  if (port.backend != fabric::PortBackend::kAfPacket && port.backend != fabric::PortBackend::kAfXdp)
    throw std::invalid_argument("endpoint: the port must be af_packet or af_xdp");
  fabric::RealtimeOptions ro;
  ro.backend = port.backend;
  ro.pool_mbufs = port.pool_mbufs;
  ro.mbuf_data_bytes = port.mbuf_data_bytes;
  ro.af_packet = port.af_packet;
  ro.external_nodes = {false, true};  // the peer: another process or the guest
  ro.idle_sleep_ns = port.idle_sleep_ns;
  std::vector<fabric::LinkOptions> links(1);
  links[0].a_dev = port.iface;
  engine_ = std::make_unique<fabric::RealtimeEngine>(topo_, links, ro);
  front_.self = self;
}

Endpoint::~Endpoint() = default;

void Endpoint::attach(nic::RoceHost& host) {
  front_.host = &host;
  engine_->attach(0, &front_);
}

Endpoint::Front::~Front() {
  for (uint16_t i = 0; i < arp_n; ++i) rte_pktmbuf_free(arp[(arp_head + i) % kMaxArp]);
}

void Endpoint::Front::rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept {
  rte_mbuf* roce[fabric::RealtimeEngine::kBurst];
  uint16_t nroce = 0;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    auto* frame = rte_pktmbuf_mtod(m, uint8_t*);
    if (m->nb_segs == 1 && is_arp_request_for(frame, rte_pktmbuf_data_len(m), self.ipv4)) {
      if (arp_n == kMaxArp) {  // a flood of requests: the peer asks again
        rte_pktmbuf_free(m);
        continue;
      }
      make_arp_reply_in_place(frame, self.mac);
      rte_pktmbuf_data_len(m) = kArpFrameBytes;
      rte_pktmbuf_pkt_len(m) = kArpFrameBytes;
      arp[(arp_head + arp_n++) % kMaxArp] = m;
      continue;
    }
    Ipv6Addr target{};
    if (m->nb_segs == 1 && is_neighbor_solicitation(frame, rte_pktmbuf_data_len(m), target) &&
        host->has_ipv6(target) &&
        rte_pktmbuf_tailroom(m) + rte_pktmbuf_data_len(m) >= kNaFrameBytes) {
      if (arp_n == kMaxArp) {  // a flood of requests: the peer asks again
        rte_pktmbuf_free(m);
        continue;
      }
      const uint32_t na = make_neighbor_advertisement(frame, self.mac);
      rte_pktmbuf_data_len(m) = static_cast<uint16_t>(na);
      rte_pktmbuf_pkt_len(m) = na;
      arp[(arp_head + arp_n++) % kMaxArp] = m;
      ++nd_replies;
      continue;
    }
    if (read_response_loss > 0 && is_read_response(frame, rte_pktmbuf_data_len(m)) &&
        loss_rng.uniform() < read_response_loss) {
      ++read_responses_dropped;
      rte_pktmbuf_free(m);
      continue;
    }
    roce[nroce++] = m;  // the RoceHost counts and frees what is not RoCEv2 for it
    if (nroce == fabric::RealtimeEngine::kBurst) {
      host->rx(port, roce, nroce, now);
      nroce = 0;
    }
  }
  if (nroce > 0) host->rx(port, roce, nroce, now);
}

rte_mbuf* Endpoint::Front::tx(uint16_t port, TimeNs now) noexcept {
  if (arp_n > 0) {
    rte_mbuf* m = arp[arp_head];
    arp_head = static_cast<uint16_t>((arp_head + 1) % kMaxArp);
    --arp_n;
    ++arp_replies;
    return m;
  }
  return host->tx(port, now);
}

void Endpoint::recv_polling(TcpChannel& ch, void* buf, size_t n, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  size_t have = 0;
  uint32_t spins = 0;
  while (have < n) {
    poll();
    // A syscall every 64 iterations keeps the port served between checks.
    if ((++spins & 63) != 0) continue;
    have = ch.recv_some(buf, n, have);
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("side channel: peer sent " + std::to_string(have) + " of " +
                               std::to_string(n) + " bytes within " + std::to_string(timeout_ms) +
                               " ms\n" + counters_report());
  }
}

std::string Endpoint::counters_report() const {
  const nic::NicCounters& c = front_.host->counters();
  char line[256];
  std::string out;
  std::snprintf(line, sizeof line,
                "rocemu: rx %llu pkts, tx %llu pkts, data %llu, retransmitted %llu, "
                "read responses %llu, acks sent %llu / received %llu, naks sent %llu / "
                "received %llu, timeouts %llu, arp replies %llu\n",
                (unsigned long long)c.rx_packets, (unsigned long long)c.tx_packets,
                (unsigned long long)c.data_packets_sent,
                (unsigned long long)c.retransmitted_packets,
                (unsigned long long)c.read_responses_sent, (unsigned long long)c.acks_sent,
                (unsigned long long)c.acks_received, (unsigned long long)c.naks_sent,
                (unsigned long long)c.naks_received, (unsigned long long)c.timeouts,
                (unsigned long long)front_.arp_replies);
  out += line;
  if (c.atomics_executed + c.atomic_acks_sent + c.atomic_replays > 0) {
    std::snprintf(line, sizeof line,
                  "rocemu: atomics executed %llu, atomic acks sent %llu, replayed %llu\n",
                  (unsigned long long)c.atomics_executed, (unsigned long long)c.atomic_acks_sent,
                  (unsigned long long)c.atomic_replays);
    out += line;
  }
  out += "rocemu: " + nic::pfc_and_pool_text(c, front_.host->paused_ns_total(now_ns())) + "\n";
  if (front_.read_response_loss > 0) {
    std::snprintf(line, sizeof line,
                  "rocemu: READ responses dropped on purpose (loss %.3f): %llu\n",
                  front_.read_response_loss, (unsigned long long)front_.read_responses_dropped);
    out += line;
  }
  for (int r = 1; r < nic::kNumRxDrops; ++r) {
    if (c.drops[r] == 0) continue;
    std::snprintf(line, sizeof line, "rocemu: dropped %llu rx packets: %s\n",
                  (unsigned long long)c.drops[r], nic::rx_drop_name(static_cast<nic::RxDrop>(r)));
    out += line;
  }
  return out;
}

}  // namespace rocemu::interop
