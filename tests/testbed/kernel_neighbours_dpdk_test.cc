// The kernel's permanent neighbour entries across a DPDK af_packet port start
// (fabric/kernel_neighbours.h), on re0a of the private namespace tests/testbed/in_netns.sh
// makes. A plain rte_eth_dev_start flushes them (ethdev replays the MAC with SIOCSIFHWADDR):
// that is the cause, checked first, so the second test cannot pass for want of a flush.
// start_port_keeping_neighbours leaves them as they were; the port's stop does not flush.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <sys/socket.h>

#include <fstream>
#include <sstream>
#include <string>

#include "fabric/kernel_neighbours.h"
#include "tests/support/eal_env.h"

namespace rocemu::fabric {

namespace {

constexpr char kIface[] = "re0a";
constexpr char kPeerIp[] = "10.66.0.2";
constexpr char kPeerMac[] = "02:00:00:00:66:02";

int iface_index() {
  const int i = static_cast<int>(if_nametoindex(kIface));
  if (i == 0) throw std::runtime_error("no re0a (run under tests/testbed/in_netns.sh)");
  return i;
}

NeighbourEntry peer_entry() {
  NeighbourEntry e;
  e.family = AF_INET;
  e.dst.resize(4);
  inet_pton(AF_INET, kPeerIp, e.dst.data());
  e.lladdr = {0x02, 0x00, 0x00, 0x00, 0x66, 0x02};
  return e;
}

/// The line for kPeerIp on re0a in /proc/net/arp (what the perftest tools read), as
/// "flags mac"; empty if none.
std::string proc_arp_entry() {
  std::ifstream f("/proc/net/arp");
  std::string line;
  std::getline(f, line);
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string ip, hw, flags, mac, mask, dev;
    in >> ip >> hw >> flags >> mac >> mask >> dev;
    if (ip == kPeerIp && dev == kIface) return flags + " " + mac;
  }
  return "";
}

/// An af_packet port on re0a (a vdev of its own name), configured with one queue pair, not
/// started; stopped and closed at the end.
class AfPacketPort {
 public:
  explicit AfPacketPort(const char* name) : name_(name) {
    const std::string args = name_ + ",iface=" + kIface;
    if (rte_dev_probe(args.c_str()) != 0) throw std::runtime_error("rte_dev_probe " + args);
    if (rte_eth_dev_get_port_by_name(name_.c_str(), &id_) != 0)
      throw std::runtime_error("no port " + name_);
    rte_eth_conf conf{};
    if (rte_eth_dev_configure(id_, 1, 1, &conf) != 0 ||
        rte_eth_rx_queue_setup(id_, 0, 512, 0, nullptr, test::test_mempool()) != 0 ||
        rte_eth_tx_queue_setup(id_, 0, 512, 0, nullptr) != 0)
      throw std::runtime_error("configuring " + name_);
  }
  ~AfPacketPort() {
    rte_eth_dev_stop(id_);
    rte_eth_dev_close(id_);
  }
  uint16_t id() const { return id_; }
  void stop() { rte_eth_dev_stop(id_); }

 private:
  std::string name_;
  uint16_t id_ = 0;
};

}  // namespace

TEST(KernelNeighbours, APermanentEntryIsWrittenAndReadBack) {
  const int ifindex = iface_index();
  ASSERT_EQ(add_permanent_neighbour(ifindex, peer_entry()), 0);
  EXPECT_EQ(proc_arp_entry(), std::string("0x6 ") + kPeerMac);
  const auto all = permanent_neighbours(ifindex);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], peer_entry());
  EXPECT_TRUE(permanent_neighbours(static_cast<int>(if_nametoindex("re1a"))).empty());
  EXPECT_EQ(add_permanent_neighbour(ifindex, peer_entry()), 0);  // replacing is fine
  EXPECT_EQ(permanent_neighbours(ifindex).size(), 1u);
}

TEST(KernelNeighbours, APlainAfPacketPortStartFlushesThem) {
  test::test_mempool();
  const int ifindex = iface_index();
  ASSERT_EQ(add_permanent_neighbour(ifindex, peer_entry()), 0);
  AfPacketPort port("net_af_packet_kn0");
  ASSERT_EQ(proc_arp_entry(), std::string("0x6 ") + kPeerMac);
  ASSERT_EQ(rte_eth_dev_start(port.id()), 0);
  EXPECT_EQ(proc_arp_entry(), "");
  EXPECT_TRUE(permanent_neighbours(ifindex).empty());
}

TEST(KernelNeighbours, StartKeepingNeighboursLeavesThemAsTheyWere) {
  test::test_mempool();
  const int ifindex = iface_index();
  ASSERT_EQ(add_permanent_neighbour(ifindex, peer_entry()), 0);
  {
    AfPacketPort port("net_af_packet_kn1");
    ASSERT_EQ(start_port_keeping_neighbours(port.id()), 0);
    EXPECT_EQ(proc_arp_entry(), std::string("0x6 ") + kPeerMac);
    port.stop();
    EXPECT_EQ(proc_arp_entry(), std::string("0x6 ") + kPeerMac) << "the port's stop flushed it";
  }
  EXPECT_EQ(proc_arp_entry(), std::string("0x6 ") + kPeerMac) << "closing the port flushed it";
  // A second program's port on the same interface, as the second tool of a testbed run.
  AfPacketPort again("net_af_packet_kn2");
  ASSERT_EQ(start_port_keeping_neighbours(again.id()), 0);
  ASSERT_EQ(permanent_neighbours(ifindex).size(), 1u);
  EXPECT_EQ(permanent_neighbours(ifindex)[0], peer_entry());
}

}  // namespace rocemu::fabric
