// endpoint.cc — the interop tool's poll loop around one RoceHost (see endpoint.h).
#include "apps/interop/endpoint.h"

#include <rte_mbuf.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>

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

TimeNs Endpoint::poll() noexcept {
  const TimeNs now = tsc_now_ns();
  rte_mbuf* rx[kBurst];
  const uint16_t n = port_.rx(rx, kBurst);
  rte_mbuf* roce[kBurst];
  uint16_t nroce = 0;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = rx[i];
    auto* frame = rte_pktmbuf_mtod(m, uint8_t*);
    if (m->nb_segs == 1 && is_arp_request_for(frame, rte_pktmbuf_data_len(m), self_.ipv4)) {
      make_arp_reply_in_place(frame, self_.mac);
      rte_pktmbuf_data_len(m) = kArpFrameBytes;
      rte_pktmbuf_pkt_len(m) = kArpFrameBytes;
      if (port_.tx(&m, 1) == 1) {
        ++arp_replies_;
      } else {
        rte_pktmbuf_free(m);
      }
      continue;
    }
    if (read_response_loss_ > 0 && is_read_response(frame, rte_pktmbuf_data_len(m)) &&
        loss_rng_.uniform() < read_response_loss_) {
      ++read_responses_dropped_;
      rte_pktmbuf_free(m);
      continue;
    }
    roce[nroce++] = m;  // the RoceHost counts and frees what is not RoCEv2 for it
  }
  if (nroce > 0) host_.rx(0, roce, nroce, now);
  bool busy = n > 0;
  const TimeNs deadline = host_.next_deadline();
  if (deadline <= now) {
    host_.on_timer(now);
    busy = true;
  }

  if (pending_n_ == 0) {
    while (pending_n_ < kBurst) {
      rte_mbuf* m = host_.tx(0, now);
      if (m == nullptr) break;
      pending_[pending_n_++] = m;
    }
  }
  busy = busy || pending_n_ > 0;
  if (pending_n_ > 0) {
    const uint16_t sent = port_.tx(pending_.data(), pending_n_);
    if (sent < pending_n_) {
      ++tx_retries_;
      for (uint16_t i = sent; i < pending_n_; ++i) pending_[i - sent] = pending_[i];
    }
    pending_n_ = static_cast<uint16_t>(pending_n_ - sent);
  }
  if (idle_.enabled()) idle_.after_iteration(busy, now, deadline);
  return now;
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
  const nic::NicCounters& c = host_.counters();
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
                (unsigned long long)arp_replies_);
  out += line;
  out += "rocemu: " + nic::pfc_and_pool_text(c, host_.paused_ns_total(tsc_now_ns())) + "\n";
  if (read_response_loss_ > 0) {
    std::snprintf(line, sizeof line,
                  "rocemu: READ responses dropped on purpose (loss %.3f): %llu\n",
                  read_response_loss_, (unsigned long long)read_responses_dropped_);
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

bool parse_mac(const std::string& s, MacAddr& out) noexcept {
  unsigned v[6];
  char tail = 0;
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                  &tail) != 6)
    return false;
  for (int i = 0; i < 6; ++i) {
    if (v[i] > 0xff) return false;
    out[i] = static_cast<uint8_t>(v[i]);
  }
  return true;
}

}  // namespace rocemu::interop
