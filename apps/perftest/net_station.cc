// net_station.cc — the network mode's DPDK port and RoceHost (see net_station.h).
#include "apps/perftest/net_station.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "fabric/eal.h"
#include "fabric/kernel_iface.h"

namespace rocemu::perftest {

namespace {
constexpr uint32_t kBigMbufDataBytes = 8192;  // af_packet framesz 8192 (mbufs add headroom)
}  // namespace

MacAddr iface_mac(const std::string& iface) {
  if (auto mac = fabric::iface_mac(iface)) return *mac;
  throw std::runtime_error("interface " + iface + ": no MAC address (does it exist?)");
}

uint32_t iface_ipv4(const std::string& iface) {
  if (auto ip = fabric::iface_ipv4(iface)) return *ip;
  throw std::runtime_error("interface " + iface + ": no IPv4 address (give --roce_ip)");
}

uint32_t iface_mtu(const std::string& iface) {
  if (auto mtu = fabric::iface_mtu(iface)) return *mtu;
  throw std::runtime_error("interface " + iface + ": cannot read its MTU");
}

MacAddr neighbour_mac(uint32_t ipv4, const std::string& iface) {
  std::ifstream f("/proc/net/arp");
  std::string line;
  std::getline(f, line);  // header
  const std::string want = ipv4_to_string(ipv4);
  bool found_elsewhere = false;
  MacAddr elsewhere{};
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string ip, hw, flags, mac, mask, dev;
    in >> ip >> hw >> flags >> mac >> mask >> dev;
    const auto m = parse_mac(mac);
    if (ip != want || flags == "0x0" || !m) continue;
    if (dev == iface) return *m;
    if (!found_elsewhere) {
      found_elsewhere = true;
      elsewhere = *m;
    }
  }
  if (found_elsewhere) return elsewhere;
  throw std::runtime_error("no neighbour entry for " + want + " on " + iface +
                           " (is the peer on this link?)");
}

MacAddr resolve_neighbour_mac(uint32_t ipv4, const std::string& iface, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (int probe = 0;; ++probe) {
    try {
      return neighbour_mac(ipv4, iface);
    } catch (const std::runtime_error&) {
      if (std::chrono::steady_clock::now() > deadline) throw;
    }
    if (probe % 20 == 0) {  // every 200 ms: the kernel gives up on an unanswered ARP
      const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (fd >= 0) {
        sockaddr_in sin{};
        sin.sin_family = AF_INET;
        sin.sin_port = htons(9);  // discard
        sin.sin_addr.s_addr = htonl(ipv4);
        const char byte = 0;
        (void)::sendto(fd, &byte, 1, 0, reinterpret_cast<const sockaddr*>(&sin), sizeof sin);
        ::close(fd);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

interop::EndpointAddress local_address(const PerftestOptions& o) {
  interop::EndpointAddress me;
  me.mac = iface_mac(o.iface);
  if (o.roce_ip.empty()) {
    me.ipv4 = iface_ipv4(o.iface);
  } else if (auto ip = parse_ipv4(o.roce_ip)) {
    me.ipv4 = *ip;
  } else {
    throw std::runtime_error("--roce_ip " + o.roce_ip + " is not an IPv4 address");
  }
  return me;
}

Station::Station(const PerftestOptions& o, const interop::EndpointAddress& me,
                 const interop::EndpointAddress& peer, uint32_t half)
    : self(me), out_reads(o.out_reads), gid_index(o.gid_index == 0 ? 0 : 1) {
  const bool big = o.mtu_bytes > 1024;
  if (const uint32_t need = o.mtu_bytes + kIfaceMtuOverheadBytes; iface_mtu(o.iface) < need)
    throw std::runtime_error("interface " + o.iface + " has MTU " +
                             std::to_string(iface_mtu(o.iface)) + ", IB MTU " +
                             std::to_string(o.mtu_bytes) + " needs at least " +
                             std::to_string(need) + " (ip link set " + o.iface + " mtu 9000)");
  // fabric's EAL start (not interop's): the user's `-l`/`--lcores` after `--` replace its
  // default `-l 0`, so two processes on one machine can poll different cores.
  fabric::EalOptions eo;
  eo.program = o.tool;
  eo.user_args = {"--log-level", "lib.eal:error"};
  eo.user_args.insert(eo.user_args.end(), o.eal_args.begin(), o.eal_args.end());
  fabric::eal_start(eo);
  interop::EndpointPort port;
  port.iface = o.iface;
  port.pool_mbufs = big ? 4095 : 8191;
  port.mbuf_data_bytes = big ? kBigMbufDataBytes : 2048;
  port.af_packet =
      big ? fabric::AfPacketRing{2048, kBigMbufDataBytes} : fabric::AfPacketRing{4096, 0};
  port.idle_sleep_ns = static_cast<TimeNs>(o.idle_sleep_us) * kNsPerUs;
  ep = std::make_unique<interop::Endpoint>(port, me, peer);
  nic::NicParams np;
  // The responder's READ/atomic resources cover the requests the peer may have outstanding.
  np.max_read_jobs = std::max(np.max_read_jobs, o.out_reads);
  np.mtu_bytes = o.mtu_bytes;
  np.max_qps = o.num_qps + (o.rdma_cm ? 3 : 1);  // -R: QP1 and the key exchange's QP
  np.random_qpns = true;  // QPNs, like PSNs, not guessable from off the path
  // The NIC's random stream draws every QP's initial PSN and every MR key's tag: in real
  // time they must not be guessable by an off-path sender (issue 14, section 6), so it is
  // seeded from the kernel's entropy, not from the address (as it was) or a constant.
  std::random_device entropy;
  const uint64_t seed = uint64_t{entropy()} << 32 | entropy();
  host = std::make_unique<nic::RoceHost>(np, ep->topology(), 0, ep->pool(), seed);
  ep->attach(*host);
  side.create(*host, o, half);
}

Station::~Station() {
  host.reset();  // frees its mbufs before the engine's pool goes
  ep.reset();
}

interop::PerftestKey Station::key(uint32_t q) const {
  interop::PerftestKey k;
  k.out_reads = out_reads;  // what Side::connect gives max_rd_atomic
  k.qpn = side.qpns[q];
  k.psn = side.host->local_info(side.qpns[q]).psn;
  k.rkey = side.mr.rkey;
  k.vaddr = side.mr.addr + uint64_t{2} * q * side.half + side.half;
  ibv_gid g{};
  side.host->gid(gid_index, g);
  std::memcpy(k.gid, g.raw, 16);
  return k;
}

void Station::learn_buffers(const std::vector<interop::PerftestKey>& theirs, uint32_t num_qps) {
  side.peer_mr.rkey = theirs[0].rkey;
  side.peer_mr.addr = theirs[0].vaddr;
  side.peer_addr.clear();
  for (uint32_t q = 0; q < num_qps; ++q) side.peer_addr.push_back(theirs[q].vaddr);
}

void Station::connect_all(const std::vector<interop::PerftestKey>& theirs,
                          const PerftestOptions& o) {
  learn_buffers(theirs, o.num_qps);
  for (uint32_t q = 0; q < o.num_qps; ++q) {
    const auto ip = interop::ipv4_of_mapped_gid(theirs[q].gid);
    if (gid_index == 1 && !ip)
      throw std::runtime_error("peer's GID is IPv6, ours IPv4-mapped: use -x 0 on both sides");
    if (gid_index != 1 && ip)
      throw std::runtime_error("peer's GID is IPv4-mapped, ours IPv6: use -x 1 on both sides");
    nic::QpInfo peer{theirs[q].qpn, theirs[q].psn, ip.value_or(0)};
    if (!ip) std::memcpy(peer.gid.data(), theirs[q].gid, 16);
    side.connect(q, peer, o);
  }
}

}  // namespace rocemu::perftest
