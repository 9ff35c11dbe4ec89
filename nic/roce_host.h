// roce_host.h — a RoCEv2 endpoint as a rocemu::Node: one port, RC queue pairs, a verbs-like
// API on rdma-core's own types.
//
// Roles split as Linux rxe splits them (drivers/infiniband/sw/rxe), one file each:
// recv_checks.cc (validation of every received packet, rxe_recv.c), requester.cc
// (segmentation, PSNs, go-back-N, rxe_req.c), completer.cc (ACK/NAK/read responses, retry
// and timers, rxe_comp.c), responder.cc (execution, ACK coalescing with MSN, NAKs, rxe_resp.c);
// host_io.cc is the Node side (rx, tx scheduling, PFC, timers) and verbs.cc the verbs API.
// Spec: IBTA Vol. 1 rel. 1.4 ch. 9.7 (RC), 10 (verbs), annex A17 (RoCEv2); 802.1Qbb (PFC).
//
// Threading: every method is called from the one thread that runs the node (the engine's
// lcore, or the test). Verbs calls may interleave freely with rx/tx/on_timer.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/min_tree.h"
#include "common/node.h"
#include "common/pfc_state.h"
#include "common/rng.h"
#include "common/topology.h"
#include "nic/cc_hooks.h"
#include "nic/nic_params.h"
#include "nic/psn.h"
#include "nic/qp.h"

struct rte_mempool;

namespace rocemu {
class RateLimitedLog;  // common/log.h
}

namespace rocemu::nic {

/// What one side must tell the other to connect an RC QP (what rc_pingpong exchanges).
struct QpInfo {
  uint32_t qpn = 0;
  uint32_t psn = 0;   // the QP's initial send PSN
  uint32_t ipv4 = 0;  // host order
  Ipv6Addr gid{};     // the peer's GID when not all zero (else ::ffff:ipv4)
};

/// How far the responder of an RC QP got: what it took and what it answered
/// (RoceHost::responder_view). A peer whose requester stops while caught_up() has nothing
/// outstanding: its retransmission timer has nothing to resend, so it stopped on its own.
struct ResponderView {
  uint32_t expected_psn = 0;  // the next PSN it takes
  bool answered_any = false;  // an ACK, READ response or ATOMIC_ACKNOWLEDGE was sent
  uint32_t answered_psn = 0;  // the PSN the last one covered
  bool answer_pending = false;  // an ACK/NAK or a READ/atomic response still to send
  /// Every PSN taken was answered and nothing is left to send.
  bool caught_up() const noexcept {
    return answered_any && !answer_pending && psn_add(answered_psn, 1) == expected_psn;
  }
};

struct QpInitAttr {
  ibv_qp_type qp_type = IBV_QPT_RC;  // IBV_QPT_RC, IBV_QPT_UC or IBV_QPT_UD
  uint32_t pd = 0;
  uint32_t send_cq = 0, recv_cq = 0;
  uint32_t max_send_wr = 128, max_recv_wr = 128;
  int max_send_sge = 1, max_recv_sge = 1;
  int64_t initial_psn = -1;  // -1: random (seeded); else the PSN the QP starts sending with
  /// The General Services Interface QP: a UD QP whose number is 1 (IBTA 3.5.2.2), the
  /// Communication Manager's (cm_agent.h). At most one per host; qp_type must be UD.
  bool gsi = false;
};

/// What a registered memory region gives back.
struct MrInfo {
  uint32_t lkey = 0, rkey = 0;
  uint64_t addr = 0, length = 0;
};

struct NicCounters {
  uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0;
  std::array<uint64_t, kNumRxDrops> drops{};
  uint64_t data_packets_sent = 0, retransmitted_packets = 0, read_responses_sent = 0;
  uint64_t atomics_executed = 0, atomic_acks_sent = 0, atomic_replays = 0;
  uint64_t acks_sent = 0, naks_sent = 0, rnr_naks_sent = 0;
  uint64_t acks_received = 0, naks_received = 0, rnr_naks_received = 0;
  uint64_t timeouts = 0, rewinds = 0;
  uint64_t ce_received = 0, cnps_sent = 0, cnps_received = 0;
  std::array<uint64_t, 8> pfc_frames_received{};
  std::array<uint64_t, 8> pfc_storms{};  // PFC watchdog ([nic.pfc_watchdog]): storms detected
  uint64_t tx_alloc_failures = 0, cq_overflows = 0;
  uint64_t drops_total() const noexcept {
    uint64_t s = 0;
    for (auto d : drops) s += d;
    return s;
  }
};

class RoceHost final : public rocemu::Node {
 public:
  /// Host `node_index` of `topo` (a host with at least one port; port 0 is used). Frames
  /// come from `pool` (one segment must hold MTU + 74 bytes). `seed` seeds initial PSNs.
  /// Throws std::invalid_argument if the node is not a host with a port.
  RoceHost(const NicParams& params, const Topology& topo, uint32_t node_index, rte_mempool* pool,
           uint64_t seed);
  ~RoceHost() override;
  RoceHost(const RoceHost&) = delete;
  RoceHost& operator=(const RoceHost&) = delete;

  // ---- verbs (verbs.cc) ----
  /// A new protection domain id.
  uint32_t alloc_pd();
  /// Registers [addr, addr+length) (owned by the caller, must outlive the host) with
  /// IBV_ACCESS_* `access`. Returns lkey/rkey; lkey == 0 on failure (bad pd or length).
  MrInfo reg_mr(uint32_t pd, void* addr, uint64_t length, int access);
  /// ibv_reg_mr_iova: the region at host address `addr` is named by I/O virtual addresses
  /// [iova, iova+length) in SGEs, work requests and RETHs (MrInfo::addr = iova). Runs that
  /// must be reproducible byte for byte (virtual time) use it so no heap address reaches the
  /// wire. lkey == 0 on failure (bad pd or length, or iova + length overflowing).
  MrInfo reg_mr_iova(uint32_t pd, void* addr, uint64_t length, uint64_t iova, int access);
  /// Invalidates the region of `lkey`; returns 0 or EINVAL.
  int dereg_mr(uint32_t lkey);
  /// A completion queue of `cqe` entries; returns its id.
  uint32_t create_cq(uint32_t cqe);
  /// A new QP (RC, UC or UD) in RESET; returns its QPN, or 0 on failure (bad pd/cq, QP type,
  /// too many QPs, UD on a pool of header-only mbufs: NicParams::elide_payload).
  uint32_t create_qp(const QpInitAttr& attr);
  /// ibv_destroy_qp: the QP goes to RESET (queued work dropped, no completions) and its
  /// number is reused by a later create_qp. Returns 0 or EINVAL (unknown or destroyed).
  int destroy_qp(uint32_t qpn);
  /// QPs created and not destroyed.
  uint32_t live_qps() const noexcept { return live_qps_; }
  /// ibv_modify_qp: RESET->INIT->RTR->RTS, any->ERR/RESET. Honours IBV_QP_STATE,
  /// IBV_QP_ACCESS_FLAGS, IBV_QP_PATH_MTU, IBV_QP_AV (an IPv4-mapped dgid: RoCEv2 over IPv4
  /// from the host's address, whatever sgid_index; any other dgid: RoCEv2 over IPv6 from GID
  /// grh.sgid_index, which must be an IPv6 GID of gid(), with grh.flow_label; EINVAL
  /// otherwise; grh.traffic_class -> DSCP when non-zero), IBV_QP_DEST_QPN, IBV_QP_RQ_PSN,
  /// IBV_QP_SQ_PSN, IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY, IBV_QP_MIN_RNR_TIMER,
  /// IBV_QP_MAX_QP_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC, and for UD IBV_QP_QKEY. RC and UC
  /// need AV, DEST_QPN, RQ_PSN and PATH_MTU for RTR; UD needs none of them (its peers are
  /// named per work request). Every type needs SQ_PSN for RTS. Returns 0 or EINVAL.
  int modify_qp(uint32_t qpn, const ibv_qp_attr& attr, int attr_mask);
  ibv_qp_state qp_state(uint32_t qpn) const noexcept;
  /// The PSN the responder of `qpn` expects next (for tests and tools).
  uint32_t expected_psn(uint32_t qpn) const noexcept;
  /// The responder's progress on `qpn` (all zero for a QP that does not exist).
  ResponderView responder_view(uint32_t qpn) const noexcept;
  /// What the peer needs to connect to `qpn`.
  QpInfo local_info(uint32_t qpn) const noexcept;
  /// ibv_post_send: SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ,
  /// ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD (RC; wr.atomic; SGEs of 8 bytes in total that
  /// receive the original value); UC: the SENDs and WRITEs; UD: the SENDs, at most one MTU,
  /// to wr.ud.ah / remote_qpn / remote_qkey, a Q_Key with bit 31 set meaning the QP's own.
  /// Copies each WR; returns 0, or an errno with *bad_wr set (ENOMEM when the SQ is full,
  /// EINVAL for a bad opcode/lkey/SGE/address handle, a UD payload over the MTU, or a QP not
  /// in RTS).
  int post_send(uint32_t qpn, const ibv_send_wr* wr, const ibv_send_wr** bad_wr) noexcept;
  /// ibv_post_recv: returns 0, or ENOMEM/EINVAL with *bad_wr set.
  int post_recv(uint32_t qpn, const ibv_recv_wr* wr, const ibv_recv_wr** bad_wr) noexcept;
  /// ibv_create_ah for UD work requests: ah_attr.is_global with grh.dgid the IPv4-mapped
  /// destination (the frame goes to the port's neighbour MAC, as every frame of the host),
  /// grh.traffic_class -> DSCP when non-zero. Returns nullptr for a bad pd or a GID that is
  /// not IPv4-mapped. The handle lives until destroy_ah() or the host's end.
  ibv_ah* create_ah(uint32_t pd, const ibv_ah_attr& attr);
  /// ibv_destroy_ah: 0, or EINVAL for a handle this host did not create (or destroyed).
  int destroy_ah(ibv_ah* ah);
  /// ibv_poll_cq: up to `n` completions into wc; returns how many.
  int poll_cq(uint32_t cq, int n, ibv_wc* wc) noexcept;

  // ---- congestion control hooks (cc_hooks.h) ----
  /// Sets the pacing rate of a QP's data (0 = unlimited).
  void set_qp_rate_bps(uint32_t qpn, uint64_t rate_bps) noexcept;
  /// DCQCN's window: at most `bytes` of payload in flight per QP, on every QP of the host
  /// (existing and future; 0 = none). In flight = sent and not yet acknowledged (for a READ:
  /// its response bytes not yet received); a packet may leave while less is in flight.
  void set_window_bytes(uint64_t bytes) noexcept;
  /// Hooks that outlive the host (nullptr to remove).
  void set_congestion_hooks(CongestionHooks* hooks) noexcept { hooks_ = hooks; }

  // ---- Node (host_io.cc) ----
  uint16_t num_ports() const noexcept override { return 1; }
  void rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept override;
  rte_mbuf* tx(uint16_t port, TimeNs now) noexcept override;
  TimeNs next_deadline() const noexcept override;
  void on_timer(TimeNs now) noexcept override;

  const NicCounters& counters() const noexcept { return counters_; }
  /// Completions waiting in all of this host's CQs: a poller with nothing to reap need not
  /// read any CQ (at 1,024 hosts each CQ read is a cache miss).
  uint32_t completions_waiting() const noexcept { return wc_waiting_; }
  /// The transport (transport_name(), e.g. "UD") of the last packet dropped as
  /// kWrongTransport or kUnsupportedTransport; "none" before any.
  const char* last_foreign_transport() const noexcept;
  /// The topology node this host is.
  uint32_t node_index() const noexcept { return node_index_; }
  /// Checks the RC liveness invariants of every QP: sq_psn never behind una_psn, and a QP in
  /// RTS with outstanding send work (and a finite local ACK timeout) either has a packet
  /// to send (perhaps after an RNR wait) or its retransmit timer armed. Returns "" when they hold,
  /// else a description of the first violation (QPN and state). Debug builds also assert
  /// them for every QP an event touched.
  std::string check_invariants() const;
  /// The MAC every frame goes to (the port's neighbour): a host whose peer was unknown when
  /// it was created (a perftest -R server, until the client's REQ) sets it once it knows.
  void set_peer_mac(const std::array<uint8_t, 6>& mac) noexcept { peer_mac_ = mac; }
  uint32_t ipv4() const noexcept { return ipv4_; }
  /// The GID table as Linux rxe builds it for a netdev (rxe's RoCEv2 GIDs): index 0 the
  /// link-local fe80::/64 address of the port's MAC (modified EUI-64), 1 the IPv4-mapped
  /// address, 2, 3, ... the host's configured IPv6 addresses (topology nodes[].ipv6).
  /// False for an index past the end.
  bool gid(uint32_t index, ibv_gid& out) const noexcept;
  uint32_t num_gids() const noexcept { return static_cast<uint32_t>(gids_.size()); }
  /// True if `a` is one of this host's IPv6 GIDs (index 0 or >= 2).
  bool has_ipv6(const Ipv6Addr& a) const noexcept;
  const NicParams& params() const noexcept { return params_; }
  /// The slot (0, 1, ... in creation order, reused after destroy_qp) of QP `qpn`, or -1 if
  /// no QP of this host has that number; and the number of a slot. QPNs are 0x11 + slot, or
  /// with NicParams::random_qpns that XOR a per-host random key (docs/nic.md); the GSI QP's
  /// is 1.
  int32_t qp_slot(uint32_t qpn) const noexcept;
  uint32_t qpn_of_slot(uint32_t slot) const noexcept;
  /// Time until which PFC pauses `priority` (0 if not paused).
  TimeNs paused_until(uint8_t priority) const noexcept {
    return (pause_armed_ >> (priority & 7)) & 1 ? pause_.pause_end(priority & 7) : 0;
  }
  /// Total time PFC has paused `priority` up to `now`.
  uint64_t paused_ns(uint8_t priority, TimeNs now) const noexcept {
    return pause_.paused_ns(priority & 7, now);
  }
  /// The same summed over the priorities.
  uint64_t paused_ns_total(TimeNs now) const noexcept {
    uint64_t s = 0;
    for (int prio = 0; prio < 8; ++prio) s += pause_.paused_ns(prio, now);
    return s;
  }

 private:
  // recv_checks.cc
  void receive(uint8_t* frame, uint32_t len, TimeNs now) noexcept;
  void receive_mac_control(const uint8_t* frame, uint32_t len, TimeNs now) noexcept;
  /// The checks of a parsed, ICRC-checked packet against its destination QP `qp` (the QP of
  /// p.dqpn, nullptr if there is none): the QP, or nullptr once the drop is counted.
  Qp* check_packet(const RocePacket& p, Qp* qp, TimeNs now) noexcept;
  /// Receive's ICRC check for a WRITE MIDDLE/LAST that continues the message in progress
  /// on `qp` (p.dqpn's QP or nullptr; see recv_checks.cc): copies the payload into the MR
  /// while computing the ICRC. kNotPlaced: the packet is not one of those (check the ICRC
  /// as usual).
  enum class Placed : uint8_t { kNotPlaced, kIcrcGood, kIcrcBad };
  Placed place_write_payload(RocePacket& p, const Qp* qp) noexcept;
  // requester.cc
  bool requester_has_work(const Qp& qp) const noexcept;
  uint32_t send_window(const Qp& qp) const noexcept;
  uint64_t inflight_bytes(const Qp& qp) const noexcept;
  bool requester_ready(const Qp& qp, TimeNs now) const noexcept;
  rte_mbuf* requester_next(Qp& qp, TimeNs now) noexcept;
  void rewind_to_una(Qp& qp) noexcept;  // go-back-N: resume_at_una, counted, timer restarts
  void resume_at_una(Qp& qp) noexcept;  // send position := first unacknowledged PSN
  // completer.cc
  void complete_ack(Qp& qp, const RocePacket& p, TimeNs now) noexcept;
  void complete_read_response(Qp& qp, const RocePacket& p, TimeNs now) noexcept;
  void complete_atomic_ack(Qp& qp, const RocePacket& p, TimeNs now) noexcept;
  /// Retires the SENDs and WRITEs a response for `psn` implicitly acknowledges and returns
  /// the send WQE that response must belong to (the oldest READ or atomic outstanding), or
  /// nullptr when none is (counted stale). A response beyond that WQE's next expected PSN
  /// means responses were lost: it rewinds once to the missing PSN and returns nullptr.
  SendWqe* response_target(Qp& qp, uint32_t psn) noexcept;
  bool ack_up_to(Qp& qp, uint32_t psn, TimeNs now) noexcept;
  void on_progress(Qp& qp, TimeNs now) noexcept;
  void check_timeouts(Qp& qp, TimeNs now) noexcept;
  void complete_send_wqe(Qp& qp, SendWqe& w, ibv_wc_status status) noexcept;
  // responder.cc
  void respond(Qp& qp, const RocePacket& p, TimeNs now) noexcept;
  void respond_duplicate(Qp& qp, const RocePacket& p) noexcept;
  bool respond_send(Qp& qp, const RocePacket& p) noexcept;
  bool respond_write(Qp& qp, const RocePacket& p) noexcept;
  bool respond_read(Qp& qp, const RocePacket& p, uint32_t psn) noexcept;
  bool respond_atomic(Qp& qp, const RocePacket& p) noexcept;
  void respond_duplicate_atomic(Qp& qp, const RocePacket& p) noexcept;
  /// Queues `job` (a replayed response) in PSN order among the response jobs; false if the
  /// ring is full. A job for the same PSN still queued is restarted at job.pkts_sent instead.
  bool queue_replay(Qp& qp, const ReadJob& job) noexcept;
  bool read_allowed(const Qp& qp, uint32_t rkey, uint64_t va, uint32_t len) const noexcept;
  /// The host address of `va` in the region of `rkey`, once read_allowed() said yes (nullptr
  /// for a zero-length READ, whose R_Key and VA are not checked).
  const uint8_t* read_source(uint32_t rkey, uint64_t va, uint32_t len) const noexcept;
  void queue_ack(Qp& qp, uint32_t psn) noexcept;
  void queue_nak(Qp& qp, uint8_t syndrome, uint32_t psn) noexcept;
  rte_mbuf* responder_ctl(Qp& qp) noexcept;
  rte_mbuf* responder_read_next(Qp& qp) noexcept;  // next READ response or atomic ACK
  rte_mbuf* responder_atomic_ack(Qp& qp, ReadJob& job) noexcept;
  bool ctl_ready(const Qp& qp) const noexcept;
  // datagram.cc (UD) and uc.cc (UC)
  struct AddressHandle {
    ibv_ah ah{};  // handed out; ah.handle = index in ahs_
    uint32_t pd = 0, dest_ip = 0;
    uint8_t tos = 0;
    bool valid = false;
  };
  const AddressHandle* find_ah(const ibv_ah* ah) const noexcept;
  /// The UC/UD post_send checks of `wr` (already valid for RC) of `total_bytes`, filling
  /// `w`'s UD destination.
  bool unreliable_wr_ok(const Qp& qp, const ibv_send_wr& wr, uint64_t total_bytes,
                        SendWqe& w) const noexcept;
  rte_mbuf* ud_next(Qp& qp) noexcept;
  void ud_receive(Qp& qp, const RocePacket& p) noexcept;
  void uc_respond(Qp& qp, const RocePacket& p) noexcept;
  /// A UC/UD WQE is complete once its last packet left (no ACKs).
  void complete_unacked(Qp& qp) noexcept;
  /// Counts `why` (kUnsupportedTransport or kWrongTransport) and logs it, rate-limited.
  void transport_error(RxDrop why, const RocePacket& p, const Qp* qp, TimeNs now) noexcept;
  // verbs.cc
  void enter_error(Qp& qp, ibv_wc_status head_status) noexcept;
  const MemoryRegion* find_mr(uint32_t key, bool remote) const noexcept;
  Qp* find_qp(uint32_t qpn) noexcept;
  const Qp* find_qp(uint32_t qpn) const noexcept;
  void push_wc(uint32_t cq, const ibv_wc& wc) noexcept;
  /// The addresses of a frame from QP `src_qpn` of this host to `dst_ip` / `dst_qpn`.
  FrameAddress frame_address(uint32_t src_qpn, uint32_t dst_ip, uint32_t dst_qpn,
                             uint8_t tos) const noexcept;
  /// The same for QP `qp`'s path (IPv4 or IPv6) with `tos`.
  FrameAddress frame_address(const Qp& qp, uint8_t tos) const noexcept;
  void rebuild_templates(Qp& qp) noexcept;
  // host_io.cc
  rte_mbuf* alloc_frame(uint32_t bytes, uint8_t*& frame) noexcept;
  /// A frame with `payload` bytes of payload after `ext` bytes of extended headers: all of
  /// it, or with elide_payload only what is written (headers and extended headers) while
  /// its packet length still counts the payload, pad and ICRC (nic_params.h).
  rte_mbuf* alloc_payload_frame(const FrameTemplate& t, uint32_t ext, uint32_t payload,
                                uint8_t*& frame) noexcept;
  void account_tx(rte_mbuf* m) noexcept;
  void track_new_qp();
  /// Marks QP `index` for re-examination after a change: its send candidacy (control and
  /// data) and its deadlines. touch_data(): data candidacy and deadlines only, for a change
  /// that cannot make control work ready (see ctl_ready()).
  void touch(uint32_t index) noexcept;
  void touch_data(uint32_t index) noexcept;
  bool data_work(const Qp& qp) const noexcept;
  const char* invariant_violation(const Qp& qp) const noexcept;
  TimeNs qp_deadline(const Qp& qp) const noexcept;
  /// Brings qp_deadlines_ and qp_timers_ up to date for the touched QPs (all_dirty_: all).
  void flush_deadlines() const noexcept;
  void watch_pfc(TimeNs now) noexcept;

  NicParams params_;
  rte_mempool* pool_;
  Rng rng_;
  uint32_t node_index_;
  uint32_t ipv4_;
  std::array<uint8_t, 6> mac_{}, peer_mac_{};
  std::vector<Ipv6Addr> gids_;  // gid(): [1] is IPv4-mapped
  uint64_t link_rate_bps_ = 0;
  bool full_frames_ = true;  // the pool's mbufs hold an MTU frame (else only elided ones)
  CongestionHooks* hooks_ = nullptr;
  uint64_t window_bytes_ = 0;
  std::vector<uint32_t> free_qps_;  // indices of destroyed QPs, a min-heap (create_qp takes the lowest)
  int32_t gsi_slot_ = -1;           // the slot of QP1 (QpInitAttr::gsi), -1 if none
  uint32_t live_qps_ = 0;
  uint32_t wc_waiting_ = 0;  // completions in all CQs (beside the counters every packet updates)
  NicCounters counters_;
  uint16_t ip_id_ = 0;
  uint32_t rr_next_ = 0;  // round-robin start among QPs for data
  PfcPauseState pause_;   // PFC received on the port, and the NIC's PFC watchdog
  uint8_t pause_armed_ = 0;  // priorities whose pause end is still to be a deadline
  uint32_t qpn_mask_ = 0;     // QPN = (0x11 + slot) ^ qpn_mask_ (0 unless random_qpns)
  TimeNs alloc_retry_ns_ = kNever;

  std::vector<std::unique_ptr<Qp>> qps_;  // index = qp_slot(qpn)
  // Work tracking, so that tx(), next_deadline() and on_timer() do not scan every QP. Every
  // change of a QP goes through touch(index) (find_qp, tx, on_timer), which marks it a
  // candidate for both transmit loops and queues its deadlines for recomputation (a request
  // sent, which cannot make control work ready, marks data only: touch_data). The
  // candidate bit sets (one bit per QP index) are supersets of the QPs with control work or
  // data work: tx() clears the bit of a QP it finds without (no passage of time alone brings
  // it back). on_timer() visits the QPs whose earliest timer (retransmit, RNR hold, pacer
  // release) has come, through qp_timers_.
  std::vector<uint64_t> ctl_candidates_, data_candidates_;
  mutable MinTree qp_deadlines_;             // qp_deadline() per QP index, current after flush
  mutable MinTree qp_timers_;                // qp_timer() per QP index, current after flush
  mutable std::vector<uint32_t> dirty_qps_;  // indices whose qp_deadlines_ entry is stale
  mutable std::vector<uint8_t> dirty_;       // per index: queued in dirty_qps_
  mutable bool all_dirty_ = false;           // every entry stale (a PFC pause changed)
  std::vector<MemoryRegion> mrs_;            // index = key >> 8
  std::vector<std::unique_ptr<AddressHandle>> ahs_;  // stable addresses: ibv_ah* handed out
  std::unique_ptr<RateLimitedLog> transport_log_;    // transport_error()
  int16_t last_foreign_opcode_ = -1;                 // transport_error(): -1 before any
  std::vector<CompletionQueue> cqs_;
  uint32_t num_pds_ = 0;
};

/// Name of a work completion status, as ibv_wc_status_str prints it (without linking
/// libibverbs).
const char* wc_status_name(int status) noexcept;

/// The NIC's PFC and buffer counters as every tool prints them: "pfc frames received N
/// (prio 3: N ...), paused P ms, watchdog storms S, mbuf allocation failures A" (`paused_ns`
/// from RoceHost::paused_ns summed over priorities).
std::string pfc_and_pool_text(const NicCounters& c, uint64_t paused_ns);

/// IPv4-mapped GID (::ffff:a.b.c.d) of a host-order IPv4 address, as rxe uses for RoCEv2.
ibv_gid ipv4_mapped_gid(uint32_t ipv4) noexcept;
/// An IPv6 address as a GID and back.
ibv_gid gid_of(const Ipv6Addr& a) noexcept;
Ipv6Addr ipv6_of(const ibv_gid& g) noexcept;

/// Options of connect_rc(); defaults from the host's NicParams when 0.
struct ConnectOptions {
  ibv_mtu path_mtu = static_cast<ibv_mtu>(0);  // 0: the host's mtu_bytes
  int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  int timeout = -1, retry_cnt = -1, rnr_retry = -1;  // -1: the host's defaults
  uint8_t max_rd_atomic = 16;
  int max_dest_rd_atomic = -1;  // -1: max_rd_atomic (the RDMA READs/atomics the peer may send)
  uint8_t traffic_class = 0;  // 0: the host's data DSCP
  int64_t sq_psn = -1;        // -1: the QP's initial PSN; else the PSN it starts sending with
  uint8_t sgid_index = 1;     // the local GID (an IPv6 one for an IPv6 peer GID)
};

/// Moves `qpn` of `host` RESET->INIT->RTR->RTS towards `peer` without any handshake (a
/// single-process engine knows both sides). Returns 0 or the failing modify_qp's errno.
int connect_rc(RoceHost& host, uint32_t qpn, const QpInfo& peer, const ConnectOptions& opt = {});

/// IB MTU enum of `bytes` (256..4096).
ibv_mtu mtu_enum(uint32_t bytes) noexcept;
/// Bytes of an IB MTU enum.
uint32_t mtu_bytes(ibv_mtu mtu) noexcept;

}  // namespace rocemu::nic
