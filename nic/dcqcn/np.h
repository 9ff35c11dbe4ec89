// np.h — DCQCN notification point (NP): when a CE-marked packet should produce a CNP, and
// the CNP's transport header.
//
// DCQCN, Zhu et al., SIGCOMM 2015, section 3.1 ("NP algorithm"): if a CE-marked packet
// arrives for a flow and no CNP was sent for that flow in the last N microseconds
// (cnp_interval, default 50 us), a CNP is sent at once. A flow is a QP here.
// CNP format: IBTA Vol. 1 annex A17 (RoCEv2), A17.9 (congestion notification): BTH with
// OpCode 0x81 (CNP), DestQP = the QP of the flow's sender, then 16 reserved bytes (zero),
// then the ICRC. It travels in the high-priority class (cnp_dscp / cnp_priority of Config).
// Units: ns. Not thread-safe: one Np per NIC port, owned by the NIC's lcore.
#pragma once

#include <cstdint>

#include "common/time_ns.h"
#include "common/wire.h"

namespace rocemu::dcqcn {

/// Per-flow NP state; the NIC keeps one in each responder-side QP.
struct NpFlow {
  TimeNs last_cnp_ns = kNever;  // kNever: no CNP sent yet
};

struct NpCounters {
  uint64_t ce_packets = 0;       // CE-marked packets seen
  uint64_t cnps_sent = 0;        // on_ce_packet() answered true
  uint64_t cnps_suppressed = 0;  // CE packets inside a flow's interval
};

class Np {
 public:
  explicit Np(TimeNs cnp_interval_ns) noexcept : interval_ns_(cnp_interval_ns) {}

  /// A CE-marked packet of `flow` arrived at `now`. Returns true if the caller must send a
  /// CNP for it now (and records the send); false if one was sent less than the interval
  /// ago. Time going backwards (now < last CNP) counts as inside the interval.
  bool on_ce_packet(NpFlow& flow, TimeNs now) noexcept {
    ++counters_.ce_packets;
    if (flow.last_cnp_ns != kNever && now - flow.last_cnp_ns < interval_ns_) {
      ++counters_.cnps_suppressed;
      return false;
    }
    flow.last_cnp_ns = now;
    ++counters_.cnps_sent;
    return true;
  }

  TimeNs interval_ns() const noexcept { return interval_ns_; }
  const NpCounters& counters() const noexcept { return counters_; }

 private:
  TimeNs interval_ns_;
  NpCounters counters_;
};

inline constexpr uint32_t kCnpReservedBytes = 16;
/// BTH + reserved bytes, the part of a CNP after UDP and before the ICRC.
inline constexpr uint32_t kCnpTransportBytes = sizeof(wire::Bth) + kCnpReservedBytes;
/// Whole CNP frame without FCS: Ethernet + IPv4 + UDP + BTH + 16 + ICRC = 74 bytes.
inline constexpr uint32_t kCnpFrameBytes =
    wire::kRoceHeadersBytes + kCnpReservedBytes + wire::kIcrcBytes;
static_assert(kCnpFrameBytes == 74);
inline constexpr uint16_t kDefaultPkey = 0xFFFF;

/// Writes a CNP's BTH and its 16 reserved bytes at `p` (kCnpTransportBytes bytes): opcode
/// 0x81, SE = M = 0, PadCnt = 0, TVer = 0, P_Key `pkey`, DestQP `dest_qpn` (the sender's
/// QP, 24 bits), A = 0, PSN 0, reserved bytes zero. The caller owns the buffer.
inline void write_cnp_transport(uint8_t* p, uint32_t dest_qpn,
                                uint16_t pkey = kDefaultPkey) noexcept {
  auto* bth = reinterpret_cast<wire::Bth*>(p);
  bth->opcode = wire::kCnp;
  bth->set_flags(false, false, 0, 0);
  bth->set_pkey(pkey);
  bth->resv8a = 0;
  bth->set_dqpn(dest_qpn & 0xFFFFFF);
  bth->set_ack_req(false);
  bth->set_psn(0);
  for (uint32_t i = 0; i < kCnpReservedBytes; ++i) p[sizeof(wire::Bth) + i] = 0;
}

/// True if `bth` is a CNP (opcode 0x81).
inline bool is_cnp(const wire::Bth& bth) noexcept { return bth.opcode == wire::kCnp; }

}  // namespace rocemu::dcqcn
