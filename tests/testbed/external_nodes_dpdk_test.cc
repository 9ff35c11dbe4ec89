// The real-time engine with external nodes (fabric/realtime_engine.h): a 2-host star whose
// hosts live "in another process" — here raw AF_PACKET sockets on the host ends of two veth
// pairs (re0a-re0b, re1a-re1b) that tests/testbed/in_netns.sh creates in a private network
// namespace before running this binary. The switch polls af_packet ports on re0b/re1b only.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/wire.h"
#include "fabric/realtime_engine.h"
#include "fabric/run_config.h"
#include "fabric/switch_nodes.h"
#include "switchsw/soft_switch.h"
#include "tests/support/eal_env.h"

namespace rocemu::fabric {

namespace {

RunConfig star2() {
  return parse_run_config(toml::parse(R"(
[topology]
kind = "star"
hosts = 2
rate_gbps = 10
)"),
                          "star2.toml");
}

RealtimeOptions external_hosts(PortBackend b) {
  RealtimeOptions o;
  o.backend = b;
  o.pool_mbufs = 2047;
  o.external_nodes = {true, true, false};  // h0, h1 elsewhere; s0 here
  return o;
}

/// A raw socket on `iface` (the host end of a veth pair): what the other process would do.
class RawSocket {
 public:
  explicit RawSocket(const std::string& iface) {
    fd_ = ::socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd_ < 0)
      throw std::runtime_error("socket(AF_PACKET): " + std::string(std::strerror(errno)));
    sockaddr_ll a{};
    a.sll_family = AF_PACKET;
    a.sll_protocol = htons(ETH_P_ALL);
    a.sll_ifindex = static_cast<int>(if_nametoindex(iface.c_str()));
    if (a.sll_ifindex == 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      throw std::runtime_error("bind to " + iface + " (run under tests/testbed/in_netns.sh)");
  }
  ~RawSocket() { ::close(fd_); }
  void send(const std::vector<uint8_t>& f) const {
    ASSERT_EQ(::send(fd_, f.data(), f.size(), 0), static_cast<ssize_t>(f.size()))
        << std::strerror(errno);
  }
  /// Every frame that arrives within `ms`.
  std::vector<std::vector<uint8_t>> receive(int ms) const {
    std::vector<std::vector<uint8_t>> out;
    pollfd p{fd_, POLLIN, 0};
    while (::poll(&p, 1, ms) > 0) {
      std::vector<uint8_t> buf(2048);
      const ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      buf.resize(static_cast<size_t>(n));
      out.push_back(buf);
      ms = 0;
    }
    return out;
  }

 private:
  int fd_ = -1;
};

/// Ethernet/IPv4/UDP frame h0 -> h1 with a 64-byte payload, addressed like a testbed host
/// does (destination MAC = the switch port facing h0).
std::vector<uint8_t> frame_h0_to_h1(const Topology& t) {
  std::vector<uint8_t> f(sizeof(wire::Ethernet) + sizeof(wire::Ipv4) + sizeof(wire::Udp) + 64,
                         0xab);
  auto* eth = reinterpret_cast<wire::Ethernet*>(f.data());
  const PortRef gw = t.node(0).ports[0].peer;
  std::memcpy(eth->dst, t.node(gw.node).ports[gw.port].mac.data(), 6);
  std::memcpy(eth->src, t.node(0).ports[0].mac.data(), 6);
  eth->set_ethertype(wire::kEtherTypeIpv4);
  auto* ip = reinterpret_cast<wire::Ipv4*>(f.data() + wire::kIpOff);
  std::memset(ip, 0, sizeof *ip);
  ip->ver_ihl = 0x45;
  ip->set_total_length(static_cast<uint16_t>(f.size() - wire::kIpOff));
  ip->ttl = 64;
  ip->protocol = wire::kIpProtoUdp;
  ip->set_src(t.node(0).ipv4);
  ip->set_dst(t.node(1).ipv4);
  ip->set_checksum(ip->compute_checksum());
  auto* udp = reinterpret_cast<wire::Udp*>(f.data() + wire::kUdpOff);
  udp->set_src_port(40000);
  udp->set_dst_port(40001);
  udp->set_length(static_cast<uint16_t>(f.size() - wire::kUdpOff));
  udp->set_checksum(0);
  return f;
}

}  // namespace

TEST(ExternalNodes, RingAndMemifRefuseAnExternalNodeNamingIt) {
  test::test_mempool();
  const RunConfig c = star2();
  for (auto b : {PortBackend::kRing, PortBackend::kMemif}) {
    try {
      RealtimeEngine e(c.topology.topology, c.topology.links, external_hosts(b));
      FAIL() << backend_name(b) << " accepted an external node";
    } catch (const std::invalid_argument& ex) {
      EXPECT_NE(std::string(ex.what()).find("node h0 is external"), std::string::npos) << ex.what();
    }
  }
}

TEST(ExternalNodes, MissingInterfaceIsNamedBeforeAnythingIsOpened) {
  test::test_mempool();
  const RunConfig c = parse_run_config(toml::parse(R"(
[topology]
kind = "star"
hosts = 3
)"),
                                       "star3.toml");
  RealtimeOptions o = external_hosts(PortBackend::kAfPacket);
  o.external_nodes = {true, true, true, false};
  try {
    RealtimeEngine e(c.topology.topology, c.topology.links, o);
    FAIL() << "opened a star of 3 with only re0b and re1b present";
  } catch (const std::runtime_error& ex) {
    EXPECT_NE(std::string(ex.what()).find("link 2: no network interface 're2b'"), std::string::npos)
        << ex.what();
  }
}

TEST(ExternalNodes, SwitchForwardsBetweenHostsOfOtherProcessesOverAfPacket) {
  test::test_mempool();
  const RunConfig c = star2();
  const Topology& t = c.topology.topology;
  RawSocket h0("re0a"), h1("re1a");
  RealtimeEngine e(t, c.topology.links, external_hosts(PortBackend::kAfPacket));
  EXPECT_TRUE(e.external(0));
  EXPECT_FALSE(e.external(2));
  auto switches = build_switches(c, e.pool());
  ASSERT_TRUE(switches[2]);
  EXPECT_FALSE(switches[0]);
  EXPECT_THROW(e.attach(0, switches[2].get()), std::invalid_argument);  // external
  EXPECT_THROW(e.ethdev_port(PortRef{1, 0}), std::invalid_argument);
  e.attach(2, switches[2].get());  // hosts need no attach()

  const auto sent = frame_h0_to_h1(t);
  for (int i = 0; i < 5; ++i) h0.send(sent);
  e.run_for(200 * kNsPerMs);

  int forwarded = 0;
  for (const auto& f : h1.receive(100)) {
    if (f.size() != sent.size()) continue;
    const auto* eth = reinterpret_cast<const wire::Ethernet*>(f.data());
    const auto* ip = reinterpret_cast<const wire::Ipv4*>(f.data() + wire::kIpOff);
    if (eth->ethertype() != wire::kEtherTypeIpv4 || ip->dst() != t.node(1).ipv4) continue;
    EXPECT_EQ(std::memcmp(eth->dst, t.node(1).ports[0].mac.data(), 6), 0);  // h1's MAC
    EXPECT_EQ(std::memcmp(eth->src, t.node(2).ports[1].mac.data(), 6), 0);  // s0 port 1
    EXPECT_EQ(ip->ttl, 63);
    EXPECT_EQ(ip->checksum(), ip->compute_checksum());
    ++forwarded;
  }
  EXPECT_EQ(forwarded, 5);
  EXPECT_GE(e.counters(PortRef{2, 0}).rx_packets, 5u);
  EXPECT_GE(e.counters(PortRef{2, 1}).tx_packets, 5u);
  EXPECT_EQ(e.counters(PortRef{0, 0}).rx_packets, 0u);  // an external port is never polled
  switches.clear();
}

}  // namespace rocemu::fabric
