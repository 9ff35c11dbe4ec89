// network_mode.cc — perftest server/client over a DPDK af_packet port (see network_mode.h).
#include "apps/perftest/network_mode.h"

#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "apps/interop/dpdk_port.h"
#include "apps/interop/endpoint.h"
#include "apps/interop/side_channel.h"
#include "fabric/eal.h"

namespace rocemu::perftest {

namespace {
using interop::TcpChannel;

constexpr char kVersion[] = "6.06";
constexpr size_t kVersionBytes = 16;
constexpr int kMsgTimeoutMs = 30000;

/// The interface's MAC (/sys/class/net/<iface>/address). Throws if unreadable.
MacAddr iface_mac(const std::string& iface) {
  std::ifstream f("/sys/class/net/" + iface + "/address");
  std::string s;
  MacAddr mac{};
  if (!(f >> s) || !interop::parse_mac(s, mac))
    throw std::runtime_error("interface " + iface + ": no MAC address (does it exist?)");
  return mac;
}

/// The interface's IPv4 address, host order (SIOCGIFADDR). Throws if it has none.
uint32_t iface_ipv4(const std::string& iface) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, iface.c_str(), IFNAMSIZ - 1);
  const int rc = fd < 0 ? -1 : ::ioctl(fd, SIOCGIFADDR, &ifr);
  if (fd >= 0) ::close(fd);
  if (rc != 0) throw std::runtime_error("interface " + iface + ": no IPv4 address");
  return ntohl(reinterpret_cast<const sockaddr_in*>(&ifr.ifr_addr)->sin_addr.s_addr);
}

/// The MAC of `ipv4` in the kernel's neighbour table on `iface`. Throws if absent.
MacAddr neighbour_mac(uint32_t ipv4, const std::string& iface) {
  std::ifstream f("/proc/net/arp");
  std::string line;
  std::getline(f, line);  // header
  const std::string want = ipv4_to_string(ipv4);
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string ip, hw, flags, mac, mask, dev;
    in >> ip >> hw >> flags >> mac >> mask >> dev;
    MacAddr m{};
    if (ip == want && dev == iface && flags != "0x0" && interop::parse_mac(mac, m)) return m;
  }
  throw std::runtime_error("no neighbour entry for " + want + " on " + iface +
                           " (is the peer on this link?)");
}

interop::PerftestKey key_of(const Side& s, uint32_t q, uint32_t ipv4) {
  interop::PerftestKey k;
  k.out_reads = 16;
  k.qpn = s.qpns[q];
  k.psn = s.host->local_info(s.qpns[q]).psn;
  k.rkey = s.mr.rkey;
  k.vaddr = s.mr.addr + uint64_t{2} * q * s.half;
  interop::ipv4_mapped_gid_bytes(ipv4, k.gid);
  return k;
}

void send_key(TcpChannel& ch, const interop::PerftestKey& k) {
  const std::string m = interop::format_perftest_key(k);
  ch.send_all(m.data(), m.size(), kMsgTimeoutMs);
}

interop::PerftestKey parse_key(const char* buf) {
  interop::PerftestKey k;
  if (!interop::parse_perftest_key(buf, interop::kPerftestKeyBytes, k))
    throw std::runtime_error("side channel: malformed key message from the peer");
  return k;
}

/// One DPDK port with one RoceHost facing `peer`, and the side created on it.
struct Station {
  std::unique_ptr<interop::ExternalPort> port;
  std::unique_ptr<nic::RoceHost> host;
  std::unique_ptr<interop::Endpoint> ep;
  Side side;
  interop::EndpointAddress self;

  Station(const PerftestOptions& o, const interop::EndpointAddress& me,
          const interop::EndpointAddress& peer, uint32_t half)
      : self(me) {
    const std::string dev = "net_af_packet0";
    // fabric's EAL start (not interop's): the user's `-l`/`--lcores` after `--` replace its
    // default `-l 0`, so two processes on one machine can poll different cores.
    fabric::EalOptions eo;
    eo.program = o.tool;
    eo.user_args = {"--vdev=" + dev + ",iface=" + o.iface + ",framecnt=4096,qdisc_bypass=1",
                    "--log-level", "lib.eal:error"};
    eo.user_args.insert(eo.user_args.end(), o.eal_args.begin(), o.eal_args.end());
    fabric::eal_start(eo);
    port = std::make_unique<interop::ExternalPort>(dev, 8191, 1024);
    const Topology topo = interop::two_host_topology(me, peer, 10'000'000'000ull);
    nic::NicParams np;
    np.mtu_bytes = o.mtu_bytes;
    np.max_qps = o.num_qps + 1;
    host = std::make_unique<nic::RoceHost>(np, topo, 0, port->pool(), me.ipv4);
    ep = std::make_unique<interop::Endpoint>(*port, *host, me);
    side.create(*host, o, half);
  }
  ~Station() {
    ep.reset();
    host.reset();  // frees its mbufs before the port's pool goes
    port.reset();
  }
  void connect_all(const std::vector<interop::PerftestKey>& theirs, const PerftestOptions& o) {
    side.peer_mr.rkey = theirs[0].rkey;
    side.peer_mr.addr = theirs[0].vaddr;
    for (uint32_t q = 0; q < o.num_qps; ++q) {
      const auto ip = interop::ipv4_of_mapped_gid(theirs[q].gid);
      if (!ip) throw std::runtime_error("peer's GID is not IPv4-mapped");
      side.connect(q, nic::QpInfo{theirs[q].qpn, theirs[q].psn, *ip}, o);
    }
  }
};

int run_client(const PerftestOptions& o, const std::vector<uint32_t>& sizes,
               const ResultFn& on_result) {
  const auto server_ip = interop::parse_ipv4(o.server_name);
  if (!server_ip) {
    std::fprintf(stderr, "%s: server '%s' must be an IPv4 address\n", o.tool.c_str(),
                 o.server_name.c_str());
    return 2;
  }
  std::unique_ptr<TcpChannel> ch;
  try {
    ch = std::make_unique<TcpChannel>(TcpChannel::connect_to(
        o.server_name, o.tcp_port, static_cast<int>(o.connect_timeout_s) * 1000));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: cannot reach server %s:%u within %u s (%s)\n", o.tool.c_str(),
                 o.server_name.c_str(), o.tcp_port, o.connect_timeout_s, e.what());
    return 1;
  }
  interop::EndpointAddress me, peer;
  me.ipv4 = iface_ipv4(o.iface);
  me.mac = iface_mac(o.iface);
  peer.ipv4 = *server_ip;
  char version[kVersionBytes] = {};
  std::memcpy(version, kVersion, sizeof kVersion);
  ch->send_all(version, kVersionBytes, kMsgTimeoutMs);
  char reply[kVersionBytes];
  ch->recv_exact(reply, kVersionBytes, kMsgTimeoutMs);
  peer.mac = neighbour_mac(peer.ipv4, o.iface);
  Station st(o, me, peer, std::max<uint32_t>(sizes.back(), 4096));
  for (uint32_t q = 0; q < o.num_qps; ++q) send_key(*ch, key_of(st.side, q, me.ipv4));
  std::vector<interop::PerftestKey> theirs;
  char buf[interop::kPerftestKeyBytes];
  for (uint32_t q = 0; q < o.num_qps; ++q) {
    st.ep->recv_polling(*ch, buf, sizeof buf, kMsgTimeoutMs);
    theirs.push_back(parse_key(buf));
  }
  st.connect_all(theirs, o);
  const TimeNs duration_ns = static_cast<TimeNs>(o.duration_s) * kNsPerSec;
  int rc = 0;
  TestState t;
  for (uint32_t size : sizes) {
    send_key(*ch, key_of(st.side, 0, me.ipv4));  // barrier: the server is ready for `size`
    st.ep->recv_polling(*ch, buf, sizeof buf, kMsgTimeoutMs);
    t.reset(o, size, duration_ns);
    std::memset(st.side.recv_buf(0), 0, st.side.half);
    while (!t.done) {
      const TimeNs now = st.ep->poll();
      if (o.metric == Metric::kBandwidth) {
        if (bw_requester_step(st.side, 0, t, o, now)) t.done = true;
      } else {
        lat_client_step(st.side, t, o, now);
      }
      check_progress(t, now);
    }
    if (o.metric == Metric::kBandwidth) {
      BwResult r;
      r.ok = !t.failed;
      r.error = t.error;
      r.messages = t.messages;
      r.row = bw_summary(t, o);
      on_result(size, &r, nullptr);
    } else {
      LatResult r;
      r.ok = !t.failed;
      r.error = t.error;
      r.iters = t.exchanges;
      r.stats = latency_stats(t.samples_us);
      on_result(size, nullptr, &r);
    }
    if (t.failed) {
      rc = 1;
      break;
    }
  }
  ch->send_all("done", 5, kMsgTimeoutMs);
  st.ep->recv_polling(*ch, buf, 5, kMsgTimeoutMs);
  return rc;
}

int run_server(const PerftestOptions& o, const std::vector<uint32_t>& sizes) {
  std::printf(" Waiting for client to connect on TCP port %u (%s) ...\n", o.tcp_port,
              o.iface.c_str());
  std::fflush(stdout);
  TcpChannel ch =
      TcpChannel::accept_one("0.0.0.0", o.tcp_port, static_cast<int>(o.server_wait_s) * 1000);
  char version[kVersionBytes];
  ch.recv_exact(version, kVersionBytes, kMsgTimeoutMs);
  char mine[kVersionBytes] = {};
  std::memcpy(mine, kVersion, sizeof kVersion);
  ch.send_all(mine, kVersionBytes, kMsgTimeoutMs);
  std::vector<interop::PerftestKey> theirs;
  char buf[interop::kPerftestKeyBytes];
  for (uint32_t q = 0; q < o.num_qps; ++q) {
    ch.recv_exact(buf, sizeof buf, kMsgTimeoutMs);
    theirs.push_back(parse_key(buf));
  }
  const auto client_ip = interop::ipv4_of_mapped_gid(theirs[0].gid);
  if (!client_ip) throw std::runtime_error("client's GID is not IPv4-mapped");
  interop::EndpointAddress me, peer;
  me.ipv4 = iface_ipv4(o.iface);
  me.mac = iface_mac(o.iface);
  peer.ipv4 = *client_ip;
  peer.mac = neighbour_mac(peer.ipv4, o.iface);
  Station st(o, me, peer, std::max<uint32_t>(sizes.back(), 4096));
  st.connect_all(theirs, o);
  for (uint32_t q = 0; q < o.num_qps; ++q) send_key(ch, key_of(st.side, q, me.ipv4));
  // Serve until "done": barriers move to the next size.
  TestState t;
  size_t next_size = 0, have = 0, want = 5;
  uint32_t spins = 0;
  TimeNs last_msg_ns = st.ep->poll();
  const TimeNs idle_limit_ns = static_cast<TimeNs>(o.server_wait_s) * kNsPerSec;
  while (true) {
    const TimeNs now = st.ep->poll();
    if (next_size > 0 && !t.failed) {
      if (o.metric == Metric::kLatency) {
        lat_server_step(st.side, t, o);
      } else if (o.verb == Verb::kSend) {
        int got = 0;
        repost_receives(st.side, t, got);
      }
      if (t.failed) std::fprintf(stderr, "%s: server: %s\n", o.tool.c_str(), t.error.c_str());
    }
    if ((++spins & 63) != 0) continue;
    have = ch.recv_some(buf, want, have);
    if (have < want) {
      if (now - last_msg_ns > idle_limit_ns) throw std::runtime_error("client went silent");
      continue;
    }
    last_msg_ns = now;
    if (want == 5 && std::memcmp(buf, "done", 5) == 0) {
      ch.send_all("done", 5, kMsgTimeoutMs);
      break;
    }
    if (want == 5) {  // a barrier key: read the rest
      want = sizeof buf;
      continue;
    }
    parse_key(buf);
    if (next_size >= sizes.size()) throw std::runtime_error("client asked for more sizes");
    t.reset(o, sizes[next_size++], 0);
    std::memset(st.side.recv_buf(0), 0, st.side.half);
    send_key(ch, key_of(st.side, 0, me.ipv4));
    have = 0;
    want = 5;
  }
  std::printf(" Served %zu message size(s) to %s\n", next_size, ipv4_to_string(peer.ipv4).c_str());
  return t.failed ? 1 : 0;
}
}  // namespace

int run_network(const PerftestOptions& opt, const ResultFn& on_result) {
  const std::vector<uint32_t> sizes = run_sizes(opt);
  try {
    return opt.server_name.empty() ? run_server(opt, sizes) : run_client(opt, sizes, on_result);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", opt.tool.c_str(), e.what());
    return 1;
  }
}

}  // namespace rocemu::perftest
