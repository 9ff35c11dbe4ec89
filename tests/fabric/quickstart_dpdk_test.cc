// The quickstart in real time: the DPDK engine over net_ring wires (rte_eth_from_rings) in
// one process, one lcore polling the switch and both hosts. Never skips: EAL failure fails.
#include <gtest/gtest.h>

#include <rte_ethdev.h>

#include "fabric/eal.h"
#include "fabric/write_job.h"

namespace rocemu::fabric {

namespace {
RunConfig quickstart() {
  static const bool eal = [] {
    EalOptions o;
    o.program = "rocemu-fabric-dpdk-test";
    o.lcores = "0,1";  // lcore 1 for the placement test
    o.user_args = {"--log-level", "lib.eal:error"};
    eal_start(o);
    return true;
  }();
  (void)eal;
  return load_run_config(std::string(ROCEMU_SOURCE_ROOT) + "/configs/quickstart.toml");
}
}  // namespace

TEST(QuickstartRealtime, WritesFourMiBIntactOverRingWires) {
  RunConfig cfg = quickstart();
  cfg.testbed.time_limit_ns = 20 * kNsPerSec;
  const JobResult r = run_write_job_realtime(cfg);
  ASSERT_TRUE(r.completed);
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.engine, "realtime");
  // Same frames as in virtual time: 4096 data frames through the switch, none lost.
  ASSERT_EQ(r.ports.size(), 4u);
  EXPECT_EQ(r.ports[0].tx_packets, 4096u + r.retransmitted_packets);
  EXPECT_EQ(r.ports[3].node, "s0");
  EXPECT_EQ(r.ports[3].tx_packets, r.ports[0].tx_packets);
  // Port-rate emulation: never faster than the 10 Gbps bottleneck.
  EXPECT_GT(r.goodput_gbps, 0.05);
  EXPECT_LT(r.goodput_gbps, 10.0 * 1024 / 1082);
}

TEST(QuickstartRealtime, RingPortsAreReleasedSoASecondRunWorks) {
  RunConfig cfg = quickstart();
  cfg.job.bytes = 256u << 10;
  const uint16_t before = rte_eth_dev_count_avail();
  const JobResult r = run_write_job_realtime(cfg);
  EXPECT_TRUE(r.completed && r.verified);
  EXPECT_EQ(rte_eth_dev_count_avail(), before);
}

TEST(QuickstartRealtime, PortRateEmulationNeverBeatsTheLinkRate) {
  RunConfig cfg = quickstart();
  for (auto& l : cfg.topology.topology.mutable_links()) l.rate_bps = kBpsPerGbps;
  cfg.job.bytes = 2u << 20;
  const JobResult r = run_write_job_realtime(cfg);
  ASSERT_TRUE(r.completed && r.verified);
  // h0 cannot put its frames on a 1 Gbps wire faster than their serialisation time.
  const TimeNs wire_ns = serialization_ns(r.ports[0].tx_bytes, kBpsPerGbps);
  EXPECT_GE(r.elapsed_ns, wire_ns);
  EXPECT_LT(r.goodput_gbps, 1.0 * 1024 / 1082);
}

TEST(QuickstartRealtime, SwitchPlacedOnAWorkerLcoreStillDeliversEveryByte) {
  RunConfig cfg = quickstart();
  cfg.job.bytes = 512u << 10;
  cfg.testbed.placement["s0"] = 1;
  const JobResult r = run_write_job_realtime(cfg);
  ASSERT_TRUE(r.completed);
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.ports[3].tx_packets, r.ports[0].tx_packets);
}

}  // namespace rocemu::fabric
