// cc_hooks.h — where congestion control (DCQCN, nic/dcqcn) plugs into the RoCE endpoint.
//
// The endpoint implements no congestion control itself. It offers: a per-QP rate limiter
// (RoceHost::set_qp_rate_bps, paced_release.h; the next data packet of a QP may leave at
// max(now, previous release) + serialisation of the previous packet at that rate, and
// next_deadline() reports the release time), and these event hooks. DCQCN maps onto them:
// the NP decides in on_ce_marked() whether to answer a CE-marked arrival with a CNP (annex
// A17.9.3); the RP hears on_cnp() and on_data_sent() and sets the QP rate; its timers run
// through next_deadline()/on_timer(). All calls come from the node's thread, noexcept.
#pragma once

#include <cstdint>

#include "common/time_ns.h"

namespace rocemu::nic {

class CongestionHooks {
 public:
  virtual ~CongestionHooks() = default;
  /// A request with CE set arrived for local QP `qpn`. Return true to send one CNP to the
  /// requester (the QP's peer).
  virtual bool on_ce_marked(uint32_t qpn, TimeNs now) noexcept = 0;
  /// A CNP arrived for local QP `qpn` (the requester side of a flow).
  virtual void on_cnp(uint32_t qpn, TimeNs now) noexcept = 0;
  /// QP `qpn` released a data packet of `bytes` (frame bytes) at `now`.
  virtual void on_data_sent(uint32_t qpn, uint32_t bytes, TimeNs now) noexcept = 0;
  /// Earliest time the hooks want on_timer() (kNever if none).
  virtual TimeNs next_deadline() const noexcept { return kNever; }
  virtual void on_timer(TimeNs /*now*/) noexcept {}
};

}  // namespace rocemu::nic
