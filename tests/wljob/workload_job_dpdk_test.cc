// The workload job (fabric/workload_job.h) on the real-time DPDK engine (net_ring ports, one
// lcore): a 4-host star at 1 Gbps with FbHdp flows for 2 ms completes every flow, and the
// records' start times are shifted to the run's origin. The real-time engine emulates the
// port rate by spacing frames (wire-free time) but ring wires deliver at once: no
// propagation delay and no serialisation of the last frame. So the bound checked here is
// the ideal FCT minus the base RTT and one frame (at 1 Gbps every other frame's spacing is
// far above the CPU time per frame).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "fabric/eal.h"
#include "fabric/workload_job.h"

namespace rocemu::fabric {

TEST(WorkloadJobDpdk, RealTimeStarCompletesEveryFlowAtNoMoreThanTheEmulatedRate) {
  EalOptions o;
  o.program = "rocemu-wljob-dpdk-test";
  o.user_args = {"--log-level", "lib.eal:error"};
  eal_start(o);
  std::ostringstream t;
  t << "[run]\nseed = 3\n"
    << "[topology]\nkind = \"star\"\nhosts = 4\nrate_gbps = 1\ndelay_ns = 1000\n"
    << "[workload]\ncdf_file = \"" << ROCEMU_SOURCE_ROOT
    << "/configs/workloads/FbHdp_distribution.txt\"\n"
    << "load = 0.3\nduration_us = 2000\nqps_per_pair = 2\n"
    << "[workload.incast]\nsenders = 3\nsize_bytes = 8192\nperiod_us = 1000\nreceiver = 0\n"
    << "[testbed]\ntime_limit_s = 20\n";
  const RunConfig cfg = parse_run_config(toml::parse(t.str()), "wljob-dpdk-test");
  WorkloadRunOptions opt;
  opt.progress_out = nullptr;
  const WorkloadResult r = run_workload_realtime(cfg, opt);
  EXPECT_EQ(r.engine, "realtime");
  ASSERT_TRUE(r.all_finished) << r.summary.flows_unfinished << " unfinished";
  EXPECT_EQ(r.flows_failed, 0u);
  ASSERT_GE(r.records.size(), 6u);  // 2 incast events x 3 senders, plus background
  EXPECT_EQ(r.records.size(), r.flows_generated);
  TimeNs first_start = kNever;
  const uint32_t mtu = cfg.nic_params.mtu_bytes;
  for (const auto& rec : r.records) {
    const uint64_t last_frame = std::min<uint64_t>(rec.flow.size_bytes, mtu) +
                                workload::kPacketHeaderBytes + workload::kRethBytes;
    const TimeNs bound = rec.ideal_ns - 4 * kNsPerUs - serialization_ns(last_frame, kBpsPerGbps);
    EXPECT_GT(rec.fct_ns(), 0) << "flow " << rec.flow.id;
    EXPECT_GE(rec.fct_ns(), bound) << "flow " << rec.flow.id << " size " << rec.flow.size_bytes;
    EXPECT_GE(rec.slowdown(), 1.0);
    first_start = std::min(first_start, rec.flow.start_ns);
  }
  EXPECT_GT(first_start, 0);  // shifted to the engine time at which the run started
}

}  // namespace rocemu::fabric
