// agent_loop_sim_test.cc — the [agent] control loop (fabric/ecn_controller.h) in virtual time:
// a test policy alternating two settings puts them in force every interval (ecn.csv) and
// changes how much is marked; `static` with the [switch.ecn] thresholds gives byte-identical
// results to no agent; GraphCC with a model on a short episode of the paper's 24-host Clos
// runs, its thresholds change over time, and two runs are byte-identical; [telemetry] and
// [capture] in a workload run write their files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "agent/model_file.h"
#include "fabric/eal.h"
#include "fabric/workload_job.h"
#include "tests/agent/test_weights.h"
#include "tests/support/fabric_eal.h"

namespace rocemu::fabric {
namespace {

namespace fs = std::filesystem;

void start_eal() { test::start_fabric_eal("rocemu-agent-loop-test"); }

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() /
             ("rocemu-agent-loop-" + tag + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

/// 8 hosts on one 25 Gbps switch with DCQCN, FbHdp at 60% plus a 4:1 incast; `extra` TOML.
RunConfig star(const std::string& extra, int duration_us = 3000) {
  start_eal();
  std::ostringstream t;
  t << "[run]\nseed = 5\n"
    << "[topology]\nkind = \"star\"\nhosts = 8\nrate_gbps = 25\ndelay_ns = 1000\n"
    << "[dcqcn]\nprofile = \"" << ROCEMU_SOURCE_ROOT << "/configs/dcqcn/paper.toml\"\n"
    << "[workload]\ncdf_file = \"" << ROCEMU_SOURCE_ROOT
    << "/configs/workloads/FbHdp_distribution.txt\"\nload = 0.6\nduration_us = " << duration_us
    << "\n"
    << "[workload.incast]\nsenders = 4\nsize_bytes = 65536\nperiod_us = 500\nreceiver = 0\n"
    << "[sim]\nuntil_us = 200000\n"
    << extra;
  return parse_run_config(toml::parse(t.str()), "agent-loop-test");
}

WorkloadResult run(const RunConfig& cfg, const fs::path& out) {
  WorkloadRunOptions o;
  o.progress_out = nullptr;
  o.out_dir = out.string();
  WorkloadResult r = run_workload_virtual(cfg, o);
  write_workload_files(r, out.string());
  return r;
}

std::vector<std::vector<std::string>> csv_rows(const fs::path& p) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(slurp(p));
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ls(line);
    std::string c;
    while (std::getline(ls, c, ',')) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

/// metrics.csv without the agent_* rows (which only a run with an agent has).
std::string metrics_without_agent(const fs::path& p) {
  std::istringstream in(slurp(p));
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("agent_", 0) != 0) out += line + "\n";
  return out;
}

TEST(AgentLoop, AlternatePolicyPutsBothSettingsInForceEveryIntervalAndChangesMarking) {
  TempDir d("alternate");
  // Action 0: Kmin 2 KB, Kmax 16 KB, Pmax 0.01; action 119: 32 KB, 256 KB, 1.0.
  const RunConfig cfg = star(
      "[agent]\npolicy = \"alternate\"\nactions = [0, 119]\ninterval_us = 200\nrecord = true\n");
  const WorkloadResult r = run(cfg, d.path);
  ASSERT_TRUE(r.all_finished);
  EXPECT_EQ(r.agent.policy, "alternate");
  ASSERT_GT(r.agent.intervals, 10u);
  const auto rows = csv_rows(d.path / "ecn.csv");
  const uint64_t ports = 8;  // the switch's 8 egress ports
  EXPECT_EQ(rows.size(), r.agent.intervals * ports) << "every port changes every interval";
  EXPECT_EQ(r.agent.settings_changed, rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 6u);
    const uint64_t step = i / ports;
    EXPECT_EQ(std::stoll(rows[i][0]), static_cast<long long>(step * 200 * kNsPerUs));
    EXPECT_EQ(rows[i][1], "s0");
    EXPECT_EQ(rows[i][3], step % 2 == 0 ? "2048" : "32768") << "row " << i;
    EXPECT_EQ(rows[i][5], step % 2 == 0 ? "0.01" : "1");
  }
  const auto agent_rows = csv_rows(d.path / "agent.csv");
  EXPECT_EQ(agent_rows.size(), r.agent.intervals);
  EXPECT_NE(slurp(d.path / "metrics.csv").find("agent_policy,alternate"), std::string::npos);

  // The thresholds really govern marking: always Kmin 2 KB / Kmax 16 KB marks more than
  // the default 5 KB / 200 KB / 1%, the same flows otherwise.
  TempDir d0("none"), d1("tight");
  const WorkloadResult none = run(star(""), d0.path);
  const WorkloadResult tight =
      run(star("[agent]\npolicy = \"alternate\"\nactions = [4, 4]\n"), d1.path);
  ASSERT_TRUE(none.all_finished && tight.all_finished);
  EXPECT_EQ(none.flows_generated, tight.flows_generated);
  std::printf("ECN-marked packets: default %llu, Kmin 2 KB Kmax 16 KB Pmax 1: %llu\n",
              static_cast<unsigned long long>(none.ecn_marked_packets),
              static_cast<unsigned long long>(tight.ecn_marked_packets));
  EXPECT_GT(tight.ecn_marked_packets, none.ecn_marked_packets * 6 / 5) << "at least 20% more";
}

TEST(AgentLoop, StaticWithTheSwitchThresholdsIsByteIdenticalToNoAgent) {
  TempDir a("noagent"), b("static");
  const WorkloadResult ra = run(star(""), a.path);
  const WorkloadResult rb = run(star("[agent]\npolicy = \"static\"\n"), b.path);
  ASSERT_TRUE(ra.all_finished);
  EXPECT_EQ(rb.agent.settings_changed, 0u) << "the [switch.ecn] settings are already in force";
  EXPECT_GT(rb.agent.intervals, 0u);
  EXPECT_EQ(slurp(a.path / "flows.csv"), slurp(b.path / "flows.csv"));
  EXPECT_EQ(slurp(a.path / "bins.csv"), slurp(b.path / "bins.csv"));
  EXPECT_EQ(slurp(a.path / "metrics.csv"), metrics_without_agent(b.path / "metrics.csv"));
  // A static profile that differs (Alibaba's, scaled to 25 Gbps: 100 KB / 400 KB / 0.2) is
  // put in force once, on every port, at the first interval.
  TempDir c("alibaba");
  const WorkloadResult rc =
      run(star("[agent]\npolicy = \"static\"\nrecord = true\nprofile = \"" ROCEMU_SOURCE_ROOT
               "/configs/ecn/hpcc_alibaba.toml\"\n"),
          c.path);
  EXPECT_EQ(rc.agent.settings_changed, 8u);
  const auto rows = csv_rows(c.path / "ecn.csv");
  ASSERT_EQ(rows.size(), 8u);
  for (const auto& row : rows) {
    EXPECT_EQ(row[0], "0");
    EXPECT_EQ(row[3], std::to_string(100 * 1024));
    EXPECT_EQ(row[4], std::to_string(400 * 1024));
  }
}

TEST(AgentLoop, GraphCcOnTheClosEpisodeChangesThresholdsAndReplaysByteForByte) {
  TempDir d("graphcc");
  agent::Model m;
  m.mpnn = agent::test::random_mpnn(11, 0.5f);
  const std::string model = (d.path / "graphcc.model").string();
  agent::save_model(model, m);
  start_eal();
  RunConfig cfg = load_run_config(ROCEMU_SOURCE_ROOT "/configs/workloads/clos24_fbhdp_incast.toml");
  cfg.workload->duration_ns = 2 * kNsPerMs;  // a short episode keeps the test quick
  cfg.sim.until_ns = 2 * kNsPerMs;
  cfg.agent.record = true;
  apply_agent_flags(cfg, "graphcc", model, 100);
  WorkloadResult r[2];
  for (int i = 0; i < 2; ++i) {
    const fs::path out = d.path / ("run" + std::to_string(i));
    r[i] = run(cfg, out);
  }
  EXPECT_EQ(r[0].agent.policy, "graphcc");
  EXPECT_EQ(r[0].agent.intervals, 21u) << "t = 0, 100, ..., 2000 us";
  EXPECT_GT(r[0].flows_generated, 100u);
  const auto rows = csv_rows(d.path / "run0" / "ecn.csv");
  std::set<std::string> times, settings;
  for (const auto& row : rows) {
    times.insert(row[0]);
    settings.insert(row[3] + "/" + row[4] + "/" + row[5]);
  }
  std::printf(
      "graphcc: %zu setting changes at %zu instants, %zu distinct settings; step p50 %.1f us\n",
      rows.size(), times.size(), settings.size(),
      static_cast<double>(r[0].agent.step_p50_ns) / 1e3);
  EXPECT_GT(times.size(), 1u) << "thresholds change over time, not only once";
  EXPECT_GT(settings.size(), 1u);
  for (const char* f : {"flows.csv", "bins.csv", "metrics.csv", "ecn.csv"})
    EXPECT_EQ(slurp(d.path / "run0" / f), slurp(d.path / "run1" / f)) << f;
}

TEST(AgentLoop, TelemetryAndCaptureWorkInWorkloadRuns) {
  TempDir d("taps");
  const RunConfig cfg = star(
      "[telemetry]\ninterval_us = 50\n[capture]\nports = [\"s0:0\"]\nfile = \"c.pcapng\"\n", 1000);
  const WorkloadResult r = run(cfg, d.path);
  ASSERT_TRUE(r.all_finished);
  ASSERT_TRUE(fs::exists(d.path / "queues_s0.csv"));
  EXPECT_GT(csv_rows(d.path / "queues_s0.csv").size(), 10u);
  ASSERT_TRUE(fs::exists(d.path / "c.pcapng"));
  EXPECT_GT(fs::file_size(d.path / "c.pcapng"), 10000u);
}

// Without a capture, the hosts' frames carry no payload bytes (NicParams::elide_payload); with
// one, every byte is copied and ICRC-checked. The results must not tell the two apart.
TEST(AgentLoop, ElidedPayloadsGiveTheResultsOfCopiedOnes) {
  TempDir d("elide");
  const WorkloadResult elided = run(star("", 1000), d.path / "elided");
  const WorkloadResult copied =
      run(star("[capture]\nports = [\"s0:0\"]\nfile = \"c.pcapng\"\n", 1000), d.path / "copied");
  ASSERT_TRUE(elided.all_finished);
  ASSERT_TRUE(copied.all_finished);
  EXPECT_GT(elided.records.size(), 20u);
  EXPECT_EQ(elided.events, copied.events);
  EXPECT_EQ(elided.link_hops, copied.link_hops);
  for (const char* f : {"flows.csv", "bins.csv", "metrics.csv"})
    EXPECT_EQ(slurp(d.path / "elided" / f), slurp(d.path / "copied" / f)) << f;
}

// The same over links that lose, reorder and duplicate frames: a duplicate of a frame whose
// payload is elided (its mbuf holds the headers only) is as long on the wire as the frame.
TEST(AgentLoop, ElidedPayloadsOnImpairedLinksGiveTheResultsOfCopiedOnes) {
  TempDir d("elide-impaired");
  const std::string faults =
      "[topology.impairment]\nloss = 0.002\nreorder = 0.01\nduplicate = 0.02\n";
  const WorkloadResult elided = run(star(faults, 1000), d.path / "elided");
  const WorkloadResult copied = run(
      star(faults + "[capture]\nports = [\"s0:0\"]\nfile = \"c.pcapng\"\n", 1000),
      d.path / "copied");
  ASSERT_TRUE(elided.all_finished);
  ASSERT_TRUE(copied.all_finished);
  EXPECT_GT(elided.records.size(), 20u);
  EXPECT_GT(elided.retransmitted_packets, 0u) << "the losses were recovered from";
  EXPECT_EQ(elided.events, copied.events);
  EXPECT_EQ(elided.link_hops, copied.link_hops);
  for (const char* f : {"flows.csv", "bins.csv", "metrics.csv"})
    EXPECT_EQ(slurp(d.path / "elided" / f), slurp(d.path / "copied" / f)) << f;
}

// The shipped model (configs/models/graphcc_clos24.model, trained on the paper's training
// scenario: configs/models/README.md) loads and, on a short seeded episode of that scenario,
// keeps the mean switch queue below static DCQCN's (Alibaba thresholds), every flow finished
// under both: the paper's strongest claim, and a test that fails if training did not work.
TEST(AgentLoop, TheShippedGraphCcModelKeepsQueuesBelowStaticDcqcn) {
  start_eal();
  RunConfig base = load_run_config(ROCEMU_SOURCE_ROOT "/configs/paper/train_fbhdp60_incast.toml");
  base.seed = 11;  // not a training seed
  base.workload->duration_ns = 5 * kNsPerMs;
  base.sim.until_ns = 200 * kNsPerMs;  // until every flow finished
  RunConfig stat = base, gcc = base;
  apply_agent_flags(stat, "static", "", 100);
  apply_agent_flags(gcc, "graphcc", ROCEMU_SOURCE_ROOT "/configs/models/graphcc_clos24.model", 100);
  TempDir d("shipped");
  const WorkloadResult rs = run(stat, d.path / "static");
  const WorkloadResult rg = run(gcc, d.path / "graphcc");
  ASSERT_TRUE(rs.all_finished);
  ASSERT_TRUE(rg.all_finished);
  EXPECT_EQ(rs.flows_generated, rg.flows_generated) << "the same flows";
  std::printf("mean queue: static %.0f B, graphcc %.0f B; mean slowdown %.3f vs %.3f\n",
              rs.summary.mean_queue_bytes, rg.summary.mean_queue_bytes, rs.summary.overall.mean,
              rg.summary.overall.mean);
  EXPECT_LT(rg.summary.mean_queue_bytes, rs.summary.mean_queue_bytes);
}

}  // namespace
}  // namespace rocemu::fabric
