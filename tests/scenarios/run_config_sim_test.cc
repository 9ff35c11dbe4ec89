// run_config_sim_test.cc — a run config's [dcqcn] table turns DCQCN on for rocemu-sim's
// write job (fabric/run_config.h, fabric/write_job.h): configs/scenarios/dcqcn_quickstart.toml
// (25 Gbps sender behind a 10 Gbps port) completes intact, the switch marks ECN and the
// congested port's peak queue is far lower than the same run with `enabled = false`.
#include <cstdio>

#include <gtest/gtest.h>

#include "fabric/eal.h"
#include "fabric/run_config.h"
#include "fabric/write_job.h"
#include "tests/scenarios/scenario_net.h"

namespace rocemu::scenario {
namespace {

const char* kFile = ROCEMU_SOURCE_ROOT "/configs/scenarios/dcqcn_quickstart.toml";

TEST(RunConfigDcqcn, ProfileTableEnablesDcqcnAndEct) {
  const fabric::RunConfig cfg = fabric::load_run_config(kFile);
  EXPECT_TRUE(cfg.dcqcn_enabled);
  EXPECT_TRUE(cfg.nic_params.ecn_capable);
  EXPECT_EQ(cfg.dcqcn.cnp_interval_us, 50);
  EXPECT_EQ(cfg.dcqcn.byte_counter_kb, 10240);
}

TEST(RunConfigDcqcn, ProfileAndKeysTogetherAreRefused) {
  const auto root = toml::parse("[topology]\n[dcqcn]\nprofile = \"x.toml\"\ng = 0.5\n");
  try {
    fabric::parse_run_config(root, "t.toml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("dcqcn.g"), std::string::npos) << m;
    EXPECT_NE(m.find("dcqcn.profile"), std::string::npos) << m;  // x.toml does not exist
  }
}

TEST(RunConfigDcqcn, WriteJobRunsWithDcqcnAndKeepsTheQueueLow) {
  fabric::EalOptions o;
  o.program = "rocemu-scenarios";
  o.user_args = {"--log-level", "lib.eal:error"};
  fabric::eal_start(o);
  fabric::RunConfig on = fabric::load_run_config(kFile);
  fabric::RunConfig off = on;
  off.dcqcn_enabled = false;
  off.nic_params.ecn_capable = false;
  const fabric::JobResult a = fabric::run_write_job_virtual(on);
  const fabric::JobResult b = fabric::run_write_job_virtual(off);
  ASSERT_TRUE(a.completed && a.verified);
  ASSERT_TRUE(b.completed && b.verified);
  // Port 1 of s0 faces h1 (ports: h0 0, h1 1, s0 0, s0 1).
  const fabric::PortSummary& pa = a.ports[3];
  const fabric::PortSummary& pb = b.ports[3];
  std::printf("DCQCN: goodput %.2f Gbps, peak queue %llu KB, marked %llu, PAUSE %llu\n"
              "off:   goodput %.2f Gbps, peak queue %llu KB, marked %llu, PAUSE %llu\n",
              a.goodput_gbps, static_cast<unsigned long long>(pa.peak_queue_bytes >> 10),
              static_cast<unsigned long long>(pa.ecn_marked_packets),
              static_cast<unsigned long long>(pa.pfc_pauses_sent), b.goodput_gbps,
              static_cast<unsigned long long>(pb.peak_queue_bytes >> 10),
              static_cast<unsigned long long>(pb.ecn_marked_packets),
              static_cast<unsigned long long>(pb.pfc_pauses_sent));
  EXPECT_EQ(pa.node, "s0");
  EXPECT_GT(pa.ecn_marked_packets, 0u);
  EXPECT_EQ(pb.ecn_marked_packets, 0u);
  EXPECT_LT(pa.peak_queue_bytes * 2, pb.peak_queue_bytes);
}

}  // namespace
}  // namespace rocemu::scenario
