// rx_fuzz_harness.h — the receive path under bad input, shared by the seeded gtest corpus
// (unit suite) and the libFuzzer target (tests/fuzz). A victim RoceHost with one RC QP
// connected to a peer that does not exist gets arbitrary frames "from" that peer; its
// registered region sits between guard bytes. Invariants after every input: no crash, the
// guards are intact (no write outside the region), every frame is either counted as a drop
// or consumed by a role, the output drains (bounded), and the QP still answers an
// in-sequence WRITE with an ACK (never wedged) unless it legitimately went to ERR.
// The victim also has a UC QP and a UD QP, each with receives posted into buffers that have
// guard bytes between them (their own region): UC SENDs and WRITEs and UD SENDs (DETH,
// the GRH space) reach their placement code, and nothing outside a receive's buffer, or the
// region a WRITE names, is written; their receives are posted again as they complete, and
// each completion's length fits its buffer.
#pragma once

#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/rng.h"
#include "common/wire.h"
#include "nic/opcode_table.h"
#include "nic/packet.h"
#include "nic/roce_host.h"
#include "tests/nic/frame_mutations.h"
#include "tests/support/eal_env.h"

namespace rocemu::test {

class RxFuzzHarness {
 public:
  static constexpr uint32_t kRegionBytes = 16 * 1024;
  static constexpr uint32_t kGuardBytes = 4096;
  static constexpr uint8_t kGuard = 0xA5;

  // The UC and UD QPs' receive buffers: kRecvBufs of kRecvBytes each (a UD one holds the
  // 40-byte GRH and an MTU), a guard of kRecvGuard after each, in their own region.
  static constexpr uint32_t kRecvBytes = 40 + 1024;
  static constexpr uint32_t kRecvGuard = 64;
  static constexpr uint32_t kRecvBufs = 4;  // two per QP
  static constexpr uint32_t kQkey = 0x11111111;

  RxFuzzHarness() : mem_(kGuardBytes * 2 + kRegionBytes, kGuard), rq_mem_(kRecvBufs * (kRecvBytes + kRecvGuard), kGuard) {
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
    add_unreliable_qps(pd);
  }

  nic::RoceHost& host() { return *host_; }
  uint32_t qpn() const { return qpn_; }
  uint32_t uc_qpn() const { return uc_qpn_; }
  uint32_t ud_qpn() const { return ud_qpn_; }
  /// Receive completions of the UC and UD QPs so far (their buffers posted again).
  uint64_t unreliable_receives() const { return unreliable_receives_; }
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
    reap();
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

  bool guards_intact() const { return damage().empty(); }

  /// "" when no guard byte changed and every UC/UD receive completion fit its buffer, else
  /// what did not.
  std::string damage() const {
    for (uint32_t i = 0; i < kGuardBytes; ++i) {
      if (mem_[i] != kGuard) return "guard byte " + std::to_string(i) + " before the region written";
      if (mem_[kGuardBytes + kRegionBytes + i] != kGuard)
        return "guard byte " + std::to_string(i) + " after the region written";
    }
    for (uint32_t b = 0; b < kRecvBufs; ++b)
      for (uint32_t i = 0; i < kRecvGuard; ++i)
        if (rq_mem_[b * (kRecvBytes + kRecvGuard) + kRecvBytes + i] != kGuard)
          return "guard byte " + std::to_string(i) + " after receive buffer " + std::to_string(b) + " written";
    return bad_completion_;
  }

  /// Not wedged: an in-sequence WRITE ONLY inside the region is written and ACKed. Returns
  /// true also when the QP is in ERR (a legitimate end state it reports).
  bool answers_in_sequence_write(TimeNs& now) {
    drain(now);
    if (host_->qp_state(qpn_) == IBV_QPS_ERR) return true;
    const uint32_t psn = host_->expected_psn(qpn_);
    // The responder may be inside a multi-packet message (a fuzzed FIRST was accepted), so
    // a WRITE ONLY may be rejected as a sequence error: answering at all is what "not
    // wedged" means.
    const auto f = request(wire::kRcWriteOnly, psn, mr_.addr + 100, mr_.rkey, 64, 64);
    deliver(f.data(), static_cast<uint32_t>(f.size()), now);
    // A PFC pause (an input may be a PFC frame) holds the answer back until it ends: time
    // passes (`now` moves on) to the end of the pauses, and the answer must then come.
    for (int wait = 0; wait < 2; ++wait) {
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
      TimeNs end = now;
      for (uint8_t prio = 0; prio < 8; ++prio) end = std::max(end, host_->paused_until(prio));
      if (end == now) break;
      now = end;
    }
    return false;
  }

  /// One mutated input derived from `seed`: a valid request, then a mutation that keeps the
  /// ICRC valid (so deeper checks run) or not.
  std::vector<uint8_t> mutated_frame(Rng& r) const {
    using namespace wire;
    switch (r.below(4)) {
      case 0: return unreliable_frame(r, true);
      case 1: return unreliable_frame(r, false);
      default: break;
    }
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
      case 0: garble_resealed(f, r); break;  // the garbage reaches the roles
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
  void add_unreliable_qps(uint32_t pd) {
    rq_mr_ = host_->reg_mr(pd, rq_mem_.data(), rq_mem_.size(), IBV_ACCESS_LOCAL_WRITE);
    for (ibv_qp_type type : {IBV_QPT_UC, IBV_QPT_UD}) {
      nic::QpInitAttr a;
      a.qp_type = type;
      a.pd = pd;
      a.send_cq = a.recv_cq = cq_;
      a.max_send_wr = a.max_recv_wr = 16;
      const uint32_t q = host_->create_qp(a);
      if (type == IBV_QPT_UC) {
        nic::ConnectOptions opt;
        opt.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
        nic::connect_rc(*host_, q, nic::QpInfo{0x78, 0x200, peer_ip_}, opt);
        uc_qpn_ = q;
      } else {
        ibv_qp_attr at{};
        at.qp_state = IBV_QPS_INIT;
        at.qkey = kQkey;
        host_->modify_qp(q, at, IBV_QP_STATE | IBV_QP_QKEY);
        at = {};
        at.qp_state = IBV_QPS_RTR;
        host_->modify_qp(q, at, IBV_QP_STATE);
        at = {};
        at.qp_state = IBV_QPS_RTS;
        at.sq_psn = 1;
        host_->modify_qp(q, at, IBV_QP_STATE | IBV_QP_SQ_PSN);
        ud_qpn_ = q;
      }
    }
    for (uint32_t b = 0; b < kRecvBufs; ++b) post_unreliable_recv(b);
  }

  // Buffers 0 and 1 are the UC QP's, 2 and 3 the UD QP's; wr_id = kRecvWrId + buffer.
  static constexpr uint64_t kRecvWrId = 0x5000;
  void post_unreliable_recv(uint32_t b) {
    ibv_sge sge{rq_mr_.addr + b * (kRecvBytes + kRecvGuard), kRecvBytes, rq_mr_.lkey};
    ibv_recv_wr rw{};
    rw.wr_id = kRecvWrId + b;
    rw.sg_list = &sge;
    rw.num_sge = 1;
    host_->post_recv(b < 2 ? uc_qpn_ : ud_qpn_, &rw, nullptr);
  }

  /// Takes the CQ's completions: a UC or UD receive is checked (a SEND's length fits its
  /// buffer; a UD one holds the GRH) and its buffer posted again.
  void reap() {
    ibv_wc wc[16];
    for (int n; (n = host_->poll_cq(cq_, 16, wc)) > 0;)
      for (int i = 0; i < n; ++i) {
        if (wc[i].wr_id < kRecvWrId || wc[i].wr_id >= kRecvWrId + kRecvBufs) continue;
        const auto b = static_cast<uint32_t>(wc[i].wr_id - kRecvWrId);
        if (wc[i].status == IBV_WC_SUCCESS) {
          ++unreliable_receives_;
          // A SEND's length is what it placed in the buffer; a WRITE with immediate's
          // (IBV_WC_RECV_RDMA_WITH_IMM) is the WRITE's, which the buffer does not hold.
          if (wc[i].opcode == IBV_WC_RECV && (wc[i].byte_len > kRecvBytes || (b >= 2 && wc[i].byte_len < 40)) &&
              bad_completion_.empty())
            bad_completion_ = "receive buffer " + std::to_string(b) + " completed with " +
                              std::to_string(wc[i].byte_len) + " bytes";
        }
        if (wc[i].status != IBV_WC_WR_FLUSH_ERR) post_unreliable_recv(b);
      }
  }

  /// A UC request (SEND or WRITE, any position, PSN near the expected one, WRITEs into the
  /// region, past it or with a wrong rkey) or a UD SEND (right or wrong Q_Key, any length).
  std::vector<uint8_t> unreliable_frame(Rng& r, bool uc) const {
    using namespace wire;
    uint8_t op;
    uint32_t dqpn, psn;
    if (uc) {
      static constexpr uint8_t kOps[] = {kRcSendFirst, kRcSendMiddle, kRcSendLast, kRcSendOnly,
                                         kRcSendLastImm, kRcSendOnlyImm, kRcWriteFirst, kRcWriteMiddle,
                                         kRcWriteLast, kRcWriteLastImm, kRcWriteOnly, kRcWriteOnlyImm};
      op = nic::uc_opcode(kOps[r.below(sizeof kOps)]);
      dqpn = uc_qpn_;
      psn = host_->expected_psn(uc_qpn_);
      if (r.below(2)) psn += static_cast<uint32_t>(r.below(3)) - 1;  // a gap, or one behind
    } else {
      op = r.below(2) ? nic::kUdSendOnly : nic::kUdSendOnlyImm;
      dqpn = ud_qpn_;
      psn = static_cast<uint32_t>(r.next());
    }
    uint32_t payload = static_cast<uint32_t>(r.below(r.below(4) == 0 ? 1100 : 1025));
    if (r.below(6) == 0) payload = static_cast<uint32_t>(r.below(kRecvBytes + 64));
    // A FIRST or MIDDLE carries a whole MTU (else it is refused before any placement).
    if (!(nic::op_info(op).flags & nic::kOpLast) && r.below(4) != 0) payload = 1024;
    uint64_t va = mr_.addr + r.below(kRegionBytes);
    if (r.below(5) == 0) va = mr_.addr + kRegionBytes - r.below(64);
    const uint32_t rkey = r.below(6) == 0 ? mr_.rkey ^ 0x100 : mr_.rkey;
    auto f = request(op, psn & 0xFFFFFF, va, rkey, static_cast<uint32_t>(r.below(3000)), payload, false);
    auto* bth = reinterpret_cast<Bth*>(f.data() + kBthOff);
    bth->set_dqpn(dqpn);
    if (!uc) {  // DETH: the Q_Key (usually ours) and the source QP
      uint8_t* deth = f.data() + kBthOff + sizeof(Bth);
      detail::put32(deth, r.below(5) == 0 ? static_cast<uint32_t>(r.next()) : kQkey);
      detail::put32(deth + 4, static_cast<uint32_t>(r.below(0x1000000)));
    }
    nic::seal_frame(f.data());
    switch (r.below(6)) {
      case 0: f.resize(r.below(f.size() + 1)); break;  // truncated
      case 1: f[r.below(f.size())] ^= 0x04; break;     // bad ICRC (or header)
      default: break;
    }
    return f;
  }

  Topology topo_;
  std::vector<uint8_t> mem_;
  std::vector<uint8_t> rq_mem_;
  nic::MrInfo rq_mr_;
  uint32_t uc_qpn_ = 0, ud_qpn_ = 0;
  uint64_t unreliable_receives_ = 0;
  std::string bad_completion_;
  std::unique_ptr<nic::RoceHost> host_;
  uint32_t qpn_ = 0, cq_ = 0, peer_ip_ = 0;
  nic::MrInfo mr_;
  nic::FrameTemplate tmpl_;
};

}  // namespace rocemu::test
