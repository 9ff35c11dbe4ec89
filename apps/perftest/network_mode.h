// network_mode.h — a perftest server or client on one DPDK af_packet port (two processes,
// two hosts or two network namespaces), meeting its peer over perftest's TCP side channel.
//
// Side channel (perftest 4.5 perftest_communication.c, as rocemu-interop speaks it,
// apps/interop/side_channel.h): TCP port -p (18515); the client sends a 16-byte version
// ("6.06", NUL padded) and the server answers with its own; the client sends one 108-byte
// key per QP ("%04x:%04x:%06x:%06x:%08x:%016llx:" lid:out_reads:qpn:psn:rkey:vaddr, the GID as
// 16 "%02x:", "%08x:" srqn) and the server, after connecting its QPs, answers with its keys.
// Before each message size the client sends one key again as a barrier (the server answers
// with its key once it is ready for that size); at the end both send "done\0". The RoCE
// address is the interface's IPv4 address (the GID is IPv4-mapped); the peer's MAC comes from
// the kernel's neighbour table (/proc/net/arp), filled by the TCP handshake. The endpoint
// answers ARP itself (apps/interop/endpoint.h). Not yet: -b and MTUs above 1024.
#pragma once

#include <cstdint>
#include <functional>

#include "apps/perftest/loopback_bench.h"

namespace rocemu::perftest {

/// Called once per message size with the client's result (bandwidth or latency).
using ResultFn = std::function<void(uint32_t size, const BwResult* bw, const LatResult* lat)>;

/// Runs the server (opt.server_name empty) or the client. Returns 0, 1 (a test failed or
/// the peer is unreachable: a message naming the address is printed), or 3 (setup).
int run_network(const PerftestOptions& opt, const ResultFn& on_result);

}  // namespace rocemu::perftest
