// switch_nodes.cc — SoftSwitch nodes, the [capture] tap and the [telemetry] series of a run.
#include "fabric/switch_nodes.h"

#include <filesystem>

#include "fabric/pcapng_capture.h"
#include "switchsw/queue_series.h"
#include "switchsw/soft_switch.h"

namespace rocemu::fabric {

std::vector<std::unique_ptr<sw::SoftSwitch>> build_switches(const RunConfig& cfg,
                                                            rte_mempool* pool) {
  const Topology& t = cfg.topology.topology;
  std::vector<std::unique_ptr<sw::SoftSwitch>> out(t.nodes().size());
  for (uint32_t i = 0; i < t.nodes().size(); ++i)
    if (t.node(i).kind == NodeKind::kSwitch)
      out[i] = std::make_unique<sw::SoftSwitch>(cfg.switch_params, t, i, pool, cfg.seed);
  return out;
}

CaptureTap::CaptureTap(const std::string& path, const CaptureParams& p)
    : cap_(std::make_unique<PcapngCapture>(path, p.names)), ports_(p.ports) {}

CaptureTap::~CaptureTap() { cap_->flush(); }

void CaptureTap::on_packet(PortRef port, bool tx, const rte_mbuf* m, TimeNs now) noexcept {
  for (uint16_t i = 0; i < ports_.size(); ++i)
    if (ports_[i] == port)
      cap_->capture(
          m, i, tx ? PcapngCapture::Direction::kOut : PcapngCapture::Direction::kIn, now);
}

uint64_t CaptureTap::captured() const noexcept { return cap_->captured(); }

void CaptureTap::set_epoch_ns(TimeNs epoch_ns) noexcept { cap_->set_epoch_ns(epoch_ns); }

std::unique_ptr<CaptureTap> make_capture_tap(const RunConfig& cfg, const std::string& out_dir) {
  if (cfg.capture.ports.empty()) return nullptr;
  std::filesystem::create_directories(out_dir);
  return std::make_unique<CaptureTap>((std::filesystem::path(out_dir) / cfg.capture.file).string(),
                                      cfg.capture);
}

QueueTelemetry::QueueTelemetry(const RunConfig& cfg,
                               const std::vector<const sw::SoftSwitch*>& switches,
                               const std::string& out_dir, const std::vector<uint32_t>& node_lcore,
                               uint32_t lcore) {
  if (cfg.telemetry.interval_ns <= 0) return;
  std::filesystem::create_directories(out_dir);
  const Topology& t = cfg.topology.topology;
  for (uint32_t n : t.switches()) {
    if (!node_lcore.empty() && node_lcore[n] != lcore) continue;
    if (n >= switches.size() || !switches[n]) continue;
    std::vector<uint16_t> ports(t.node(n).ports.size());
    for (uint16_t p = 0; p < ports.size(); ++p) ports[p] = p;
    const auto path = std::filesystem::path(out_dir) / ("queues_" + t.node(n).name + ".csv");
    series_.push_back(
        {switches[n], std::make_unique<sw::QueueSeriesWriter>(path.string(), t.node(n).name, ports,
                                                              cfg.telemetry.interval_ns)});
  }
}

QueueTelemetry::~QueueTelemetry() = default;

void QueueTelemetry::sample(TimeNs now) {
  for (auto& [s, w] : series_) w->sample(*s, now);
}

void QueueTelemetry::flush() {
  for (auto& [s, w] : series_) w->flush();
}

}  // namespace rocemu::fabric
