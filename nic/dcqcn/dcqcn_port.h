// dcqcn_port.h — the DCQCN state of one NIC port: an RP per QP (sender side) with their
// timers in one deadline tree, and the NP with one flow state per QP (receiver side).
//
// DCQCN, Zhu et al., SIGCOMM 2015, section 3 (NP, RP); the parts are in np.h and rp.h.
// The port decides rates; it does not pace. The RoCE host paces each QP at the rate the
// caller reads from rp(qp) (nic/paced_release.h through RoceHost::set_qp_rate_bps;
// fabric/cc/dcqcn_hooks.h is that caller) and enforces the window (window_bytes of the
// config, RoceHost::set_window_bytes).
//
// Call pattern of the NIC's lcore (one owner; not thread-safe), all with the poll's `now`:
//   sender:   on_sent(q, bytes, now) after each data frame of q (the RP's byte counter);
//             on_cnp(q, now) when a CNP for q arrives; then read rp(q).rate_bps().
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
#include "nic/dcqcn/rate_csv.h"
#include "nic/dcqcn/rp.h"

namespace rocemu::dcqcn {

class DcqcnPort {
 public:
  /// `cfg` must outlive the port. Allocates `max_qps` slots (setup time).
  DcqcnPort(const DcqcnConfig& cfg, uint32_t max_qps);

  /// Returns QP slot `qp` to its initial state (line rate, no CNP, no timers, NP forgotten).
  void reset_qp(uint32_t qp) noexcept;

  // --- sender side -------------------------------------------------------------------
  /// A CNP for `qp` arrived: the RP reacts (cut, alpha, timers).
  void on_cnp(uint32_t qp, TimeNs now) noexcept;
  /// `qp` put a data frame of `bytes` on the wire: the RP's byte counter.
  void on_sent(uint32_t qp, uint32_t bytes, TimeNs now) noexcept;

  // --- receiver side -----------------------------------------------------------------
  /// A CE-marked packet for local QP `qp` arrived: true if a CNP must be sent now.
  bool on_ce_packet(uint32_t qp, TimeNs now) noexcept {
    return np_.on_ce_packet(np_flows_[qp], now);
  }

  // --- time --------------------------------------------------------------------------
  /// Earliest RP timer of any QP (kNever if none is armed).
  TimeNs next_deadline() const noexcept { return rp_deadlines_.min(); }
  /// Processes every RP timer due at or before `now`; fired() then lists their QPs.
  void on_timer(TimeNs now) noexcept;
  /// The QPs whose timers the last on_timer() processed, ascending: the only RPs whose rate
  /// it can have changed.
  const std::vector<uint32_t>& fired() const noexcept { return fired_; }

  // --- telemetry ---------------------------------------------------------------------
  /// Writes one CSV row per QP in [0, n_qps) sampled at `now`.
  void write_samples(RateCsvWriter& out, uint32_t n_qps, TimeNs now);
  const DcqcnRp& rp(uint32_t qp) const noexcept { return rps_[qp]; }
  const Np& np() const noexcept { return np_; }
  const DcqcnConfig& config() const noexcept { return *cfg_; }
  uint32_t max_qps() const noexcept { return static_cast<uint32_t>(rps_.size()); }

 private:
  void sync_deadline(uint32_t qp) noexcept { rp_deadlines_.update(qp, rps_[qp].next_deadline()); }

  const DcqcnConfig* cfg_;
  std::vector<DcqcnRp> rps_;
  std::vector<NpFlow> np_flows_;
  MinTree rp_deadlines_;  // rps_[qp].next_deadline(), kept current by sync_deadline
  std::vector<uint32_t> fired_;  // capacity max_qps (no allocation in on_timer)
  Np np_;
};

}  // namespace rocemu::dcqcn
