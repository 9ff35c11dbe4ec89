// requester_fuzz_harness.h — the requester under hostile responses, shared by the seeded
// gtest corpus (unit suite) and the libFuzzer target (tests/fuzz/fuzz_nic_requester.cc).
// rx_fuzz_harness.h attacks a responder; here the victim is an RC requester with work
// outstanding (SENDs, WRITEs, READs scattered over two SGEs, both atomics) and the input
// plays its peer: ACKs and NAKs of every syndrome, READ responses and atomic ACKs at PSNs
// in and around the outstanding window, with any MSN, length and payload, garbled or
// truncated, interleaved with time passing (retransmissions). Each input starts from a
// fresh QP, so a crash reproduces from that input alone.
//
// Invariants, checked after every frame: no crash; RoceHost::check_invariants() holds (a QP
// with work outstanding has a packet ready, an RNR wait or its timer armed); no byte outside
// a READ's SGEs or an atomic's 8-byte SGE is written (guards between them, inside the
// registered region), and no source byte changes; the victim's output drains (bounded).
// Then, with the peer silent, every work request completes exactly once, in post order:
// successes, then errors only (the first error flushes the rest), a successful READ or
// atomic with its full length. Nothing hangs: the silent peer drives the QP to a
// retry-exceeded error within a bounded number of timer calls.
#pragma once

#include <rte_mbuf.h>

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

class RequesterFuzzHarness {
 public:
  static constexpr uint32_t kMtu = 256;
  static constexpr uint8_t kGuard = 0xA5;
  static constexpr uint32_t kGuardBytes = 256;
  // Inside the registered region, each with a guard after it: the source of SENDs and
  // WRITEs, four READ destinations and two atomic results.
  static constexpr uint32_t kSrcBytes = 1024;
  static constexpr uint32_t kReadArea = 1024;
  static constexpr uint32_t kNumReadAreas = 4;
  static constexpr uint32_t kAtomicArea = 64;
  static constexpr uint32_t kNumAtomicAreas = 2;
  static constexpr uint64_t kRemoteVa = 0x10000;
  static constexpr uint32_t kRemoteRkey = 0x4242;

  struct Work {  // one posted work request and the bytes it may write
    ibv_wr_opcode opcode;
    uint32_t length = 0;
    struct Span {
      uint32_t off, len;  // within mem_
    };
    std::vector<Span> writes;  // READ SGEs or the atomic's 8 bytes
  };
  struct Request {  // a message the victim sent (its first packet)
    uint32_t psn;
    uint8_t opcode;
    uint32_t dma_len;  // READ
  };

  RequesterFuzzHarness() {
    topo_.add_node("victim", NodeKind::kHost);
    topo_.add_node("peer", NodeKind::kHost);
    topo_.add_link(0, 1, 25 * kBpsPerGbps, 1000);
    nic::NicParams p;
    p.mtu_bytes = kMtu;
    host_ = std::make_unique<nic::RoceHost>(p, topo_, 0, test_mempool(), 7);
    pd_ = host_->alloc_pd();
    cq_ = host_->create_cq(64);
    layout();
    mem_.assign(mem_bytes_, kGuard);
    mr_ = host_->reg_mr(pd_, mem_.data() + kGuardBytes, mem_bytes_ - 2 * kGuardBytes,
                        IBV_ACCESS_LOCAL_WRITE);
    nic::FrameAddress fa;
    fa.src_mac = topo_.node(1).ports[0].mac;
    fa.dst_mac = topo_.node(0).ports[0].mac;
    fa.src_ip = topo_.node(1).ipv4;
    fa.dst_ip = topo_.node(0).ipv4;
    fa.udp_sport = 0xC321;
    fa_ = fa;
  }

  nic::RoceHost& host() { return *host_; }
  uint32_t qpn() const { return qpn_; }
  const std::vector<Work>& work() const { return work_; }
  const std::vector<Request>& requests() const { return requests_; }
  /// Completions of the last finish(), in the order polled.
  const std::vector<ibv_wc>& completions() const { return wcs_; }
  /// Request packets the victim has sent (first transmissions and resends).
  uint64_t request_packets() const { return request_packets_; }
  /// The bytes work request `i` may write (its READ SGEs or atomic result), in SGE order.
  std::vector<uint8_t> written(size_t i) const {
    std::vector<uint8_t> out;
    for (const auto& s : work_.at(i).writes) out.insert(out.end(), mem_.begin() + s.off, mem_.begin() + s.off + s.len);
    return out;
  }

  /// Variants of start(): DCQCN's byte window (one packet in flight at a time), a paced
  /// QP (the pacing timer beside the retransmit and RNR timers).
  static constexpr uint8_t kWindow = 1, kPaced = 2;

  /// A fresh QP (the previous one destroyed), starting at `sq_psn`, with the standard batch
  /// of work posted and its first packets drained; `variant` ORs kWindow and kPaced.
  /// Returns "" or what went wrong.
  std::string start(uint32_t sq_psn, TimeNs now, uint8_t variant = 0) {
    if (qpn_ != 0) host_->destroy_qp(qpn_);
    std::memset(mem_.data(), kGuard, mem_.size());
    for (uint32_t i = 0; i < kSrcBytes; ++i) mem_[src_off_ + i] = static_cast<uint8_t>(i * 13 + 1);
    nic::QpInitAttr a;
    a.pd = pd_;
    a.send_cq = a.recv_cq = cq_;
    a.max_send_wr = a.max_recv_wr = 16;
    a.max_send_sge = 2;
    qpn_ = host_->create_qp(a);
    if (qpn_ == 0) return "create_qp failed";
    nic::ConnectOptions opt;
    opt.max_rd_atomic = 2;  // READs and atomics wait for each other's responses
    opt.timeout = 1;        // 8 us local ACK timeout: a silent peer ends the QP quickly
    opt.retry_cnt = 2;
    opt.rnr_retry = 1;
    opt.sq_psn = sq_psn & 0xFFFFFF;
    if (nic::connect_rc(*host_, qpn_, nic::QpInfo{kPeerQpn, 0x100, topo_.node(1).ipv4}, opt) != 0)
      return "connect_rc failed";
    host_->set_window_bytes(variant & kWindow ? kMtu : 0);
    host_->set_qp_rate_bps(qpn_, variant & kPaced ? kBpsPerGbps : 0);
    fa_.dqpn = qpn_;
    tmpl_ = nic::make_template(fa_);
    requests_.clear();
    wcs_.clear();
    work_.clear();
    sq_psn_ = sq_psn & 0xFFFFFF;
    last_psn_ = sq_psn_;
    ack_req_psn_ = kNone;
    if (!post_batch()) return "post_send refused work request " + std::to_string(work_.size());
    note_fixed_ranges();
    return drain(now);
  }

  /// The victim's output, drained (bounded): each request's first packet is recorded.
  std::string drain(TimeNs now) {
    if (host_->next_deadline() <= now) host_->on_timer(now);
    for (int n = 0;; ++n) {
      if (n == kMaxFramesPerDrain) return "the victim sent more than " + std::to_string(n) + " frames at once";
      rte_mbuf* m = host_->tx(0, now);
      if (!m) break;
      std::vector<uint8_t> f(rte_pktmbuf_mtod(m, const uint8_t*),
                             rte_pktmbuf_mtod(m, const uint8_t*) + rte_pktmbuf_data_len(m));
      rte_pktmbuf_free(m);
      nic::RocePacket p;
      if (nic::parse_roce(f.data(), static_cast<uint32_t>(f.size()), p) != nic::RxDrop::kNone) continue;
      if (!(p.op_flags & nic::kOpRequest)) continue;
      ++request_packets_;
      // Each message once (a retransmission is not recorded again), in PSN order from the
      // QP's first; last_psn_ is the highest PSN sent.
      if (dist(p.psn) >= dist(last_psn_)) last_psn_ = p.psn;
      if (p.ack_req && (p.op_flags & (nic::kOpSend | nic::kOpWrite)) &&
          (ack_req_psn_ == kNone || dist(p.psn) > dist(ack_req_psn_)))
        ack_req_psn_ = p.psn;
      if (!(p.op_flags & nic::kOpFirst)) continue;
      auto it = requests_.begin();
      while (it != requests_.end() && dist(it->psn) < dist(p.psn)) ++it;
      if (it == requests_.end() || it->psn != p.psn) requests_.insert(it, Request{p.psn, p.opcode, p.dma_len});
    }
    return "";
  }

  /// Hands one frame to the victim at `now` and checks the invariants that hold after every
  /// frame. Returns "" or the violation.
  std::string deliver(const uint8_t* data, uint32_t len, TimeNs now) {
    rte_mbuf* m = rte_pktmbuf_alloc(test_mempool());
    if (!m) return "mempool empty";
    const uint32_t room = rte_pktmbuf_tailroom(m);
    const uint32_t n = len < room ? len : room;
    auto* dst = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(n)));
    if (n && dst) std::memcpy(dst, data, n);
    host_->rx(0, &m, 1, now);
    std::string e = drain(now);
    if (e.empty()) e = host_->check_invariants();
    if (e.empty()) e = memory_intact();
    return e;
  }

  /// Lets `ns` pass with the peer silent (timers fire, retransmissions drain).
  std::string tick(TimeNs& now, TimeNs ns) {
    now += ns;
    std::string e = drain(now);
    if (e.empty()) e = host_->check_invariants();
    return e;
  }

  /// With the peer silent, runs the victim's timers until every work request completed, and
  /// checks the completions. Returns "" or what went wrong.
  std::string finish(TimeNs& now) {
    for (int step = 0;; ++step) {
      poll();
      if (wcs_.size() >= work_.size()) break;
      if (step == kMaxFinishSteps)
        return std::to_string(work_.size() - wcs_.size()) + " of " + std::to_string(work_.size()) +
               " work requests not completed after " + std::to_string(step) + " timer calls";
      const TimeNs d = host_->next_deadline();
      if (d == kNever)
        return "QP in state " + std::to_string(host_->qp_state(qpn_)) + " with " +
               std::to_string(work_.size() - wcs_.size()) + " of " + std::to_string(work_.size()) +
               " work requests not completed, and no deadline";
      now = d > now ? d : now;
      if (std::string e = drain(now); !e.empty()) return e;
      if (std::string e = host_->check_invariants(); !e.empty()) return e;
    }
    if (std::string e = memory_intact(); !e.empty()) return e;
    ibv_wc extra[4];
    if (host_->poll_cq(cq_, 4, extra) != 0) return "more completions than work requests";
    bool failed = false;
    for (size_t i = 0; i < wcs_.size(); ++i) {
      const ibv_wc& wc = wcs_[i];
      const Work& w = work_[i];
      if (wc.wr_id != i) return "completion " + std::to_string(i) + " has wr_id " + std::to_string(wc.wr_id);
      if (wc.qp_num != qpn_) return "completion for another QP";
      if (wc.status == IBV_WC_SUCCESS) {
        if (failed) return "work request " + std::to_string(i) + " succeeded after an earlier one failed";
        const bool rd_atomic = w.opcode == IBV_WR_RDMA_READ || w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ||
                               w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP;
        if (rd_atomic && wc.byte_len != w.length)
          return "work request " + std::to_string(i) + " completed with " + std::to_string(wc.byte_len) +
                 " of " + std::to_string(w.length) + " bytes";
      } else {
        failed = true;
      }
    }
    return "";
  }

  /// One response from `r`, aimed at the outstanding window: a well-formed answer to the
  /// oldest request, or an ACK/NAK of any syndrome, a READ response or an atomic ACK at a
  /// PSN in or near the window, then possibly garbled, truncated or mis-addressed.
  std::vector<uint8_t> response(Rng& r) const {
    using namespace wire;
    const Request* q = requests_.empty() ? nullptr : &requests_[r.below(requests_.size())];
    uint32_t psn = q ? q->psn : sq_psn_;
    switch (r.below(6)) {
      case 0: psn = static_cast<uint32_t>(r.next()); break;                     // anywhere
      case 1: psn = psn - 1 - static_cast<uint32_t>(r.below(4)); break;         // behind
      case 2: psn = psn + static_cast<uint32_t>(r.below(8)); break;             // inside a message
      case 3: psn = last_psn_ - static_cast<uint32_t>(r.below(3)); break;       // the newest sent
      default: break;
    }
    psn &= 0xFFFFFF;
    static constexpr uint8_t kSyndromes[] = {0x00, 0x1f, 0x05, 0x20, 0x21, 0x3f, 0x60, 0x61,
                                             0x62, 0x63, 0x64, 0x65, 0x40, 0x80, 0xe0, 0x9f};
    uint8_t syndrome = r.below(2) ? kSyndromes[r.below(2)] : kSyndromes[r.below(sizeof kSyndromes)];
    const uint32_t msn = r.below(3) ? static_cast<uint32_t>(r.below(12)) : static_cast<uint32_t>(r.next());
    uint8_t op;
    uint32_t payload = 0;
    switch (r.below(8)) {
      case 0: case 1: op = kRcAcknowledge; break;
      case 2: op = kRcReadResponseFirst; payload = kMtu; break;
      case 3: op = kRcReadResponseMiddle; payload = kMtu; break;
      case 4: op = kRcReadResponseLast; payload = 1 + static_cast<uint32_t>(r.below(kMtu)); break;
      case 5: op = kRcReadResponseOnly; payload = static_cast<uint32_t>(r.below(kMtu + 1)); break;
      case 6: op = kRcAtomicAcknowledge; break;
      default: {  // anything at all, requests to the victim's responder included
        static constexpr uint8_t kOthers[] = {kRcSendOnly, kRcWriteOnly, kRcReadRequest, kRcFetchAdd,
                                              kRcCompareSwap, kCnp, 0x13, 0x1f};
        op = kOthers[r.below(sizeof kOthers)];
        break;
      }
    }
    if (op == kRcAcknowledge && r.below(4) == 0) {
      // An RNR NAK or a sequence NAK at the newest PSN sent: the NAKs a responder sends most.
      psn = last_psn_;
      syndrome = r.below(2) ? static_cast<uint8_t>(0x20 | r.below(32)) : uint8_t{0x60};
    }
    if (op >= kRcReadResponseFirst && op <= kRcReadResponseOnly && r.below(4) == 0)
      payload = static_cast<uint32_t>(r.below(2 * kMtu + 8));  // a wrong length
    auto f = frame(op, psn, syndrome, msn, payload, r.next());
    switch (r.below(8)) {
      case 0: garble_resealed(f, r); break;  // the garbage reaches the requester
      case 1: f.resize(r.below(f.size() + 1)); break;  // truncated
      case 2: f[r.below(f.size())] ^= 0x10; break;     // bad ICRC (or header)
      default: break;
    }
    return f;
  }

  /// The answer a correct responder gives the oldest message not yet answered in this
  /// sequence (`answered` counts them; message i is work request i): an ACK of a SEND or
  /// WRITE's last packet once it was sent, every response packet of a READ, or an atomic ACK.
  /// Empty when that message has not been sent in full yet.
  std::vector<std::vector<uint8_t>> correct_answer(size_t& answered, uint64_t data) {
    using namespace wire;
    std::vector<std::vector<uint8_t>> out;
    if (answered >= requests_.size() || answered >= work_.size()) return out;
    const Request& q = requests_[answered];
    const uint32_t len = work_[answered].length;
    const uint32_t npkts = len == 0 ? 1 : (len + kMtu - 1) / kMtu;
    const nic::OpInfo& info = nic::op_info(q.opcode);
    if (info.flags & nic::kOpRead) {
      for (uint32_t i = 0; i < npkts; ++i) {
        const uint8_t op = npkts == 1 ? kRcReadResponseOnly
                           : i == 0 ? kRcReadResponseFirst
                           : i + 1 == npkts ? kRcReadResponseLast : kRcReadResponseMiddle;
        const uint32_t n = i + 1 < npkts ? kMtu : len - i * kMtu;
        out.push_back(frame(op, (q.psn + i) & 0xFFFFFF, 0x1f, 1, n, data + i));
      }
    } else if (info.flags & nic::kOpAtomic) {
      out.push_back(frame(kRcAtomicAcknowledge, q.psn, 0x1f, 1, 0, data));
    } else {
      const uint32_t last = (q.psn + npkts - 1) & 0xFFFFFF;
      if (dist(last_psn_) < dist(last)) {
        // Not all sent: a packet that asked for an ACK (the one that filled the window) gets
        // one, as from a responder.
        if (ack_req_psn_ != kNone && dist(ack_req_psn_) >= dist(q.psn)) {
          out.push_back(frame(kRcAcknowledge, ack_req_psn_, 0x1f, 1, 0, data));
          ack_req_psn_ = kNone;
        }
        return out;
      }
      out.push_back(frame(kRcAcknowledge, last, 0x1f, 1, 0, data));
    }
    ++answered;
    return out;
  }

  /// A well-formed frame from the peer to the victim (ICRC sealed); payload bytes from `fill`.
  std::vector<uint8_t> frame(uint8_t opcode, uint32_t psn, uint8_t syndrome, uint32_t msn,
                             uint32_t payload_len, uint64_t fill) const {
    const nic::OpInfo& op = nic::op_info(opcode);
    const uint32_t ext = (op.flags & nic::kOpValid) ? op.ext_bytes : 0;
    std::vector<uint8_t> f(nic::frame_bytes(ext, payload_len));
    const uint32_t at = nic::write_headers(f.data(), tmpl_, opcode, psn & 0xFFFFFF, false, false, ext,
                                           payload_len, 0);
    uint32_t x = at;
    if (op.flags & nic::kOpAeth) {
      auto* a = reinterpret_cast<wire::Aeth*>(f.data() + x);
      a->syndrome = syndrome;
      a->set_msn(msn & 0xFFFFFF);
      x += sizeof(wire::Aeth);
    }
    if (op.flags & nic::kOpAtomicAckEth) {
      reinterpret_cast<wire::AtomicAckEth*>(f.data() + x)->set_orig(fill);
      x += sizeof(wire::AtomicAckEth);
    }
    if (op.flags & nic::kOpReth) {
      auto* reth = reinterpret_cast<wire::Reth*>(f.data() + x);
      reth->set_va(mr_.addr);
      reth->set_rkey(mr_.rkey);
      reth->set_dma_len(payload_len);
    }
    for (uint32_t i = 0; i < payload_len; ++i) f[at + ext + i] = static_cast<uint8_t>(fill >> (i % 8 * 8));
    nic::seal_frame(f.data());
    return f;
  }

 private:
  static constexpr uint32_t kPeerQpn = 0x99;
  static constexpr uint32_t kNone = 0xFFFFFFFF;

  /// PSNs in sending order: how far `psn` is from the QP's first.
  uint32_t dist(uint32_t psn) const { return (psn - sq_psn_) & 0xFFFFFF; }
  static constexpr int kMaxFramesPerDrain = 4096;
  static constexpr int kMaxFinishSteps = 10000;

  void layout() {
    uint32_t at = kGuardBytes;
    src_off_ = at;
    at += kSrcBytes + kGuardBytes;
    for (uint32_t i = 0; i < kNumReadAreas; ++i) {
      read_off_[i] = at;
      at += kReadArea + kGuardBytes;
    }
    for (uint32_t i = 0; i < kNumAtomicAreas; ++i) {
      atomic_off_[i] = at;
      at += kAtomicArea;
    }
    mem_bytes_ = at + kGuardBytes;
  }

  uint64_t addr(uint32_t off) const { return mr_.addr + (off - kGuardBytes); }

  bool post(Work w, const std::vector<ibv_sge>& sges, uint64_t remote, uint64_t cmp_add = 0,
            uint64_t swap = 0) {
    ibv_send_wr wr{};
    wr.wr_id = work_.size();
    wr.opcode = w.opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = const_cast<ibv_sge*>(sges.data());
    wr.num_sge = static_cast<int>(sges.size());
    if (w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD || w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
      wr.wr.atomic.remote_addr = remote;
      wr.wr.atomic.rkey = kRemoteRkey;
      wr.wr.atomic.compare_add = cmp_add;
      wr.wr.atomic.swap = swap;
    } else {
      wr.wr.rdma.remote_addr = remote;
      wr.wr.rdma.rkey = kRemoteRkey;
    }
    if (w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) wr.imm_data = 0x01020304;
    const ibv_send_wr* bad = nullptr;
    if (host_->post_send(qpn_, &wr, &bad) != 0) return false;
    work_.push_back(std::move(w));
    return true;
  }

  bool post_batch() {
    const auto src = [&](uint32_t off, uint32_t len) { return ibv_sge{addr(src_off_ + off), len, mr_.lkey}; };
    const auto dst = [&](uint32_t off, uint32_t len) { return ibv_sge{addr(off), len, mr_.lkey}; };
    const uint32_t r0 = read_off_[0] + 24, r1 = read_off_[1], r2 = read_off_[2] + 1, r3 = read_off_[3] + 512;
    const uint32_t a0 = atomic_off_[0] + 8, a1 = atomic_off_[1] + 16;
    return post(Work{IBV_WR_SEND, 300, {}}, {src(0, 300)}, 0) &&
           post(Work{IBV_WR_RDMA_WRITE, 600, {}}, {src(100, 600)}, kRemoteVa) &&
           // A READ of 700 bytes into two SGEs with a guard between them.
           post(Work{IBV_WR_RDMA_READ, 700, {{r0, 300}, {r1, 400}}}, {dst(r0, 300), dst(r1, 400)},
                kRemoteVa + 4096) &&
           post(Work{IBV_WR_ATOMIC_FETCH_AND_ADD, 8, {{a0, 8}}}, {dst(a0, 8)}, kRemoteVa + 8192, 5) &&
           post(Work{IBV_WR_RDMA_READ, 100, {{r2, 100}}}, {dst(r2, 100)}, kRemoteVa + 12288) &&
           post(Work{IBV_WR_ATOMIC_CMP_AND_SWP, 8, {{a1, 8}}}, {dst(a1, 8)}, kRemoteVa + 8200, 1, 2) &&
           post(Work{IBV_WR_SEND, 0, {}}, {}, 0) &&
           post(Work{IBV_WR_RDMA_WRITE_WITH_IMM, 256, {}}, {src(512, 256)}, kRemoteVa + 64) &&
           post(Work{IBV_WR_RDMA_READ, 512, {{r3, 512}}}, {dst(r3, 512)}, kRemoteVa + 16384);
  }

  void poll() {
    ibv_wc wc[16];
    for (int n; (n = host_->poll_cq(cq_, 16, wc)) > 0;) wcs_.insert(wcs_.end(), wc, wc + n);
  }

  /// The memory as it must stay outside the work requests' own writes, as ranges of it.
  void note_fixed_ranges() {
    expected_ = mem_;
    std::vector<uint8_t> may(mem_.size(), 0);
    for (const Work& w : work_)
      for (const auto& s : w.writes) std::memset(may.data() + s.off, 1, s.len);
    fixed_.clear();
    for (size_t i = 0; i < may.size();) {
      size_t j = i;
      while (j < may.size() && may[j] == may[i]) ++j;
      if (!may[i]) fixed_.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(j - i)});
      i = j;
    }
  }

  /// "" when no byte outside a work request's own writes changed (memcmp per range: the
  /// fuzz build's per-comparison hooks would make a byte loop the target's main cost).
  std::string memory_intact() const {
    for (const auto& r : fixed_) {
      if (std::memcmp(mem_.data() + r.off, expected_.data() + r.off, r.len) == 0) continue;
      uint32_t i = r.off;
      while (mem_[i] == expected_[i]) ++i;
      return "byte " + std::to_string(i) + " of the harness's memory was written";
    }
    return "";
  }

  Topology topo_;
  std::vector<uint8_t> mem_, expected_;
  std::vector<Work::Span> fixed_;
  uint32_t mem_bytes_ = 0, src_off_ = 0, read_off_[kNumReadAreas]{}, atomic_off_[kNumAtomicAreas]{};
  std::unique_ptr<nic::RoceHost> host_;
  uint32_t pd_ = 0, cq_ = 0, qpn_ = 0, sq_psn_ = 0, last_psn_ = 0;
  uint32_t ack_req_psn_ = kNone;  // the newest SEND/WRITE packet that asked for an ACK
  uint64_t request_packets_ = 0;
  nic::MrInfo mr_;
  nic::FrameAddress fa_;
  nic::FrameTemplate tmpl_;
  std::vector<Work> work_;
  std::vector<Request> requests_;
  std::vector<ibv_wc> wcs_;
};

}  // namespace rocemu::test
