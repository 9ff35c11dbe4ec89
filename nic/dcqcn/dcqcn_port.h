// dcqcn_port.h — the DCQCN state of one NIC port, as the RoCE transport uses it: an RP and
// an optional BDP window per QP (sender side), the port's pacer/scheduler over its QPs,
// and the NP with one flow state per QP (receiver side).
//
// DCQCN, Zhu et al., SIGCOMM 2015, section 3 (NP, RP) with the pacing of section 3.1; the
// parts are in np.h, rp.h, pacer.h, window.h. This type only keeps them consistent: every
// rate change of an RP reaches the pacer at once, and a QP is offered to the scheduler only
// while it has data and its window is open.
//
// Call pattern of the NIC's lcore (one owner; not thread-safe), all with the poll's `now`:
//   sender:   set_backlogged(qp, true) when work is queued; q = pick(now); build and send
//             one frame of q; on_sent(q, bytes, now); on_acked(q, bytes) on ACKs;
//             on_cnp(q, now) when a CNP for q arrives.
//   receiver: if (on_ce_packet(qp, now)) send a CNP (np.h: write_cnp_transport) to the
//             sender's QP, in class cnp_priority / DSCP cnp_dscp.
//   timers:   come back at next_deadline() and call on_timer(now).
// Units: ns, bytes, bit/s. QP slots are indices 0..max_qps-1 allocated at construction.
#pragma once

#include <cstdint>
#include <vector>

#include "common/min_tree.h"
#include "common/time_ns.h"
#include "nic/dcqcn/dcqcn_params.h"
#include "nic/dcqcn/np.h"
#include "nic/dcqcn/pacer.h"
#include "nic/dcqcn/rate_csv.h"
#include "nic/dcqcn/rp.h"
#include "nic/dcqcn/window.h"

namespace rocemu::dcqcn {

class DcqcnPort {
 public:
  /// `cfg` must outlive the port. Allocates `max_qps` slots (setup time).
  DcqcnPort(const DcqcnConfig& cfg, uint32_t max_qps);

  /// Returns QP slot `qp` to its initial state (line rate, no CNP, empty window, idle).
  void reset_qp(uint32_t qp) noexcept;

  // --- sender side -------------------------------------------------------------------
  /// A CNP for `qp` arrived: the RP reacts and the pacer takes the new rate.
  void on_cnp(uint32_t qp, TimeNs now) noexcept;
  /// Whether `qp` has frames waiting.
  void set_backlogged(uint32_t qp, bool backlogged) noexcept;
  /// The QP that may send a frame now (backlogged, window open, paced rate allows), or -1.
  int32_t pick(TimeNs now) noexcept { return pacer_.pick(now); }
  /// `qp` put a frame of `bytes` on the wire: pacer spacing, RP byte counter, window.
  void on_sent(uint32_t qp, uint32_t bytes, TimeNs now) noexcept;
  /// `bytes` of `qp` were acknowledged (window only).
  void on_acked(uint32_t qp, uint64_t bytes) noexcept;

  // --- receiver side -----------------------------------------------------------------
  /// A CE-marked packet for local QP `qp` arrived: true if a CNP must be sent now.
  bool on_ce_packet(uint32_t qp, TimeNs now) noexcept {
    return np_.on_ce_packet(np_flows_[qp], now);
  }

  // --- time --------------------------------------------------------------------------
  /// Earliest of: an RP timer of any QP, the time a backlogged QP becomes eligible.
  TimeNs next_deadline() const noexcept;
  /// Processes every RP timer due at or before `now` and hands new rates to the pacer.
  void on_timer(TimeNs now) noexcept;

  // --- telemetry ---------------------------------------------------------------------
  /// Writes one CSV row per QP in [0, n_qps) sampled at `now`.
  void write_samples(RateCsvWriter& out, uint32_t n_qps, TimeNs now);
  const DcqcnRp& rp(uint32_t qp) const noexcept { return rps_[qp]; }
  const BdpWindow& window(uint32_t qp) const noexcept { return windows_[qp]; }
  const Pacer& pacer() const noexcept { return pacer_; }
  const Np& np() const noexcept { return np_; }
  const DcqcnConfig& config() const noexcept { return *cfg_; }
  uint32_t max_qps() const noexcept { return static_cast<uint32_t>(rps_.size()); }

 private:
  void sync_rate(uint32_t qp, TimeNs now) noexcept;
  void sync_active(uint32_t qp) noexcept;
  void sync_deadline(uint32_t qp) noexcept { rp_deadlines_.update(qp, rps_[qp].next_deadline()); }

  const DcqcnConfig* cfg_;
  std::vector<DcqcnRp> rps_;
  std::vector<BdpWindow> windows_;
  std::vector<NpFlow> np_flows_;
  std::vector<uint8_t> backlogged_;
  uint32_t num_backlogged_ = 0;  // the pacer has no active QP while this is 0
  MinTree rp_deadlines_;         // rps_[qp].next_deadline(), kept current by sync_deadline
  Pacer pacer_;
  Np np_;
};

}  // namespace rocemu::dcqcn
