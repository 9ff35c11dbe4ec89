// agent_realtime_dpdk_test.cc — the [agent] loop on the real-time DPDK engine (net_ring ports,
// one lcore) with the agent on its own thread (fabric/ecn_controller.h): the switch publishes
// its counters every interval from its lcore, the agent thread changes the thresholds during
// the run; a throwing agent and a stalling agent leave the traffic flowing and the last
// thresholds in force, counted as errors and missed intervals.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "fabric/eal.h"
#include "fabric/workload_job.h"
#include "tests/support/fabric_eal.h"

namespace rocemu::fabric {
namespace {

namespace fs = std::filesystem;

/// A 4-host star at 1 Gbps, FbHdp flows for 100 ms, the agent every `interval_us`; `extra`
/// TOML tables. 100 ms, not 30: the agent thread shares two cores with the polling lcore
/// and, in CI, other tests; with 30 boundaries in the run a starved thread took fewer than
/// the 5 steps asserted below in about 1 run of 5 with two CPU burners alongside.
WorkloadResult run_with_policy(const std::string& policy, const fs::path& out,
                               const std::string& extra = "", int interval_us = 1000) {
  test::start_fabric_eal("rocemu-agent-rt-test");
  std::ostringstream t;
  t << "[run]\nseed = 3\n"
    << "[topology]\nkind = \"star\"\nhosts = 4\nrate_gbps = 1\ndelay_ns = 1000\n"
    << "[workload]\ncdf_file = \"" << ROCEMU_SOURCE_ROOT
    << "/configs/workloads/FbHdp_distribution.txt\"\n"
    << "load = 0.3\nduration_us = 100000\nqps_per_pair = 2\n"
    << "[agent]\npolicy = \"" << policy << "\"\nactions = [0, 119]\ninterval_us = " << interval_us
    << "\nrecord = true\n"
    << "[testbed]\ntime_limit_s = 60\n"
    << extra;
  const RunConfig cfg = parse_run_config(toml::parse(t.str()), "agent-rt-test");
  WorkloadRunOptions opt;
  opt.progress_out = nullptr;
  opt.out_dir = out.string();
  return run_workload_realtime(cfg, opt);
}

size_t csv_rows(const fs::path& p) {
  std::ifstream f(p);
  std::string line;
  size_t n = 0;
  std::getline(f, line);
  while (std::getline(f, line)) ++n;
  return n;
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() /
             ("rocemu-agent-rt-" + tag + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(AgentRealtime, TheAgentThreadChangesThresholdsDuringTheRun) {
  TempDir d("alternate");
  // [telemetry] and [capture] work in a real-time workload run too (same RunTaps).
  const WorkloadResult r = run_with_policy(
      "alternate", d.path, "[telemetry]\ninterval_us = 500\n[capture]\nports = [\"s0:1\"]\n");
  ASSERT_TRUE(r.all_finished) << r.summary.flows_unfinished << " unfinished";
  EXPECT_GT(csv_rows(d.path / "queues_s0.csv"), 10u);
  ASSERT_TRUE(fs::exists(d.path / "capture.pcapng"));
  EXPECT_GT(fs::file_size(d.path / "capture.pcapng"), 10000u);
  EXPECT_TRUE(r.agent.realtime);
  std::printf("%s", agent_text(r.agent).c_str());
  ASSERT_GE(r.agent.intervals, 5u) << "a 100 ms run at 1 ms intervals";
  EXPECT_EQ(r.agent.errors, 0u);
  // Steps put the two settings in force in turn. A step compares with the setting in the
  // snapshot, which can be one interval old on a loaded machine (the switch applies a
  // setting at its next dequeue, publishes at its next boundary): then it changes nothing,
  // so only "both settings were put in force, several times" is certain.
  EXPECT_GE(r.agent.settings_changed, 8u);
  EXPECT_EQ(csv_rows(d.path / "ecn.csv"), r.agent.settings_changed);
  std::ifstream ecn(d.path / "ecn.csv");
  const std::string text((std::istreambuf_iterator<char>(ecn)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(",2048,16384,0.01\n"), std::string::npos) << "action 0 in force";
  EXPECT_NE(text.find(",32768,262144,1\n"), std::string::npos) << "action 119 in force";
  EXPECT_EQ(csv_rows(d.path / "agent.csv"), r.agent.intervals);
}

TEST(AgentRealtime, AThrowingAgentLeavesTheLastThresholdsAndTrafficFlows) {
  TempDir d("throw");
  const WorkloadResult r = run_with_policy("throw", d.path);
  ASSERT_TRUE(r.all_finished) << "forwarding must go on";
  ASSERT_GE(r.agent.intervals, 5u);
  // It throws from its third step on. A step whose snapshot is stale (nothing published
  // yet, or the switch's lcore kept overtaking the read: a loaded machine) does not call the
  // policy at all, so each stale step from the third on is one error fewer; with no stale
  // step the count is exact.
  const uint64_t stale = r.agent.stale_snapshots;
  EXPECT_LE(r.agent.errors, r.agent.intervals - 2);
  EXPECT_GE(r.agent.errors + stale, r.agent.intervals - 2)
      << "errors " << r.agent.errors << ", stale " << stale << ", intervals " << r.agent.intervals;
  EXPECT_GT(r.agent.errors, 0u);
  // Its first two steps put their settings in force (4 ports each), nothing after.
  EXPECT_LE(r.agent.settings_changed, 8u);
  EXPECT_EQ(csv_rows(d.path / "ecn.csv"), r.agent.settings_changed);
}

TEST(AgentRealtime, AStallingAgentMissesIntervalsAndTrafficFlows) {
  TempDir d("stall");
  const WorkloadResult r = run_with_policy("stall", d.path);
  ASSERT_TRUE(r.all_finished) << "forwarding never waits for the agent";
  std::printf("%s", agent_text(r.agent).c_str());
  ASSERT_GE(r.agent.intervals, 10u) << "the 10th step stalls";
  EXPECT_GE(r.agent.missed_intervals, 4u) << "a 5-interval stall misses at least 4 boundaries";
  EXPECT_GE(r.agent.step_p99_ns, 4 * 1000 * 1000) << "the stalled step took ~5 ms";
}

}  // namespace
}  // namespace rocemu::fabric
