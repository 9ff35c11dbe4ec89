// cm_agent.cc — rdma_cm over RoCEv2 on a RoceHost (see cm_agent.h).
#include "nic/cm_agent.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "common/wire.h"

namespace rocemu::nic {

CmAgent::CmAgent(RoceHost& host, uint32_t pd, const cm::CmConfig& cfg, uint32_t recv_depth)
    : host_(host), pd_(pd), cm_(cfg), recv_depth_(recv_depth) {
  cq_ = host_.create_cq(recv_depth_ + send_depth_ + 16);
  QpInitAttr a;
  a.qp_type = IBV_QPT_UD;
  a.gsi = true;
  a.pd = pd;
  a.send_cq = a.recv_cq = cq_;
  a.max_send_wr = send_depth_;
  a.max_recv_wr = recv_depth_;
  a.initial_psn = 0;
  gsi_qpn_ = host_.create_qp(a);
  if (gsi_qpn_ != cm::kGsiQpn) throw std::runtime_error("rdma_cm: cannot create QP1 (GSI)");
  recv_buf_.resize(size_t{recv_depth_} * (kGrhBytes + cm::kMadBytes));
  send_buf_.resize(size_t{send_depth_} * cm::kMadBytes);
  recv_mr_ = host_.reg_mr(pd, recv_buf_.data(), recv_buf_.size(), IBV_ACCESS_LOCAL_WRITE);
  send_mr_ = host_.reg_mr(pd, send_buf_.data(), send_buf_.size(), 0);
  if (recv_mr_.lkey == 0 || send_mr_.lkey == 0)
    throw std::runtime_error("rdma_cm: cannot register QP1's buffers");
  ibv_qp_attr qa{};
  qa.qp_state = IBV_QPS_INIT;
  qa.qkey = cm::kGsiQkey;
  int rc = host_.modify_qp(gsi_qpn_, qa, IBV_QP_STATE | IBV_QP_QKEY);
  qa = {};
  qa.qp_state = IBV_QPS_RTR;
  if (rc == 0) rc = host_.modify_qp(gsi_qpn_, qa, IBV_QP_STATE);
  qa.qp_state = IBV_QPS_RTS;
  qa.sq_psn = 0;
  if (rc == 0) rc = host_.modify_qp(gsi_qpn_, qa, IBV_QP_STATE | IBV_QP_SQ_PSN);
  if (rc != 0) throw std::runtime_error("rdma_cm: cannot bring QP1 to RTS");
  for (uint32_t i = 0; i < recv_depth_; ++i) post_recv_slot(i);
  // Ephemeral source ports as Linux picks them (32768..60999), from the seeded comm ID.
  next_port_ = static_cast<uint16_t>(32768 + (cfg.first_comm_id * 2654435761u) % 28232);
}

CmAgent::~CmAgent() {
  for (const Ah& a : ahs_) host_.destroy_ah(a.ah);
  host_.destroy_qp(gsi_qpn_);
}

void CmAgent::post_recv_slot(uint32_t slot) {
  const uint32_t bytes = kGrhBytes + cm::kMadBytes;
  ibv_sge sge{recv_mr_.addr + uint64_t{slot} * bytes, bytes, recv_mr_.lkey};
  ibv_recv_wr wr{};
  wr.wr_id = slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  const ibv_recv_wr* bad = nullptr;
  if (host_.post_recv(gsi_qpn_, &wr, &bad) != 0) ++recv_errors_;
}

ibv_ah* CmAgent::ah_for(uint32_t ipv4, uint8_t tclass) {
  for (const Ah& a : ahs_)
    if (a.ipv4 == ipv4 && a.tclass == tclass) return a.ah;
  ibv_ah_attr attr{};
  attr.is_global = 1;
  attr.grh.dgid = ipv4_mapped_gid(ipv4);
  attr.grh.traffic_class = tclass;
  attr.grh.hop_limit = 64;
  ibv_ah* ah = host_.create_ah(pd_, attr);
  if (ah) ahs_.push_back({ipv4, tclass, ah});
  return ah;
}

uint32_t CmAgent::connect(uint32_t qpn, uint32_t dst_ipv4, uint16_t dst_port,
                          const RdmaConnParams& p, TimeNs now, uint16_t src_port) {
  if (src_port == 0) {
    src_port = next_port_;
    next_port_ = static_cast<uint16_t>(next_port_ >= 60999 ? 32768 : next_port_ + 1);
  }
  cm::CmLocalQp l;
  l.qpn = qpn;
  l.psn = host_.local_info(qpn).psn;
  l.responder_resources = p.responder_resources;
  l.initiator_depth = p.initiator_depth;
  l.retry_count = p.retry_count;
  l.rnr_retry_count = p.rnr_retry_count;
  l.path_mtu = static_cast<uint8_t>(mtu_enum(host_.params().mtu_bytes));
  l.traffic_class = p.traffic_class;
  const uint32_t conn = cm_.connect(dst_ipv4, dst_port, src_port, l, p.private_data, now);
  bound_.push_back({conn, qpn, true, p});
  flush_sends(now);
  return conn;
}

bool CmAgent::accept(const cm::CmEvent& req, uint32_t qpn, const RdmaConnParams& p, TimeNs now) {
  if (req.kind != cm::CmEventKind::kConnectRequest) return false;
  ConnectOptions o;
  const uint32_t mtu =
      std::min(host_.params().mtu_bytes, mtu_bytes(static_cast<ibv_mtu>(req.path_mtu)));
  o.path_mtu = mtu_enum(mtu);
  o.access = p.access;
  o.retry_cnt = req.retry_count;
  o.rnr_retry = p.rnr_retry_count;
  // We issue at most what the peer accepts; it may send us what we advertise.
  const uint8_t depth = std::min(p.initiator_depth, req.remote_responder_resources);
  o.max_rd_atomic = std::max<uint8_t>(depth, 1);
  o.max_dest_rd_atomic = p.responder_resources;
  o.traffic_class = req.traffic_class != 0 ? req.traffic_class : p.traffic_class;
  // We receive from our initial PSN (advertised in the REP) and send with the REQ's.
  o.sq_psn = req.remote_psn;
  const uint32_t rq_psn = host_.local_info(qpn).psn;
  if (connect_rc(host_, qpn, QpInfo{req.remote_qpn, rq_psn, req.peer_ipv4}, o) != 0) {
    cm_.reject(req.conn, cm::kRejNoResources, now);
    flush_sends(now);
    return false;
  }
  cm::CmLocalQp l;
  l.qpn = qpn;
  l.psn = host_.local_info(qpn).psn;
  l.responder_resources = p.responder_resources;
  l.initiator_depth = depth;
  l.retry_count = p.retry_count;
  l.rnr_retry_count = p.rnr_retry_count;
  l.path_mtu = static_cast<uint8_t>(o.path_mtu);
  if (!cm_.accept(req.conn, l, p.private_data, now)) return false;
  bound_.push_back({req.conn, qpn, false, p});
  flush_sends(now);
  return true;
}

bool CmAgent::disconnect(uint32_t conn, TimeNs now) {
  if (!cm_.disconnect(conn, now)) return false;
  flush_sends(now);
  return true;
}

CmAgent::Bound* CmAgent::bound(uint32_t conn) noexcept {
  for (Bound& b : bound_)
    if (b.conn == conn) return &b;
  return nullptr;
}

uint32_t CmAgent::qpn_of(uint32_t conn) const noexcept {
  for (const Bound& b : bound_)
    if (b.conn == conn) return b.qpn;
  return 0;
}

void CmAgent::on_event(cm::CmEvent& e, TimeNs now) {
  Bound* b = bound(e.conn);
  if (e.kind == cm::CmEventKind::kEstablished && b && b->active) {
    // REP received: RTR/RTS before the RTU leaves (librdmacm's ucma_process_conn_resp).
    ConnectOptions o;
    o.access = b->params.access;
    o.retry_cnt = b->params.retry_count;
    o.rnr_retry = e.rnr_retry_count;
    o.max_rd_atomic =
        std::max<uint8_t>(std::min(b->params.initiator_depth, e.remote_responder_resources), 1);
    o.max_dest_rd_atomic = b->params.responder_resources;
    o.traffic_class = b->params.traffic_class;
    o.sq_psn = e.remote_psn;  // the REP's starting PSN; we receive from the REQ's (ours)
    const uint32_t rq_psn = host_.local_info(b->qpn).psn;
    if (connect_rc(host_, b->qpn, QpInfo{e.remote_qpn, rq_psn, e.peer_ipv4}, o) != 0) {
      spdlog::error("rdma_cm: cannot move QP 0x{:x} to RTS after the REP; disconnecting", b->qpn);
      cm_.disconnect(e.conn, now);
      return;
    }
  }
  if (b && (e.kind == cm::CmEventKind::kDisconnected || e.kind == cm::CmEventKind::kRejected ||
            e.kind == cm::CmEventKind::kTimedOut)) {
    // The kernel moves the QP to ERR on disconnect: outstanding work is flushed.
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_ERR;
    if (host_.qp_state(b->qpn) != IBV_QPS_RESET) (void)host_.modify_qp(b->qpn, a, IBV_QP_STATE);
  }
  events_.push_back(std::move(e));
}

void CmAgent::poll(TimeNs now) {
  ibv_wc wc[16];
  int n;
  while ((n = host_.poll_cq(cq_, 16, wc)) > 0) {
    for (int i = 0; i < n; ++i) {
      if (wc[i].opcode != IBV_WC_RECV) continue;  // our sends' completions
      const auto slot = static_cast<uint32_t>(wc[i].wr_id);
      if (wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len >= kGrhBytes) {
        const uint8_t* buf = recv_buf_.data() + size_t{slot} * (kGrhBytes + cm::kMadBytes);
        // The GRH's last 20 bytes hold the IPv4 header (RoCEv2, datagram.cc): source at 12.
        const uint32_t src = wire::detail::get32(buf + 20 + 12);
        const cm::CmRx rx = cm_.on_mad(src, buf + kGrhBytes, wc[i].byte_len - kGrhBytes, now);
        if ((rx == cm::CmRx::kMalformed || rx == cm::CmRx::kUnexpected) && log_.allow(now)) {
          const auto& c = cm_.counters();
          spdlog::warn(
              "rdma_cm: dropped a {} MAD from {}.{}.{}.{} ({}); {} malformed, {} "
              "unexpected so far",
              rx == cm::CmRx::kMalformed ? "malformed" : "unexpected", src >> 24, (src >> 16) & 255,
              (src >> 8) & 255, src & 255,
              rx == cm::CmRx::kMalformed ? cm::mad_error_name(cm_.last_error())
                                         : "no connection in a state for it",
              c.malformed, c.unexpected);
        }
      } else {
        ++recv_errors_;
      }
      post_recv_slot(slot);
    }
  }
  if (cm_.next_deadline() <= now) cm_.on_timer(now);
  cm::CmEvent e;
  while (cm_.pop_event(e)) on_event(e, now);
  flush_sends(now);
}

void CmAgent::flush_sends(TimeNs now) {
  (void)now;
  cm::CmSend s;
  while (cm_.pop_send(s)) backlog_.push_back(s);
  while (!backlog_.empty()) {
    const cm::CmSend& m = backlog_.front();
    ibv_ah* ah = ah_for(m.dst_ipv4, m.traffic_class);
    if (!ah) {  // cannot happen for an IPv4 peer; drop rather than spin
      backlog_.pop_front();
      continue;
    }
    const uint32_t slot = send_next_ % send_depth_;
    uint8_t* dst = send_buf_.data() + size_t{slot} * cm::kMadBytes;
    std::memcpy(dst, m.mad.data(), cm::kMadBytes);
    ibv_sge sge{send_mr_.addr + uint64_t{slot} * cm::kMadBytes, cm::kMadBytes, send_mr_.lkey};
    ibv_send_wr wr{};
    wr.wr_id = slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = cm::kGsiQpn;
    wr.wr.ud.remote_qkey = cm::kGsiQkey;
    const ibv_send_wr* bad = nullptr;
    if (host_.post_send(gsi_qpn_, &wr, &bad) != 0) {  // SQ full: the rest next poll
      ++send_backlog_events_;
      return;
    }
    ++send_next_;
    backlog_.pop_front();
  }
}

bool CmAgent::pop_event(cm::CmEvent& out) {
  if (events_.empty()) return false;
  out = std::move(events_.front());
  events_.pop_front();
  return true;
}

}  // namespace rocemu::nic
