// dcqcn_hooks.h — DCQCN plugged into a RoceHost: the nic::CongestionHooks that drive one
// dcqcn::DcqcnPort (NP, RP per QP) and hand every rate the RP decides to the host's per-QP
// rate limiter (RoceHost::set_qp_rate_bps).
//
// DCQCN, Zhu et al., SIGCOMM 2015, section 3: NP = on_ce_marked (at most one CNP per flow
// per cnp_interval, IBTA annex A17.9.3), RP = on_cnp / on_data_sent (byte counter) / timers.
// The pacing itself is the host's limiter (nic/paced_release.h: the next data frame of a QP
// leaves at max(now, previous release) + its serialisation at R_C; lifted at line rate), and
// the host schedules its QPs round-robin. The window (window_kb) is put on the host as its
// per-QP in-flight cap (RoceHost::set_window_bytes).
// QP slots: qpn - first_qpn, for qpn in [first_qpn, first_qpn + max_qps); QPs beyond are
// left uncontrolled (counted). Units: ns, bytes, bit/s. One owner: the host's thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/time_ns.h"
#include "common/topology.h"
#include "nic/cc_hooks.h"
#include "nic/dcqcn/dcqcn_params.h"
#include "nic/dcqcn/dcqcn_port.h"
#include "nic/dcqcn/rate_csv.h"

namespace rocemu::nic {
class RoceHost;
}

namespace rocemu::fabric {

class DcqcnHooks final : public nic::CongestionHooks {
 public:
  /// DCQCN for `host` whose port runs at `line_rate_bps`, with room for `max_qps` QPs.
  /// Does not install itself: call host.set_congestion_hooks(this). Both must outlive
  /// each other's use. Throws ConfigError (bad params) like make_dcqcn_config.
  DcqcnHooks(const dcqcn::DcqcnParams& params, uint64_t line_rate_bps, nic::RoceHost& host,
             uint32_t max_qps = 16);

  bool on_ce_marked(uint32_t qpn, TimeNs now) noexcept override;
  void on_cnp(uint32_t qpn, TimeNs now) noexcept override;
  void on_data_sent(uint32_t qpn, uint32_t bytes, TimeNs now) noexcept override;
  TimeNs next_deadline() const noexcept override { return deadline_; }
  void on_timer(TimeNs now) noexcept override;

  /// Forgets the RP state of `qpn` (a destroyed QP whose number a new flow reuses): line
  /// rate, no alpha, no timers.
  void reset_qp(uint32_t qpn) noexcept;
  /// The RP's current rate of `qpn` (line rate for an unknown QP).
  double rate_bps(uint32_t qpn) const noexcept;
  const dcqcn::DcqcnPort& port() const noexcept { return port_; }
  const dcqcn::DcqcnConfig& config() const noexcept { return cfg_; }
  const nic::RoceHost& host() const noexcept { return *host_; }
  /// [telemetry] dcqcn_interval_us: one row (dcqcn/rate_csv.h; qp = the QPN) per QP whose
  /// RP has had a CNP, as it is at `now`; the RPs are not changed.
  void write_trace(dcqcn::RateCsvWriter& out, TimeNs now) const;
  /// Events for QPs outside the slots (no congestion control applied to them).
  uint64_t unmanaged_events() const noexcept { return unmanaged_; }

 private:
  int32_t slot(uint32_t qpn) const noexcept;
  void push_rate(uint32_t slot) noexcept;

  // port_.next_deadline(), refreshed after every change of the port (the NIC asks after
  // every call; beside the vtable pointer, it costs no cache line of its own there).
  TimeNs deadline_ = kNever;
  dcqcn::DcqcnConfig cfg_;  // before port_: the port keeps a pointer to it
  dcqcn::DcqcnPort port_;
  nic::RoceHost* host_;
  std::vector<uint64_t> pushed_bps_;  // last rate handed to the host per slot
  bool pushed_all_ = false;           // on_timer has pushed every slot once
  uint64_t unmanaged_ = 0;
};

/// [telemetry] dcqcn_interval_us: one dcqcn_<host>.csv (dcqcn/rate_csv.h columns; qp = the
/// QPN) per host with DCQCN, a DcqcnHooks::write_trace at every sample(). A QP appears from
/// its first CNP on (before it, it sends at line rate). In real time only the hosts polled
/// by `lcore` (node_lcore: the placement, empty = all on `lcore`); others would race.
class DcqcnTelemetry {
 public:
  /// Creates the files in `out_dir` (created). Throws std::runtime_error if it cannot.
  DcqcnTelemetry(const Topology& topo, const std::vector<const DcqcnHooks*>& hooks,
                 const std::string& out_dir, const std::vector<uint32_t>& node_lcore = {},
                 uint32_t lcore = 0);
  ~DcqcnTelemetry();
  bool on() const noexcept { return !traces_.empty(); }
  void sample(TimeNs now);
  void flush();

 private:
  struct Trace;
  std::vector<std::unique_ptr<Trace>> traces_;
};

/// Non-owning view of hooks, e.g. install_dcqcn's result for DcqcnTelemetry.
std::vector<const DcqcnHooks*> hooks_view(const std::vector<std::unique_ptr<DcqcnHooks>>& hooks);

/// Line rate of host `node`'s port 0 in `topo` (0 if it has no port).
uint64_t host_line_rate_bps(const Topology& topo, uint32_t node) noexcept;

/// Hooks for every host of `topo` in `hosts` (parallel to topo.nodes(); nullptr entries are
/// switches), installed on each host; the result owns them (keep it alive while the hosts
/// run).
std::vector<std::unique_ptr<DcqcnHooks>> install_dcqcn(const dcqcn::DcqcnParams& params,
                                                       const Topology& topo,
                                                       const std::vector<nic::RoceHost*>& hosts,
                                                       uint32_t max_qps = 16);

}  // namespace rocemu::fabric
