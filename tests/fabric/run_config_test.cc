// The run's whole TOML: defaults, overrides of every table, and one error listing every
// problem across tables (with lines) before anything starts.
#include "fabric/run_config.h"

#include <gtest/gtest.h>

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
)"), "t.toml");
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
            std::string::npos) << e;
  EXPECT_EQ(e.find("placement.s0"), std::string::npos) << e;
}

TEST(RunConfig, MissingTopologyAndMissingFileAreReported) {
  EXPECT_NE(problems_of("[run]\nseed = 1\n").find("topology: required table [topology] is missing"),
            std::string::npos);
  try {
    load_run_config("/nonexistent/rocemu.toml");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/rocemu.toml: cannot read configuration file"),
              std::string::npos);
  }
}

}  // namespace rocemu::fabric
