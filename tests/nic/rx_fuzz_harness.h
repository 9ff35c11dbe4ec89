// rx_fuzz_harness.h — the receive path under bad input, shared by the seeded gtest corpus
// (unit suite) and the libFuzzer target (tests/fuzz). A victim RoceHost with one RC QP
// connected to a peer that does not exist gets arbitrary frames "from" that peer; its
// registered region sits between guard bytes. Invariants after every input: no crash, the
// guards are intact (no write outside the region), every frame is either counted as a drop
// or consumed by a role, the output drains (bounded), and the QP still answers an
// in-sequence WRITE with an ACK (never wedged) unless it legitimately went to ERR.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "common/rng.h"
#include "common/wire.h"
#include "nic/opcode_table.h"
#include "nic/packet.h"
#include "nic/roce_host.h"
#include "tests/support/eal_env.h"

namespace rocemu::test {

class RxFuzzHarness {
 public:
  static constexpr uint32_t kRegionBytes = 16 * 1024;
  static constexpr uint32_t kGuardBytes = 4096;
  static constexpr uint8_t kGuard = 0xA5;

  RxFuzzHarness() : mem_(kGuardBytes * 2 + kRegionBytes, kGuard) {
    topo_.add_node("victim", NodeKind::kHost);
    topo_.add_node("peer", NodeKind::kHost);
    topo_.add_link(0, 1, 25 * kBpsPerGbps, 1000);
    nic::NicParams p;
    p.mtu_bytes = 1024;
    host_ = std::make_unique<nic::RoceHost>(p, topo_, 0, test_mempool(), 1);
    const uint32_t pd = host_->alloc_pd();
    const uint32_t cq = host_->create_cq(64);
    nic::QpInitAttr a;
    a.pd = pd;
    a.send_cq = a.recv_cq = cq;
    a.max_send_wr = a.max_recv_wr = 16;
    qpn_ = host_->create_qp(a);
    cq_ = cq;
    mr_ = host_->reg_mr(pd, mem_.data() + kGuardBytes, kRegionBytes,
                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    // Two receive WQEs into the region, so SENDs reach the scatter code.
    for (int i = 0; i < 2; ++i) {
      ibv_sge sge{mr_.addr + i * 2048u, 2048, mr_.lkey};
      ibv_recv_wr rw{};
      rw.sg_list = &sge;
      rw.num_sge = 1;
      host_->post_recv(qpn_, &rw, nullptr);
    }
    peer_ip_ = topo_.node(1).ipv4;
    nic::ConnectOptions opt;
    opt.max_rd_atomic = 4;
    nic::connect_rc(*host_, qpn_, nic::QpInfo{0x77, 0x100, peer_ip_}, opt);
    nic::FrameAddress fa;
    fa.src_mac = topo_.node(1).ports[0].mac;
    fa.dst_mac = topo_.node(0).ports[0].mac;
    fa.src_ip = peer_ip_;
    fa.dst_ip = topo_.node(0).ipv4;
    fa.dqpn = qpn_;
    fa.udp_sport = 0xC123;
    tmpl_ = nic::make_template(fa);
  }

  nic::RoceHost& host() { return *host_; }
  uint32_t qpn() const { return qpn_; }
  const nic::MrInfo& mr() const { return mr_; }

  /// A well-formed request frame to the victim QP (ICRC sealed).
  std::vector<uint8_t> request(uint8_t opcode, uint32_t psn, uint64_t va, uint32_t rkey,
                               uint32_t dma_len, uint32_t payload_len, bool ack_req = true) const {
    const nic::OpInfo& op = nic::op_info(opcode);
    std::vector<uint8_t> f(nic::frame_bytes(op.ext_bytes, payload_len));
    const uint32_t at = nic::write_headers(f.data(), tmpl_, opcode, psn, ack_req, false,
                                           op.ext_bytes, payload_len, 0);
    if (op.flags & nic::kOpReth) {
      auto* r = reinterpret_cast<wire::Reth*>(f.data() + at);
      r->set_va(va);
      r->set_rkey(rkey);
      r->set_dma_len(dma_len);
    }
    if (op.flags & nic::kOpAeth) f[at] = 0;  // ACK syndrome
    for (uint32_t i = 0; i < payload_len; ++i) f[at + op.ext_bytes + i] = static_cast<uint8_t>(i * 7);
    nic::seal_frame(f.data());
    return f;
  }

  /// Hands `len` bytes to the victim as one frame at time `now`.
  void deliver(const uint8_t* data, uint32_t len, TimeNs now) {
    rte_mbuf* m = rte_pktmbuf_alloc(test_mempool());
    if (!m) std::abort();
    const uint32_t room = rte_pktmbuf_tailroom(m);
    const uint32_t n = len < room ? len : room;
    auto* dst = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(n)));
    if (n && dst) std::memcpy(dst, data, n);
    host_->rx(0, &m, 1, now);
  }

  /// Drains the victim's output (bounded); returns the frames sent.
  std::vector<std::vector<uint8_t>> drain(TimeNs now, int max_frames = 4096) {
    std::vector<std::vector<uint8_t>> out;
    if (host_->next_deadline() <= now) host_->on_timer(now);
    while (static_cast<int>(out.size()) < max_frames) {
      rte_mbuf* m = host_->tx(0, now);
      if (!m) break;
      const auto* p = rte_pktmbuf_mtod(m, const uint8_t*);
      out.emplace_back(p, p + rte_pktmbuf_data_len(m));
      rte_pktmbuf_free(m);
    }
    return out;
  }

  bool guards_intact() const {
    for (uint32_t i = 0; i < kGuardBytes; ++i)
      if (mem_[i] != kGuard || mem_[kGuardBytes + kRegionBytes + i] != kGuard) return false;
    return true;
  }

  /// Not wedged: an in-sequence WRITE ONLY inside the region is written and ACKed. Returns
  /// true also when the QP is in ERR (a legitimate end state it reports).
  bool answers_in_sequence_write(TimeNs now) {
    drain(now);
    if (host_->qp_state(qpn_) == IBV_QPS_ERR) return true;
    const uint32_t psn = host_->expected_psn(qpn_);
    // The responder may be inside a multi-packet message (a fuzzed FIRST was accepted), so
    // a WRITE ONLY may be rejected as a sequence error: answering at all is what "not
    // wedged" means.
    const auto f = request(wire::kRcWriteOnly, psn, mr_.addr + 100, mr_.rkey, 64, 64);
    deliver(f.data(), static_cast<uint32_t>(f.size()), now);
    for (const auto& out : drain(now)) {
      nic::RocePacket p;
      auto copy = out;
      if (nic::parse_roce(copy.data(), static_cast<uint32_t>(copy.size()), p) != nic::RxDrop::kNone)
        continue;
      // ACK, or the invalid-request NAK a WRITE ONLY gets inside an unfinished message.
      if (p.opcode == wire::kRcAcknowledge && p.psn == psn &&
          (p.syndrome == 0x1f || p.syndrome == 0x61))
        return true;
    }
    return false;
  }

  /// One mutated input derived from `seed`: a valid request, then a mutation that keeps the
  /// ICRC valid (so deeper checks run) or not.
  std::vector<uint8_t> mutated_frame(Rng& r) const {
    using namespace wire;
    static constexpr uint8_t kOps[] = {kRcWriteFirst, kRcWriteMiddle, kRcWriteLast,
                                       kRcWriteOnly,  kRcWriteOnlyImm, kRcReadRequest,
                                       kRcSendFirst,  kRcSendOnly,    kRcSendLastImm,
                                       kRcAcknowledge, kRcReadResponseOnly, kCnp,
                                       kRcFetchAdd,   kRcCompareSwap};
    const uint8_t op = kOps[r.below(sizeof kOps)];
    const uint32_t epsn = host_->expected_psn(qpn_);
    uint32_t psn = epsn;
    switch (r.below(4)) {
      case 0: psn = static_cast<uint32_t>(r.next()) & 0xFFFFFF; break;  // far outside
      case 1: psn = (epsn - 1 - static_cast<uint32_t>(r.below(8))) & 0xFFFFFF; break;  // dup
      default: break;
    }
    uint64_t va = mr_.addr + r.below(kRegionBytes);
    uint32_t rkey = mr_.rkey;
    uint32_t dma_len = static_cast<uint32_t>(r.below(3000));
    uint32_t payload = static_cast<uint32_t>(r.below(1100));
    switch (r.below(6)) {
      case 0: rkey ^= static_cast<uint32_t>(1 + r.below(0xffff)); break;    // rkey violation
      case 1: va = mr_.addr + kRegionBytes - r.below(64); break;            // past the end
      case 2: va = mr_.addr - 1 - r.below(4096); break;                     // before the start
      case 3: dma_len = static_cast<uint32_t>(r.next()); break;             // huge length
      case 4: payload = static_cast<uint32_t>(1024 + r.below(7000)); break;  // oversized
      default: break;
    }
    auto f = request(op, psn, va, rkey, dma_len, payload, r.below(2));
    switch (r.below(5)) {
      case 0: {  // garble a few bytes, ICRC resealed so the garbage reaches the roles
        const int k = 1 + static_cast<int>(r.below(4));
        for (int i = 0; i < k; ++i) f[r.below(f.size())] = static_cast<uint8_t>(r.next());
        if (f.size() >= kRoceHeadersBytes + 4 && f[12] == 0x08 && f[13] == 0x00) {
          const uint32_t tl = uint32_t{f[16]} << 8 | f[17];
          if (kIpOff + tl <= f.size() && tl >= 32) nic::seal_frame(f.data());
        }
        break;
      }
      case 1: f.resize(r.below(f.size() + 1)); break;           // truncated
      case 2: f[r.below(f.size())] ^= 0x20; break;              // bad ICRC (or header)
      case 3: reinterpret_cast<Bth*>(f.data() + kBthOff)->set_dqpn(qpn_ + 1 + r.below(3));
              nic::seal_frame(f.data());
              break;                                            // wrong QPN
      default: break;
    }
    return f;
  }

 private:
  Topology topo_;
  std::vector<uint8_t> mem_;
  std::unique_ptr<nic::RoceHost> host_;
  uint32_t qpn_ = 0, cq_ = 0, peer_ip_ = 0;
  nic::MrInfo mr_;
  nic::FrameTemplate tmpl_;
};

}  // namespace rocemu::test
