// The run's whole TOML: defaults, overrides of every table, and one error listing every
// problem across tables (with lines) before anything starts.
#include "fabric/run_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "agent/model_file.h"
#include "agent/port_graph.h"
#include "tests/agent/test_weights.h"

namespace rocemu::fabric {

namespace {
std::string problems_of(std::string_view text) {
  try {
    parse_run_config(toml::parse(text), "bad.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return {};
}
constexpr std::string_view kTopo = R"(
[topology]
kind = "star"
hosts = 3
)";
}  // namespace

TEST(RunConfig, StarWithDefaultsWritesFourMiBFromH0ToH1) {
  const RunConfig c = parse_run_config(toml::parse(kTopo), "t.toml");
  EXPECT_EQ(c.seed, 1u);
  EXPECT_EQ(c.job.from, "h0");
  EXPECT_EQ(c.job.to, "h1");
  EXPECT_EQ(c.job.bytes, 4u << 20);
  EXPECT_EQ(c.sim.until_ns, kNsPerSec);
  EXPECT_EQ(c.testbed.backend, PortBackend::kRing);
  EXPECT_EQ(c.topology.topology.nodes().size(), 4u);
}

// [nic] mtu_bytes gives the switches their largest frame (the automatic PFC headroom), and
// the virtual-time pool is sized from the network unless [testbed] pool_mbufs is given: by
// hand for a 2-host star of 100 Gbps, 1 us links, 4 MB buffer, MTU 4096 (frames of 4,224 B).
TEST(RunConfig, MtuSetsTheSwitchFrameAndThePoolIsSizedForTheNetwork) {
  const auto parse = [](int buffer_mb, const std::string& extra) {
    return parse_run_config(
        toml::parse("[topology]\nkind = \"star\"\nhosts = 2\nrate_gbps = 100\ndelay_ns = 1000\n"
                    "[nic]\nmtu_bytes = 4096\n[switch]\nbuffer_mb = " +
                    std::to_string(buffer_mb) + "\n" + extra),
        "pool-test");
  };
  const RunConfig c = parse(4, "");
  EXPECT_EQ(c.switch_params.max_frame_bytes, 4096u + 128);
  EXPECT_FALSE(c.testbed.pool_mbufs_given);
  // One switch of 2 ports, alpha 1/8: 4 MiB x (2/8) / (1 + 2/8) = 838,860.8 B of shared use,
  // plus 2 ports x 1 lossless priority x (2 x 12,500 + 3 x 4,224) B of headroom = 75,344 B;
  // 2 links x 2 x (12,500 / 4,224 + 2) frames on the wires; 64 per host: 128 + 216.4 +
  // 19.8 = 364 -> the default 16,383 is larger.
  EXPECT_EQ(virtual_pool_mbufs(c), 16383u);
  // 32 switches' worth of buffer: 4 GiB instead of 4 MiB (x 1024): ~203,000 + 148.
  const RunConfig big = parse(4096, "");
  const double want = 128 + (4096.0 * 1048576 * 0.2 + 75344) / 4224 + 2 * 2 * (12500.0 / 4224 + 2);
  EXPECT_NEAR(virtual_pool_mbufs(big), want, 1.0);
  const RunConfig given = parse(4, "[testbed]\npool_mbufs = 2047\n");
  EXPECT_TRUE(given.testbed.pool_mbufs_given);
  EXPECT_EQ(virtual_pool_mbufs(given), 2047u);
}

TEST(RunConfig, ReadsEveryTable) {
  const RunConfig c = parse_run_config(toml::parse(std::string(kTopo) + R"(
[run]
seed = 9
[job]
from = "h2"
to = "h0"
bytes = 1000
message_bytes = 100
[sim]
until_us = 5000
[testbed]
ports = "memif"
time_limit_s = 2.5
eal_args = ["--vdev=net_null0"]
[testbed.placement]
s0 = 1
[capture]
ports = ["s0:2", "h0:0"]
file = "x.pcapng"
[nic]
mtu_bytes = 4096
[switch]
pfc = false
)"),
                                       "t.toml");
  EXPECT_EQ(c.seed, 9u);
  EXPECT_EQ(c.job.from, "h2");
  EXPECT_EQ(c.job.message_bytes, 100u);
  EXPECT_EQ(c.sim.until_ns, 5 * kNsPerMs);
  EXPECT_EQ(c.testbed.backend, PortBackend::kMemif);
  EXPECT_EQ(c.testbed.time_limit_ns, 2'500'000'000);
  EXPECT_EQ(c.testbed.eal_args.size(), 1u);
  EXPECT_EQ(c.testbed.placement.at("s0"), 1u);
  ASSERT_EQ(c.capture.ports.size(), 2u);
  EXPECT_EQ(c.capture.ports[0], (PortRef{3, 2}));
  EXPECT_EQ(c.nic_params.mtu_bytes, 4096u);
  EXPECT_FALSE(c.switch_params.pfc);
}

TEST(RunConfig, OneErrorListsEveryProblemOfEveryTableWithLines) {
  const std::string e = problems_of(R"(
[run]
sed = 3
[topology]
kind = "star"
hosts = 2
rate_gbps = 0
[job]
from = "s0"
to = "h7"
[sim]
until_us = -1
[testbed]
ports = "dpdk"
[testbed.placement]
h9 = 1
[capture]
ports = ["s0:5"]
[nic]
mtu_bytes = 1000
[bogus]
)");
  for (const char* want : {"bad.toml: run.sed=3: unknown key (line 3)",
                           "bad.toml: topology.rate_gbps=0: out of range [0.001, 1000] (line 7)",
                           "bad.toml: job.from='s0': 's0' is a switch, not a host (line 9)",
                           "bad.toml: job.to='h7': no host named 'h7' in the topology (line 10)",
                           "bad.toml: sim.until_us=-1: out of range",
                           "bad.toml: testbed.ports=dpdk: expected one of: ring, af_packet",
                           "bad.toml: testbed.placement.h9=1: unknown key (line 16)",
                           "bad.toml: capture.ports=[...]: 's0:5' is not node:port of the topology",
                           "bad.toml: nic.mtu_bytes=1000: must be one of 256, 512, 1024",
                           "bad.toml: bogus={...}: unknown key (line 21)"})
    EXPECT_NE(e.find(want), std::string::npos) << "missing: " << want << "\nin:\n" << e;
}

TEST(RunConfig, TheSendingHostCannotBePlacedOffTheMainLcore) {
  const std::string e = problems_of(std::string(kTopo) + "[testbed.placement]\nh0 = 1\ns0 = 1\n");
  EXPECT_NE(e.find("testbed.placement.h0=1: the job's sending host must stay on the main lcore 0"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find("placement.s0"), std::string::npos) << e;
}

TEST(RunConfig, MissingTopologyAndMissingFileAreReported) {
  EXPECT_NE(problems_of("[run]\nseed = 1\n").find("topology: required table [topology] is missing"),
            std::string::npos);
  try {
    load_run_config("/nonexistent/rocemu.toml");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(
        std::string(e.what()).find("/nonexistent/rocemu.toml: cannot read configuration file"),
        std::string::npos);
  }
}

// [agent]: every key read, every bad value refused with its reason before anything starts.
namespace {
struct AgentModels {
  std::string dir, graphcc, acc, corrupt;
  AgentModels() {
    dir = (std::filesystem::temp_directory_path() /
           ("rocemu-agent-cfg-" + std::to_string(::getpid())))
              .string();
    std::filesystem::create_directories(dir);
    graphcc = dir + "/g.model";
    acc = dir + "/a.model";
    corrupt = dir + "/c.model";
    agent::Model g;
    g.mpnn = agent::test::random_mpnn(3);
    agent::save_model(graphcc, g);
    const RunConfig c = parse_run_config(toml::parse(kTopo), "t.toml");
    agent::Model a;
    a.kind = agent::ModelKind::kAccPerPort;
    a.acc = agent::test::random_acc(4, agent::PortGraph(c.topology.topology).num_agents());
    agent::save_model(acc, a);
    std::filesystem::copy_file(graphcc, corrupt);
    std::fstream f(corrupt, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x5a');
  }
  ~AgentModels() { std::filesystem::remove_all(dir); }
};
}  // namespace

TEST(RunConfigAgent, ReadsPolicyModelIntervalRecordProfileAndActions) {
  AgentModels m;
  const RunConfig c =
      parse_run_config(toml::parse(std::string(kTopo) +
                                   "[agent]\npolicy = \"graphcc\"\n"
                                   "model = \"" +
                                   m.graphcc + "\"\ninterval_us = 250\nrecord = true\n"),
                       "t.toml");
  EXPECT_EQ(c.agent.policy, "graphcc");
  ASSERT_TRUE(c.agent.model);
  EXPECT_EQ(c.agent.model->kind, agent::ModelKind::kGraphCc);
  EXPECT_EQ(c.agent.interval_ns, 250 * kNsPerUs);
  EXPECT_TRUE(c.agent.record);
  const RunConfig a = parse_run_config(
      toml::parse(std::string(kTopo) + "[agent]\npolicy = \"acc\"\nmodel = \"" + m.acc + "\"\n"),
      "t.toml");
  ASSERT_TRUE(a.agent.model);
  EXPECT_EQ(a.agent.model->kind, agent::ModelKind::kAccPerPort);
  EXPECT_EQ(a.agent.interval_ns, 100 * kNsPerUs) << "the paper's interval by default";
  const RunConfig s =
      parse_run_config(toml::parse(std::string(kTopo) +
                                   "[agent]\npolicy = \"static\"\nprofile = \"" ROCEMU_SOURCE_ROOT
                                   "/configs/ecn/hpcc_alibaba.toml\"\n"),
                       "t.toml");
  ASSERT_TRUE(s.agent.profile);
  EXPECT_DOUBLE_EQ(s.agent.profile->kmin_kb, 100);
  EXPECT_TRUE(s.agent.profile->scale_with_bandwidth);
  const RunConfig t = parse_run_config(
      toml::parse(std::string(kTopo) + "[agent]\npolicy = \"alternate\"\nactions = [3, 77]\n"),
      "t.toml");
  EXPECT_EQ(t.agent.alternate[0], 3);
  EXPECT_EQ(t.agent.alternate[1], 77);
  EXPECT_FALSE(parse_run_config(toml::parse(kTopo), "t.toml").agent.on()) << "no [agent]: off";
}

TEST(RunConfigAgent, EveryBadValueIsRefusedWithItsReason) {
  AgentModels m;
  const auto bad = [&](const std::string& agent_table) {
    return problems_of(std::string(kTopo) + "[agent]\n" + agent_table);
  };
  EXPECT_NE(bad("policy = \"dctcp\"\n").find("must be one of static, graphcc, acc, alternate"),
            std::string::npos);
  EXPECT_NE(bad("interval_us = 100\n").find("agent.policy"), std::string::npos)
      << "policy is required";
  EXPECT_NE(bad("policy = \"graphcc\"\n").find("needs a model file"), std::string::npos);
  EXPECT_NE(
      bad("policy = \"graphcc\"\nmodel = \"/nonexistent/x.model\"\n").find("/nonexistent/x.model"),
      std::string::npos);
  EXPECT_NE(bad("policy = \"graphcc\"\nmodel = \"" + m.corrupt + "\"\n").find("agent.model"),
            std::string::npos);
  EXPECT_NE(bad("policy = \"graphcc\"\nmodel = \"" + m.acc + "\"\n").find("is an ACC model"),
            std::string::npos);
  EXPECT_NE(bad("policy = \"acc\"\nmodel = \"" + m.graphcc + "\"\n").find("is a GraphCC model"),
            std::string::npos);
  EXPECT_NE(bad("policy = \"static\"\nmodel = \"" + m.graphcc + "\"\n")
                .find("only graphcc and acc take a model"),
            std::string::npos);
  EXPECT_NE(bad("policy = \"graphcc\"\nmodel = \"" + m.graphcc + "\"\nprofile = \"x.toml\"\n")
                .find("only the static policy takes an ECN profile"),
            std::string::npos);
  EXPECT_NE(bad("policy = \"static\"\nprofile = \"/nonexistent.toml\"\n").find("agent.profile"),
            std::string::npos);
  EXPECT_NE(bad("policy = \"static\"\ninterval_us = 0\n").find("agent.interval_us"),
            std::string::npos);
  EXPECT_NE(bad("policy = \"alternate\"\nactions = [1, 2, 3]\n").find("exactly two"),
            std::string::npos);
  EXPECT_NE(bad("policy = \"alternate\"\nactions = [1, 120]\n").find("agent.actions"),
            std::string::npos);
  EXPECT_NE(bad("policy = \"static\"\nactions = [1, 2]\n")
                .find("only the alternate (and stall, throw) test policies"),
            std::string::npos);
  EXPECT_NE(bad("policy = \"static\"\nrecrod = true\n").find("agent.recrod"), std::string::npos)
      << "unknown key";
  // An ACC model trained for another topology (other number of ports) is refused.
  const std::string other = std::string(R"(
[topology]
kind = "star"
hosts = 5
)") + "[agent]\npolicy = \"acc\"\nmodel = \"" +
                            m.acc + "\"\n";
  EXPECT_NE(problems_of(other).find("agent.model"), std::string::npos);
}

TEST(RunConfigAgent, CommandLineFlagsOverrideAndAreChecked) {
  AgentModels m;
  RunConfig c = parse_run_config(toml::parse(kTopo), "t.toml");
  apply_agent_flags(c, "graphcc", m.graphcc, 50);
  EXPECT_EQ(c.agent.policy, "graphcc");
  ASSERT_TRUE(c.agent.model);
  EXPECT_EQ(c.agent.interval_ns, 50 * kNsPerUs);
  RunConfig d = parse_run_config(toml::parse(kTopo), "t.toml");
  EXPECT_THROW(apply_agent_flags(d, "", m.graphcc, 0), ConfigError) << "a model without a policy";
  RunConfig e = parse_run_config(toml::parse(kTopo), "t.toml");
  EXPECT_THROW(apply_agent_flags(e, "graphcc", "", 0), ConfigError) << "graphcc without a model";
  RunConfig f = parse_run_config(toml::parse(kTopo), "t.toml");
  EXPECT_THROW(apply_agent_flags(f, "magic", "", 0), ConfigError);
  RunConfig g = parse_run_config(toml::parse(kTopo), "t.toml");
  EXPECT_THROW(apply_agent_flags(g, "graphcc", m.corrupt, 0), ConfigError);
  RunConfig h = parse_run_config(toml::parse(kTopo), "t.toml");
  EXPECT_NO_THROW(apply_agent_flags(h, "", "", 0)) << "no flags: nothing changes";
  EXPECT_FALSE(h.agent.on());
}

TEST(RunConfigAgent, AgentProfileFlagGivesTheStaticPolicyItsThresholds) {
  const std::string learned = ROCEMU_SOURCE_ROOT "/configs/ecn/graphcc_learned.toml";
  RunConfig c = parse_run_config(toml::parse(kTopo), "t.toml");
  apply_agent_flags(c, "static", "", 0, learned);
  ASSERT_TRUE(c.agent.profile);
  EXPECT_DOUBLE_EQ(c.agent.profile->kmin_kb, 4);
  EXPECT_DOUBLE_EQ(c.agent.profile->kmax_kb, 16);
  EXPECT_DOUBLE_EQ(c.agent.profile->pmax, 0.01);
  const auto message = [&](const std::string& policy, const std::string& profile) {
    RunConfig r = parse_run_config(toml::parse(kTopo), "t.toml");
    try {
      apply_agent_flags(r, policy, "", 0, profile);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message("graphcc", learned).find("only the static policy takes an ECN profile"),
            std::string::npos);
  EXPECT_NE(message("static", "/no/such/profile.toml").find("--agent-profile='/no/such"),
            std::string::npos);
  EXPECT_NE(message("static", ROCEMU_SOURCE_ROOT "/configs/quickstart.toml").find("no [ecn] table"),
            std::string::npos);
}

// A QP plan larger than [nic] max_qps is refused at load time, not after minutes of set-up.
TEST(RunConfig, AQpPlanBeyondMaxQpsIsRefusedAtLoadTime) {
  const std::string w =
      std::string(kTopo) +
      "[workload]\ncdf_file = \"" ROCEMU_SOURCE_ROOT
      "/configs/workloads/FbHdp_distribution.txt\"\nload = 0.3\nduration_us = 100\n";
  EXPECT_EQ(problems_of(w + "qps_per_pair = 64\n[nic]\nmax_qps = 256\n"), "");
  const std::string e = problems_of(w + "qps_per_pair = 64\n[nic]\nmax_qps = 255\n");
  EXPECT_NE(e.find("workload.qps_per_pair"), std::string::npos) << e;
  EXPECT_NE(e.find("needs 256 QPs per host"), std::string::npos) << e;
  EXPECT_NE(problems_of(w + "[nic]\nmax_qps = 1\n").find("needs 4 QPs per host"),
            std::string::npos);
  EXPECT_EQ(problems_of(w + "qp_per_flow = true\n[nic]\nmax_qps = 2\n"), "")
      << "one QP pair per flow builds no mesh (a flow waits for a free QP)";
}

// The flow-size CDF is read with the run file, before EAL or any node starts: a missing or
// malformed one is a configuration error naming the key and the paths looked at.
TEST(RunConfig, AMissingOrMalformedCdfIsAConfigurationErrorWithThePathsTried) {
  const std::string w = std::string(kTopo) + "[workload]\nload = 0.3\nduration_us = 100\n";
  const std::string missing = problems_of(w + "cdf_file = \"no_such_cdf.txt\"\n");
  EXPECT_NE(missing.find("bad.toml: workload.cdf_file='no_such_cdf.txt': no_such_cdf.txt: cannot "
                         "read flow-size CDF file (No such file or directory); looked in the "
                         "working directory ("),
            std::string::npos)
      << missing;
  EXPECT_NE(missing.find("/no_such_cdf.txt) and beside bad.toml (no_such_cdf.txt) (line 8)"),
            std::string::npos)
      << missing;
  const std::string bad = ::testing::TempDir() + "run_config_test_bad_cdf.txt";
  { std::ofstream(bad) << "100 0\n50 100\n"; }
  const std::string malformed = problems_of(w + "cdf_file = \"" + bad + "\"\n");
  EXPECT_NE(malformed.find("workload.cdf_file='" + bad + "': " + bad + ":2: flow size 50 decreases"),
            std::string::npos)
      << malformed;
  EXPECT_EQ(malformed.find("looked in"), std::string::npos) << "an absolute path is not searched";
  std::remove(bad.c_str());
}

TEST(RunConfig, TheDcqcnTraceNeedsDcqcn) {
  const std::string t = std::string(kTopo) + "[telemetry]\ndcqcn_interval_us = 10\n";
  EXPECT_NE(problems_of(t).find("telemetry.dcqcn_interval_us=10: traces DCQCN, which this run "
                                "does not use (no [dcqcn])"),
            std::string::npos)
      << problems_of(t);
  const RunConfig c = parse_run_config(
      toml::parse(t + "[dcqcn]\nprofile = \"" ROCEMU_SOURCE_ROOT "/configs/dcqcn/paper.toml\"\n"),
      "t.toml");
  EXPECT_EQ(c.telemetry.dcqcn_interval_ns, 10 * kNsPerUs);
  EXPECT_EQ(c.telemetry.interval_ns, 0);
}

// pacer_burst_kb configured a DCQCN pacer no run used (the host's limiter paces every QP):
// a run file that still sets it is told so, once, rather than "unknown key".
TEST(RunConfig, TheRemovedPacerBurstKeyIsRefusedWithTheReason) {
  const std::string t = std::string(kTopo) + "[dcqcn]\nwindow_kb = 25\npacer_burst_kb = 8\n";
  const std::string p = problems_of(t);
  EXPECT_NE(p.find("bad.toml: dcqcn.pacer_burst_kb=8: key removed: it set the credit of a DCQCN "
                   "pacer that no run used; every QP is paced by the RoCE host's rate limiter, "
                   "which banks no credit (docs/dcqcn.md, Pacing): delete the line (line 7)"),
            std::string::npos)
      << p;
  EXPECT_EQ(p.find("unknown key"), std::string::npos) << p;
  EXPECT_EQ(std::count(p.begin(), p.end(), '\n'), 1) << p;
}

// Placement is checked against what the main lcore touches: a workload run's scheduler and
// queue sampling reach every node, so nothing may be polled elsewhere.
TEST(RunConfig, AWorkloadRunKeepsEveryNodeOnTheMainLcore) {
  const std::string w =
      std::string(kTopo) +
      "[workload]\ncdf_file = \"" ROCEMU_SOURCE_ROOT
      "/configs/workloads/FbHdp_distribution.txt\"\nload = 0.3\nduration_us = 100\n";
  EXPECT_EQ(problems_of(w + "[testbed.placement]\ns0 = 0\n"), "");
  const std::string e = problems_of(w + "[testbed.placement]\ns0 = 1\nh2 = 1\n");
  EXPECT_NE(e.find("testbed.placement.s0=1: a [workload] run keeps every node on the main "
                   "lcore 0"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("testbed.placement.h2=1"), std::string::npos) << e;
  EXPECT_EQ(problems_of(std::string(kTopo) + "[testbed.placement]\ns0 = 1\nh1 = 1\n"), "")
      << "the write job: only its sender must stay on lcore 0";
}

// An integral double far outside int64 (1e30, 9.3e18) is out of range, not undefined behaviour.
TEST(RunConfig, HugeIntegralDoublesAreOutOfRange) {
  for (const char* v : {"1e30", "9.3e18", "-1e30", "9223372036854775808.0"}) {
    const std::string e = problems_of(std::string(kTopo) + "[run]\nseed = " + v + "\n");
    EXPECT_NE(e.find("run.seed"), std::string::npos) << v << ": " << e;
    EXPECT_NE(e.find("out of range"), std::string::npos) << v << ": " << e;
  }
}

// A switch buffer that cannot hold its ports' headroom is refused at load time, with the
// switch named (the 4-host testbed's 4 x 20 MB headroom in a 64 MB buffer).
TEST(RunConfig, ABufferSmallerThanItsHeadroomIsRefusedAtLoadTime) {
  const std::string star4 =
      "[topology]\nkind = \"star\"\nhosts = 4\n[switch]\nheadroom_kb = 20480\n";
  const std::string e = problems_of(star4 + "buffer_mb = 64\n");
  EXPECT_NE(e.find("switch.buffer_mb"), std::string::npos) << e;
  EXPECT_NE(e.find("switch s0"), std::string::npos) << e;
  EXPECT_EQ(problems_of(star4 + "buffer_mb = 112\n"), "")
      << "20 x hosts + 32, as the testbed scripts set";
}

// The paper's scenario files (configs/paper, from any working directory) all load: the
// fabric, the BDP-window DCQCN profile, one QP per flow, the Alibaba static thresholds.
TEST(RunConfig, ThePapersScenarioFilesLoad) {
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(ROCEMU_SOURCE_ROOT "/configs/paper")) {
    if (e.path().extension() != ".toml") continue;
    ++files;
    SCOPED_TRACE(e.path().string());
    RunConfig c;
    ASSERT_NO_THROW(c = load_run_config(e.path().string()));
    EXPECT_TRUE(c.workload.has_value());
    EXPECT_TRUE(c.workload_qp_per_flow);
    EXPECT_TRUE(c.dcqcn_enabled);
    EXPECT_EQ(c.dcqcn.window_kb, 25);
    EXPECT_DOUBLE_EQ(c.switch_params.ecn.kmin_kb, 100);
    EXPECT_EQ(c.switch_params.buffer_bytes, 32ull << 20);
  }
  EXPECT_EQ(files, 6);
}

}  // namespace rocemu::fabric
