// network_env_sim_test.cc — the virtual-time network as the agent's Environment
// (fabric/network_env.h): reset/step determinism for a seed, one interval per step, settings
// in force at the next step, episodes that end, mbufs that all come back between episodes,
// and the cost of a step (printed).
#include <gtest/gtest.h>
#include <rte_mempool.h>

#include <sstream>

#include "agent/action_table.h"
#include "agent/port_graph.h"
#include "fabric/eal.h"
#include "fabric/network_env.h"
#include "tests/support/fabric_eal.h"

namespace rocemu::fabric {
namespace {

void start_eal() { test::start_fabric_eal("rocemu-network-env-test"); }

/// 6 hosts on one 25 Gbps switch, DCQCN, FbHdp at 70% plus a 4:1 incast, 1.5 ms episodes.
RunConfig star_run() {
  start_eal();
  std::ostringstream t;
  t << "[run]\nseed = 3\n"
    << "[topology]\nkind = \"star\"\nhosts = 6\nrate_gbps = 25\ndelay_ns = 1000\n"
    << "[dcqcn]\nprofile = \"" << ROCEMU_SOURCE_ROOT << "/configs/dcqcn/paper.toml\"\n"
    << "[workload]\ncdf_file = \"" << ROCEMU_SOURCE_ROOT
    << "/configs/workloads/FbHdp_distribution.txt\"\nload = 0.7\nduration_us = 1500\n"
    << "[workload.incast]\nsenders = 4\nsize_bytes = 65536\nperiod_us = 300\nreceiver = 0\n"
    << "[sim]\nuntil_us = 1500\n[testbed]\npool_mbufs = 8191\n";
  return parse_run_config(toml::parse(t.str()), "network-env-test");
}

/// Everything of a snapshot that the agent reads, as text (to compare runs).
std::string digest(const std::vector<SwitchSnapshot>& snaps) {
  std::ostringstream o;
  for (const auto& s : snaps) {
    o << s.at_ns << ' ' << s.node;
    for (size_t p = 0; p < s.ports.size(); ++p) {
      const PortCounters& c = s.ports[p];
      o << ' ' << c.tx_bytes << '/' << c.rx_bytes << '/' << c.ecn_marked_packets << '/'
        << c.total_queue_bytes() << '/' << s.ecn[p].kmin_bytes;
    }
    o << '\n';
  }
  return o.str();
}

/// A fixed, step-dependent sequence of settings (so runs are compared under the same actions).
std::vector<agent::SwitchEcn> settings_for(const agent::PortGraph& g, int step) {
  auto s = agent::make_switch_settings(g);
  std::vector<uint16_t> actions(static_cast<size_t>(g.num_agents()));
  for (size_t v = 0; v < actions.size(); ++v)
    actions[v] = static_cast<uint16_t>((step * 7 + v * 13) % agent::kNumActions);
  agent::apply_actions(g, actions, s);
  return s;
}

TEST(NetworkEnv, ResetAndStepAreDeterministicForASeed) {
  std::string runs[2];
  for (int k = 0; k < 2; ++k) {
    NetworkEnv env(star_run(), 100 * kNsPerUs);
    const agent::PortGraph g(env.topology());
    runs[k] += digest(env.reset(42));
    for (int i = 0; i < 10; ++i) runs[k] += digest(env.step(settings_for(g, i)).snapshots);
  }
  EXPECT_EQ(runs[0], runs[1]);
  NetworkEnv other(star_run(), 100 * kNsPerUs);
  const agent::PortGraph g(other.topology());
  std::string o = digest(other.reset(43));
  for (int i = 0; i < 10; ++i) o += digest(other.step(settings_for(g, i)).snapshots);
  EXPECT_NE(runs[0], o) << "another seed, other flows";
}

TEST(NetworkEnv, StepsAreOneIntervalAndSettingsAreInForceAfterTheStep) {
  NetworkEnv env(star_run(), 100 * kNsPerUs);
  const agent::PortGraph g(env.topology());
  const auto s0 = env.reset(1);
  ASSERT_EQ(s0.size(), 1u);
  EXPECT_EQ(s0[0].at_ns, 0);
  EXPECT_EQ(s0[0].ecn[0], EcnSetting{}) << "the [switch.ecn] setting at the start";
  auto settings = agent::make_switch_settings(g);
  std::vector<uint16_t> actions(static_cast<size_t>(g.num_agents()), 119);
  agent::apply_actions(g, actions, settings);
  const agent::StepResult r = env.step(settings);
  ASSERT_EQ(r.snapshots.size(), 1u);
  EXPECT_EQ(r.snapshots[0].at_ns, 100 * kNsPerUs);
  for (const EcnSetting& e : r.snapshots[0].ecn) EXPECT_EQ(e, agent::action_setting(119));
  EXPECT_FALSE(r.done);
  uint64_t tx = 0;
  for (const auto& c : r.snapshots[0].ports) tx += c.tx_bytes;
  EXPECT_GT(tx, 0u) << "traffic flows in the first interval";
}

TEST(NetworkEnv, EpisodesEndAndGiveEveryMbufBack) {
  NetworkEnv env(star_run(), 100 * kNsPerUs);
  const agent::PortGraph g(env.topology());
  unsigned avail_after_reset = 0;
  for (int episode = 0; episode < 3; ++episode) {
    env.reset(9);  // the same episode three times: the pool must look the same each time
    const unsigned avail = rte_mempool_avail_count(env.pool());
    if (episode == 0)
      avail_after_reset = avail;
    else
      EXPECT_EQ(avail, avail_after_reset) << "episode " << episode << ": mbufs leaked";
    int steps = 0;
    bool done = false;
    while (!done && steps < 1000) {
      done = env.step(settings_for(g, steps)).done;
      ++steps;
    }
    EXPECT_TRUE(done);
    EXPECT_LE(steps, 15) << "the episode is 1.5 ms of 100 us steps";
    EXPECT_GT(env.flows_finished(), 20u);
  }
  EXPECT_THROW(env.step(settings_for(g, 0)), std::logic_error) << "step after done needs reset";
  const auto& st = env.stats();
  EXPECT_EQ(st.episodes, 3u);
  std::printf("network env: %llu steps, %.3f ms wall per 100 us step, %.3f ms per reset\n",
              static_cast<unsigned long long>(st.steps),
              static_cast<double>(st.step_wall_ns) / 1e6 / static_cast<double>(st.steps),
              static_cast<double>(st.reset_wall_ns) / 1e6 / static_cast<double>(st.episodes));
}

TEST(NetworkEnv, ARunWithoutWorkloadIsRefused) {
  start_eal();
  const RunConfig cfg =
      parse_run_config(toml::parse("[topology]\nkind = \"star\"\nhosts = 2\n"), "t");
  EXPECT_THROW(NetworkEnv env(cfg), std::invalid_argument);
}

}  // namespace
}  // namespace rocemu::fabric
