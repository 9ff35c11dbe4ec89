// cm_conn.cc — the CM connection state machine (see cm_conn.h).
#include "nic/cm_conn.h"

#include <algorithm>
#include <cstring>

namespace rocemu::nic::cm {

namespace {
constexpr uint16_t kRejInvalidTransportType = 9;
constexpr uint8_t kTargetAckDelay = 15;  // what rxe's REPs carry (golden capture 13)
constexpr uint8_t kHopLimit = 64;
}  // namespace

uint64_t CmConnections::own_tid(uint32_t id) const noexcept {
  // As Linux's cm_form_tid on a little-endian host: the agent's high half, then the local
  // communication ID's wire bytes read as a host-order integer.
  return uint64_t{cfg_.tid_hi} << 32 | __builtin_bswap32(id);
}

const char* cm_state_name(CmState s) noexcept {
  switch (s) {
    case CmState::kIdle:
      return "idle";
    case CmState::kReqSent:
      return "REQ sent";
    case CmState::kReqRcvd:
      return "REQ received";
    case CmState::kRepSent:
      return "REP sent";
    case CmState::kEstablished:
      return "established";
    case CmState::kDreqSent:
      return "DREQ sent";
    case CmState::kTimeWait:
      return "time-wait";
    case CmState::kClosed:
      return "closed";
  }
  return "?";
}

const char* cm_event_name(CmEventKind k) noexcept {
  switch (k) {
    case CmEventKind::kConnectRequest:
      return "connect request";
    case CmEventKind::kEstablished:
      return "established";
    case CmEventKind::kRejected:
      return "rejected";
    case CmEventKind::kTimedOut:
      return "timed out";
    case CmEventKind::kDisconnected:
      return "disconnected";
  }
  return "?";
}

void CmConnections::listen(uint16_t port) {
  if (!listening(port)) ports_.push_back(port);
}

bool CmConnections::listening(uint16_t port) const noexcept {
  return std::find(ports_.begin(), ports_.end(), port) != ports_.end();
}

CmConnections::Conn* CmConnections::find(uint32_t id) noexcept {
  for (Conn& c : conns_)
    if (c.id == id) return &c;
  return nullptr;
}
const CmConnections::Conn* CmConnections::find(uint32_t id) const noexcept {
  for (const Conn& c : conns_)
    if (c.id == id) return &c;
  return nullptr;
}
CmConnections::Conn* CmConnections::find_remote(uint32_t peer_ipv4, uint32_t remote_id) noexcept {
  for (Conn& c : conns_)
    if (c.peer_ipv4 == peer_ipv4 && c.remote_id == remote_id && !c.active) return &c;
  return nullptr;
}

CmState CmConnections::state(uint32_t conn) const noexcept {
  const Conn* c = find(conn);
  return c ? c->state : CmState::kIdle;
}

CmMad CmConnections::make(const Conn& c, const CmBody& body) const {
  CmMad m;
  m.hdr.tid = c.tid;
  m.body = body;
  return m;
}

void CmConnections::send_to(uint32_t dst_ipv4, uint8_t tclass, const CmMad& m) {
  CmSend s;
  s.dst_ipv4 = dst_ipv4;
  s.traffic_class = tclass;
  encode_cm_mad(m, s.mad.data());
  sends_.push_back(s);
  ++counters_.sent;
}

void CmConnections::send(const Conn& c, const CmMad& m, bool resend) {
  send_to(c.peer_ipv4, c.local.traffic_class, m);
  if (resend) ++counters_.resent;
}

void CmConnections::arm(Conn& c, TimeNs now, TimeNs wait_ns, uint8_t retries) {
  c.resend_ns = wait_ns;
  c.retries_left = retries;
  c.deadline = now + wait_ns;
}

void CmConnections::close(Conn& c, CmState s, TimeNs now) {
  c.state = s;
  c.deadline = now + cfg_.timewait_ns;
}

void CmConnections::event(const Conn& c, CmEventKind k, uint16_t reason) {
  CmEvent e;
  e.kind = k;
  e.conn = c.id;
  e.peer_ipv4 = c.peer_ipv4;
  e.peer_port = c.peer_port;
  e.local_port = c.local_port;
  e.remote_qpn = c.remote_qpn;
  e.reject_reason = reason;
  events_.push_back(std::move(e));
}

uint32_t CmConnections::connect(uint32_t dst_ipv4, uint16_t dst_port, uint16_t src_port,
                                const CmLocalQp& qp, const std::vector<uint8_t>& private_data,
                                TimeNs now) {
  Conn c;
  c.id = next_id_++;
  c.peer_ipv4 = dst_ipv4;
  c.peer_port = dst_port;
  c.local_port = src_port;
  c.active = true;
  c.state = CmState::kReqSent;
  c.tid = own_tid(c.id);
  c.local = qp;
  CmReq r;
  r.local_comm_id = c.id;
  r.service_id = rdma_cm_service_id(dst_port);
  r.local_ca_guid = cfg_.ca_guid;
  r.local_qpn = qp.qpn;
  r.responder_resources = qp.responder_resources;
  r.initiator_depth = qp.initiator_depth;
  r.remote_cm_response_timeout = cfg_.cm_response_timeout;
  r.transport_service_type = 0;  // RC
  r.starting_psn = qp.psn;
  r.local_cm_response_timeout = cfg_.cm_response_timeout;
  r.retry_count = qp.retry_count;
  r.pkey = 0xffff;
  r.path_mtu = qp.path_mtu;
  r.rnr_retry_count = qp.rnr_retry_count;
  r.max_cm_retries = cfg_.max_cm_retries;
  r.primary.local_lid = r.primary.remote_lid = 0xffff;  // RoCE: permissive LIDs
  r.primary.local_gid = ipv4_gid(cfg_.ipv4);
  r.primary.remote_gid = ipv4_gid(dst_ipv4);
  r.primary.flow_label = rdma_cm_flow_label(src_port, dst_port);
  r.primary.traffic_class = qp.traffic_class;
  r.primary.hop_limit = kHopLimit;
  r.primary.local_ack_timeout = qp.local_ack_timeout;
  encode_cma_header(make_cma_header(cfg_.ipv4, src_port, dst_ipv4), r.private_data.data());
  // std::copy_n, not memcpy: an empty vector's data() may be null, which memcpy forbids.
  std::copy_n(private_data.begin(), std::min<size_t>(private_data.size(), kReqUserPrivateBytes),
              r.private_data.begin() + kCmaHeaderBytes);
  c.last = make(c, r);
  arm(c, now, cm_timeout_ns(cfg_.cm_response_timeout) + 2 * cm_timeout_ns(cfg_.packet_life_time),
      cfg_.max_cm_retries);
  send(c, c.last);
  conns_.push_back(c);
  return c.id;
}

bool CmConnections::accept(uint32_t conn, const CmLocalQp& qp,
                           const std::vector<uint8_t>& private_data, TimeNs now) {
  Conn* c = find(conn);
  if (!c || c->state != CmState::kReqRcvd) return false;
  const uint8_t tclass = c->local.traffic_class;  // the REQ's path
  c->local = qp;
  c->local.traffic_class = tclass;
  CmRep r;
  r.local_comm_id = c->id;
  r.remote_comm_id = c->remote_id;
  r.local_qpn = qp.qpn;
  r.starting_psn = qp.psn;
  r.responder_resources = qp.responder_resources;
  r.initiator_depth = qp.initiator_depth;
  r.target_ack_delay = kTargetAckDelay;
  r.rnr_retry_count = qp.rnr_retry_count;
  r.local_ca_guid = cfg_.ca_guid;
  std::copy_n(private_data.begin(), std::min(private_data.size(), r.private_data.size()),
              r.private_data.begin());
  c->last = make(*c, r);
  c->state = CmState::kRepSent;
  // The peer answers within its own CM response time (its REQ's local_cm_response_timeout,
  // kept in resend_ns by on_req); retries as it asked.
  arm(*c, now, c->resend_ns, c->retries_left);
  send(*c, c->last);
  return true;
}

bool CmConnections::reject(uint32_t conn, uint16_t reason, TimeNs now) {
  Conn* c = find(conn);
  if (!c || c->state != CmState::kReqRcvd) return false;
  CmRej r;
  r.local_comm_id = c->id;
  r.remote_comm_id = c->remote_id;
  r.message_rejected = kMsgReq;
  r.reason = reason;
  send(*c, make(*c, r));
  close(*c, CmState::kClosed, now);
  return true;
}

bool CmConnections::disconnect(uint32_t conn, TimeNs now) {
  Conn* c = find(conn);
  if (!c || (c->state != CmState::kEstablished && c->state != CmState::kRepSent)) return false;
  CmDreq d;
  d.local_comm_id = c->id;
  d.remote_comm_id = c->remote_id;
  d.remote_qpn = c->remote_qpn;
  c->last = make(*c, d);
  c->last.hdr.tid = own_tid(c->id);
  c->state = CmState::kDreqSent;
  arm(*c, now, cm_timeout_ns(cfg_.cm_response_timeout) + 2 * cm_timeout_ns(cfg_.packet_life_time),
      cfg_.max_cm_retries);
  send(*c, c->last);
  return true;
}

CmRx CmConnections::on_mad(uint32_t src_ipv4, const uint8_t* mad, uint32_t len, TimeNs now) {
  ++counters_.received;
  CmMad m;
  last_error_ = decode_cm_mad(mad, len, m);
  if (last_error_ != MadError::kNone) {
    ++counters_.malformed;
    return CmRx::kMalformed;
  }
  CmRx rx = CmRx::kUnexpected;
  if (const auto* b = std::get_if<CmReq>(&m.body))
    rx = on_req(src_ipv4, m.hdr, *b, now);
  else if (const auto* b = std::get_if<CmRep>(&m.body))
    rx = on_rep(src_ipv4, *b, now);
  else if (const auto* b = std::get_if<CmRtu>(&m.body))
    rx = on_rtu(src_ipv4, *b);
  else if (const auto* b = std::get_if<CmRej>(&m.body))
    rx = on_rej(src_ipv4, *b, now);
  else if (const auto* b = std::get_if<CmMra>(&m.body))
    rx = on_mra(src_ipv4, *b, now);
  else if (const auto* b = std::get_if<CmDreq>(&m.body))
    rx = on_dreq(src_ipv4, m.hdr, *b, now);
  else if (const auto* b = std::get_if<CmDrep>(&m.body))
    rx = on_drep(src_ipv4, *b, now);
  if (rx == CmRx::kUnexpected) ++counters_.unexpected;
  if (rx == CmRx::kDuplicate) ++counters_.duplicates;
  return rx;
}

CmRx CmConnections::on_req(uint32_t src, const MadHeader& h, const CmReq& m, TimeNs now) {
  if (Conn* c = find_remote(src, m.local_comm_id)) {
    // The peer resent its REQ: our REP (if out) was lost or is late; send it again.
    if (c->state == CmState::kRepSent || c->state == CmState::kEstablished) send(*c, c->last, true);
    return CmRx::kDuplicate;
  }
  const auto refuse = [&](uint16_t reason) {
    CmMad r;
    r.hdr.tid = h.tid;
    CmRej rej;
    rej.remote_comm_id = m.local_comm_id;
    rej.message_rejected = kMsgReq;
    rej.reason = reason;
    r.body = rej;
    send_to(src, m.primary.traffic_class, r);
  };
  const int32_t port = rdma_cm_port(m.service_id);
  if (port < 0 || !listening(static_cast<uint16_t>(port))) {
    ++counters_.no_listener;
    refuse(kRejInvalidServiceId);  // as cm.c's cm_match_req when no listener matches
    return CmRx::kNoListener;
  }
  CmaHeader cma;
  if (!decode_cma_header(m.private_data.data(), cma) || cma.ip_version != 4) {
    refuse(kRejConsumerDefined);  // rdma_cm refuses a REQ it cannot read (cma_ib_req_handler)
    return CmRx::kUnexpected;
  }
  if (m.transport_service_type != 0) {
    refuse(kRejInvalidTransportType);
    return CmRx::kUnexpected;
  }
  Conn c;
  c.id = next_id_++;
  c.remote_id = m.local_comm_id;
  c.peer_ipv4 = src;
  c.peer_port = cma.src_port;
  c.local_port = static_cast<uint16_t>(port);
  c.active = false;
  c.state = CmState::kReqRcvd;
  c.tid = h.tid;
  c.remote_qpn = m.local_qpn;
  c.local.traffic_class = m.primary.traffic_class;
  c.resend_ns =
      cm_timeout_ns(m.local_cm_response_timeout) + 2 * cm_timeout_ns(cfg_.packet_life_time);
  c.retries_left = m.max_cm_retries;
  // Waiting for the application: a REQ not answered within the peer's patience is its to resend.
  c.deadline = kNever;
  conns_.push_back(c);
  CmEvent e;
  e.kind = CmEventKind::kConnectRequest;
  e.conn = c.id;
  e.peer_ipv4 = src;
  e.peer_port = c.peer_port;
  e.local_port = c.local_port;
  e.remote_qpn = m.local_qpn;
  e.remote_psn = m.starting_psn;
  e.remote_responder_resources = m.responder_resources;
  e.remote_initiator_depth = m.initiator_depth;
  e.path_mtu = m.path_mtu;
  e.traffic_class = m.primary.traffic_class;
  e.retry_count = m.retry_count;
  e.rnr_retry_count = m.rnr_retry_count;
  e.local_ack_timeout = m.primary.local_ack_timeout;
  e.private_data.assign(m.private_data.begin() + kCmaHeaderBytes, m.private_data.end());
  events_.push_back(std::move(e));
  (void)now;
  return CmRx::kAccepted;
}

CmRx CmConnections::on_rep(uint32_t src, const CmRep& m, TimeNs now) {
  Conn* c = find(m.remote_comm_id);
  if (!c || !c->active || c->peer_ipv4 != src) return CmRx::kUnexpected;
  if (c->state == CmState::kEstablished && c->remote_id == m.local_comm_id) {
    send(*c, c->last, true);  // the RTU was lost: the peer resent its REP
    return CmRx::kDuplicate;
  }
  if (c->state != CmState::kReqSent) return CmRx::kUnexpected;
  c->remote_id = m.local_comm_id;
  c->remote_qpn = m.local_qpn;
  CmRtu rtu;
  rtu.local_comm_id = c->id;
  rtu.remote_comm_id = c->remote_id;
  c->last = make(*c, rtu);
  c->state = CmState::kEstablished;
  c->deadline = kNever;
  CmEvent e;
  e.kind = CmEventKind::kEstablished;
  e.conn = c->id;
  e.peer_ipv4 = src;
  e.peer_port = c->peer_port;
  e.local_port = c->local_port;
  e.remote_qpn = m.local_qpn;
  e.remote_psn = m.starting_psn;
  e.remote_responder_resources = m.responder_resources;
  e.remote_initiator_depth = m.initiator_depth;
  e.path_mtu = c->local.path_mtu;
  e.traffic_class = c->local.traffic_class;
  e.retry_count = c->local.retry_count;
  e.rnr_retry_count = m.rnr_retry_count;
  e.local_ack_timeout = c->local.local_ack_timeout;
  e.private_data.assign(m.private_data.begin(), m.private_data.end());
  // The event first: the caller moves its QP to RTR/RTS before the RTU leaves (pop_send
  // after pop_event), as librdmacm's ucma_process_conn_resp does.
  events_.push_back(std::move(e));
  send(*c, c->last);
  (void)now;
  return CmRx::kAccepted;
}

CmRx CmConnections::on_rtu(uint32_t src, const CmRtu& m) {
  Conn* c = find(m.remote_comm_id);
  if (!c || c->active || c->peer_ipv4 != src || c->remote_id != m.local_comm_id)
    return CmRx::kUnexpected;
  if (c->state == CmState::kEstablished || c->state == CmState::kDreqSent ||
      c->state == CmState::kTimeWait)
    return CmRx::kDuplicate;
  if (c->state != CmState::kRepSent) return CmRx::kUnexpected;
  c->state = CmState::kEstablished;
  c->deadline = kNever;
  event(*c, CmEventKind::kEstablished);
  return CmRx::kAccepted;
}

CmRx CmConnections::on_rej(uint32_t src, const CmRej& m, TimeNs now) {
  Conn* c = find(m.remote_comm_id);
  if (!c || c->peer_ipv4 != src) return CmRx::kUnexpected;
  if (c->state == CmState::kClosed) return CmRx::kDuplicate;
  if (c->state != CmState::kReqSent && c->state != CmState::kRepSent &&
      c->state != CmState::kReqRcvd)
    return CmRx::kUnexpected;
  close(*c, CmState::kClosed, now);
  event(*c, CmEventKind::kRejected, m.reason);
  return CmRx::kAccepted;
}

CmRx CmConnections::on_mra(uint32_t src, const CmMra& m, TimeNs now) {
  Conn* c = find(m.remote_comm_id);
  if (!c || c->peer_ipv4 != src) return CmRx::kUnexpected;
  const bool ours = (c->state == CmState::kReqSent && m.message_mraed == kMsgReq) ||
                    (c->state == CmState::kRepSent && m.message_mraed == kMsgRep);
  if (!ours) return CmRx::kUnexpected;
  // The peer needs its service time-out more before it answers: wait that long once more,
  // without resending (IBTA 12.6.6).
  c->deadline = now + cm_timeout_ns(m.service_timeout) + c->resend_ns;
  return CmRx::kAccepted;
}

CmRx CmConnections::on_dreq(uint32_t src, const MadHeader& h, const CmDreq& m, TimeNs now) {
  Conn* c = find(m.remote_comm_id);
  if (!c || c->peer_ipv4 != src || c->remote_id != m.local_comm_id) {
    // No such connection (any more): a DREP all the same, so the peer stops asking (cm.c).
    CmMad r;
    r.hdr.tid = h.tid;
    CmDrep d;
    d.local_comm_id = m.remote_comm_id;
    d.remote_comm_id = m.local_comm_id;
    r.body = d;
    send_to(src, 0, r);
    return CmRx::kUnexpected;
  }
  CmDrep d;
  d.local_comm_id = c->id;
  d.remote_comm_id = c->remote_id;
  CmMad drep = make(*c, d);
  drep.hdr.tid = h.tid;  // a DREP answers its DREQ's transaction (cm.c)
  if (c->state == CmState::kTimeWait) {
    send(*c, drep, true);
    return CmRx::kDuplicate;
  }
  if (c->state != CmState::kEstablished && c->state != CmState::kRepSent &&
      c->state != CmState::kDreqSent)
    return CmRx::kUnexpected;
  send(*c, drep);
  close(*c, CmState::kTimeWait, now);
  event(*c, CmEventKind::kDisconnected);
  return CmRx::kAccepted;
}

CmRx CmConnections::on_drep(uint32_t src, const CmDrep& m, TimeNs now) {
  Conn* c = find(m.remote_comm_id);
  if (!c || c->peer_ipv4 != src) return CmRx::kUnexpected;
  if (c->state == CmState::kTimeWait) return CmRx::kDuplicate;
  if (c->state != CmState::kDreqSent) return CmRx::kUnexpected;
  close(*c, CmState::kTimeWait, now);
  event(*c, CmEventKind::kDisconnected);
  return CmRx::kAccepted;
}

void CmConnections::on_timer(TimeNs now) {
  for (Conn& c : conns_) {
    if (c.deadline > now) continue;
    switch (c.state) {
      case CmState::kReqSent:
      case CmState::kRepSent:
      case CmState::kDreqSent:
        if (c.retries_left > 0) {
          --c.retries_left;
          c.deadline = now + c.resend_ns;
          send(c, c.last, true);
          break;
        }
        if (c.state == CmState::kDreqSent) {  // the peer is gone: disconnected all the same
          close(c, CmState::kTimeWait, now);
          event(c, CmEventKind::kDisconnected);
          break;
        }
        {
          CmRej r;
          r.local_comm_id = c.id;
          r.remote_comm_id = c.remote_id;
          r.message_rejected = c.state == CmState::kReqSent ? kMsgReq : kMsgRep;
          r.reason = kRejTimeout;
          send(c, make(c, r));
        }
        close(c, CmState::kClosed, now);
        event(c, CmEventKind::kTimedOut, kRejTimeout);
        break;
      default:
        c.deadline = kNever;
        break;
    }
  }
  std::erase_if(conns_, [&](const Conn& c) {
    return (c.state == CmState::kTimeWait || c.state == CmState::kClosed) && c.deadline == kNever;
  });
}

TimeNs CmConnections::next_deadline() const noexcept {
  TimeNs t = kNever;
  for (const Conn& c : conns_) t = std::min(t, c.deadline);
  return t;
}

bool CmConnections::pop_send(CmSend& out) {
  if (sends_.empty()) return false;
  out = sends_.front();
  sends_.pop_front();
  return true;
}

bool CmConnections::pop_event(CmEvent& out) {
  if (events_.empty()) return false;
  out = std::move(events_.front());
  events_.pop_front();
  return true;
}

}  // namespace rocemu::nic::cm
