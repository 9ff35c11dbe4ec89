// fuzz_switch_rx.cc — libFuzzer target for the soft switch's receive path (SoftSwitch::rx:
// Ethernet/IPv4 checks, routing and ECMP, classification, shared-buffer admission, PFC and
// 802.3x MAC-control frames) and the transmit side it feeds (DWRR, RED-ECN, XOFF/XON).
//
// The switch under test is s0 of a small fabric: hosts h0, h1 on ports 0 and 1, two
// equal-cost paths (ports 2, 3) to h2, PFC on the lossless class and the PFC watchdog on.
// Input: byte 0 = control, byte 1 = time step (x 2 us), the rest = the frame.
//   control bits 0-1: ingress port; bits 2-3: how the frame is used: 0 raw, 1 IPv4 fixed up
//   (destination a host, TTL > 1, lengths and checksum right: it reaches admission and the
//   queues), 2 made a MAC-control frame (ethertype 0x8808, PFC opcode unless bit 6), 3 raw;
//   bits 4-5: packets to dequeue from every port afterwards (0, 1, 4, all); bit 7: then run
//   out every pause and drain the switch.
// Aborts when: an mbuf's bytes outside the frame change (headroom, tailroom), a forwarded
// frame is not a well-formed rewrite of what came in (MACs, TTL, a valid checksum stays
// valid), a frame is neither forwarded, queued nor dropped-and-counted, or a drained switch
// still accounts buffer bytes or holds mbufs.
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "switchsw/soft_switch.h"
#include "tests/support/eal_env.h"

namespace {

using namespace rocemu;

constexpr uint8_t kGuard = 0xA5;
constexpr uint64_t k10G = 10 * kBpsPerGbps;
constexpr int kHosts = 3;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_switch_rx: %s\n", what);
  std::abort();
}

// RFC 1071: the one's-complement sum of a header with a valid checksum is 0xffff.
bool checksum_valid(const uint8_t* p, uint32_t len) {
  uint32_t sum = 0;
  for (uint32_t i = 0; i + 1 < len; i += 2) sum += uint32_t{p[i]} << 8 | p[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return sum == 0xffff;
}

struct Fabric {
  Topology topo;
  uint32_t s0 = 0;
  uint32_t hosts[kHosts] = {};
  rte_mempool* pool = test::test_mempool();
  std::unique_ptr<sw::SoftSwitch> sw;
  unsigned baseline_free = 0;
  uint64_t frames_in = 0;
  TimeNs now = 0;
  // Frames inside the switch: whether each came in with a valid IPv4 header checksum.
  std::unordered_map<const rte_mbuf*, bool> valid_checksum;

  Fabric() {
    hosts[0] = topo.add_node("h0", NodeKind::kHost);
    hosts[1] = topo.add_node("h1", NodeKind::kHost);
    hosts[2] = topo.add_node("h2", NodeKind::kHost);
    s0 = topo.add_node("s0", NodeKind::kSwitch);
    const uint32_t s1 = topo.add_node("s1", NodeKind::kSwitch);
    const uint32_t s2 = topo.add_node("s2", NodeKind::kSwitch);
    const uint32_t s3 = topo.add_node("s3", NodeKind::kSwitch);
    topo.add_link(hosts[0], s0, k10G, 1000);
    topo.add_link(hosts[1], s0, k10G, 1000);
    topo.add_link(s0, s1, k10G, 1000);
    topo.add_link(s0, s2, k10G, 1000);
    topo.add_link(s1, s3, k10G, 1000);
    topo.add_link(s2, s3, k10G, 1000);
    topo.add_link(s3, hosts[2], k10G, 1000);
    sw::SwitchParams p;
    p.buffer_bytes = 1 << 20;  // small, so admission refuses some of a burst
    p.pfc_watchdog = {200 * kNsPerUs, 400 * kNsPerUs};
    p.acks_to_control = true;
    sw = std::make_unique<sw::SoftSwitch>(p, topo, s0, pool, 1);
    baseline_free = rte_mempool_avail_count(pool);
  }

  uint16_t num_ports() const { return sw->num_ports(); }
};

Fabric& fabric() {
  static auto* f = new Fabric();
  return *f;
}

// Bytes of the mbuf's buffer outside [data_off, data_off + data_len) are all kGuard.
bool guards_intact(const rte_mbuf* m) {
  const auto* b = static_cast<const uint8_t*>(m->buf_addr);
  for (uint32_t i = 0; i < m->data_off; ++i)
    if (b[i] != kGuard) return false;
  for (uint32_t i = m->data_off + m->data_len; i < m->buf_len; ++i)
    if (b[i] != kGuard) return false;
  return true;
}

void check_out(Fabric& f, uint16_t port, rte_mbuf* m) {
  if (m->nb_segs != 1 || m->data_len != m->pkt_len) fail("multi-segment frame out");
  const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
  const auto* eth = reinterpret_cast<const wire::Ethernet*>(d);
  const TopoPort& tp = f.topo.node(f.s0).ports[port];
  if (std::memcmp(eth->src, tp.mac.data(), 6) != 0) fail("frame out without the port's MAC");
  if (eth->ethertype() == wire::kEtherTypeMacControl) {
    if (m->data_len != kPfcFrameBytes || !parse_pfc_frame(d, m->data_len))
      fail("malformed PFC frame sent");
    if (std::memcmp(eth->dst, wire::kPfcDstMac.data(), 6) != 0)
      fail("PFC frame not to 01:80:C2:00:00:01");
    return;
  }
  if (eth->ethertype() != wire::kEtherTypeIpv4) fail("forwarded a frame that is not IPv4");
  const auto& peer = f.topo.node(tp.peer.node).ports[tp.peer.port];
  if (std::memcmp(eth->dst, peer.mac.data(), 6) != 0) fail("frame out not to the next hop's MAC");
  if (!guards_intact(m)) fail("bytes outside the frame changed");
  const auto* ip = reinterpret_cast<const wire::Ipv4*>(d + wire::kIpOff);
  if (ip->ttl < 1) fail("forwarded with TTL 0");
  // A checksum valid when the frame came in must stay valid through TTL and ECN rewrites.
  const auto it = f.valid_checksum.find(m);
  if (it == f.valid_checksum.end()) fail("forwarded a frame that never came in");
  const bool was_valid = it->second;
  f.valid_checksum.erase(it);
  if (was_valid && !checksum_valid(d + wire::kIpOff, ip->ihl_bytes()))
    fail("a valid IPv4 checksum became invalid");
}

uint64_t drain_port(Fabric& f, uint16_t port, uint64_t max) {
  uint64_t n = 0;
  while (n < max) {
    rte_mbuf* m = f.sw->tx(port, f.now);
    if (!m) break;
    check_out(f, port, m);
    rte_pktmbuf_free(m);
    ++n;
  }
  return n;
}

void deliver(Fabric& f, uint16_t port, const uint8_t* data, size_t len) {
  const unsigned free_before = rte_mempool_avail_count(f.pool);
  rte_mbuf* m = rte_pktmbuf_alloc(f.pool);
  if (!m) fail("mbuf pool empty: the switch holds mbufs it never releases");
  std::memset(m->buf_addr, kGuard, m->buf_len);
  const uint16_t n =
      static_cast<uint16_t>(len < rte_pktmbuf_tailroom(m) ? len : rte_pktmbuf_tailroom(m));
  auto* dst = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, n));
  if (n) std::memcpy(dst, data, n);
  // Whether the frame's IPv4 header checksum was valid when it came in.
  bool valid = false;
  if (n >= wire::kIpOff + sizeof(wire::Ipv4)) {
    const auto* ip = reinterpret_cast<const wire::Ipv4*>(dst + wire::kIpOff);
    const uint32_t ihl = ip->ihl_bytes();
    valid = ihl >= sizeof(wire::Ipv4) && wire::kIpOff + ihl <= n &&
            checksum_valid(dst + wire::kIpOff, ihl);
  }
  f.valid_checksum[m] = valid;
  rte_mbuf* const in = m;
  f.sw->rx(port, &m, 1, f.now);
  // A frame the switch dropped or consumed is gone (its mbuf may come back from the pool).
  if (rte_mempool_avail_count(f.pool) == free_before) f.valid_checksum.erase(in);
  ++f.frames_in;
}

// Runs out every pause (the longest is 0xffff quanta, 3.4 ms at 10 Gb/s; refreshed XOFFs end
// once the queues drain) and empties every port; then nothing may be left accounted.
void drain_all(Fabric& f) {
  for (int round = 0; round < 64; ++round) {
    f.now += 10 * kNsPerMs;
    if (f.sw->next_deadline() <= f.now) f.sw->on_timer(f.now);
    uint64_t moved = 0;
    for (uint16_t p = 0; p < f.num_ports(); ++p) moved += drain_port(f, p, 1u << 20);
    if (moved == 0) break;
  }
  const auto& mmu = f.sw->mmu();
  for (uint16_t p = 0; p < f.num_ports(); ++p)
    for (int prio = 0; prio < kNumPriorities; ++prio)
      if (mmu.egress_bytes(p, prio) || mmu.ingress_bytes(p, prio) ||
          mmu.headroom_used_bytes(p, prio))
        fail("drained switch still accounts buffer bytes");
  if (mmu.shared_used_bytes() != 0) fail("drained switch still accounts shared bytes");
  if (rte_mempool_avail_count(f.pool) != f.baseline_free || !f.valid_checksum.empty())
    fail("drained switch holds mbufs");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  Fabric& f = fabric();
  const uint8_t ctl = data[0];
  f.now += TimeNs{data[1]} * 2 * kNsPerUs;
  const uint16_t port = static_cast<uint16_t>((ctl & 3) % f.num_ports());
  std::vector<uint8_t> frame(data + 2, data + size);
  switch ((ctl >> 2) & 3) {
    case 1:
      if (frame.size() >= wire::kIpOff + sizeof(wire::Ipv4)) {
        auto* eth = reinterpret_cast<wire::Ethernet*>(frame.data());
        eth->set_ethertype(wire::kEtherTypeIpv4);
        auto* ip = reinterpret_cast<wire::Ipv4*>(frame.data() + wire::kIpOff);
        ip->ver_ihl = 0x45;
        ip->set_total_length(static_cast<uint16_t>(frame.size() - wire::kIpOff));
        if (ip->ttl < 2) ip->ttl = 2;
        ip->set_dst(f.topo.node(f.hosts[ip->dst() % kHosts]).ipv4);
        ip->set_checksum(ip->compute_checksum());
      }
      break;
    case 2:
      if (frame.size() >= sizeof(wire::Ethernet)) {
        reinterpret_cast<wire::Ethernet*>(frame.data())->set_ethertype(wire::kEtherTypeMacControl);
        if (!(ctl & 0x40) && frame.size() >= sizeof(wire::Ethernet) + 2) {
          frame[sizeof(wire::Ethernet)] = static_cast<uint8_t>(wire::kPfcOpcode >> 8);
          frame[sizeof(wire::Ethernet) + 1] = static_cast<uint8_t>(wire::kPfcOpcode & 0xff);
        }
      }
      break;
    default:
      break;
  }

  uint64_t drops_before = 0;
  for (uint16_t p = 0; p < f.num_ports(); ++p)
    for (int r = 0; r < sw::kNumRxDrops; ++r)
      drops_before += f.sw->drops(p, static_cast<sw::RxDrop>(r));
  const unsigned free_before = rte_mempool_avail_count(f.pool);
  deliver(f, port, frame.data(), frame.size());
  uint64_t drops_after = 0;
  for (uint16_t p = 0; p < f.num_ports(); ++p)
    for (int r = 0; r < sw::kNumRxDrops; ++r)
      drops_after += f.sw->drops(p, static_cast<sw::RxDrop>(r));
  // One frame in: either dropped (counted once, its mbuf freed), consumed as MAC control
  // (freed, not a drop) or queued (its mbuf held).
  if (drops_after - drops_before > 1) fail("one frame counted as more than one drop");
  if (drops_after != drops_before && rte_mempool_avail_count(f.pool) != free_before)
    fail("dropped frame's mbuf not freed");

  if (f.sw->next_deadline() <= f.now) f.sw->on_timer(f.now);
  static constexpr uint64_t kDequeue[4] = {0, 1, 4, 1u << 20};
  if (const uint64_t k = kDequeue[(ctl >> 4) & 3])
    for (uint16_t p = 0; p < f.num_ports(); ++p) drain_port(f, p, k);
  if (ctl & 0x80 || f.frames_in % 256 == 0) drain_all(f);
  return 0;
}
