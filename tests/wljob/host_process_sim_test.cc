// Per-host processes (apps/host, fabric/workload_fabric.h local mode) checked in virtual
// time, where one process can hold them all: N WorkloadFabrics, each running ONE host of an
// 8-host star with the others as replicas, plus the switch built here, in one VirtualEngine.
// If the deterministic QP plan gave any host a wrong peer QPN, PSN or rkey, its packets
// would be dropped and flows would fail; instead the merged per-host results equal the
// in-process job's flows.csv byte for byte, and its bins.csv. Also: splitting the
// in-process records by source host and merging them again (rocemu-host --merge) writes
// the in-process flows.csv and bins.csv.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "apps/host/host_merge.h"
#include "fabric/eal.h"
#include "fabric/realtime_engine.h"
#include "nic/roce_host.h"
#include "fabric/virtual_engine.h"
#include "fabric/workload_fabric.h"
#include "fabric/workload_job.h"

namespace rocemu::fabric {

namespace {

void start_eal() {
  static const bool eal = [] {
    EalOptions o;
    o.program = "rocemu-wlhost-sim-test";
    o.user_args = {"--log-level", "lib.eal:error"};
    eal_start(o);
    return true;
  }();
  (void)eal;
}

RunConfig star(const char* op, int qps_per_pair, bool dcqcn = false) {
  start_eal();
  std::ostringstream t;
  t << "[run]\nseed = 11\n"
    << "[topology]\nkind = \"star\"\nhosts = 8\nrate_gbps = 25\ndelay_ns = 1000\n"
    << "[workload]\ncdf_file = \"" << ROCEMU_SOURCE_ROOT
    << "/configs/workloads/FbHdp_distribution.txt\"\n"
    << "load = 0.5\nduration_us = 1000\nop = \"" << op << "\"\nqps_per_pair = " << qps_per_pair
    << "\n"
    << "[workload.incast]\nsenders = 4\nsize_bytes = 32768\nperiod_us = 500\nreceiver = 0\n"
    << "[sim]\nuntil_us = 200000\n";
  if (dcqcn) t << "[dcqcn]\nenabled = true\n";
  return parse_run_config(toml::parse(t.str()), "wlhost-test");
}

WorkloadRunOptions quiet() {
  WorkloadRunOptions o;
  o.progress_out = nullptr;
  return o;
}

std::string flows_text(const std::vector<workload::FlowRecord>& r) {
  std::ostringstream os;
  workload::write_flows_csv(os, r);
  return os.str();
}
std::string bins_text(const workload::FctSummary& s) {
  std::ostringstream os;
  workload::write_bins_csv(os, s);
  return os.str();
}

/// Every host in its own local-mode fabric, the switches built here, one virtual engine.
WorkloadResult run_split(const RunConfig& cfg) {
  const workload::WorkloadConfig wcfg = make_workload_config_of(cfg);
  const Topology& t = cfg.topology.topology;
  RunPool pool(cfg.testbed.pool_mbufs);
  std::vector<uint8_t> sink(workload_region_bytes(wcfg));  // one address for all, as the mapping
  std::vector<apps::HostResultFiles> parts;
  {
    VirtualEngine e(t, cfg.topology.links, cfg.seed);
    std::vector<std::unique_ptr<sw::SoftSwitch>> switches;
    std::vector<std::unique_ptr<WorkloadFabric>> fabrics;
    for (uint32_t i = 0; i < t.nodes().size(); ++i) {
      if (t.node(i).kind != NodeKind::kSwitch) continue;
      switches.push_back(
          std::make_unique<sw::SoftSwitch>(cfg.switch_params, t, i, pool.get(), cfg.seed));
      e.attach(i, switches.back().get());
    }
    for (size_t h = 0; h < wcfg.hosts.size(); ++h) {
      WorkloadFabricOptions fo;
      fo.local_host = static_cast<int32_t>(h);
      fo.sink = sink.data();
      fabrics.push_back(
          std::make_unique<WorkloadFabric>(cfg, wcfg, pool.get(), cfg.workload_qps_per_pair, fo));
      e.attach(wcfg.hosts[h].id, fabrics.back()->node(wcfg.hosts[h].id));
    }
    e.every(10 * kNsPerUs, [&](TimeNs now) {
      bool all = true;
      for (auto& f : fabrics) {
        f->pull(now, 20 * kNsPerUs);
        all = all && f->done();
      }
      if (all) e.stop();
    });
    const TimeNs end = e.run_until(cfg.sim.until_ns);
    for (auto& f : fabrics) {
      const WorkloadResult r = f->result("host", end);
      apps::HostResultFiles p;
      p.dir = "host";
      p.records = r.records;
      std::istringstream m(workload_metrics_csv(r));
      std::string line;
      std::getline(m, line);
      while (std::getline(m, line))
        p.metrics[line.substr(0, line.find(','))] = line.substr(line.find(',') + 1);
      parts.push_back(std::move(p));
    }
  }
  return apps::merge_host_results(workload_size_bins(wcfg), cfg.seed, parts);
}

}  // namespace

TEST(HostProcessSim, PerHostFabricsWithTheDeterministicPlanReproduceTheInProcessFlows) {
  for (int lanes : {1, 3}) {
    const RunConfig cfg = star("write", lanes);
    const WorkloadResult one = run_workload_virtual(cfg, quiet());
    const WorkloadResult split = run_split(cfg);
    ASSERT_TRUE(one.all_finished);
    ASSERT_TRUE(split.all_finished) << lanes << " lanes";
    EXPECT_EQ(split.flows_failed, 0u);
    EXPECT_EQ(split.records.size(), one.records.size());
    EXPECT_EQ(flows_text(split.records), flows_text(one.records)) << lanes << " lanes";
    EXPECT_EQ(bins_text(split.summary), bins_text(one.summary)) << lanes << " lanes";
  }
}

TEST(HostProcessSim, WithDcqcnEachProcessControlsItsOwnHostAndTheFlowsStayEqual) {
  const RunConfig cfg = star("write", 2, true);
  const WorkloadResult one = run_workload_virtual(cfg, quiet());
  const WorkloadResult split = run_split(cfg);
  ASSERT_TRUE(split.all_finished);
  EXPECT_GT(one.summary.cnps, 0u);  // congestion happened (incast), DCQCN acted
  EXPECT_EQ(split.summary.cnps, one.summary.cnps);
  EXPECT_EQ(flows_text(split.records), flows_text(one.records));
}

TEST(HostProcessSim, SendFlowsCompleteWithReceivesKeptPostedByTheReceiver) {
  const RunConfig cfg = star("send", 2);
  const WorkloadResult one = run_workload_virtual(cfg, quiet());
  const WorkloadResult split = run_split(cfg);
  ASSERT_TRUE(split.all_finished);
  EXPECT_EQ(split.flows_failed, 0u);
  ASSERT_EQ(split.records.size(), one.records.size());
  for (size_t i = 0; i < split.records.size(); ++i) {
    EXPECT_EQ(split.records[i].flow, one.records[i].flow);
    EXPECT_GE(split.records[i].fct_ns(), split.records[i].ideal_ns);
  }
}

TEST(HostProcessSim, MergingRecordsSplitBySourceWritesTheInProcessFlowsAndBins) {
  const RunConfig cfg = star("write", 1);
  const WorkloadResult one = run_workload_virtual(cfg, quiet());
  const auto dir =
      std::filesystem::temp_directory_path() / ("rocemu_wlhost_" + std::to_string(::getpid()));
  write_workload_files(one, (dir / "all").string());
  const workload::WorkloadConfig wcfg = make_workload_config_of(cfg);
  std::vector<apps::HostResultFiles> parts;
  for (const auto& h : wcfg.hosts) {
    WorkloadResult part = one;
    part.records.clear();
    for (const auto& rec : one.records)
      if (rec.flow.src == h.id) part.records.push_back(rec);
    part.flows_generated = part.flows_posted = part.records.size();
    // One made-up failure per host, to check that failures.csv is merged too.
    FlowFailure ff;
    ff.flow.id = 1'000'000 + h.id;
    ff.flow.size_bytes = 100;
    ff.src = "h" + std::to_string(h.id);
    ff.dst = "hx";
    ff.status = h.id % 2 ? IBV_WC_RETRY_EXC_ERR : -1;
    part.failures = {ff};
    const auto d = dir / ("h" + std::to_string(h.id));
    write_workload_files(part, d.string());
    parts.push_back(apps::read_host_results(d.string()));
  }
  const WorkloadResult merged = apps::merge_host_results(workload_size_bins(wcfg), cfg.seed, parts);
  write_workload_files(merged, (dir / "merged").string());
  auto slurp = [](const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
  };
  EXPECT_EQ(slurp(dir / "merged" / "flows.csv"), slurp(dir / "all" / "flows.csv"));
  EXPECT_EQ(slurp(dir / "merged" / "bins.csv"), slurp(dir / "all" / "bins.csv"));
  EXPECT_EQ(merged.flows_generated, one.flows_generated);
  ASSERT_EQ(merged.failures.size(), wcfg.hosts.size());
  for (size_t i = 0; i < wcfg.hosts.size(); ++i) {
    const FlowFailure& f = merged.failures[i];
    EXPECT_EQ(f.flow.id, 1'000'000 + wcfg.hosts[i].id) << "by flow id";
    EXPECT_EQ(f.src, "h" + std::to_string(wcfg.hosts[i].id));
    EXPECT_EQ(f.status, wcfg.hosts[i].id % 2 ? IBV_WC_RETRY_EXC_ERR : -1);
  }
  EXPECT_EQ(merged.pfc.nic_pauses_received, wcfg.hosts.size() * one.pfc.nic_pauses_received);
  EXPECT_EQ(merged.engine, "hosts");
  EXPECT_THROW(apps::merge_host_results(workload_size_bins(wcfg), cfg.seed + 1, parts),
               std::runtime_error);
  std::vector<apps::HostResultFiles> twice{parts[0], parts[0]};
  EXPECT_THROW(apps::merge_host_results(workload_size_bins(wcfg), cfg.seed, twice),
               std::runtime_error);
  std::filesystem::remove_all(dir);
}

}  // namespace rocemu::fabric
