// verbs.cc — the verbs-like API of RoceHost: PD, MR, CQ, QP create/modify, post, poll
// (IBTA Vol. 1 ch. 10 and 11; semantics of rdma-core's ibv_* calls, on its own types).
#include <rte_mbuf.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "common/log.h"
#include "nic/psn.h"
#include "nic/roce_host.h"

namespace rocemu::nic {

namespace {
constexpr uint32_t kFirstQpn = 0x11;  // QPNs 0 and 1 are special in IB; rxe starts at 0x11
constexpr uint32_t kQpnMask = 0xFFFFFF;  // QPNs are 24 bits
constexpr uint32_t kGsiQpn = 1;
}  // namespace

ibv_gid ipv4_mapped_gid(uint32_t ipv4) noexcept {
  ibv_gid g{};
  g.raw[10] = 0xff;
  g.raw[11] = 0xff;
  g.raw[12] = static_cast<uint8_t>(ipv4 >> 24);
  g.raw[13] = static_cast<uint8_t>(ipv4 >> 16);
  g.raw[14] = static_cast<uint8_t>(ipv4 >> 8);
  g.raw[15] = static_cast<uint8_t>(ipv4);
  return g;
}

ibv_gid gid_of(const Ipv6Addr& a) noexcept {
  ibv_gid g{};
  std::memcpy(g.raw, a.data(), 16);
  return g;
}

Ipv6Addr ipv6_of(const ibv_gid& g) noexcept {
  Ipv6Addr a{};
  std::memcpy(a.data(), g.raw, 16);
  return a;
}

bool RoceHost::gid(uint32_t index, ibv_gid& out) const noexcept {
  if (index >= gids_.size()) return false;
  out = gid_of(gids_[index]);
  return true;
}

bool RoceHost::has_ipv6(const Ipv6Addr& a) const noexcept {
  for (size_t i = 0; i < gids_.size(); ++i)
    if (i != 1 && gids_[i] == a) return true;
  return false;
}

ibv_mtu mtu_enum(uint32_t bytes) noexcept {
  switch (bytes) {
    case 256:
      return IBV_MTU_256;
    case 512:
      return IBV_MTU_512;
    case 2048:
      return IBV_MTU_2048;
    case 4096:
      return IBV_MTU_4096;
    default:
      return IBV_MTU_1024;
  }
}

uint32_t mtu_bytes(ibv_mtu mtu) noexcept {
  return (mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096) ? 128u << mtu : 0;
}

RoceHost::RoceHost(const NicParams& params, const Topology& topo, uint32_t node_index,
                   rte_mempool* pool, uint64_t seed)
    : params_(params),
      pool_(pool),
      rng_(seed, "nic/" + std::to_string(node_index)),
      node_index_(node_index),
      transport_log_(std::make_unique<RateLimitedLog>()) {
  if (node_index >= topo.nodes().size()) throw std::invalid_argument("RoceHost: no such node");
  const TopoNode& n = topo.node(node_index);
  if (n.kind != NodeKind::kHost || n.ports.empty())
    throw std::invalid_argument("RoceHost: node '" + n.name + "' is not a host with a port");
  if (!pool) throw std::invalid_argument("RoceHost: no mbuf pool");
  // The largest frame: headers (IPv6), RETH (or AETH), one MTU of payload, ICRC; with
  // elide_payload only its headers are written (nic_params.h).
  const uint32_t frame_bytes = wire::kRoce6HeadersBytes + 16 + params.mtu_bytes + 4;
  const uint32_t room = rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM;
  full_frames_ = frame_bytes <= room;
  if (!full_frames_ && !params.elide_payload)
    throw std::invalid_argument("RoceHost: [nic] mtu_bytes = " + std::to_string(params.mtu_bytes) +
                                " needs frames of " + std::to_string(frame_bytes) +
                                " bytes; the port's mbufs hold " + std::to_string(room) +
                                " (af_xdp ports: mtu_bytes <= 1024)");
  if (room < kElidedFrameRoomBytes)
    throw std::invalid_argument("RoceHost: the port's mbufs hold " + std::to_string(room) +
                                " bytes; frames with elided payloads need " +
                                std::to_string(kElidedFrameRoomBytes));
  ipv4_ = n.ipv4;
  mac_ = n.ports[0].mac;
  gids_.push_back(link_local_ipv6(mac_));
  gids_.push_back(ipv4_mapped_ipv6(ipv4_));
  gids_.insert(gids_.end(), n.ipv6.begin(), n.ipv6.end());
  const PortRef peer = n.ports[0].peer;
  peer_mac_ = topo.node(peer.node).ports.at(peer.port).mac;
  link_rate_bps_ = topo.links().at(n.ports[0].link).rate_bps;
  pause_.set_watchdog(params.pfc_watchdog);
  if (params.random_qpns) {
    // QPN = (0x11 + slot) XOR a per-host key whose bits 23..17 are neither all 0 nor all 1:
    // slots stay O(1) to find, and no QPN is 0, 1 (special in IB) or 0xFFFFFF (multicast).
    do qpn_mask_ = static_cast<uint32_t>(rng_.next()) & kQpnMask;
    while ((qpn_mask_ >> 17) == 0 || (qpn_mask_ >> 17) == 0x7f);
  }
  mrs_.emplace_back();  // key index 0 is never valid
}

RoceHost::~RoceHost() = default;

uint32_t RoceHost::alloc_pd() { return ++num_pds_; }

MrInfo RoceHost::reg_mr(uint32_t pd, void* addr, uint64_t length, int access) {
  return reg_mr_iova(pd, addr, length, reinterpret_cast<uint64_t>(addr), access);
}

MrInfo RoceHost::reg_mr_iova(uint32_t pd, void* addr, uint64_t length, uint64_t iova, int access) {
  if (pd == 0 || pd > num_pds_ || (addr == nullptr && length != 0) || iova + length < iova)
    return {};
  MemoryRegion mr;
  mr.addr = static_cast<uint8_t*>(addr);
  mr.iova = iova;
  mr.length = length;
  mr.access = access;
  mr.pd = pd;
  const auto index = static_cast<uint32_t>(mrs_.size());
  // Key = index << 8 | 8 random bits, so a stale or guessed key rarely names a region.
  const uint32_t tag = static_cast<uint32_t>(rng_.next() & 0xff);
  mr.lkey = mr.rkey = index << 8 | tag;
  mr.valid = true;
  mrs_.push_back(mr);
  return {mr.lkey, mr.rkey, iova, length};
}

int RoceHost::dereg_mr(uint32_t lkey) {
  const uint32_t index = lkey >> 8;
  if (index == 0 || index >= mrs_.size() || !mrs_[index].valid || mrs_[index].lkey != lkey)
    return EINVAL;
  mrs_[index].valid = false;
  return 0;
}

const MemoryRegion* RoceHost::find_mr(uint32_t key, bool remote) const noexcept {
  const uint32_t index = key >> 8;
  if (index == 0 || index >= mrs_.size()) return nullptr;
  const MemoryRegion& mr = mrs_[index];
  if (!mr.valid || (remote ? mr.rkey : mr.lkey) != key) return nullptr;
  return &mr;
}

uint32_t RoceHost::create_cq(uint32_t cqe) {
  cqs_.emplace_back(cqe);
  return static_cast<uint32_t>(cqs_.size() - 1);
}

uint32_t RoceHost::create_qp(const QpInitAttr& a) {
  if ((a.qp_type != IBV_QPT_RC && a.qp_type != IBV_QPT_UC && a.qp_type != IBV_QPT_UD) ||
      a.pd == 0 || a.pd > num_pds_ || a.send_cq >= cqs_.size() || a.recv_cq >= cqs_.size() ||
      (qps_.size() >= params_.max_qps && free_qps_.empty()) || a.max_send_wr == 0 ||
      a.max_send_wr > kMaxQpWr || a.max_recv_wr == 0 || a.max_recv_wr > kMaxQpWr ||
      a.max_send_sge < 1 || a.max_send_sge > kMaxSge || a.max_recv_sge < 1 ||
      a.max_recv_sge > kMaxSge || (a.gsi && (a.qp_type != IBV_QPT_UD || gsi_slot_ >= 0)) ||
      (a.qp_type == IBV_QPT_UD && !full_frames_))  // datagrams move in full (nic_params.h)
    return 0;
  // A destroyed QP's number is reused first (its slot, not a new one), lowest number first.
  const bool reuse = !free_qps_.empty();
  uint32_t index = static_cast<uint32_t>(qps_.size());
  if (reuse) {
    std::pop_heap(free_qps_.begin(), free_qps_.end(), std::greater<>{});
    index = free_qps_.back();
    free_qps_.pop_back();
  }
  auto qp = std::make_unique<Qp>();
  qp->qpn = a.gsi ? kGsiQpn : qpn_of_slot(index);
  if (a.gsi) gsi_slot_ = static_cast<int32_t>(index);
  qp->qp_type = a.qp_type;
  qp->pd = a.pd;
  qp->send_cq = a.send_cq;
  qp->recv_cq = a.recv_cq;
  qp->sq.reset(a.max_send_wr);
  qp->rq.reset(a.max_recv_wr);
  qp->reads.reset(params_.max_read_jobs);
  qp->max_send_sge = a.max_send_sge;
  qp->max_recv_sge = a.max_recv_sge;
  qp->initial_psn = a.initial_psn >= 0 ? static_cast<uint32_t>(a.initial_psn) & kPsnMask
                                       : static_cast<uint32_t>(rng_.next()) & kPsnMask;
  qp->timeout = params_.timeout;
  qp->retry_cnt = params_.retry_cnt;
  qp->rnr_retry = params_.rnr_retry;
  qp->min_rnr_timer = params_.min_rnr_timer;
  qp->mtu_bytes = params_.mtu_bytes;
  qp->window_bytes = window_bytes_;
  const uint32_t qpn = qp->qpn;
  if (reuse) {
    qps_[index] = std::move(qp);
    touch(index);  // the slot's deadlines are the new QP's from the next flush on
  } else {
    qps_.push_back(std::move(qp));
    track_new_qp();
  }
  ++live_qps_;
  return qpn;
}

int RoceHost::destroy_qp(uint32_t qpn) {
  Qp* qp = find_qp(qpn);
  if (!qp || qp->destroyed) return EINVAL;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RESET;
  (void)modify_qp(qpn, a, IBV_QP_STATE);  // drops queued work without completions
  qp = find_qp(qpn);
  qp->destroyed = true;
  free_qps_.push_back(static_cast<uint32_t>(qp_slot(qpn)));
  std::push_heap(free_qps_.begin(), free_qps_.end(), std::greater<>{});
  if (qpn == kGsiQpn) gsi_slot_ = -1;
  --live_qps_;
  return 0;
}

int32_t RoceHost::qp_slot(uint32_t qpn) const noexcept {
  if (qpn == kGsiQpn) return gsi_slot_;
  const uint32_t i = ((qpn ^ qpn_mask_) & kQpnMask) - kFirstQpn;  // wraps below kFirstQpn
  return qpn <= kQpnMask && i < qps_.size() && static_cast<int32_t>(i) != gsi_slot_
             ? static_cast<int32_t>(i)
             : -1;
}
uint32_t RoceHost::qpn_of_slot(uint32_t slot) const noexcept {
  return static_cast<int32_t>(slot) == gsi_slot_ ? kGsiQpn
                                                 : ((kFirstQpn + slot) ^ qpn_mask_) & kQpnMask;
}

Qp* RoceHost::find_qp(uint32_t qpn) noexcept {
  const int32_t i = qp_slot(qpn);
  if (i < 0) return nullptr;
  touch(static_cast<uint32_t>(i));  // the caller may change the QP
  return qps_[static_cast<size_t>(i)].get();
}
const Qp* RoceHost::find_qp(uint32_t qpn) const noexcept {
  const int32_t i = qp_slot(qpn);
  return i < 0 ? nullptr : qps_[static_cast<size_t>(i)].get();
}

ibv_qp_state RoceHost::qp_state(uint32_t qpn) const noexcept {
  const Qp* qp = find_qp(qpn);
  return qp ? qp->state : IBV_QPS_UNKNOWN;
}

uint32_t RoceHost::expected_psn(uint32_t qpn) const noexcept {
  const Qp* qp = find_qp(qpn);
  return qp ? qp->epsn : 0;
}

ResponderView RoceHost::responder_view(uint32_t qpn) const noexcept {
  const Qp* qp = find_qp(qpn);
  if (!qp) return {};
  return {qp->epsn, qp->answered_any, qp->answered_psn,
          qp->ctl != CtlKind::kNone || !qp->reads.empty()};
}

QpInfo RoceHost::local_info(uint32_t qpn) const noexcept {
  const Qp* qp = find_qp(qpn);
  return qp ? QpInfo{qp->qpn, qp->initial_psn, ipv4_} : QpInfo{};
}

FrameAddress RoceHost::frame_address(uint32_t src_qpn, uint32_t dst_ip, uint32_t dst_qpn,
                                     uint8_t tos) const noexcept {
  FrameAddress a;
  a.dst_mac = peer_mac_;  // every frame goes to the port's neighbour
  a.src_mac = mac_;
  a.src_ip = ipv4_;
  a.dst_ip = dst_ip;
  a.udp_sport = qp_udp_source_port(src_qpn, dst_qpn);
  a.dqpn = dst_qpn;
  a.tos = tos;
  return a;
}

FrameAddress RoceHost::frame_address(const Qp& qp, uint8_t tos) const noexcept {
  FrameAddress a = frame_address(qp.qpn, qp.dest_ip, qp.dest_qpn, tos);
  if (qp.ipv6) {
    a.ipv6 = true;
    a.src_ip6 = gids_[qp.sgid_index];
    a.dst_ip6 = qp.dest_ip6;
    a.flow_label = qp.flow_label;
  }
  return a;
}

void RoceHost::rebuild_templates(Qp& qp) noexcept {
  FrameAddress a = frame_address(qp, qp.tos);
  qp.data_tmpl = make_template(a);
  qp.data_priority = params_.dscp_to_priority[qp.tos >> 2];
  a.tos = static_cast<uint8_t>(params_.control_dscp << 2);
  qp.ctl_tmpl = make_template(a);
  qp.ctl_priority = params_.dscp_to_priority[params_.control_dscp];
}

int RoceHost::modify_qp(uint32_t qpn, const ibv_qp_attr& attr, int mask) {
  Qp* qp = find_qp(qpn);
  if (!qp) return EINVAL;
  const ibv_qp_state cur = qp->state;
  const ibv_qp_state next = (mask & IBV_QP_STATE) ? attr.qp_state : cur;
  // Legal transitions (IBTA 10.3.1, figure 124), restricted to those RC uses.
  bool ok = false;
  switch (next) {
    case IBV_QPS_RESET:
    case IBV_QPS_ERR:
      ok = true;
      break;
    case IBV_QPS_INIT:
      ok = cur == IBV_QPS_RESET || cur == IBV_QPS_INIT;
      break;
    case IBV_QPS_RTR:
      ok = (cur == IBV_QPS_INIT && qp->qp_type == IBV_QPT_UD) ||  // UD: no peer to name
           (cur == IBV_QPS_INIT &&
            (mask & (IBV_QP_AV | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_PATH_MTU)) ==
                (IBV_QP_AV | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_PATH_MTU)) ||
           (cur == IBV_QPS_RTR && !(mask & IBV_QP_STATE));
      break;
    case IBV_QPS_RTS:
      ok = (cur == IBV_QPS_RTR && (mask & IBV_QP_SQ_PSN)) || cur == IBV_QPS_RTS;
      break;
    default:
      ok = false;
  }
  if (!ok) return EINVAL;
  if (mask & IBV_QP_PATH_MTU) {
    const uint32_t b = mtu_bytes(attr.path_mtu);
    if (b == 0) return EINVAL;
    qp->mtu_bytes = b < params_.mtu_bytes ? b : params_.mtu_bytes;
  }
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && attr.max_rd_atomic > params_.max_read_jobs) return EINVAL;
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && attr.max_dest_rd_atomic > params_.max_read_jobs)
    return EINVAL;

  if ((mask & IBV_QP_QKEY) && qp->qp_type != IBV_QPT_UD) return EINVAL;
  if (mask & IBV_QP_AV) {
    // An IPv6 path needs an IPv6 source GID and a unicast destination.
    const Ipv6Addr dgid = ipv6_of(attr.ah_attr.grh.dgid);
    const uint8_t sgid = attr.ah_attr.grh.sgid_index;
    if (!is_ipv4_mapped(dgid) &&
        (sgid == 1 || sgid >= gids_.size() || dgid[0] == 0xff || dgid == Ipv6Addr{}))
      return EINVAL;
  }
  if (mask & IBV_QP_QKEY) qp->qkey = attr.qkey;
  if (qp->qp_type == IBV_QPT_UD && next == IBV_QPS_INIT && cur == IBV_QPS_RESET) {
    // UD frames take the DSCP of their address handle (create_ah); the QP's transmit
    // priority under PFC is the host's data DSCP's.
    qp->data_priority = params_.dscp_to_priority[params_.data_dscp];
  }
  if (mask & IBV_QP_ACCESS_FLAGS) qp->access = static_cast<int>(attr.qp_access_flags);
  if (mask & IBV_QP_AV) {
    const Ipv6Addr dgid = ipv6_of(attr.ah_attr.grh.dgid);
    uint32_t dest_ip = 0;
    if (is_ipv4_mapped(dgid, &dest_ip)) {
      qp->ipv6 = false;
      qp->dest_ip = dest_ip;
      qp->sgid_index = 1;
    } else {
      // RoCEv2 over IPv6 (annex A17.4.2): from the IPv6 GID the source index names.
      const uint8_t sgid = attr.ah_attr.grh.sgid_index;
      qp->ipv6 = true;
      qp->dest_ip = 0;
      qp->dest_ip6 = dgid;
      qp->sgid_index = sgid;
      qp->flow_label = attr.ah_attr.grh.flow_label & 0xfffff;
    }
    const uint8_t tclass = attr.ah_attr.grh.traffic_class;
    const uint8_t dscp = tclass != 0 ? static_cast<uint8_t>(tclass >> 2) : params_.data_dscp;
    qp->tos = static_cast<uint8_t>(dscp << 2 | (params_.ecn_capable ? wire::kEcnEct0 : 0));
  }
  if (mask & IBV_QP_DEST_QPN) qp->dest_qpn = attr.dest_qp_num & kPsnMask;
  if (mask & IBV_QP_RQ_PSN) qp->epsn = attr.rq_psn & kPsnMask;
  if (mask & IBV_QP_SQ_PSN) {
    qp->sq_psn = qp->una_psn = attr.sq_psn & kPsnMask;
  }
  if (mask & IBV_QP_TIMEOUT) qp->timeout = attr.timeout & 31;
  if (mask & IBV_QP_RETRY_CNT) qp->retry_cnt = attr.retry_cnt & 7;
  if (mask & IBV_QP_RNR_RETRY) qp->rnr_retry = attr.rnr_retry & 7;
  if (mask & IBV_QP_MIN_RNR_TIMER) qp->min_rnr_timer = attr.min_rnr_timer & 31;
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
    qp->max_rd_atomic = attr.max_rd_atomic ? attr.max_rd_atomic : 1;
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) qp->max_dest_rd_atomic = attr.max_dest_rd_atomic;
  if (mask & (IBV_QP_AV | IBV_QP_DEST_QPN)) rebuild_templates(*qp);

  if (next == IBV_QPS_ERR && cur != IBV_QPS_ERR) {
    enter_error(*qp, IBV_WC_WR_FLUSH_ERR);
  } else if (next == IBV_QPS_RESET) {
    // Back to a fresh QP: drop every queued work request without completions.
    Qp fresh;
    fresh.qpn = qp->qpn;
    fresh.qp_type = qp->qp_type;
    fresh.pd = qp->pd;
    fresh.send_cq = qp->send_cq;
    fresh.recv_cq = qp->recv_cq;
    fresh.sq = qp->sq.emptied();
    fresh.rq = qp->rq.emptied();
    fresh.reads = qp->reads.emptied();
    fresh.max_send_sge = qp->max_send_sge;
    fresh.max_recv_sge = qp->max_recv_sge;
    fresh.initial_psn = qp->initial_psn;
    fresh.timeout = params_.timeout;
    fresh.retry_cnt = params_.retry_cnt;
    fresh.rnr_retry = params_.rnr_retry;
    fresh.min_rnr_timer = params_.min_rnr_timer;
    fresh.mtu_bytes = params_.mtu_bytes;
    fresh.window_bytes = qp->window_bytes;
    *qp = std::move(fresh);
  } else {
    qp->state = next;
  }
  if (next == IBV_QPS_RTS && cur == IBV_QPS_RTR) {
    qp->retries_left = qp->retry_cnt;
    qp->rnr_left = qp->rnr_retry;
  }
  return 0;
}

void RoceHost::push_wc(uint32_t cq, const ibv_wc& wc) noexcept {
  if (cqs_[cq].push(wc))
    ++wc_waiting_;
  else
    ++counters_.cq_overflows;
}

void RoceHost::complete_send_wqe(Qp& qp, SendWqe& w, ibv_wc_status status) noexcept {
  if (status == IBV_WC_SUCCESS && !(w.send_flags & IBV_SEND_SIGNALED)) return;
  ibv_wc wc{};
  wc.wr_id = w.wr_id;
  wc.status = status;
  switch (w.opcode) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
      wc.opcode = IBV_WC_SEND;
      break;
    case IBV_WR_RDMA_READ:
      wc.opcode = IBV_WC_RDMA_READ;
      break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      wc.opcode = IBV_WC_COMP_SWAP;
      break;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      wc.opcode = IBV_WC_FETCH_ADD;
      break;
    default:
      wc.opcode = IBV_WC_RDMA_WRITE;
      break;
  }
  // Bytes written into the local SGEs: a READ's data, an atomic's 8-byte original value.
  wc.byte_len = is_rd_atomic(w.opcode) ? w.length : 0;
  wc.qp_num = qp.qpn;
  wc.src_qp = qp.dest_qpn;
  push_wc(qp.send_cq, wc);
}

void RoceHost::enter_error(Qp& qp, ibv_wc_status head_status) noexcept {
  // The failing WQE completes with its status; everything behind it is flushed (IBTA
  // 10.3.1.3, 11.6.2): all send WQEs, then all posted receive WQEs.
  bool first = true;
  for (uint32_t i = qp.sq.head; i != qp.sq.tail; ++i) {
    SendWqe& w = qp.sq.at(i);
    w.send_flags |= IBV_SEND_SIGNALED;  // errors are always reported
    complete_send_wqe(qp, w, first ? head_status : IBV_WC_WR_FLUSH_ERR);
    first = false;
  }
  qp.sq.head = qp.sq.tail;
  qp.sq_send = qp.sq.tail;
  for (uint32_t i = qp.rq.head; i != qp.rq.tail; ++i) {
    ibv_wc wc{};
    wc.wr_id = qp.rq.at(i).wr_id;
    wc.status = IBV_WC_WR_FLUSH_ERR;
    wc.opcode = IBV_WC_RECV;
    wc.qp_num = qp.qpn;
    push_wc(qp.recv_cq, wc);
  }
  qp.rq.head = qp.rq.tail;
  qp.reads.head = qp.reads.tail;
  qp.ctl = CtlKind::kNone;
  qp.cnp_pending = false;
  qp.retrans_deadline = kNever;
  qp.state = IBV_QPS_ERR;
}

int RoceHost::post_send(uint32_t qpn, const ibv_send_wr* wr, const ibv_send_wr** bad) noexcept {
  Qp* qp = find_qp(qpn);
  for (; wr; wr = wr->next) {
    if (!qp || qp->state != IBV_QPS_RTS || wr->num_sge < 0 || wr->num_sge > qp->max_send_sge) {
      if (bad) *bad = wr;
      return EINVAL;
    }
    if (qp->sq.full()) {
      if (bad) *bad = wr;
      return ENOMEM;
    }
    SendWqe w;
    w.wr_id = wr->wr_id;
    w.opcode = wr->opcode;
    w.send_flags = wr->send_flags;
    w.imm_be = wr->imm_data;
    w.num_sge = wr->num_sge;
    uint64_t total = 0;
    bool ok = true;
    for (int i = 0; i < wr->num_sge; ++i) {
      const ibv_sge& s = wr->sg_list[i];
      const MemoryRegion* mr = find_mr(s.lkey, false);
      const bool need_write = is_rd_atomic(wr->opcode);  // the response lands in the SGEs
      if (!mr || mr->pd != qp->pd || !mr->contains(s.addr, s.length) ||
          (need_write && !(mr->access & IBV_ACCESS_LOCAL_WRITE)))
        ok = false;
      w.sge[i] = s;
      // Kept as the host address the requester copies from (or a READ's response into).
      if (ok) w.sge[i].addr = reinterpret_cast<uint64_t>(mr->at(s.addr));
      total += s.length;
    }
    switch (wr->opcode) {
      case IBV_WR_SEND:
      case IBV_WR_SEND_WITH_IMM:
        break;
      case IBV_WR_RDMA_WRITE:
      case IBV_WR_RDMA_WRITE_WITH_IMM:
      case IBV_WR_RDMA_READ:
        w.remote_addr = wr->wr.rdma.remote_addr;
        w.rkey = wr->wr.rdma.rkey;
        break;
      case IBV_WR_ATOMIC_CMP_AND_SWP:
      case IBV_WR_ATOMIC_FETCH_AND_ADD:
        // The SGEs receive the 8-byte original value. The remote address is not checked
        // here: a misaligned one is the responder's invalid request NAK (IBTA 9.4.5).
        w.remote_addr = wr->wr.atomic.remote_addr;
        w.rkey = wr->wr.atomic.rkey;
        w.compare_add = wr->wr.atomic.compare_add;
        w.swap = wr->wr.atomic.swap;
        if (total != 8) ok = false;
        break;
      default:
        ok = false;
    }
    if (ok && qp->qp_type != IBV_QPT_RC) ok = unreliable_wr_ok(*qp, *wr, total, w);
    if (!ok || total > (1ull << 31)) {
      if (bad) *bad = wr;
      return EINVAL;
    }
    w.length = static_cast<uint32_t>(total);
    qp->sq.at(qp->sq.tail) = w;
    ++qp->sq.tail;
  }
  return 0;
}

int RoceHost::post_recv(uint32_t qpn, const ibv_recv_wr* wr, const ibv_recv_wr** bad) noexcept {
  Qp* qp = find_qp(qpn);
  for (; wr; wr = wr->next) {
    if (!qp || qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_ERR || wr->num_sge < 0 ||
        wr->num_sge > qp->max_recv_sge) {
      if (bad) *bad = wr;
      return EINVAL;
    }
    if (qp->rq.full()) {
      if (bad) *bad = wr;
      return ENOMEM;
    }
    RecvWqe r;
    r.wr_id = wr->wr_id;
    r.num_sge = wr->num_sge;
    uint64_t total = 0;
    for (int i = 0; i < wr->num_sge; ++i) {
      const ibv_sge& s = wr->sg_list[i];
      const MemoryRegion* mr = find_mr(s.lkey, false);
      if (!mr || mr->pd != qp->pd || !mr->contains(s.addr, s.length) ||
          !(mr->access & IBV_ACCESS_LOCAL_WRITE)) {
        if (bad) *bad = wr;
        return EINVAL;
      }
      r.sge[i] = s;
      r.sge[i].addr = reinterpret_cast<uint64_t>(mr->at(s.addr));  // the host address
      total += s.length;
    }
    r.length = static_cast<uint32_t>(total > UINT32_MAX ? UINT32_MAX : total);
    qp->rq.at(qp->rq.tail) = r;
    ++qp->rq.tail;
  }
  return 0;
}

int RoceHost::poll_cq(uint32_t cq_id, int n, ibv_wc* wc) noexcept {
  if (cq_id >= cqs_.size() || n <= 0) return 0;
  CompletionQueue& cq = cqs_[cq_id];
  int got = 0;
  while (got < n && cq.count > 0) wc[got++] = cq.pop();
  wc_waiting_ -= static_cast<uint32_t>(got);
  return got;
}

void RoceHost::set_qp_rate_bps(uint32_t qpn, uint64_t rate_bps) noexcept {
  if (Qp* qp = find_qp(qpn)) qp->rate_bps = rate_bps;
}

void RoceHost::set_window_bytes(uint64_t bytes) noexcept {
  window_bytes_ = bytes;
  for (uint32_t i = 0; i < qps_.size(); ++i) {
    qps_[i]->window_bytes = bytes;
    touch(i);
  }
}

int connect_rc(RoceHost& host, uint32_t qpn, const QpInfo& peer, const ConnectOptions& opt) {
  const NicParams& p = host.params();
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.qp_access_flags = static_cast<unsigned>(opt.access);
  if (int rc = host.modify_qp(qpn, a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS)) return rc;
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = opt.path_mtu != 0 ? opt.path_mtu : mtu_enum(p.mtu_bytes);
  a.dest_qp_num = peer.qpn;
  a.rq_psn = peer.psn;
  a.max_dest_rd_atomic = static_cast<uint8_t>(opt.max_dest_rd_atomic >= 0 ? opt.max_dest_rd_atomic
                                                                          : opt.max_rd_atomic);
  a.min_rnr_timer = p.min_rnr_timer;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer.gid != Ipv6Addr{} ? gid_of(peer.gid) : ipv4_mapped_gid(peer.ipv4);
  a.ah_attr.grh.sgid_index = opt.sgid_index;
  a.ah_attr.grh.traffic_class = opt.traffic_class;
  a.ah_attr.grh.hop_limit = 64;
  if (int rc = host.modify_qp(qpn, a,
                              IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    return rc;
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn =
      opt.sq_psn >= 0 ? static_cast<uint32_t>(opt.sq_psn) & 0xffffff : host.local_info(qpn).psn;
  a.timeout = static_cast<uint8_t>(opt.timeout >= 0 ? opt.timeout : p.timeout);
  a.retry_cnt = static_cast<uint8_t>(opt.retry_cnt >= 0 ? opt.retry_cnt : p.retry_cnt);
  a.rnr_retry = static_cast<uint8_t>(opt.rnr_retry >= 0 ? opt.rnr_retry : p.rnr_retry);
  a.max_rd_atomic = opt.max_rd_atomic;
  return host.modify_qp(qpn, a,
                        IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                            IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

std::string pfc_and_pool_text(const NicCounters& c, uint64_t paused_ns) {
  uint64_t frames = 0, storms = 0;
  std::string per;
  for (int prio = 0; prio < 8; ++prio) {
    frames += c.pfc_frames_received[prio];
    storms += c.pfc_storms[prio];
    if (c.pfc_frames_received[prio] > 0)
      per += (per.empty() ? " (prio " : ", prio ") + std::to_string(prio) + ": " +
             std::to_string(c.pfc_frames_received[prio]);
  }
  if (!per.empty()) per += ")";
  char line[256];
  std::snprintf(line, sizeof line,
                "pfc frames received %llu%s, paused %.3f ms, watchdog storms %llu, mbuf "
                "allocation failures %llu",
                static_cast<unsigned long long>(frames), per.c_str(),
                static_cast<double>(paused_ns) / 1e6, static_cast<unsigned long long>(storms),
                static_cast<unsigned long long>(c.tx_alloc_failures));
  return line;
}

const char* wc_status_name(int status) noexcept {
  switch (status) {
    case IBV_WC_SUCCESS:
      return "success";
    case IBV_WC_LOC_LEN_ERR:
      return "local length error";
    case IBV_WC_LOC_PROT_ERR:
      return "local protection error";
    case IBV_WC_WR_FLUSH_ERR:
      return "work request flushed";
    case IBV_WC_REM_INV_REQ_ERR:
      return "remote invalid request";
    case IBV_WC_REM_ACCESS_ERR:
      return "remote access error";
    case IBV_WC_REM_OP_ERR:
      return "remote operation error";
    case IBV_WC_RETRY_EXC_ERR:
      return "transport retry counter exceeded";
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return "RNR retry counter exceeded";
    default:
      return "other error (see ibv_wc_status)";
  }
}

}  // namespace rocemu::nic
