// workload_qp_plan.cc — the workload's verbs calls: the plan, posting, reaping (see
// workload_qp_plan.h).
#include "fabric/workload_qp_plan.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "fabric/region_iova.h"

namespace rocemu::fabric {

namespace {
constexpr uint32_t kMaxOutstandingPerQp = workload::LaneScheduler::kMaxOutstandingPerLane;
constexpr size_t kMaxCqEntries = 8192;  // per CQ; 2 per host
}  // namespace

WorkloadQpPlan::WorkloadQpPlan(const RunConfig& cfg, const workload::WorkloadConfig& wcfg,
                               const std::vector<std::unique_ptr<nic::RoceHost>>& hosts,
                               const std::vector<DcqcnHooks*>& cc_of, WorkloadRegions& regions,
                               int32_t local_host)
    : cfg_(cfg),
      wcfg_(wcfg),
      hosts_(hosts),
      cc_of_(cc_of),
      regions_(regions),
      local_(local_host),
      repost_(local_host >= 0 && wcfg.params.op == workload::FlowOp::kSend) {}

void WorkloadQpPlan::build(workload::LaneScheduler& sched, uint32_t lanes_per_pair,
                           bool lane_per_flow) {
  const size_t hn = wcfg_.hosts.size();
  const uint32_t max_send = kMaxOutstandingPerQp;
  side_.resize(hn);
  for (size_t h = 0; h < hn; ++h) {
    nic::RoceHost& nic = host(static_cast<uint32_t>(h));
    HostSide& s = side_[h];
    s.pd = nic.alloc_pd();
    // Every QP's outstanding work fits, up to kMaxCqEntries: the CQs are reaped after every
    // rx burst and timer of the host, so far fewer completions wait at once; without the cap
    // a 1,024-host fabric spent 6.4 GB on CQs (2 x 1,024 hosts x 65,536 x 48 bytes).
    const auto cqe = static_cast<uint32_t>(std::min<size_t>(2 * hn * max_send, kMaxCqEntries));
    s.send_cq = nic.create_cq(cqe);
    s.recv_cq = nic.create_cq(cqe);
    s.src = nic.reg_mr_iova(s.pd, regions_.source(), regions_.bytes(), kSourceRegionIova,
                            IBV_ACCESS_LOCAL_WRITE);
    s.dst = nic.reg_mr_iova(s.pd, regions_.sink(), regions_.bytes(), kSinkRegionIova,
                            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (s.src.lkey == 0 || s.dst.lkey == 0) throw std::runtime_error("workload job: reg_mr failed");
  }
  if (lane_per_flow) return;  // QPs are connected per flow (connect)
  const nic::ConnectOptions opt = connect_options();
  for (uint32_t a = 0; a < hn; ++a) {
    for (uint32_t b = 0; b < hn; ++b) {
      if (a == b) continue;
      nic::RoceHost& ha = host(a);
      nic::RoceHost& hb = host(b);
      const nic::QpInitAttr qa = qp_attr(a, max_send), qb = qp_attr(b, max_send);
      for (uint32_t lane = 0; lane < lanes_per_pair; ++lane) {
        const uint32_t src = ha.create_qp(qa);
        const uint32_t dst = hb.create_qp(qb);
        if (src == 0 || dst == 0)
          throw std::runtime_error(
              "workload job: create_qp failed (" + std::to_string(lanes_per_pair) +
              " QPs per ordered host pair need " + std::to_string(2 * (hn - 1) * lanes_per_pair) +
              " QPs per host; [nic] max_qps = " + std::to_string(cfg_.nic_params.max_qps) + ")");
        if (nic::connect_rc(ha, src, hb.local_info(dst), opt) != 0 ||
            nic::connect_rc(hb, dst, ha.local_info(src), opt) != 0)
          throw std::runtime_error("workload job: connecting an RC QP failed");
        sched.add_lane(a, b, src, dst);
      }
    }
  }
}

void WorkloadQpPlan::prepost_receives(const workload::LaneScheduler& sched) {
  const auto me = static_cast<uint32_t>(local_);
  for (uint32_t a = 0; a < wcfg_.hosts.size(); ++a) {
    if (a == me) continue;
    for (const workload::LaneScheduler::Lane& l : sched.lanes(a, me))
      for (uint32_t k = 0; k < kMaxOutstandingPerQp; ++k)
        (void)post_receive(me, l.dst_qpn, l.dst_qpn);
  }
}

void WorkloadQpPlan::drain_receives(uint32_t h) noexcept {
  ibv_wc wc[32];
  int got;
  while ((got = host(h).poll_cq(side_[h].recv_cq, 32, wc)) > 0) {
    if (!repost_) continue;
    for (int k = 0; k < got; ++k)
      if (wc[k].status == IBV_WC_SUCCESS) (void)post_receive(h, wc[k].qp_num, wc[k].qp_num);
  }
}

int WorkloadQpPlan::poll_completions(uint32_t h, ibv_wc* wc, int n) noexcept {
  return host(h).poll_cq(side_[h].send_cq, n, wc);
}

bool WorkloadQpPlan::post(const workload::FlowSpec& f, uint32_t a, uint32_t b, uint32_t src_qpn,
                          uint32_t dst_qpn) noexcept {
  // In-process: the receive is posted at the destination at the same instant. A per-host
  // process keeps receives posted on its responder QPs instead (prepost_receives).
  if (f.op == workload::FlowOp::kSend && local_ < 0 && !post_receive(b, dst_qpn, f.id))
    return false;
  ibv_sge sge{side_[a].src.addr, static_cast<uint32_t>(f.size_bytes), side_[a].src.lkey};
  ibv_send_wr wr{};
  wr.wr_id = f.id;
  wr.opcode = f.op == workload::FlowOp::kSend ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = side_[b].dst.addr;
  wr.wr.rdma.rkey = side_[b].dst.rkey;
  const ibv_send_wr* bad = nullptr;
  return host(a).post_send(src_qpn, &wr, &bad) == 0;
}

bool WorkloadQpPlan::connect(uint32_t a, uint32_t b, uint32_t& src_qpn,
                             uint32_t& dst_qpn) noexcept {
  nic::RoceHost& ha = host(a);
  nic::RoceHost& hb = host(b);
  const nic::QpInitAttr qa = qp_attr(a, 2), qb = qp_attr(b, 2);  // one flow each
  const uint32_t src = ha.create_qp(qa);
  const uint32_t dst = src ? hb.create_qp(qb) : 0;
  const nic::ConnectOptions opt = connect_options();
  if (src == 0 || dst == 0 || nic::connect_rc(ha, src, hb.local_info(dst), opt) != 0 ||
      nic::connect_rc(hb, dst, ha.local_info(src), opt) != 0) {
    if (src) (void)ha.destroy_qp(src);
    if (dst) (void)hb.destroy_qp(dst);
    return false;  // [nic] max_qps QPs live on one of the hosts: the flow waits
  }
  src_qpn = src;
  dst_qpn = dst;
  return true;
}

void WorkloadQpPlan::disconnect(uint32_t a, uint32_t b, uint32_t src_qpn,
                                uint32_t dst_qpn) noexcept {
  const uint32_t na = wcfg_.hosts[a].id, nb = wcfg_.hosts[b].id;
  // The next QP with this number starts with fresh DCQCN state, as a new flow's QP does.
  if (!cc_of_.empty() && cc_of_[na]) cc_of_[na]->reset_qp(src_qpn);
  if (!cc_of_.empty() && cc_of_[nb]) cc_of_[nb]->reset_qp(dst_qpn);
  (void)hosts_[na]->destroy_qp(src_qpn);
  (void)hosts_[nb]->destroy_qp(dst_qpn);
}

nic::QpInitAttr WorkloadQpPlan::qp_attr(size_t h, uint32_t max_wr) const noexcept {
  nic::QpInitAttr q;
  q.pd = side_[h].pd;
  q.send_cq = side_[h].send_cq;
  q.recv_cq = side_[h].recv_cq;
  q.max_send_wr = q.max_recv_wr = max_wr;
  return q;
}

nic::ConnectOptions WorkloadQpPlan::connect_options() const noexcept {
  nic::ConnectOptions opt;
  opt.path_mtu = nic::mtu_enum(cfg_.nic_params.mtu_bytes);
  return opt;
}

bool WorkloadQpPlan::post_receive(uint32_t h, uint32_t qpn, uint64_t wr_id) noexcept {
  ibv_sge sge{side_[h].dst.addr, static_cast<uint32_t>(regions_.bytes()), side_[h].dst.lkey};
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  const ibv_recv_wr* bad = nullptr;
  return host(h).post_recv(qpn, &wr, &bad) == 0;
}

}  // namespace rocemu::fabric
