// The workload job (fabric/workload_job.h) in virtual time on an 8-host star (25 Gbps,
// 1 us links) with FbHdp flow sizes (configs/workloads/FbHdp_distribution.txt, HPCC): every
// flow completes, each FCT is at least its ideal (docs/workloads.md), one seed replays
// byte-identical result files, and a heavier load gives a higher median slowdown.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/node.h"
#include "fabric/eal.h"
#include "fabric/lazy_pool.h"
#include "fabric/realtime_engine.h"
#include "fabric/virtual_engine.h"
#include "fabric/workload_fabric.h"
#include "fabric/workload_job.h"
#include "nic/roce_host.h"
#include "switchsw/soft_switch.h"

namespace rocemu::fabric {

namespace {

void start_eal() {
  static const bool eal = [] {
    EalOptions o;
    o.program = "rocemu-wljob-sim-test";
    o.user_args = {"--log-level", "lib.eal:error"};
    eal_start(o);
    return true;
  }();
  (void)eal;
}

/// 8 hosts on one switch; FbHdp flows for `duration_us`, optional 4:1 incast.
RunConfig star_workload(double load, int duration_us, bool incast, const char* op = "write",
                        int qps_per_pair = 1) {
  start_eal();
  std::ostringstream t;
  t << "[run]\nseed = 7\n"
    << "[topology]\nkind = \"star\"\nhosts = 8\nrate_gbps = 25\ndelay_ns = 1000\n"
    << "[workload]\ncdf_file = \"" << ROCEMU_SOURCE_ROOT
    << "/configs/workloads/FbHdp_distribution.txt\"\n"
    << "load = " << load << "\nduration_us = " << duration_us << "\nop = \"" << op
    << "\"\nqps_per_pair = " << qps_per_pair << "\n";
  if (incast)
    t << "[workload.incast]\nsenders = 4\nsize_bytes = 32768\nperiod_us = 500\nreceiver = 0\n";
  t << "[sim]\nuntil_us = 200000\n";
  return parse_run_config(toml::parse(t.str()), "wljob-test");
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

WorkloadRunOptions quiet() {
  WorkloadRunOptions o;
  o.progress_out = nullptr;
  return o;
}

void expect_every_flow_complete_and_above_ideal(const WorkloadResult& r) {
  ASSERT_TRUE(r.all_finished);
  EXPECT_EQ(r.flows_failed, 0u);
  EXPECT_EQ(r.summary.flows_unfinished, 0u);
  ASSERT_GT(r.records.size(), 50u);
  EXPECT_EQ(r.records.size(), r.flows_generated);
  EXPECT_EQ(r.flows_posted, r.flows_generated);
  for (const auto& rec : r.records) {
    ASSERT_GT(rec.ideal_ns, 0) << "flow " << rec.flow.id;
    EXPECT_GE(rec.fct_ns(), rec.ideal_ns)
        << "flow " << rec.flow.id << " size " << rec.flow.size_bytes;
    EXPECT_GE(rec.slowdown(), 1.0);
  }
  EXPECT_GE(r.summary.overall.median, 1.0);
  EXPECT_GT(r.summary.queue_samples, 0u);
  EXPECT_EQ(r.switch_drops, 0u);  // lossless class with PFC
}

}  // namespace

TEST(WorkloadJobSim, EveryFlowCompletesNoFasterThanItsIdealFct) {
  const WorkloadResult r = run_workload_virtual(star_workload(0.5, 2000, true), quiet());
  expect_every_flow_complete_and_above_ideal(r);
  uint64_t incast = 0;
  for (const auto& rec : r.records) incast += rec.flow.incast != workload::kNotIncast;
  EXPECT_EQ(incast, 4u * 4u);  // events at 0, 500, 1000, 1500 us
}

// A k = 4 fat tree (16 hosts, 20 switches, 100 Gbps, 6 hops between pods): FbHdp flows
// between all hosts complete over the three tiers and their ECMP paths.
TEST(WorkloadJobSim, FlowsCompleteAcrossAK4FatTree) {
  start_eal();
  std::ostringstream t;
  t << "[run]\nseed = 3\n[topology]\nkind = \"fattree\"\nk = 4\n"
    << "[workload]\ncdf_file = \"" << ROCEMU_SOURCE_ROOT
    << "/configs/workloads/FbHdp_distribution.txt\"\nload = 0.4\nduration_us = 300\n"
    << "[sim]\nuntil_us = 200000\n";
  const WorkloadResult r =
      run_workload_virtual(parse_run_config(toml::parse(t.str()), "fattree-test"), quiet());
  expect_every_flow_complete_and_above_ideal(r);
  uint32_t cross_pod = 0;  // pod = host / 4
  for (const auto& rec : r.records) cross_pod += rec.flow.src / 4 != rec.flow.dst / 4;
  EXPECT_GT(cross_pod, r.records.size() / 2) << "most flows cross the core";
}

// The k = 4 fat tree under a permutation of 256 KiB flows (every host sends one, receives
// one): every flow completes and every byte is accounted, each at least its ideal FCT.
TEST(WorkloadJobSim, APermutationCompletesOnAK4FatTree) {
  start_eal();
  const std::string t =
      "[run]\nseed = 5\n[topology]\nkind = \"fattree\"\nk = 4\n"
      "[workload]\n[workload.matrix]\npattern = \"permutation\"\nsize_bytes = 262144\n"
      "start_jitter_us = 5\n[sim]\nuntil_us = 100000\n";
  const RunConfig cfg = parse_run_config(toml::parse(t), "fattree-perm-test");
  const WorkloadResult r = run_workload_virtual(cfg, quiet());
  ASSERT_TRUE(r.all_finished);
  EXPECT_EQ(r.flows_failed, 0u);
  ASSERT_EQ(r.records.size(), 16u);
  std::set<uint32_t> srcs, dsts;
  uint64_t bytes = 0;
  for (const auto& rec : r.records) {
    srcs.insert(rec.flow.src);
    dsts.insert(rec.flow.dst);
    bytes += rec.flow.size_bytes;
    EXPECT_GE(rec.fct_ns(), rec.ideal_ns) << rec.flow.id;
  }
  EXPECT_EQ(srcs.size(), 16u);
  EXPECT_EQ(dsts.size(), 16u);
  EXPECT_EQ(bytes, 16u * 262144u);
  EXPECT_EQ(r.switch_drops, 0u);
  // Link-hops: each flow's 256 data frames cross its path's links (2, 4 or 6); ACKs, CNPs
  // and pauses add a few per cent.
  uint64_t data_hops = 0;
  for (const auto& rec : r.records)
    data_hops += 256u * static_cast<uint64_t>(
                            cfg.topology.topology.path_info(rec.flow.src, rec.flow.dst).hops);
  EXPECT_GE(r.link_hops, data_hops);
  EXPECT_LE(r.link_hops, data_hops + data_hops / 10);
  EXPECT_NE(workload_metrics_csv(r).find("link_hops," + std::to_string(r.link_hops) + "\n"),
            std::string::npos);
  EXPECT_NE(workload_text(r).find("link-hops " + std::to_string(r.link_hops) + " ("),
            std::string::npos)
      << workload_text(r);
}

TEST(WorkloadJobSim, SendFlowsCompleteLikeWrites) {
  const WorkloadResult r = run_workload_virtual(star_workload(0.3, 1000, false, "send"), quiet());
  expect_every_flow_complete_and_above_ideal(r);
}

TEST(WorkloadJobSim, OneSeedWritesByteIdenticalResultFiles) {
  const RunConfig cfg = star_workload(0.5, 1000, true);
  const auto dir =
      std::filesystem::temp_directory_path() / ("rocemu_wljob_" + std::to_string(::getpid()));
  write_workload_files(run_workload_virtual(cfg, quiet()), (dir / "a").string());
  write_workload_files(run_workload_virtual(cfg, quiet()), (dir / "b").string());
  for (const char* f : {"flows.csv", "bins.csv", "metrics.csv"}) {
    const std::string a = slurp(dir / "a" / f);
    EXPECT_GT(a.size(), 100u) << f;
    EXPECT_EQ(a, slurp(dir / "b" / f)) << f;
  }
  // cost.csv: what each run cost (wall time and memory differ); its counts do not.
  const auto rows = [&](const char* run) {
    std::map<std::string, std::string> m;
    std::istringstream in(slurp(dir / run / "cost.csv"));
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "metric,value");
    while (std::getline(in, line)) m[line.substr(0, line.find(','))] = line.substr(line.find(',') + 1);
    return m;
  };
  const auto ca = rows("a"), cb = rows("b");
  for (const char* k :
       {"events", "link_hops", "wall_ns", "events_per_s", "link_hops_per_s", "peak_rss_bytes"})
    EXPECT_EQ(ca.count(k), 1u) << k;
  EXPECT_EQ(ca.at("events"), cb.at("events"));
  EXPECT_EQ(ca.at("link_hops"), cb.at("link_hops"));
  EXPECT_GT(std::stoull(ca.at("link_hops")), 1000u);
  EXPECT_GT(std::stoull(ca.at("peak_rss_bytes")), 1u << 20);
  std::filesystem::remove_all(dir);
}

TEST(WorkloadJobSim, HigherLoadGivesHigherMedianSlowdown) {
  const WorkloadResult light = run_workload_virtual(star_workload(0.2, 3000, false), quiet());
  const WorkloadResult heavy = run_workload_virtual(star_workload(0.8, 3000, false), quiet());
  expect_every_flow_complete_and_above_ideal(light);
  expect_every_flow_complete_and_above_ideal(heavy);
  std::printf(
      "load 0.2: %zu flows, median slowdown %.3f, mean queue %.0f B; load 0.8: %zu flows, "
      "median %.3f, mean queue %.0f B\n",
      light.records.size(), light.summary.overall.median, light.summary.mean_queue_bytes,
      heavy.records.size(), heavy.summary.overall.median, heavy.summary.mean_queue_bytes);
  EXPECT_GT(heavy.records.size(), 2 * light.records.size());
  EXPECT_GT(heavy.summary.overall.median, light.summary.overall.median);
  EXPECT_GT(heavy.summary.mean_queue_bytes, light.summary.mean_queue_bytes);
}

// [workload] qp_per_flow: one QP pair per flow, connected at its start and destroyed at its
// end. Every flow completes, one QP pair was connected per flow, none is left at the end
// (no leak), results replay byte for byte; a small flow no longer waits behind a large one of
// its pair (measured: p99 slowdown 61 against 577 with one QP per pair); and with [nic] max_qps too
// small for the concurrency, flows wait for a QP and still all complete.
TEST(WorkloadJobSim, OneQpPerFlowConnectsAndRecyclesWithoutLeaks) {
  RunConfig cfg = star_workload(0.6, 2000, true);
  cfg.workload_qp_per_flow = true;
  const WorkloadResult r = run_workload_virtual(cfg, quiet());
  expect_every_flow_complete_and_above_ideal(r);
  EXPECT_TRUE(r.qp_per_flow);
  EXPECT_EQ(r.qps_connected, r.flows_generated) << "one QP pair per flow";
  EXPECT_EQ(r.qps_live_at_end, 0u) << "every flow's QPs destroyed";
  const WorkloadResult again = run_workload_virtual(cfg, quiet());
  EXPECT_EQ(workload_metrics_csv(r), workload_metrics_csv(again));
  const WorkloadResult one_qp = run_workload_virtual(star_workload(0.6, 2000, true), quiet());
  std::printf(
      "slowdown median/p95/p99: qp_per_flow %.3f/%.3f/%.3f, one QP per pair %.3f/%.3f/%.3f (%zu "
      "flows)\n",
      r.summary.overall.median, r.summary.overall.p95, r.summary.overall.p99,
      one_qp.summary.overall.median, one_qp.summary.overall.p95, one_qp.summary.overall.p99,
      r.records.size());
  // Head-of-line blocking is a tail effect: a small flow stuck behind a large one of its pair.
  EXPECT_LT(r.summary.overall.p99 * 3, one_qp.summary.overall.p99);
  EXPECT_LT(r.summary.overall.p95 * 2, one_qp.summary.overall.p95);
  // Few QPs: 8 per host; every flow still completes, some had to wait for a QP.
  RunConfig tight = cfg;
  tight.nic_params.max_qps = 8;
  const WorkloadResult t = run_workload_virtual(tight, quiet());
  expect_every_flow_complete_and_above_ideal(t);
  EXPECT_EQ(t.qps_live_at_end, 0u);
  RunConfig send = star_workload(0.3, 1000, false, "send");
  send.workload_qp_per_flow = true;
  const WorkloadResult rs = run_workload_virtual(send, quiet());
  expect_every_flow_complete_and_above_ideal(rs);
  EXPECT_EQ(rs.qps_live_at_end, 0u);
  const std::string text =
      "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nload = 0.1\nduration_us = 100\n"
      "qp_per_flow = true\nqps_per_pair = 2\n";
  try {
    (void)parse_run_config(toml::parse(text), "bad.toml");
    FAIL() << "qp_per_flow with qps_per_pair accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("give either qp_per_flow or qps_per_pair"),
              std::string::npos);
  }
}

TEST(WorkloadJobSim, RunConfigReportsWorkloadProblemsAgainstTheTopologyAtOnce) {
  const std::string text =
      "[topology]\nkind = \"star\"\nhosts = 4\n"
      "[workload]\nload = 0\nduration_us = 100\nqps_per_pair = 0\n"
      "[workload.incast]\nsenders = 4\nsize_bytes = 1000\nperiod_us = 10\n";
  try {
    (void)parse_run_config(toml::parse(text), "bad.toml");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("workload.qps_per_pair=0"), std::string::npos) << m;
    EXPECT_NE(m.find("workload.incast.senders=4"), std::string::npos) << m;
  }
  // Without [job], a [workload] run does not need hosts named h0/h1 to be checked as a job.
  const RunConfig ok = parse_run_config(
      toml::parse(
          "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nload = 0\nduration_us = 100\n"
          "[workload.incast]\nsenders = 3\nsize_bytes = 1000\nperiod_us = 10\n"),
      "ok.toml");
  ASSERT_TRUE(ok.workload.has_value());
  EXPECT_EQ(ok.workload_qps_per_pair, 1u);
}

TEST(WorkloadJobSim, MoreQpsPerPairCutTheTailOfSmallFlowsBehindLargeOnes) {
  // With one QP per pair a small flow waits behind every earlier flow of its pair (RC
  // executes work requests in order); spread over 4 QPs it mostly finds an idle one.
  auto small_p99 = [](const WorkloadResult& r) {
    std::vector<double> v;
    for (const auto& rec : r.records)
      if (rec.flow.size_bytes <= 1000) v.push_back(rec.slowdown());
    std::sort(v.begin(), v.end());
    return workload::percentile_sorted(v, 99);
  };
  const WorkloadResult one =
      run_workload_virtual(star_workload(0.8, 3000, false, "write", 1), quiet());
  const WorkloadResult four =
      run_workload_virtual(star_workload(0.8, 3000, false, "write", 4), quiet());
  expect_every_flow_complete_and_above_ideal(four);
  ASSERT_EQ(one.records.size(), four.records.size());  // same flows, other QPs
  std::printf("small flows p99 slowdown: 1 QP per pair %.2f, 4 QPs per pair %.2f\n", small_p99(one),
              small_p99(four));
  EXPECT_LT(small_p99(four), 0.5 * small_p99(one));
}

// Normal PFC is not a storm: a 16:1 incast on a 17-host star pauses the senders' NICs over
// and over, through a 2 MB buffer, and neither the switch's nor the NICs' watchdog (5 ms detection,
// 25x shorter than SONiC's default) takes it for one. The PFC totals reach the summary and
// metrics.csv.
// A node as it is, less its tx_ready_ports() hint: the engine then asks every free port.
class AskEveryPort final : public Node {
 public:
  explicit AskEveryPort(Node& n) : n_(n) {}
  uint16_t num_ports() const noexcept override { return n_.num_ports(); }
  void rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept override {
    n_.rx(port, pkts, n, now);
  }
  rte_mbuf* tx(uint16_t port, TimeNs now) noexcept override { return n_.tx(port, now); }
  TimeNs next_deadline() const noexcept override { return n_.next_deadline(); }
  void on_timer(TimeNs now) noexcept override { n_.on_timer(now); }

 private:
  Node& n_;
};

struct EngineRun {
  std::vector<workload::FlowRecord> records;
  VirtualStats stats;
  std::vector<WireCounters> ports;
  uint64_t checks = 0, pfc_pauses = 0;
  std::string broken;  // the first switch invariant found broken
};

// The workload job's virtual-time loop (run_workload_virtual), with the switches' tx-ready
// hints used or hidden, their invariants checked every 10 us.
EngineRun run_engine(const RunConfig& cfg, bool hints) {
  const workload::WorkloadConfig wcfg = make_workload_config_of(cfg);
  RunPool pool(cfg.testbed.pool_mbufs, kPoolDataBytes, RunPool::Fault::kLazy);
  EngineRun out;
  VirtualEngine e(cfg.topology.topology, cfg.topology.links, cfg.seed);
  WorkloadFabricOptions fo;
  fo.elide_payload = true;
  WorkloadFabric f(cfg, wcfg, pool.get(), cfg.workload_qps_per_pair, fo);
  std::vector<std::unique_ptr<AskEveryPort>> wrapped;
  for (uint32_t i = 0; i < f.num_nodes(); ++i) {
    if (hints) {
      e.attach(i, f.node(i));
    } else {
      wrapped.push_back(std::make_unique<AskEveryPort>(*f.node(i)));
      e.attach(i, wrapped.back().get());
    }
  }
  e.every(10'000, [&](TimeNs now) {
    f.pull(now, 20'000);
    for (const sw::SoftSwitch* s : f.switch_ptrs()) {  // by node: null for hosts
      if (!s) continue;
      ++out.checks;
      if (std::string why = s->check_invariants(); !why.empty() && out.broken.empty())
        out.broken = "at " + std::to_string(now) + " ns: " + why;
    }
    if (f.done()) e.stop();
  });
  const TimeNs end = e.run_until(cfg.sim.until_ns);
  const WorkloadResult r = f.result("virtual", end);
  out.records = r.records;
  out.pfc_pauses = r.summary.pfc_pauses;
  out.stats = e.stats();
  const Topology& t = cfg.topology.topology;
  for (uint32_t n = 0; n < t.nodes().size(); ++n)
    for (uint16_t p = 0; p < t.node(n).ports.size(); ++p)
      out.ports.push_back(e.counters(PortRef{n, p}));
  return out;
}

// The engine skips ports a switch says have nothing to send (node.h: tx_ready_ports); that
// must be invisible: with and without the hints the same events, the same frames on every
// port and the same flow completions, on runs full of PFC (DCQCN off, incasts on a small
// buffer: pauses, resumes and refreshes) and of ECN marks (DCQCN on), and the switches'
// ready bits always equal to their queues and pending PFC.
TEST(WorkloadJobSim, SkippingPortsWithNothingToSendChangesNothing) {
  start_eal();
  for (const bool dcqcn : {false, true}) {
    std::ostringstream t;
    t << "[run]\nseed = 11\n[topology]\nkind = \"fattree\"\nk = 4\n[switch]\nbuffer_mb = 1\n"
      << "[workload]\ncdf_file = \"" << ROCEMU_SOURCE_ROOT
      << "/configs/workloads/FbHdp_distribution.txt\"\nload = 0.5\nduration_us = 400\n"
      << "[workload.incast]\nsenders = 12\nsize_bytes = 131072\nperiod_us = 100\nreceiver = 0\n";
    if (dcqcn)
      t << "[dcqcn]\nprofile = \"" << ROCEMU_SOURCE_ROOT << "/configs/dcqcn/paper.toml\"\n";
    t << "[sim]\nuntil_us = 100000\n";
    const RunConfig cfg = parse_run_config(toml::parse(t.str()), "tx-ready-test");
    const EngineRun with = run_engine(cfg, true);
    const EngineRun without = run_engine(cfg, false);
    EXPECT_EQ(with.broken, "") << "dcqcn " << dcqcn;
    EXPECT_EQ(without.broken, "") << "dcqcn " << dcqcn;
    EXPECT_GT(with.checks, 100u);
    ASSERT_GT(with.records.size(), 40u) << "dcqcn " << dcqcn;
    EXPECT_EQ(with.stats.events, without.stats.events) << "dcqcn " << dcqcn;
    EXPECT_EQ(with.stats.timer_calls, without.stats.timer_calls) << "dcqcn " << dcqcn;
    EXPECT_EQ(with.stats.packets_delivered, without.stats.packets_delivered);
    ASSERT_EQ(with.records.size(), without.records.size()) << "dcqcn " << dcqcn;
    for (size_t i = 0; i < with.records.size(); ++i) {
      EXPECT_EQ(with.records[i].flow.id, without.records[i].flow.id) << i;
      EXPECT_EQ(with.records[i].finish_ns, without.records[i].finish_ns) << i;
    }
    ASSERT_EQ(with.ports.size(), without.ports.size());
    if (!dcqcn) {
      EXPECT_GT(with.pfc_pauses, 20u) << "the incasts should exercise PFC";
    }
    EXPECT_EQ(with.pfc_pauses, without.pfc_pauses);
    uint64_t incast_flows = 0;
    for (size_t i = 0; i < with.ports.size(); ++i) {
      EXPECT_EQ(with.ports[i].tx_packets, without.ports[i].tx_packets) << "port " << i;
      EXPECT_EQ(with.ports[i].tx_bytes, without.ports[i].tx_bytes) << "port " << i;
    }
    for (const auto& rec : with.records) incast_flows += rec.flow.incast != workload::kNotIncast;
    EXPECT_GT(incast_flows, 0u);
  }
}

TEST(WorkloadJobSim, IncastPfcNeverTripsTheWatchdogs) {
  start_eal();
  const std::string text =
      "[run]\nseed = 3\n[topology]\nkind = \"star\"\nhosts = 17\nrate_gbps = 25\n"
      "delay_ns = 1000\n[switch]\nbuffer_mb = 2\n[switch.pfc_watchdog]\ndetection_ms = "
      "5\nrestore_ms = 5\n"
      "[nic.pfc_watchdog]\ndetection_ms = 5\nrestore_ms = 5\n"
      "[workload]\nload = 0\nduration_us = 20000\n"
      "[workload.incast]\nsenders = 16\nsize_bytes = 262144\nperiod_us = 2000\nreceiver = 0\n"
      "[sim]\nuntil_us = 200000\n";
  const RunConfig cfg = parse_run_config(toml::parse(text), "incast-watchdog");
  ASSERT_TRUE(cfg.nic_params.pfc_watchdog.on());
  const WorkloadResult r = run_workload_virtual(cfg, quiet());
  ASSERT_TRUE(r.all_finished);
  EXPECT_EQ(r.records.size(), 16u * 10u);
  EXPECT_GT(r.summary.pfc_pauses, 100u) << "the incast should exercise PFC";
  EXPECT_GT(r.pfc.nic_pauses_received, 100u);
  EXPECT_GT(r.pfc.nic_paused_ns, 0u);
  EXPECT_EQ(r.pfc.switch_storms, 0u);
  EXPECT_EQ(r.pfc.nic_storms, 0u);
  EXPECT_EQ(r.switch_drops, 0u);
  const std::string m = workload_metrics_csv(r);
  EXPECT_NE(m.find("\nnic_pfc_pauses_received," + std::to_string(r.pfc.nic_pauses_received) + "\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("\nnic_pfc_storms,0\n"), std::string::npos) << m;
  EXPECT_NE(workload_text(r).find("received by switches 0 and by NICs"), std::string::npos)
      << workload_text(r);
}

// PFC is lossless at MTU 4096: the automatic headroom covers the link's round trip and three
// frames of the MTU (the one ahead of the XOFF, the upstream's current one, the one over the
// threshold). A permutation on a K=4 fat tree with a 2 MB buffer and DCQCN off pauses links
// all the time; the headroom of MTU-1024 frames (the old fixed slack of 3 x 1536 bytes) drops
// frames in that run.
RunConfig mtu4096_permutation(const std::string& extra) {
  std::ostringstream t;
  t << "[run]\nseed = 5\n[topology]\nkind = \"fattree\"\nk = 4\n[nic]\nmtu_bytes = 4096\n"
    << "[switch]\nbuffer_mb = 2\n" << extra
    << "[workload]\nqp_per_flow = true\n[workload.matrix]\npattern = \"permutation\"\n"
    << "size_bytes = 1048576\n[sim]\nuntil_us = 100000\n";
  return parse_run_config(toml::parse(t.str()), "mtu4096-permutation");
}

TEST(WorkloadJobSim, PfcIsLosslessAtMtu4096) {
  start_eal();
  const RunConfig cfg = mtu4096_permutation("");
  EXPECT_EQ(cfg.switch_params.slack_bytes(), 3 * sw::max_frame_bytes_for_mtu(4096));
  const WorkloadResult r = run_workload_virtual(cfg, quiet());
  ASSERT_TRUE(r.all_finished);
  EXPECT_EQ(r.records.size(), 16u);
  EXPECT_GT(r.summary.pfc_pauses, 50u) << "the run should exercise PFC";
  EXPECT_EQ(r.switch_drops, 0u);
  EXPECT_EQ(r.retransmitted_packets, 0u);
  EXPECT_EQ(r.nic_alloc_failures + r.switch_alloc_failures, 0u);

  const WorkloadResult old = run_workload_virtual(mtu4096_permutation("headroom_slack_bytes = 4608\n"), quiet());
  EXPECT_GT(old.switch_drops, 0u) << "a headroom for 1.5 KB frames should overflow at MTU 4096";
}

// The virtual-time pool is sized for the network unless [testbed] pool_mbufs says otherwise;
// a pool too small for the run is reported (it throttles NICs and delays PFC frames).
TEST(WorkloadJobSim, APoolTooSmallForTheRunIsReported) {
  start_eal();
  const RunConfig sized = mtu4096_permutation("");
  EXPECT_FALSE(sized.testbed.pool_mbufs_given);
  const WorkloadResult ok = run_workload_virtual(sized, quiet());
  EXPECT_EQ(ok.pool_mbufs, virtual_pool_mbufs(sized));
  EXPECT_EQ(ok.nic_alloc_failures + ok.switch_alloc_failures, 0u);
  EXPECT_EQ(workload_text(ok).find("mbuf pool ran dry"), std::string::npos) << workload_text(ok);

  const RunConfig tiny = mtu4096_permutation("[testbed]\npool_mbufs = 1023\n");
  EXPECT_TRUE(tiny.testbed.pool_mbufs_given);
  EXPECT_EQ(virtual_pool_mbufs(tiny), 1023u);
  const WorkloadResult dry = run_workload_virtual(tiny, quiet());
  EXPECT_TRUE(dry.all_finished) << "a dry pool slows the run, it loses nothing";
  EXPECT_EQ(dry.pool_mbufs, 1023u);
  EXPECT_GT(dry.nic_alloc_failures, 0u);
  EXPECT_NE(workload_text(dry).find("mbuf pool ran dry: " + std::to_string(dry.nic_alloc_failures) +
                                    " frames NICs could not build"),
            std::string::npos)
      << workload_text(dry);
}

// A virtual-time pool of header-only mbufs is compact (fabric/realtime_engine.h): the
// headroom is the mbuf header's own lines, the frame follows the header, and a full frame in
// every mbuf leaves every header intact, through free and re-allocation. Other pools keep
// DPDK's layout.
TEST(RunPool, HeaderOnlyMbufsAreCompactAndFramesNeverTouchAHeader) {
  start_eal();
  constexpr unsigned kN = 511;  // at least 1.5 x the per-lcore cache (256)
  RunPool pool(kN, kHeaderOnlyRoomBytes, RunPool::Fault::kLazy);
  rte_mempool* mp = pool.get();
  EXPECT_EQ(mp->elt_size, sizeof(rte_mbuf) + kHeaderOnlyRoomBytes);
  EXPECT_EQ(rte_pktmbuf_data_room_size(mp), RTE_PKTMBUF_HEADROOM + kHeaderOnlyRoomBytes);
  for (int round = 0; round < 2; ++round) {
    std::vector<rte_mbuf*> ms(kN);
    ASSERT_EQ(rte_pktmbuf_alloc_bulk(mp, ms.data(), kN), 0);
    for (rte_mbuf* m : ms) {
      EXPECT_EQ(rte_pktmbuf_mtod(m, char*), reinterpret_cast<char*>(m) + sizeof(rte_mbuf));
      ASSERT_EQ(rte_pktmbuf_tailroom(m), kHeaderOnlyRoomBytes);
      char* d = rte_pktmbuf_append(m, kHeaderOnlyRoomBytes);
      ASSERT_NE(d, nullptr);
      std::fill_n(d, kHeaderOnlyRoomBytes, static_cast<char>(0xa5));
    }
    for (rte_mbuf* m : ms) {
      EXPECT_EQ(m->pool, mp);
      EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
      EXPECT_EQ(m->nb_segs, 1);
      EXPECT_EQ(m->next, nullptr);
      EXPECT_EQ(m->buf_len, RTE_PKTMBUF_HEADROOM + kHeaderOnlyRoomBytes);
      EXPECT_EQ(rte_pktmbuf_pkt_len(m), kHeaderOnlyRoomBytes);
      const char* d = rte_pktmbuf_mtod(m, const char*);
      EXPECT_TRUE(std::all_of(d, d + kHeaderOnlyRoomBytes, [](char c) { return c == static_cast<char>(0xa5); }));
    }
    rte_pktmbuf_free_bulk(ms.data(), kN);
  }
  EXPECT_EQ(rte_mempool_avail_count(mp), kN);

  RunPool full(kN, kPoolDataBytes, RunPool::Fault::kLazy);
  rte_mbuf* m = rte_pktmbuf_alloc(full.get());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(rte_pktmbuf_mtod(m, char*),
            reinterpret_cast<char*>(m) + sizeof(rte_mbuf) + RTE_PKTMBUF_HEADROOM);
  EXPECT_EQ(rte_pktmbuf_tailroom(m), kPoolDataBytes);
  rte_pktmbuf_free(m);
}

namespace {

uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

// A virtual-time pool lays its mbufs out as they are first needed (fabric/lazy_pool.h): a
// pool the size of a K=16 fat tree's (1.8 M header-only mbufs, 576 MiB made whole) costs
// the pages of the mbufs a run holds, not of the pool, and counts as a pool made whole.
TEST(RunPool, LazyPoolTouchesOnlyTheMbufsARunHolds) {
  start_eal();
  constexpr unsigned kN = 1'800'000;
  const uint64_t before = resident_bytes();
  RunPool pool(kN, kHeaderOnlyRoomBytes, RunPool::Fault::kLazy);
  rte_mempool* mp = pool.get();
  EXPECT_EQ(rte_mempool_avail_count(mp), kN);
  EXPECT_LT(lazy_pool_made(mp), 20'000u) << "one 2 MiB chunk at creation";
  constexpr unsigned kHeld = 50'000;
  std::vector<rte_mbuf*> ms(kHeld);
  for (unsigned i = 0; i < kHeld; i += 1000)
    ASSERT_EQ(rte_pktmbuf_alloc_bulk(mp, ms.data() + i, 1000), 0) << i;
  for (rte_mbuf* m : ms) {
    ASSERT_EQ(m->pool, mp);
    ASSERT_EQ(rte_mbuf_refcnt_read(m), 1);
    ASSERT_EQ(rte_pktmbuf_tailroom(m), kHeaderOnlyRoomBytes);
    ASSERT_EQ(rte_pktmbuf_mtod(m, char*), reinterpret_cast<char*>(m) + sizeof(rte_mbuf));
  }
  std::vector<rte_mbuf*> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "an mbuf twice";
  EXPECT_GE(lazy_pool_made(mp), kHeld);
  EXPECT_LT(lazy_pool_made(mp), kHeld + 20'000u);
  // 50,000 mbufs of 384 bytes with their headers: ~19 MiB; the whole pool 600+ MiB.
  EXPECT_LT(resident_bytes() - before, uint64_t{96} << 20);
  EXPECT_EQ(rte_mempool_avail_count(mp) + kHeld, kN);
  rte_pktmbuf_free_bulk(ms.data(), kHeld);
  EXPECT_EQ(rte_mempool_avail_count(mp), kN);
}

// Every one of its n mbufs, then dry, for header-only and 9 KB pools alike; freed mbufs are
// handed out again; a pool freed with mbufs still out neither hangs nor lays out the rest.
TEST(RunPool, LazyPoolHandsOutAllItsMbufsThenRunsDry) {
  start_eal();
  for (const uint32_t room : {kHeaderOnlyRoomBytes, kPoolDataBytes}) {
    SCOPED_TRACE(room);
    // Several 2 MiB chunks of either (~5,400 header-only mbufs a chunk, ~220 of 9 KB).
    const unsigned kN = room == kHeaderOnlyRoomBytes ? 20'000 : 3'000;
    RunPool pool(kN, room, RunPool::Fault::kLazy);
    rte_mempool* mp = pool.get();
    for (int round = 0; round < 2; ++round) {
      std::vector<rte_mbuf*> ms;
      while (rte_mbuf* m = rte_pktmbuf_alloc(mp)) {
        ASSERT_EQ(rte_pktmbuf_tailroom(m), room);
        ms.push_back(m);
        ASSERT_LE(ms.size(), kN);
      }
      EXPECT_EQ(ms.size(), kN);
      EXPECT_EQ(lazy_pool_made(mp), kN);
      EXPECT_EQ(rte_mempool_avail_count(mp), 0u);
      std::set<rte_mbuf*> distinct(ms.begin(), ms.end());
      EXPECT_EQ(distinct.size(), kN);
      rte_pktmbuf_free_bulk(ms.data(), static_cast<unsigned>(ms.size()));
      EXPECT_EQ(rte_mempool_avail_count(mp), kN);
    }
    RunPool leaky(kN, room, RunPool::Fault::kLazy);
    for (int i = 0; i < 10; ++i) ASSERT_NE(rte_pktmbuf_alloc(leaky.get()), nullptr);
    EXPECT_LT(lazy_pool_made(leaky.get()), kN);
  }  // `leaky` is freed with 10 mbufs out
}

// One exit rule for rocemu-sim, rocemu-host and the merge; failed flows are listed.
TEST(WorkloadJobSim, ExitStatusAndFailureReport) {
  WorkloadResult r;
  EXPECT_EQ(workload_exit_status(r), 0) << "no flows of its own (a receiving host)";
  r.flows_generated = 3;
  EXPECT_EQ(workload_exit_status(r), 1) << "flows generated, none finished";
  r.records.resize(1);
  r.summary.flows_unfinished = 2;
  EXPECT_EQ(workload_exit_status(r), 0) << "unfinished at the end of the run is not an error";
  FlowFailure f;
  f.flow.id = 12;
  f.flow.size_bytes = 4096;
  f.src = "h0";
  f.dst = "h3";
  f.status = IBV_WC_RETRY_EXC_ERR;
  r.failures.push_back(f);
  f.flow.id = 13;
  f.status = -1;
  r.failures.push_back(f);
  r.flows_failed = 2;
  EXPECT_EQ(workload_exit_status(r), 1);
  EXPECT_EQ(workload_failures_csv(r),
            "flow_id,src,dst,size_bytes,status\n"
            "12,h0,h3,4096,transport retry counter exceeded\n"
            "13,h0,h3,4096,post_refused\n");
  const std::string text = workload_text(r);
  EXPECT_NE(text.find("failed: flow 12 h0 -> h3 (4096 bytes): transport retry counter exceeded"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("failed: flow 13 h0 -> h3 (4096 bytes): post refused by the NIC"),
            std::string::npos);
}

}  // namespace rocemu::fabric
