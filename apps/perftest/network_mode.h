// network_mode.h — a perftest server or client on one DPDK af_packet port (two processes,
// two hosts or two network namespaces), meeting its peer over perftest's TCP side channel.
//
// Side channel: perftest 4.5's own (src/perftest_communication.c and the tests' main
// functions, as Debian 12's ib_write_bw/ib_read_bw/ib_send_bw speak it in the golden rxe
// captures of ../shared/INTEROP.md), so a rocemu tool runs against a real perftest peer and
// against another rocemu tool alike. TCP port -p (18515); every exchange is lock-step, the
// client sends first:
//   version (16 B), page size and cache line (4 B each), MTU (2 B; both use the smaller),
//   one key per QP (108 B, apps/interop/side_channel.h: the buffer's vaddr and rkey, QPN,
//   PSN, the IPv4-mapped GID), connect, a key (after RTR), one key per QP again;
//   per size: a key as a barrier for SEND, latency and -b tests (half-duplex WRITE/READ
//   clients run all sizes back to back; their server only waits);
//   -b: after each size the 40-byte reports each way; each side prints the sum of both
//   directions (perftest's print_full_bw_report);
//   half-duplex WRITE/READ: a key and the client's report of its last size, which the
//   server prints as its table; SEND servers measure what they receive and print that;
//   end: a key, then "done\0" each way.
// The RoCE address is --roce_ip or the interface's IPv4 address (GID IPv4-mapped, so the
// peer uses GID index 1 on Linux rxe: -x 1); the endpoint answers ARP for it itself
// (apps/interop/endpoint.h). The peer's MAC comes from the kernel's neighbour table,
// filled by the TCP handshake (net_station.h).
#pragma once

#include <cstdint>
#include <functional>

#include "apps/perftest/loopback_bench.h"

namespace rocemu::perftest {

/// Called once per message size with this side's table row (bandwidth or latency): the
/// client's own; a SEND server's receive side; a WRITE/READ server's copy of the client's
/// last row; with -b the sum of both directions; a WRITE/SEND latency server its own
/// samples (READ/atomic latency servers report nothing, as perftest's print no table).
using ResultFn = std::function<void(uint32_t size, const BwResult* bw, const LatResult* lat)>;

/// Runs the server (opt.server_name empty) or the client. Returns 0, 1 (a test failed, the
/// peer is unreachable or broke the side channel, or the port could not start: a message
/// naming the cause is printed), or 2 (the server name is not an IPv4 address).
int run_network(const PerftestOptions& opt, const ResultFn& on_result);

}  // namespace rocemu::perftest
