// test_nodes.cc — numbered-frame host and FIFO switch for engine tests.
#include "tests/fabric/test_nodes.h"

#include <algorithm>
#include <cstring>

#include <rte_mbuf.h>

#include "common/wire.h"

namespace rocemu::fabric::tnodes {

namespace {
constexpr uint32_t kPayloadOff = wire::kUdpOff;  // seq right after the IPv4 header
}

BlastHost::BlastHost(rte_mempool* pool, uint32_t ip, uint32_t dst_ip, uint64_t count,
                     uint32_t frame_bytes, TimeNs gap_ns, TimeNs start_ns)
    : pool_(pool), ip_(ip), dst_ip_(dst_ip), count_(count),
      frame_bytes_(std::max<uint32_t>(frame_bytes, kPayloadOff + 8)), gap_ns_(gap_ns),
      next_send_ns_(start_ns) {}

void BlastHost::rx(uint16_t, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept {
  for (uint16_t i = 0; i < n; ++i) {
    const auto* d = rte_pktmbuf_mtod(pkts[i], const uint8_t*);
    const auto* ip = reinterpret_cast<const wire::Ipv4*>(d + wire::kIpOff);
    uint64_t seq = 0;
    std::memcpy(&seq, d + kPayloadOff, sizeof(seq));
    ++received_count_;
    if (record_) received_.push_back(Received{ip->src(), seq, now});
    rte_pktmbuf_free(pkts[i]);
  }
}

rte_mbuf* BlastHost::tx(uint16_t, TimeNs now) noexcept {
  if (sent_ >= count_ || now < next_send_ns_) return nullptr;
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  if (!m) return nullptr;
  auto* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(frame_bytes_)));
  std::memset(d, 0, frame_bytes_);
  auto* eth = reinterpret_cast<wire::Ethernet*>(d);
  eth->set_ethertype(wire::kEtherTypeIpv4);
  auto* ip = reinterpret_cast<wire::Ipv4*>(d + wire::kIpOff);
  ip->ver_ihl = 0x45;
  ip->ttl = 64;
  ip->protocol = wire::kIpProtoUdp;
  ip->set_total_length(static_cast<uint16_t>(frame_bytes_ - wire::kIpOff));
  ip->set_src(ip_);
  ip->set_dst(dst_ip_);
  ip->set_checksum(ip->compute_checksum());
  std::memcpy(d + kPayloadOff, &sent_, sizeof(sent_));
  ++sent_;
  if (gap_ns_ > 0) next_send_ns_ = now + gap_ns_;
  return m;
}

TimeNs BlastHost::next_deadline() const noexcept {
  if (sent_ >= count_) return kNever;
  if (gap_ns_ == 0 && sent_ > 0) return kNever;  // back to back: the engine asks when the wire frees
  return next_send_ns_;
}

FifoSwitch::FifoSwitch(const Topology& topo, uint32_t self) {
  const auto n = topo.node(self).ports.size();
  queues_.resize(n);
  bytes_.assign(n, 0);
  peak_.assign(n, 0);
  const auto sp = topo.shortest_path_ports();
  for (uint32_t h : topo.hosts())
    if (!sp[self][h].empty()) routes_.emplace_back(topo.node(h).ipv4, sp[self][h].front());
}

FifoSwitch::~FifoSwitch() {
  for (auto& q : queues_)
    for (rte_mbuf* m : q) rte_pktmbuf_free(m);
}

void FifoSwitch::rx(uint16_t, rte_mbuf* const* pkts, uint16_t n, TimeNs) noexcept {
  for (uint16_t i = 0; i < n; ++i) {
    const auto* ip = rte_pktmbuf_mtod_offset(pkts[i], const wire::Ipv4*, wire::kIpOff);
    const uint32_t dst = ip->dst();
    auto it = std::find_if(routes_.begin(), routes_.end(), [&](auto& r) { return r.first == dst; });
    if (it == routes_.end()) {
      ++no_route_;
      rte_pktmbuf_free(pkts[i]);
      continue;
    }
    queues_[it->second].push_back(pkts[i]);
    bytes_[it->second] += rte_pktmbuf_pkt_len(pkts[i]);
    peak_[it->second] = std::max(peak_[it->second], bytes_[it->second]);
  }
}

rte_mbuf* FifoSwitch::tx(uint16_t port, TimeNs) noexcept {
  auto& q = queues_[port];
  if (q.empty()) return nullptr;
  rte_mbuf* m = q.front();
  q.pop_front();
  bytes_[port] -= rte_pktmbuf_pkt_len(m);
  return m;
}

}  // namespace rocemu::fabric::tnodes
