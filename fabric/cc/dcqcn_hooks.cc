// dcqcn_hooks.cc — DcqcnPort -> CongestionHooks adapter (see dcqcn_hooks.h).
#include "fabric/cc/dcqcn_hooks.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "common/config.h"
#include "nic/paced_release.h"
#include "nic/roce_host.h"

namespace rocemu::fabric {

namespace {

dcqcn::DcqcnConfig checked_config(const dcqcn::DcqcnParams& p, uint64_t line_rate_bps) {
  return dcqcn::make_dcqcn_config(p, line_rate_bps);
}

}  // namespace

DcqcnHooks::DcqcnHooks(const dcqcn::DcqcnParams& params, uint64_t line_rate_bps,
                       nic::RoceHost& host, uint32_t max_qps)
    : cfg_(checked_config(params, line_rate_bps)),
      port_(cfg_, max_qps),
      host_(&host),
      pushed_bps_(max_qps, 0) {
  // The window (window_kb) is the RoCE host's own in-flight cap on every QP.
  host.set_window_bytes(cfg_.window_bytes);
  deadline_ = port_.next_deadline();
}

int32_t DcqcnHooks::slot(uint32_t qpn) const noexcept {
  const int32_t s = host_->qp_slot(qpn);  // the NIC says which QPs exist
  return s >= 0 && static_cast<uint32_t>(s) < port_.max_qps() ? s : -1;
}

void DcqcnHooks::push_rate(uint32_t s) noexcept {
  const auto r = static_cast<uint64_t>(port_.rp(s).rate_bps());
  if (r == pushed_bps_[s]) return;
  pushed_bps_[s] = r;
  host_->set_qp_rate_bps(host_->qpn_of_slot(s), nic::limiter_rate_bps(r, cfg_.line_rate_bps));
}

void DcqcnHooks::reset_qp(uint32_t qpn) noexcept {
  const int32_t s = slot(qpn);
  if (s < 0) return;
  port_.reset_qp(static_cast<uint32_t>(s));
  deadline_ = port_.next_deadline();
  push_rate(static_cast<uint32_t>(s));
}

bool DcqcnHooks::on_ce_marked(uint32_t qpn, TimeNs now) noexcept {
  const int32_t s = slot(qpn);
  if (s < 0) [[unlikely]] {
    ++unmanaged_;
    return false;
  }
  return port_.on_ce_packet(static_cast<uint32_t>(s), now);
}

void DcqcnHooks::on_cnp(uint32_t qpn, TimeNs now) noexcept {
  const int32_t s = slot(qpn);
  if (s < 0) [[unlikely]] {
    ++unmanaged_;
    return;
  }
  port_.on_cnp(static_cast<uint32_t>(s), now);
  deadline_ = port_.next_deadline();
  push_rate(static_cast<uint32_t>(s));
}

void DcqcnHooks::on_data_sent(uint32_t qpn, uint32_t bytes, TimeNs now) noexcept {
  const int32_t s = slot(qpn);
  if (s < 0) [[unlikely]] {
    ++unmanaged_;
    return;
  }
  port_.on_sent(static_cast<uint32_t>(s), bytes, now);
  deadline_ = port_.next_deadline();
  push_rate(static_cast<uint32_t>(s));
}

void DcqcnHooks::on_timer(TimeNs now) noexcept {
  port_.on_timer(now);
  deadline_ = port_.next_deadline();
  // A slot's rate changes only in on_cnp, on_data_sent, reset_qp (each pushes it) and here,
  // for the slots whose timers fired. The first call pushes every slot once (their initial
  // rates), as every call did before; after that only the fired ones can differ.
  if (!pushed_all_) {
    pushed_all_ = true;
    for (uint32_t s = 0; s < port_.max_qps(); ++s) push_rate(s);
    return;
  }
  for (uint32_t s : port_.fired()) push_rate(s);
}

double DcqcnHooks::rate_bps(uint32_t qpn) const noexcept {
  const int32_t s = slot(qpn);
  return s < 0 ? static_cast<double>(cfg_.line_rate_bps)
               : port_.rp(static_cast<uint32_t>(s)).rate_bps();
}

void DcqcnHooks::write_trace(dcqcn::RateCsvWriter& out, TimeNs now) const {
  for (uint32_t s = 0; s < port_.max_qps(); ++s)
    if (port_.rp(s).congested())
      out.write(dcqcn::sample_rp(port_.rp(s), host_->qpn_of_slot(s), now));
}

struct DcqcnTelemetry::Trace {
  const DcqcnHooks* hooks;
  std::ofstream file;
  std::unique_ptr<dcqcn::RateCsvWriter> csv;
};

DcqcnTelemetry::DcqcnTelemetry(const Topology& topo, const std::vector<const DcqcnHooks*>& hooks,
                               const std::string& out_dir, const std::vector<uint32_t>& node_lcore,
                               uint32_t lcore) {
  for (const DcqcnHooks* h : hooks) {
    const uint32_t n = h->host().node_index();
    if (!node_lcore.empty() && node_lcore[n] != lcore) continue;
    std::filesystem::create_directories(out_dir);
    const auto path = std::filesystem::path(out_dir) / ("dcqcn_" + topo.node(n).name + ".csv");
    auto t = std::make_unique<Trace>();
    t->hooks = h;
    t->file.open(path, std::ios::binary | std::ios::trunc);
    if (!t->file) throw std::runtime_error(path.string() + ": cannot create");
    t->csv = std::make_unique<dcqcn::RateCsvWriter>(t->file);
    traces_.push_back(std::move(t));
  }
}

DcqcnTelemetry::~DcqcnTelemetry() = default;

void DcqcnTelemetry::sample(TimeNs now) {
  for (auto& t : traces_) t->hooks->write_trace(*t->csv, now);
}

void DcqcnTelemetry::flush() {
  for (auto& t : traces_) t->file.flush();
}

std::vector<const DcqcnHooks*> hooks_view(const std::vector<std::unique_ptr<DcqcnHooks>>& hooks) {
  std::vector<const DcqcnHooks*> v;
  for (const auto& h : hooks) v.push_back(h.get());
  return v;
}

uint64_t host_line_rate_bps(const Topology& topo, uint32_t node) noexcept {
  const TopoNode& n = topo.nodes()[node];
  if (n.ports.empty()) return 0;
  return topo.links()[n.ports[0].link].rate_bps;
}

std::vector<std::unique_ptr<DcqcnHooks>> install_dcqcn(const dcqcn::DcqcnParams& params,
                                                       const Topology& topo,
                                                       const std::vector<nic::RoceHost*>& hosts,
                                                       uint32_t max_qps) {
  std::vector<std::unique_ptr<DcqcnHooks>> out;
  for (uint32_t i = 0; i < hosts.size(); ++i) {
    if (hosts[i] == nullptr) continue;
    out.push_back(
        std::make_unique<DcqcnHooks>(params, host_line_rate_bps(topo, i), *hosts[i], max_qps));
    hosts[i]->set_congestion_hooks(out.back().get());
  }
  return out;
}

}  // namespace rocemu::fabric
