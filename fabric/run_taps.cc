// run_taps.cc — see run_taps.h.
#include "fabric/run_taps.h"

#include "fabric/realtime_engine.h"
#include "fabric/virtual_engine.h"
#include "switchsw/soft_switch.h"

namespace rocemu::fabric {

namespace {
std::vector<const sw::SoftSwitch*> const_view(const std::vector<sw::SoftSwitch*>& v) {
  return {v.begin(), v.end()};
}
}  // namespace

RunTaps::RunTaps(const RunConfig& cfg, std::vector<sw::SoftSwitch*> switches,
                 const std::string& out_dir, const std::vector<uint32_t>& node_lcore,
                 uint32_t main_lcore)
    : cfg_(cfg),
      capture_(make_capture_tap(cfg, out_dir)),
      out_dir_(out_dir),
      node_lcore_(node_lcore),
      main_lcore_(main_lcore),
      telemetry_(cfg, const_view(switches), out_dir, node_lcore, main_lcore),
      agent_(cfg, std::move(switches), out_dir) {}

void RunTaps::trace_dcqcn(const std::vector<const DcqcnHooks*>& hooks) {
  if (cfg_.telemetry.dcqcn_interval_ns <= 0) return;
  dcqcn_ = std::make_unique<DcqcnTelemetry>(cfg_.topology.topology, hooks, out_dir_, node_lcore_,
                                            main_lcore_);
}

RunTaps::~RunTaps() { agent_.stop(); }

void RunTaps::attach(VirtualEngine& e) {
  if (capture_) {
    capture_->set_epoch_ns(kVirtualTimeCaptureEpochNs);
    for (const auto& p : cfg_.capture.ports) e.set_tap(p, capture_.get());
  }
  if (telemetry_.on())
    e.every(cfg_.telemetry.interval_ns, [this](TimeNs now) { telemetry_.sample(now); });
  if (dcqcn_ && dcqcn_->on())
    e.every(cfg_.telemetry.dcqcn_interval_ns, [this](TimeNs now) { dcqcn_->sample(now); });
  if (agent_.on()) e.every(agent_.interval_ns(), [this](TimeNs now) { agent_.step(now); });
}

void RunTaps::attach(RealtimeEngine& e) {
  realtime_ = true;
  if (capture_) {
    capture_->set_epoch_ns(e.wall_clock_at_zero_ns());
    for (const auto& p : cfg_.capture.ports) e.set_tap(p, capture_.get());
  }
  if (telemetry_.on())
    e.every(cfg_.telemetry.interval_ns, [this](TimeNs now) { telemetry_.sample(now); });
  if (dcqcn_ && dcqcn_->on())
    e.every(cfg_.telemetry.dcqcn_interval_ns, [this](TimeNs now) { dcqcn_->sample(now); });
}

void RunTaps::begin() {
  if (realtime_) agent_.start();
}

void RunTaps::end() {
  agent_.stop();
  telemetry_.flush();
  if (dcqcn_) dcqcn_->flush();
}

}  // namespace rocemu::fabric
