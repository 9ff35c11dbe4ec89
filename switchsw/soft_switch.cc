// soft_switch.cc — construction and the receive path of the soft switch: parse, route,
// classify, admit (shared buffer), rewrite, enqueue; PFC frames received and XOFF sent.
// See soft_switch.h for the packet walk; 802.1Qbb for PFC; RFC 1624 for the TTL update.
#include "switchsw/soft_switch.h"

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <bit>
#include <cstring>
#include <stdexcept>

#include "switchsw/queue_meta.h"

namespace rocemu::sw {

namespace {

using detail::meta;
using detail::QueueMeta;
uint32_t to_q16(double a) { return static_cast<uint32_t>(a * 65536.0 + 0.5); }

}  // namespace

SharedBufferConfig shared_buffer_config(const SwitchParams& params, const Topology& topo,
                                        uint32_t node_index) {
  SharedBufferConfig c;
  c.buffer_bytes = params.buffer_bytes;
  c.reserve_bytes = params.reserve_bytes;
  c.alpha_q16 = to_q16(params.alpha);
  c.egress_alpha_q16 = to_q16(params.egress_alpha);
  c.resume_offset_bytes = params.resume_offset_bytes;
  c.lossless_mask = params.lossless_mask();
  for (const auto& p : topo.node(node_index).ports) {
    const TopoLink& l = topo.links()[p.link];
    // Headroom absorbs what is in flight while XOFF travels and takes effect: one round
    // trip of the link (2 x rate x delay) plus slack (SwitchParams::slack_bytes).
    const uint64_t auto_bytes = 2 * bytes_in(l.delay_ns, l.rate_bps) + params.slack_bytes();
    c.headroom_bytes.push_back(params.headroom_bytes ? params.headroom_bytes
                                                     : static_cast<uint32_t>(auto_bytes));
  }
  return c;
}

SoftSwitch::SoftSwitch(const SwitchParams& params, const Topology& topo, uint32_t node_index,
                       rte_mempool* pool, uint64_t seed)
    : mmu_([&] {
        if (node_index >= topo.nodes().size() || topo.node(node_index).kind != NodeKind::kSwitch)
          throw std::invalid_argument("SoftSwitch: node " + std::to_string(node_index) +
                                      " is not a switch of the topology");
        SharedBufferConfig c = shared_buffer_config(params, topo, node_index);
        if (auto why = c.validate(); !why.empty())
          throw std::invalid_argument("switch " + topo.node(node_index).name + ": " + why);
        return c;
      }()),
      routes_(topo, node_index, Rng(seed, "ecmp:" + topo.node(node_index).name).next()),
      rng_(seed, "ecn:" + topo.node(node_index).name),
      pool_(pool),
      node_(node_index) {
  const TopoNode& me = topo.node(node_index);
  ports_.resize(me.ports.size());
  tx_ready_.assign((me.ports.size() + 63) / 64, 0);
  board_.init(node_index, static_cast<uint32_t>(me.ports.size()));
  ecn_pending_.resize(me.ports.size());
  ecn_pending_set_.assign(me.ports.size(), 0);
  std::string problems;
  for (uint16_t i = 0; i < ports_.size(); ++i) {
    PortState& p = ports_[i];
    const TopoPort& tp = me.ports[i];
    p.rate_bps = topo.links()[tp.link].rate_bps;
    p.mac = tp.mac;
    p.peer_mac = topo.node(tp.peer.node).ports.at(tp.peer.port).mac;
    p.pause_ns = pfc_quanta_ns(params.pause_quanta, p.rate_bps);
    p.pause.set_watchdog(params.pfc_watchdog);
    p.watchdog_on = params.pfc_watchdog.on();
    p.watchdog_drop = params.pfc_watchdog.drop;
    const EcnSetting s = params.ecn_for_port(i, p.rate_bps);
    if (auto why = s.validate(); !why.empty())
      problems += " port " + std::to_string(i) + ": " + why + ";";
    p.red.configure(s);
  }
  for (const auto& o : params.ecn_ports)
    if (o.port >= ports_.size())
      problems += " ecn override for port " + std::to_string(o.port) + " beyond the switch's " +
                  std::to_string(ports_.size()) + " ports;";
  if (!problems.empty()) throw std::invalid_argument("switch " + me.name + ":" + problems);

  dscp_map_ = params.dscp_map();
  control_mask_ = params.control_mask();
  lossless_mask_ = params.lossless_mask();
  cnp_priority_ = static_cast<uint8_t>(params.cnp_priority);
  acks_to_control_ = params.acks_to_control;
  ecn_enabled_ = params.ecn.enabled;
  dwrr_ = params.scheduler == "dwrr";
  pause_quanta_ = params.pause_quanta;
  for (int prio = 0; prio < kNumPriorities; ++prio) {
    if ((control_mask_ >> prio) & 1) continue;
    uint32_t weight = 1;
    for (const auto& c : params.classes)
      if (c.priority == prio) weight = c.weight;
    data_index_[prio] = num_data_prios_;
    data_prios_[num_data_prios_] = static_cast<uint8_t>(prio);
    quantum_bytes_[num_data_prios_] = static_cast<int32_t>(params.dwrr_quantum_bytes * weight);
    ++num_data_prios_;
  }

  static const rte_mbuf_dynfield kDesc = {"rocemu_sw_queue_meta", sizeof(QueueMeta),
                                          alignof(QueueMeta), 0};
  dynfield_off_ = rte_mbuf_dynfield_register(&kDesc);
  if (dynfield_off_ < 0)
    throw std::runtime_error("SoftSwitch: rte_mbuf_dynfield_register failed (EAL not started?)");
}

SoftSwitch::~SoftSwitch() {
  for (auto& p : ports_)
    for (auto& f : p.fifo) {
      rte_mbuf* m = f.head;
      while (m) {
        rte_mbuf* next = meta(m, dynfield_off_)->next;
        rte_pktmbuf_free(m);
        m = next;
      }
    }
}

void SoftSwitch::drop(rte_mbuf* m, uint16_t count_port, RxDrop why) noexcept {
  PortState& p = ports_[count_port];
  ++p.drops[static_cast<int>(why)];
  ++p.ctr.drops[static_cast<int>(to_drop_reason(why))];
  rte_pktmbuf_free(m);
}

void SoftSwitch::rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept {
  last_now_ = now;
  if (ecn_dirty_.load(std::memory_order_acquire)) [[unlikely]]
    apply_pending_ecn();
  PortState& in = ports_[port];
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    in.rx_bytes += rte_pktmbuf_pkt_len(m);
    ++in.rx_packets;
    forward(port, m, now);
  }
}

void SoftSwitch::handle_mac_control(uint16_t port, rte_mbuf* m, TimeNs now) noexcept {
  const auto* f = parse_pfc_frame(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m));
  if (!f) [[unlikely]] {
    drop(m, port, RxDrop::kBadControl);
    return;
  }
  PortState& p = ports_[port];
  p.pause.on_frame(*f, p.rate_bps, now);
  p.paused_until = std::max(p.paused_until, p.pause.latest_end());
  deadline_dirty_ = true;
  rte_pktmbuf_free(m);
}

void SoftSwitch::forward(uint16_t in_port, rte_mbuf* m, TimeNs now) noexcept {
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  const uint32_t seg_len = rte_pktmbuf_data_len(m);
  const uint32_t pkt_len = rte_pktmbuf_pkt_len(m);
  if (seg_len < sizeof(wire::Ethernet)) [[unlikely]]
    return drop(m, in_port, RxDrop::kShort);
  auto* eth = reinterpret_cast<wire::Ethernet*>(data);
  const uint16_t ethertype = eth->ethertype();
  if (ethertype != wire::kEtherTypeIpv4) [[unlikely]] {
    if (ethertype == wire::kEtherTypeMacControl) return handle_mac_control(in_port, m, now);
    if (ethertype == wire::kEtherTypeIpv6) return forward_ipv6(in_port, m, now);
    return drop(m, in_port, RxDrop::kNotIpv4);
  }
  if (seg_len < wire::kIpOff + sizeof(wire::Ipv4)) [[unlikely]]
    return drop(m, in_port, RxDrop::kShort);
  auto* ip = reinterpret_cast<wire::Ipv4*>(data + wire::kIpOff);
  if (ip->version() != 4) [[unlikely]]
    return drop(m, in_port, RxDrop::kNotIpv4);
  const uint32_t ihl = ip->ihl_bytes();
  if (ihl < sizeof(wire::Ipv4)) [[unlikely]]
    return drop(m, in_port, RxDrop::kBadIhl);
  if (seg_len < wire::kIpOff + ihl) [[unlikely]]
    return drop(m, in_port, RxDrop::kShort);
  const uint32_t total = ip->total_length();
  if (total < ihl || total > pkt_len - wire::kIpOff) [[unlikely]]
    return drop(m, in_port, RxDrop::kBadLength);
  const RouteTable::Entry* route = routes_.find(ip->dst());
  if (!route) [[unlikely]]
    return drop(m, in_port, RxDrop::kUnknownDst);
  if (ip->ttl <= 1) [[unlikely]]
    return drop(m, in_port, RxDrop::kTtlExpired);

  // Classification and the L4 part of the ECMP key.
  uint8_t prio = dscp_map_[ip->dscp()];
  uint16_t sport = 0, dport = 0;
  const uint32_t l4 = wire::kIpOff + ihl;
  if (ip->protocol == wire::kIpProtoUdp && total >= ihl + sizeof(wire::Udp) &&
      seg_len >= l4 + sizeof(wire::Udp)) {
    const auto* udp = reinterpret_cast<const wire::Udp*>(data + l4);
    sport = udp->src_port();
    dport = udp->dst_port();
    if (dport == wire::kRoceV2Port && seg_len >= l4 + sizeof(wire::Udp) + sizeof(wire::Bth)) {
      const uint8_t opcode = data[l4 + sizeof(wire::Udp)];
      if (opcode == wire::kCnp || (acks_to_control_ && opcode == wire::kRcAcknowledge))
        prio = cnp_priority_;
    }
  }
  const uint16_t out_port =
      route->count == 1 ? routes_.select(*route, 0)
                        : routes_.select(*route, ecmp_hash(ip->src(), ip->dst(), ip->protocol,
                                                           sport, dport, routes_.salt()));

  if (!admit(in_port, out_port, prio, pkt_len, m)) [[unlikely]]
    return;
  decrement_ttl(*ip);
  enqueue(in_port, out_port, prio, pkt_len, m, now);
}

bool SoftSwitch::admit(uint16_t in_port, uint16_t out_port, uint8_t prio, uint32_t pkt_len,
                       rte_mbuf* m) noexcept {
  // Shared-buffer admission: ingress (in_port, prio), then egress (out_port, prio).
  Admit a = mmu_.ingress_check(in_port, prio, pkt_len);
  if (a == Admit::kOk) a = mmu_.egress_check(out_port, prio, pkt_len);
  if (a != Admit::kOk) [[unlikely]] {
    drop(m, out_port, a == Admit::kHeadroomFull ? RxDrop::kHeadroomFull : RxDrop::kBufferFull);
    return false;
  }
  return true;
}

void SoftSwitch::enqueue(uint16_t in_port, uint16_t out_port, uint8_t prio, uint32_t pkt_len,
                         rte_mbuf* m, TimeNs now) noexcept {
  auto* eth = rte_pktmbuf_mtod(m, wire::Ethernet*);
  PortState& out = ports_[out_port];
  std::memcpy(eth->dst, out.peer_mac.data(), 6);
  std::memcpy(eth->src, out.mac.data(), 6);

  mmu_.ingress_update(in_port, prio, pkt_len);
  mmu_.egress_update(out_port, prio, pkt_len);
  QueueMeta* qm = meta(m, dynfield_off_);
  qm->next = nullptr;
  qm->in_port = in_port;
  qm->prio = prio;
  Fifo& f = out.fifo[prio];
  if (f.tail)
    meta(f.tail, dynfield_off_)->next = m;
  else
    f.head = m;
  f.tail = m;
  out.nonempty = static_cast<uint8_t>(out.nonempty | (1u << prio));
  note_ready(out_port);
  const uint32_t qb = mmu_.egress_bytes(out_port, prio);
  if (qb > out.peak_queue_bytes[prio]) out.peak_queue_bytes[prio] = qb;
  if (now < out.paused_until && out.pause.paused(prio, now)) [[unlikely]]
    deadline_dirty_ = true;

  if ((lossless_mask_ >> prio) & 1 && !((ports_[in_port].xoff_active >> prio) & 1) &&
      mmu_.should_pause(in_port, prio)) [[unlikely]]
    start_xoff(in_port, prio, now);
}

void SoftSwitch::forward_ipv6(uint16_t in_port, rte_mbuf* m, TimeNs now) noexcept {
  // RFC 8200: the fixed header; no extension headers are looked into (RoCEv2 has none), so
  // the L4 ports are read only when the next header is UDP.
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  const uint32_t seg_len = rte_pktmbuf_data_len(m);
  const uint32_t pkt_len = rte_pktmbuf_pkt_len(m);
  if (seg_len < wire::kIpOff + sizeof(wire::Ipv6)) [[unlikely]]
    return drop(m, in_port, RxDrop::kShort);
  auto* ip = reinterpret_cast<wire::Ipv6*>(data + wire::kIpOff);
  if (ip->version() != 6) [[unlikely]]
    return drop(m, in_port, RxDrop::kNotIpv4);
  const uint32_t payload = ip->payload_length();
  if (payload > pkt_len - wire::kUdp6Off) [[unlikely]]
    return drop(m, in_port, RxDrop::kBadLength);
  const RouteTable::Entry* route = routes_.find6(ip->dst);
  if (!route) [[unlikely]]
    return drop(m, in_port, RxDrop::kUnknownDst);
  if (ip->hop_limit <= 1) [[unlikely]]
    return drop(m, in_port, RxDrop::kTtlExpired);
  uint8_t prio = dscp_map_[ip->dscp()];
  uint16_t sport = 0, dport = 0;
  if (ip->next_header == wire::kIpProtoUdp && payload >= sizeof(wire::Udp) &&
      seg_len >= wire::kUdp6Off + sizeof(wire::Udp)) {
    const auto* udp = reinterpret_cast<const wire::Udp*>(data + wire::kUdp6Off);
    sport = udp->src_port();
    dport = udp->dst_port();
    if (dport == wire::kRoceV2Port && seg_len >= wire::kRoce6HeadersBytes) {
      const uint8_t opcode = data[wire::kBth6Off];
      if (opcode == wire::kCnp || (acks_to_control_ && opcode == wire::kRcAcknowledge))
        prio = cnp_priority_;
    }
  }
  const uint16_t out_port =
      route->count == 1 ? routes_.select(*route, 0)
                        : routes_.select(*route, ecmp_hash(fold_ipv6(ip->src, ip->flow_label()),
                                                           fold_ipv6(ip->dst), ip->next_header,
                                                           sport, dport, routes_.salt()));
  if (!admit(in_port, out_port, prio, pkt_len, m)) [[unlikely]]
    return;
  --ip->hop_limit;  // no header checksum in IPv6; the ICRC masks the hop limit
  enqueue(in_port, out_port, prio, pkt_len, m, now);
}

void SoftSwitch::start_xoff(uint16_t port, int prio, TimeNs now) noexcept {
  PortState& p = ports_[port];
  const auto bit = static_cast<uint8_t>(1u << prio);
  p.xoff_active |= bit;
  p.pending_xoff |= bit;
  p.pending_xon = static_cast<uint8_t>(p.pending_xon & ~bit);
  note_ready(port);
  p.xoff_refresh_at[prio] = now + p.pause_ns / 2;
  deadline_dirty_ = true;
}

rte_mbuf* SoftSwitch::build_pfc(uint16_t port) noexcept {
  PortState& p = ports_[port];
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  if (!m) [[unlikely]] {
    ++p.ctr.mbuf_alloc_failures;
    return nullptr;  // stays pending; retried on the next tx of this port
  }
  auto* buf = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kPfcFrameBytes));
  if (!buf) [[unlikely]] {
    ++p.ctr.mbuf_alloc_failures;
    rte_pktmbuf_free(m);
    return nullptr;
  }
  std::array<uint16_t, kNumPriorities> quanta{};
  for (int i = 0; i < kNumPriorities; ++i)
    if ((p.pending_xoff >> i) & 1) {
      quanta[i] = pause_quanta_;
      ++p.ctr.pfc_pauses_sent[i];
    }
  write_pfc_frame(buf, p.mac.data(), static_cast<uint16_t>(p.pending_xoff | p.pending_xon), quanta);
  p.pending_xoff = 0;
  p.pending_xon = 0;
  note_ready(port);
  return m;
}

}  // namespace rocemu::sw
