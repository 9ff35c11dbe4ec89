// cm_agent.h — rdma_cm over RoCEv2 on a RoceHost: the GSI QP (QP1, UD, Q_Key 0x80010000)
// carrying the CM's MADs (cm_mad.h) for the connection state machine (cm_conn.h), and the RC
// QPs it connects moved RESET->INIT->RTR->RTS with what the REQ/REP carried (as librdmacm's
// rdma_connect/rdma_accept and the kernel's ib_cm_init_qp_attr do).
//
// Usage, from the thread that runs the host, between the engine's polls:
//   CmAgent cm(host, pd, cfg);       cm.listen(port)  or  conn = cm.connect(qpn, ip, port, p, now)
//   cm.poll(now) every iteration;    cm.pop_event(e): kConnectRequest -> cm.accept(e, qpn, p, now)
//   kEstablished: the QP is in RTS;  cm.disconnect(conn, now) -> kDisconnected (QP moved to ERR).
// A malformed or unexpected MAD is counted (connections().counters()) and logged at most
// once a second; it never changes a connection.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "common/log.h"
#include "nic/cm_conn.h"
#include "nic/roce_host.h"

namespace rocemu::nic {

/// What the application asks of one rdma_cm connection (struct rdma_conn_param's fields).
struct RdmaConnParams {
  uint8_t responder_resources = 1;  // RDMA READs/atomics the peer may have outstanding at us
  uint8_t initiator_depth = 1;      // ... we may have outstanding at the peer
  uint8_t retry_count = 7, rnr_retry_count = 7;
  uint8_t traffic_class = 0;  // 0: the host's data DSCP (the REQ carries 0)
  std::vector<uint8_t> private_data;
  int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
};

class CmAgent {
 public:
  /// Creates QP1 and its buffers on `host` (protection domain `pd`). Throws
  /// std::runtime_error if the host refuses (a GSI QP exists already, no resources).
  CmAgent(RoceHost& host, uint32_t pd, const cm::CmConfig& cfg, uint32_t recv_depth = 64);
  ~CmAgent();
  CmAgent(const CmAgent&) = delete;
  CmAgent& operator=(const CmAgent&) = delete;

  void listen(uint16_t port) { cm_.listen(port); }
  /// Active side: a REQ from `src_port` (0: an ephemeral one) to dst_ipv4:dst_port for
  /// `qpn`, an RC QP of the host in RESET. Returns the connection ID.
  uint32_t connect(uint32_t qpn, uint32_t dst_ipv4, uint16_t dst_port, const RdmaConnParams& p,
                   TimeNs now, uint16_t src_port = 0);
  /// Passive side: takes the kConnectRequest `req` on `qpn` (an RC QP in RESET): RTR/RTS
  /// from the REQ, then the REP. False (QP untouched or in ERR) if it cannot.
  bool accept(const cm::CmEvent& req, uint32_t qpn, const RdmaConnParams& p, TimeNs now);
  bool reject(uint32_t conn, TimeNs now) { return cm_.reject(conn, cm::kRejConsumerDefined, now); }
  bool disconnect(uint32_t conn, TimeNs now);

  /// Receives QP1's MADs, runs the timers, moves QPs, sends MADs.
  void poll(TimeNs now);
  bool pop_event(cm::CmEvent& out);
  bool has_events() const noexcept { return !events_.empty(); }
  TimeNs next_deadline() const noexcept { return cm_.next_deadline(); }

  /// The RC QP of a connection (0 if unknown).
  uint32_t qpn_of(uint32_t conn) const noexcept;
  const cm::CmConnections& connections() const noexcept { return cm_; }
  uint32_t gsi_qpn() const noexcept { return gsi_qpn_; }
  /// MADs not sent at once because QP1's send queue was full (sent later), and receive
  /// completions in error.
  uint64_t send_backlog_events() const noexcept { return send_backlog_events_; }
  uint64_t recv_errors() const noexcept { return recv_errors_; }

 private:
  static constexpr uint32_t kGrhBytes = 40;
  struct Bound {
    uint32_t conn = 0, qpn = 0;
    bool active = false;
    RdmaConnParams params;
  };
  ibv_ah* ah_for(uint32_t ipv4, uint8_t tclass);
  void post_recv_slot(uint32_t slot);
  void flush_sends(TimeNs now);
  void on_event(cm::CmEvent& e, TimeNs now);
  Bound* bound(uint32_t conn) noexcept;

  RoceHost& host_;
  uint32_t pd_;
  cm::CmConnections cm_;
  uint32_t cq_ = 0, gsi_qpn_ = 0;
  uint32_t recv_depth_, send_depth_ = 64;
  std::vector<uint8_t> recv_buf_, send_buf_;
  MrInfo recv_mr_{}, send_mr_{};
  uint32_t send_next_ = 0;
  struct Ah {
    uint32_t ipv4;
    uint8_t tclass;
    ibv_ah* ah;
  };
  std::vector<Ah> ahs_;
  std::deque<cm::CmSend> backlog_;
  std::vector<Bound> bound_;
  std::deque<cm::CmEvent> events_;
  uint16_t next_port_ = 0;
  uint64_t send_backlog_events_ = 0, recv_errors_ = 0;
  RateLimitedLog log_;
};

}  // namespace rocemu::nic
