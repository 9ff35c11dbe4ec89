// cm_conn.h — the InfiniBand CM's connection state machine (IBTA Vol. 1 12.9, the states of
// figure 136 that rdma_cm's RC connections use), as Linux's ib_cm (drivers/infiniband/core/
// cm.c) runs it for rdma_cm over RoCE: REQ -> REP -> RTU to connect, REJ to refuse, MRA to
// ask for more time, DREQ -> DREP to disconnect, from either side.
//
// Pure code: MADs in (on_mad, with the sender's IPv4 address), MADs out (pop_send) and
// connection events (pop_event), timers driven by `now`. It owns no QP: the caller (cm_agent.h)
// creates and moves the RC QP and hands its QPN and PSN in.
//
// Resends (IBTA 12.7.27, 12.7.32; cm.c): a REQ is sent again after the peer's CM response
// time (4.096 us x 2^remote_cm_response_timeout) plus twice the packet life time until a
// REP, REJ or MRA arrives, at most max_cm_retries times, then the connection times out (a
// REJ "timeout" goes to the peer). A REP likewise until the RTU (or the first DREQ); a DREQ
// until the DREP. An MRA extends the wait by its service timeout. Duplicates are answered
// idempotently: a REQ for a connection whose REP is out resends the REP, a REP after the
// RTU resends the RTU, a DREQ in time-wait resends the DREP; a DREQ for no connection gets a
// DREP (as cm.c). A REQ for a port nobody listens on gets a REJ "invalid service ID".
// Anything else unexpected or malformed is counted and dropped.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "common/time_ns.h"
#include "nic/cm_mad.h"

namespace rocemu::nic::cm {

struct CmConfig {
  uint32_t ipv4 = 0;                 // ours, host order
  uint64_t ca_guid = 0;              // the Local CA GUID of our REQs and REPs
  uint32_t tid_hi = 1;               // the high 32 bits of our transaction IDs (the MAD agent's)
  uint32_t first_comm_id = 0x1000;   // our first local communication ID (then +1 per connection)
                                     // (the tools seed it: a restarted peer sees new IDs)
  uint8_t cm_response_timeout = 20;  // what we advertise (2^20 x 4.096 us = 4.3 s, as cma.c)
  uint8_t max_cm_retries = 15;       // as cma.c
  uint8_t packet_life_time = 18;     // RoCE: cma.c's CMA_IBOE_PACKET_LIFETIME
  TimeNs timewait_ns = kNsPerSec;    // how long a closed connection still answers duplicates
};

/// What our side puts in a REQ (active) or REP (passive) about its RC QP.
/// The starting PSN, as Linux's cm.c reads it: the PSN the sender's receive queue expects
/// first. The active side sends with the REP's (cm_rep_handler: sq_psn = the REP's), the
/// passive side receives with it (ib_send_cm_rep: rq_psn = its REP's), and the REQ's is the
/// active side's receive PSN (the passive side's first send PSN).
struct CmLocalQp {
  uint32_t qpn = 0;
  uint32_t psn = 0;  // our receive queue's first PSN: the peer starts sending with it
  uint8_t responder_resources = 1;  // RDMA READs/atomics we accept at once (rping: 1)
  uint8_t initiator_depth = 1;      // ... we issue at once
  uint8_t retry_count = 7, rnr_retry_count = 7;
  uint8_t path_mtu = 3;  // IBV_MTU_1024
  uint8_t traffic_class = 0;
  uint8_t local_ack_timeout = 19;  // cma.c for RoCE: packet life time 18 + 1
};

enum class CmState : uint8_t {
  kIdle,
  kReqSent,  // active: REQ out, waiting for REP/REJ/MRA
  kReqRcvd,  // passive: REQ in, the application has not answered yet
  kRepSent,  // passive: REP out, waiting for RTU
  kEstablished,
  kDreqSent,  // DREQ out, waiting for DREP
  kTimeWait,  // disconnected; still answers duplicates until timewait_ns
  kClosed,    // rejected or timed out; forgotten after timewait_ns
};
const char* cm_state_name(CmState s) noexcept;

enum class CmEventKind : uint8_t {
  kConnectRequest,  // passive: a REQ for a listened port; answer with accept() or reject()
  kEstablished,     // active: REP received (RTU sent); passive: RTU received
  kRejected,        // a REJ for our REQ or REP (reason in reject_reason)
  kTimedOut,        // no answer after the retries
  kDisconnected,    // DREQ received (DREP sent), or DREP received, or the DREQ timed out
};
const char* cm_event_name(CmEventKind k) noexcept;

struct CmEvent {
  CmEventKind kind = CmEventKind::kConnectRequest;
  uint32_t conn = 0;  // our local communication ID
  uint32_t peer_ipv4 = 0;
  uint16_t peer_port = 0, local_port = 0;
  // The peer's QP (REQ or REP): QPN, starting PSN (the PSN we send with first, CmLocalQp),
  // what it accepts/issues.
  uint32_t remote_qpn = 0, remote_psn = 0;
  uint8_t remote_responder_resources = 0, remote_initiator_depth = 0;
  uint8_t path_mtu = 0, traffic_class = 0, retry_count = 0, rnr_retry_count = 0;
  uint8_t local_ack_timeout = 0;
  uint16_t reject_reason = 0;
  std::vector<uint8_t> private_data;  // the application's (REQ: after the rdma_cm header)
};

/// A MAD to send from QP1 to the peer's QP1 (Q_Key 0x80010000).
struct CmSend {
  uint32_t dst_ipv4 = 0;
  uint8_t traffic_class = 0;
  std::array<uint8_t, kMadBytes> mad{};
};

enum class CmRx : uint8_t {
  kAccepted,    // moved a connection on
  kDuplicate,   // a resent message, answered again (or ignored) idempotently
  kMalformed,   // not a CM MAD rocemu handles (see last_error())
  kUnexpected,  // no connection it belongs to, or not legal in its state
  kNoListener,  // a REQ for a port nobody listens on: REJ sent
};

struct CmCounters {
  uint64_t received = 0, sent = 0, resent = 0;
  uint64_t duplicates = 0, malformed = 0, unexpected = 0, no_listener = 0;
};

class CmConnections {
 public:
  explicit CmConnections(const CmConfig& cfg) : cfg_(cfg), next_id_(cfg.first_comm_id) {}

  /// Accept REQs for `port` (RDMA_PS_TCP service ID 0x0106_0000 | port).
  void listen(uint16_t port);
  bool listening(uint16_t port) const noexcept;

  /// Active side: sends a REQ to dst_ipv4:dst_port from src_port for `qp`, with up to 56 bytes
  /// of the application's private data after rdma_cm's header. Returns the connection ID.
  uint32_t connect(uint32_t dst_ipv4, uint16_t dst_port, uint16_t src_port, const CmLocalQp& qp,
                   const std::vector<uint8_t>& private_data, TimeNs now);
  /// Passive side: answers a kConnectRequest with a REP for `qp` (up to 196 bytes of private
  /// data). False if `conn` is not waiting for an answer.
  bool accept(uint32_t conn, const CmLocalQp& qp, const std::vector<uint8_t>& private_data,
              TimeNs now);
  /// Refuses a kConnectRequest with a REJ of `reason` (kRejConsumerDefined, as rdma_reject).
  bool reject(uint32_t conn, uint16_t reason, TimeNs now);
  /// Sends a DREQ for an established connection (or one whose REP is out). False otherwise.
  bool disconnect(uint32_t conn, TimeNs now);

  CmRx on_mad(uint32_t src_ipv4, const uint8_t* mad, uint32_t len, TimeNs now);
  void on_timer(TimeNs now);
  TimeNs next_deadline() const noexcept;

  bool pop_send(CmSend& out);
  bool pop_event(CmEvent& out);

  CmState state(uint32_t conn) const noexcept;
  const CmCounters& counters() const noexcept { return counters_; }
  MadError last_error() const noexcept { return last_error_; }

 private:
  struct Conn {
    uint32_t id = 0, remote_id = 0;
    uint32_t peer_ipv4 = 0;
    uint16_t peer_port = 0, local_port = 0;
    bool active = false;
    CmState state = CmState::kIdle;
    uint64_t tid = 0;
    CmLocalQp local;
    uint32_t remote_qpn = 0;
    CmMad last;                // the message resent on time-out (REQ, REP or DREQ)
    TimeNs deadline = kNever;  // resend or time-out, or the end of time-wait
    TimeNs resend_ns = 0;
    uint8_t retries_left = 0;
  };
  Conn* find(uint32_t id) noexcept;
  const Conn* find(uint32_t id) const noexcept;
  Conn* find_remote(uint32_t peer_ipv4, uint32_t remote_id) noexcept;
  void send(const Conn& c, const CmMad& m, bool resend = false);
  void send_to(uint32_t dst_ipv4, uint8_t tclass, const CmMad& m);
  void close(Conn& c, CmState s, TimeNs now);
  void event(const Conn& c, CmEventKind k, uint16_t reason = 0);
  void arm(Conn& c, TimeNs now, TimeNs wait_ns, uint8_t retries);
  CmMad make(const Conn& c, const CmBody& body) const;
  uint64_t own_tid(uint32_t id) const noexcept;

  CmRx on_req(uint32_t src, const MadHeader& h, const CmReq& m, TimeNs now);
  CmRx on_rep(uint32_t src, const CmRep& m, TimeNs now);
  CmRx on_rtu(uint32_t src, const CmRtu& m);
  CmRx on_rej(uint32_t src, const CmRej& m, TimeNs now);
  CmRx on_mra(uint32_t src, const CmMra& m, TimeNs now);
  CmRx on_dreq(uint32_t src, const MadHeader& h, const CmDreq& m, TimeNs now);
  CmRx on_drep(uint32_t src, const CmDrep& m, TimeNs now);

  CmConfig cfg_;
  uint32_t next_id_;
  std::vector<uint16_t> ports_;
  std::vector<Conn> conns_;
  std::deque<CmSend> sends_;
  std::deque<CmEvent> events_;
  CmCounters counters_;
  MadError last_error_ = MadError::kNone;
};

}  // namespace rocemu::nic::cm
