// perftest_server.cc — rocemu as the passive server of perftest's ib_write_bw / ib_read_bw
// (perftest 4.5 as in Debian 12, perftest_communication.c), for the guest's client.
//
// The side channel on TCP 18515 is lock-step: the client sends a message and the server
// answers with one of the same size (observed in data/golden-rxe 06/09 of INTEROP.md):
//   16 bytes  version "6.06", NUL padded           -> ours
//   4, 4, 2   parameter checks (MTU, ...)          -> echoed
//   108 bytes "%04x:%04x:%06x:%06x:%08x:%016llx:" (lid:out_reads:qpn:psn:rkey:vaddr) + the
//             GID as 16 "%02x:" + "%08x:" (srqn)   -> ours; the first one connects the QP,
//                                                     later ones are barriers
//   8 bytes   result values after the test         -> echoed
//   "done\0"  end                                   -> "done\0"
// The traffic itself needs nothing from the server but a QP in RTS and a large enough region.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "apps/interop/scenarios.h"
#include "apps/interop/side_channel.h"

namespace rocemu::interop {

namespace {
constexpr uint64_t kRegionBytes = 64ull << 20;  // more than perftest's buffer for -s <= 1 MiB

/// Receives one client message of the lock-step channel while polling the port.
size_t recv_message(Endpoint& ep, TcpChannel& ch, char* buf, size_t fixed, int timeout_ms) {
  if (fixed) {
    ep.recv_polling(ch, buf, fixed, timeout_ms);
    return fixed;
  }
  // Sized by content: a key starts "0000:", the end is "done\0", results are 8 bytes.
  ep.recv_polling(ch, buf, 5, timeout_ms);
  size_t n = std::memcmp(buf, "done", 5) == 0    ? 5
             : std::memcmp(buf, "0000:", 5) == 0 ? kPerftestKeyBytes
                                                 : 8;
  if (n > 5) ep.recv_polling(ch, buf + 5, n - 5, timeout_ms);
  return n;
}
}  // namespace

int run_perftest_server(Endpoint& ep, nic::RoceHost& host, const ScenarioOptions& opt) {
  std::vector<uint8_t> region(kRegionBytes, 0);
  const uint32_t pd = host.alloc_pd();
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  const nic::MrInfo mr = host.reg_mr(pd, region.data(), region.size(), access);
  if (mr.lkey == 0) throw std::runtime_error("perftest: cannot register the region");
  for (uint32_t run = 0; run < opt.iters; ++run) {
    const uint32_t cq = host.create_cq(64);
    nic::QpInitAttr qa;
    qa.pd = pd;
    qa.send_cq = qa.recv_cq = cq;
    const uint32_t qpn = host.create_qp(qa);
    if (qpn == 0) throw std::runtime_error("perftest: cannot create a QP");
    TcpChannel ch = TcpChannel::accept_one(opt.side_ip, kPingpongPort, opt.timeout_ms);
    char buf[kPerftestKeyBytes + 1] = {};
    static const size_t kFixed[] = {16, 4, 4, 2};
    uint32_t step = 0, keys = 0;
    bool done = false;
    const auto t0 = std::chrono::steady_clock::now();
    while (!done) {
      const size_t fixed = step < 4 ? kFixed[step] : 0;
      const size_t n = recv_message(ep, ch, buf, fixed, opt.timeout_ms);
      std::string reply(buf, n);  // parameter checks and results: echoed
      if (step == 0) {
        reply.assign(16, '\0');
        reply.replace(0, 4, "6.06");
      } else if (n == kPerftestKeyBytes && step >= 4) {
        PerftestKey theirs;
        if (!parse_perftest_key(buf, kPerftestKeyBytes, theirs))
          throw std::runtime_error("perftest: malformed key message");
        PerftestKey mine;
        mine.out_reads = theirs.out_reads;
        mine.qpn = qpn;
        mine.psn = host.local_info(qpn).psn;
        mine.rkey = mr.rkey;
        mine.vaddr = mr.addr;
        ipv4_mapped_gid_bytes(host.ipv4(), mine.gid);
        if (keys++ == 0) {
          const auto ip = ipv4_of_mapped_gid(theirs.gid);
          if (!ip) throw std::runtime_error("perftest: client GID is not IPv4-mapped (use -x 1)");
          nic::ConnectOptions co;
          co.access = access;
          co.timeout = opt.ack_timeout;
          co.max_rd_atomic = static_cast<uint8_t>(theirs.out_reads > host.params().max_read_jobs
                                                      ? host.params().max_read_jobs
                                                      : theirs.out_reads);
          if (int rc = nic::connect_rc(host, qpn, nic::QpInfo{theirs.qpn, theirs.psn, *ip}, co))
            throw std::runtime_error("perftest: connect_rc failed: " + std::to_string(rc));
          std::printf(
              "perftest run %u: client QPN 0x%06x PSN 0x%06x out_reads %u; rocemu QPN "
              "0x%06x\n",
              run + 1, theirs.qpn, theirs.psn, theirs.out_reads, qpn);
        }
        reply = format_perftest_key(mine);
      } else if (n == 5) {
        done = true;
      }
      ch.send_all(reply.data(), reply.size());
      ++step;
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("perftest run %u: PASS, client finished after %.3f s (%u key exchanges)\n", run + 1,
                secs, keys);
  }
  std::printf("%s", ep.counters_report().c_str());
  return 0;
}

}  // namespace rocemu::interop
