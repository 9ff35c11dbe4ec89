// dcqcn_port.cc — one NIC port's DCQCN state kept consistent (see dcqcn_port.h).
#include "nic/dcqcn/dcqcn_port.h"

#include <algorithm>

namespace rocemu::dcqcn {

DcqcnPort::DcqcnPort(const DcqcnConfig& cfg, uint32_t max_qps)
    : cfg_(&cfg),
      windows_(max_qps, BdpWindow(cfg.window_bytes)),
      np_flows_(max_qps),
      backlogged_(max_qps, 0),
      rp_deadlines_(max_qps),
      pacer_(max_qps, cfg.line_rate_bps, cfg.pacer_burst_bytes),
      np_(cfg.cnp_interval_ns) {
  rps_.reserve(max_qps);
  for (uint32_t i = 0; i < max_qps; ++i) {
    rps_.emplace_back(cfg);
    sync_deadline(i);
  }
}

void DcqcnPort::reset_qp(uint32_t qp) noexcept {
  rps_[qp] = DcqcnRp(*cfg_);
  windows_[qp] = BdpWindow(cfg_->window_bytes);
  np_flows_[qp] = NpFlow{};
  num_backlogged_ -= backlogged_[qp];
  backlogged_[qp] = 0;
  pacer_.reset_slot(qp, cfg_->line_rate_bps);
  sync_deadline(qp);
}

void DcqcnPort::sync_rate(uint32_t qp, TimeNs now) noexcept {
  pacer_.set_rate(qp, static_cast<uint64_t>(rps_[qp].rate_bps()), now);
}

void DcqcnPort::sync_active(uint32_t qp) noexcept {
  // The window is open while anything of it is left: the next frame may overshoot the
  // limit by less than one frame (the NIC does not tell the scheduler frame sizes).
  const BdpWindow& w = windows_[qp];
  const bool open = w.limit_bytes() == 0 || w.inflight_bytes() < w.limit_bytes();
  pacer_.set_active(qp, backlogged_[qp] != 0 && open);
}

void DcqcnPort::on_cnp(uint32_t qp, TimeNs now) noexcept {
  rps_[qp].on_cnp(now);
  sync_rate(qp, now);
  sync_deadline(qp);
}

void DcqcnPort::set_backlogged(uint32_t qp, bool backlogged) noexcept {
  num_backlogged_ -= backlogged_[qp];
  backlogged_[qp] = backlogged ? 1 : 0;
  num_backlogged_ += backlogged_[qp];
  sync_active(qp);
}

void DcqcnPort::on_sent(uint32_t qp, uint32_t bytes, TimeNs now) noexcept {
  pacer_.on_sent(qp, bytes, now);
  rps_[qp].on_bytes_sent(bytes, now);
  sync_rate(qp, now);
  sync_deadline(qp);
  windows_[qp].on_sent(bytes);
  sync_active(qp);
}

void DcqcnPort::on_acked(uint32_t qp, uint64_t bytes) noexcept {
  windows_[qp].on_acked(bytes);
  sync_active(qp);
}

TimeNs DcqcnPort::next_deadline() const noexcept {
  // A pacer slot is active only while backlogged: with none backlogged its scan finds none.
  const TimeNs t = num_backlogged_ == 0 ? kNever : pacer_.next_eligible_ns();
  return std::min(t, rp_deadlines_.min());
}

void DcqcnPort::on_timer(TimeNs now) noexcept {
  for (uint32_t qp = 0; qp < max_qps() && rp_deadlines_.min() <= now; ++qp) {
    if (rp_deadlines_.at(qp) > now) continue;
    rps_[qp].on_timer(now);
    sync_rate(qp, now);
    sync_deadline(qp);
  }
}

void DcqcnPort::write_samples(RateCsvWriter& out, uint32_t n_qps, TimeNs now) {
  for (uint32_t qp = 0; qp < std::min(n_qps, max_qps()); ++qp)
    out.write(sample_rp(rps_[qp], qp, now));
}

}  // namespace rocemu::dcqcn
