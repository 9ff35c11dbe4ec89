// switch_nodes.h — the switch side of a run, shared by every job that runs SoftSwitch nodes
// (fabric/write_job.cc, fabric/switch_job.cc): one SoftSwitch per switch node of the
// topology, the [capture] port tap (pcapng, fabric/pcapng_capture.h) and the [telemetry]
// queue series (switchsw/queue_series.h). Set-up and periodic code; nothing here runs per
// packet except CaptureTap::on_packet (only on the ports [capture] names).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/node.h"
#include "fabric/run_config.h"

struct rte_mempool;

namespace rocemu::sw {
class SoftSwitch;
class QueueSeriesWriter;
}  // namespace rocemu::sw

namespace rocemu::fabric {

class PcapngCapture;

/// One SoftSwitch per switch node of cfg's topology ([switch] params, run seed), indexed by
/// topology node; nullptr at hosts. `pool` supplies the PFC frames' mbufs and must outlive
/// the switches. Throws std::invalid_argument (inconsistent [switch] params).
std::vector<std::unique_ptr<sw::SoftSwitch>> build_switches(const RunConfig& cfg,
                                                            rte_mempool* pool);

/// Where virtual time 0 lies in a capture's timestamps: 2000-01-01T00:00:00Z, so a packet
/// sent at engine time t shows in Wireshark at 2000-01-01 00:00:00 + t, identically in every
/// run. Real-time captures use the wall clock at engine time 0 instead.
inline constexpr TimeNs kVirtualTimeCaptureEpochNs = 946684800LL * kNsPerSec;

/// Feeds an engine's port tap into a pcapng file, one capture interface per [capture] port.
class CaptureTap final : public PortTap {
 public:
  CaptureTap(const std::string& path, const CaptureParams& p);
  ~CaptureTap() override;
  void on_packet(PortRef port, bool tx, const rte_mbuf* m, TimeNs now) noexcept override;
  uint64_t captured() const noexcept;
  /// Timestamps are epoch_ns + engine time (PcapngCapture::set_epoch_ns).
  void set_epoch_ns(TimeNs epoch_ns) noexcept;

 private:
  std::unique_ptr<PcapngCapture> cap_;
  std::vector<PortRef> ports_;
};

/// The [capture] tap writing out_dir/<capture.file> (out_dir created), or nullptr if
/// [capture] names no port. Throws std::runtime_error if the file cannot be opened.
std::unique_ptr<CaptureTap> make_capture_tap(const RunConfig& cfg, const std::string& out_dir);

/// [telemetry]: one queue series (queues_<switch>.csv in out_dir) per switch polled by
/// `lcore` (others would race). `switches` is indexed by topology node (build_switches()).
class QueueTelemetry {
 public:
  QueueTelemetry(const RunConfig& cfg, const std::vector<const sw::SoftSwitch*>& switches,
                 const std::string& out_dir, const std::vector<uint32_t>& node_lcore,
                 uint32_t lcore);
  ~QueueTelemetry();
  /// True if [telemetry] is on and some switch is sampled.
  bool on() const noexcept { return !series_.empty(); }
  /// Samples every series at `now` (the switches' lcore, between bursts).
  void sample(TimeNs now);
  void flush();

 private:
  std::vector<std::pair<const sw::SoftSwitch*, std::unique_ptr<sw::QueueSeriesWriter>>> series_;
};

}  // namespace rocemu::fabric
