// dcqcn_port.cc — one NIC port's RPs, their deadline tree and the NP (see dcqcn_port.h).
#include "nic/dcqcn/dcqcn_port.h"

#include <algorithm>

namespace rocemu::dcqcn {

DcqcnPort::DcqcnPort(const DcqcnConfig& cfg, uint32_t max_qps)
    : cfg_(&cfg), np_flows_(max_qps), rp_deadlines_(max_qps), np_(cfg.cnp_interval_ns) {
  rps_.reserve(max_qps);
  fired_.reserve(max_qps);
  for (uint32_t i = 0; i < max_qps; ++i) {
    rps_.emplace_back(cfg);
    sync_deadline(i);
  }
}

void DcqcnPort::reset_qp(uint32_t qp) noexcept {
  rps_[qp] = DcqcnRp(*cfg_);
  np_flows_[qp] = NpFlow{};
  sync_deadline(qp);
}

void DcqcnPort::on_cnp(uint32_t qp, TimeNs now) noexcept {
  rps_[qp].on_cnp(now);
  sync_deadline(qp);
}

void DcqcnPort::on_sent(uint32_t qp, uint32_t bytes, TimeNs now) noexcept {
  rps_[qp].on_bytes_sent(bytes, now);
  sync_deadline(qp);
}

void DcqcnPort::on_timer(TimeNs now) noexcept {
  fired_.clear();
  // The due RPs in slot order, found through the tree (a port has up to [nic] max_qps slots,
  // 256 by default, and a timer is due on one or two of them).
  for (uint32_t qp = rp_deadlines_.first_due(now, 0); qp < max_qps();
       qp = rp_deadlines_.first_due(now, qp + 1)) {
    rps_[qp].on_timer(now);
    sync_deadline(qp);
    fired_.push_back(qp);
  }
}

void DcqcnPort::write_samples(RateCsvWriter& out, uint32_t n_qps, TimeNs now) {
  for (uint32_t qp = 0; qp < std::min(n_qps, max_qps()); ++qp)
    out.write(sample_rp(rps_[qp], qp, now));
}

}  // namespace rocemu::dcqcn
