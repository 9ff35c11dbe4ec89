// nic_params.h — the [nic] table of a configuration: RoCEv2 endpoint parameters.
//
// Defaults follow Linux rxe and common RoCE deployments: IB MTU 1024, data DSCP 26 (priority
// 3 with the default DSCP/8 mapping), control (ACK/NAK/CNP) DSCP 48 (priority 6), ACK
// request at least every 64 packets (rxe's RXE_MAX_PKT_PER_ACK), local ACK timeout 14
// (4.096 us x 2^14 = 67 ms), retry_cnt 7, rnr_retry 7 (infinite). Sizes in bytes.
#pragma once

#include <array>
#include <cstdint>

#include "common/config.h"
#include "common/pfc_state.h"

namespace rocemu::nic {

/// The room (bytes past the headroom) every mbuf of an eliding host's pool needs: the bytes
/// written of its largest frame (IPv6 headers, 74, with an AtomicETH, 28, and the ICRC of a
/// frame without payload, 4: 106), rounded up to two cache lines.
inline constexpr uint32_t kElidedFrameRoomBytes = 128;

struct NicParams {
  uint32_t mtu_bytes = 1024;            // largest path MTU a QP may use (256..4096, power of 2)
  uint8_t data_dscp = 26;               // DSCP of requests and read responses
  uint8_t control_dscp = 48;            // DSCP of ACK, NAK and CNP packets
  std::array<uint8_t, 64> dscp_to_priority = default_dscp_map();  // 802.1p priority per DSCP
  bool ecn_capable = false;             // data packets marked ECT(0) (on with DCQCN)
  uint32_t max_outstanding_packets = 1024;  // PSN window of a requester
  uint32_t ack_every_packets = 64;      // AckReq at least this often within a message
  uint8_t timeout = 14;                 // default local ACK timeout exponent (0 = infinite)
  uint8_t retry_cnt = 7;                // default transport retries
  uint8_t rnr_retry = 7;                // default RNR retries (7 = infinite)
  uint8_t min_rnr_timer = 1;            // RNR NAK timer code sent by responders (0.01 ms)
  uint32_t max_qps = 256;
  uint32_t max_read_jobs = 16;          // responder READ resources per QP (max_dest_rd_atomic)
  PfcWatchdog pfc_watchdog;             // [nic.pfc_watchdog]; off by default
  // Not a [nic] key: QPNs unpredictable from off the path (the tools that exchange QP numbers
  // with a peer set it, with a NIC seeded from the kernel's entropy). Off: 0x11, 0x12, ...
  bool random_qpns = false;
  // Not a [nic] key: the frames of requests (RC, UC) and READ responses carry their payload's
  // length but not its bytes (nor an ICRC), and received frames' ICRCs are not checked. For
  // virtual-time runs whose memory is not verified (the workload job without a capture;
  // fabric/workload_fabric.h): the bytes a WRITE, SEND or READ moves are timed, not copied. Every
  // host of a run must agree. Atomics still move their 8 bytes. Off: every byte is copied and
  // checked. An elided frame's mbuf holds only what is written (data_len: headers and
  // extended headers, kElidedFrameRoomBytes at most; pkt_len is the frame's full length), so
  // its pool needs no room for payloads; UD QPs, whose datagrams move in full, then need a
  // pool with MTU-sized room (create_qp refuses them otherwise).
  bool elide_payload = false;

  static constexpr std::array<uint8_t, 64> default_dscp_map() {
    std::array<uint8_t, 64> m{};
    for (int d = 0; d < 64; ++d) m[d] = static_cast<uint8_t>(d >> 3);
    return m;
  }
};

/// Reads the [nic] table: every problem goes to r.errors(); calls r.finish().
/// Keys: mtu_bytes, data_dscp, control_dscp, dscp_to_priority (64 integers 0..7),
/// ecn_capable, max_outstanding_packets, ack_every_packets, timeout, retry_cnt, rnr_retry,
/// min_rnr_timer, max_qps, max_read_jobs; table pfc_watchdog (action "forward" only).
NicParams parse_nic_params(ConfigReader& r);

}  // namespace rocemu::nic
