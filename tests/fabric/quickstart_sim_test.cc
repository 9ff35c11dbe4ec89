// The quickstart (2 hosts, 1 switch, 10 Gbps, 1 us links; 4 MiB RDMA WRITE) in virtual time:
// data verified, completion time against the closed form, byte-identical result files for
// one seed, and the transport recovering through a lossy, reordering, duplicating link.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fabric/eal.h"
#include "fabric/switch_nodes.h"
#include "fabric/write_job.h"

namespace rocemu::fabric {

namespace {
RunConfig quickstart() {
  static const bool eal = [] {
    EalOptions o;
    o.program = "rocemu-fabric-sim-test";
    o.user_args = {"--log-level", "lib.eal:error"};
    eal_start(o);
    return true;
  }();
  (void)eal;
  return load_run_config(std::string(ROCEMU_SOURCE_ROOT) + "/configs/quickstart.toml");
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}
}  // namespace

TEST(QuickstartSim, WritesFourMiBIntactAtTheBottleneckRate) {
  const RunConfig cfg = quickstart();
  const JobResult r = run_write_job_virtual(cfg);
  ASSERT_TRUE(r.completed);
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.bytes, 4u << 20);
  // 4096 frames of 1024 B payload + 58 B headers (Eth 14, IPv4 20, UDP 8, BTH 12, ICRC 4)
  // plus a 16 B RETH on the first frame of each of the 4 messages.
  const uint64_t wire_bytes = 4096ull * (1024 + 58) + 4 * 16;
  ASSERT_EQ(r.ports[0].node, "h0");
  EXPECT_EQ(r.ports[0].tx_bytes, wire_bytes);
  // Closed form: the last byte leaves h0 after wire_bytes at 10 Gbps, crosses two 1 us links
  // and one store-and-forward of the last frame; the final ACK returns over two links.
  const TimeNs lower = serialization_ns(wire_bytes, 10 * kBpsPerGbps) + 2 * 1000 +
                       serialization_ns(1082, 10 * kBpsPerGbps) + 2 * 1000;
  EXPECT_GE(r.elapsed_ns, lower);
  EXPECT_LE(r.elapsed_ns, lower + 10 * kNsPerUs);  // ACK frames + 1 us completion polling
  EXPECT_GT(r.goodput_gbps, 9.3);
  EXPECT_LT(r.goodput_gbps, 10.0 * 1024 / 1082);
  EXPECT_EQ(r.retransmitted_packets, 0u);
  for (const auto& p : r.ports) EXPECT_EQ(p.wire_drops + p.switch_drops, 0u) << p.node;
}

TEST(QuickstartSim, TwoRunsWithOneSeedWriteByteIdenticalResultFiles) {
  RunConfig cfg = quickstart();
  cfg.seed = 1234;
  const auto base = std::filesystem::temp_directory_path() / ("rocemu-fabric-sim-" + std::to_string(getpid()));
  write_result_files(run_write_job_virtual(cfg), (base / "a").string());
  write_result_files(run_write_job_virtual(cfg), (base / "b").string());
  for (const char* f : {"summary.json", "summary.csv"}) {
    const std::string a = slurp(base / "a" / f), b = slurp(base / "b" / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_EQ(a, b) << f;
  }
  EXPECT_NE(slurp(base / "a" / "summary.json").find("\"verified\": true"), std::string::npos);
  std::filesystem::remove_all(base);
}

TEST(QuickstartSim, GoBackNRecoversThroughOnePercentLossReorderAndDuplication) {
  RunConfig cfg = quickstart();
  cfg.job.bytes = 1u << 20;
  cfg.job.message_bytes = 256u << 10;
  for (auto& l : cfg.topology.links) l.impairment = LinkImpairment{0.01, 0.01, 0.01, 5 * kNsPerUs};
  cfg.sim.until_ns = 10 * kNsPerSec;
  const JobResult r = run_write_job_virtual(cfg);
  ASSERT_TRUE(r.completed);
  EXPECT_TRUE(r.verified);
  EXPECT_GT(r.retransmitted_packets, 0u);
  uint64_t lost = 0;
  for (const auto& p : r.ports) lost += p.wire_drops;
  EXPECT_GT(lost, 0u);
}

}  // namespace rocemu::fabric

namespace rocemu::fabric {

// A write job that does not complete says why: the first error completion (QP, work
// request, status), or how far it got when the run ended.
TEST(QuickstartSim, AJobThatDoesNotCompleteNamesTheQpAndTheStatus) {
  RunConfig cfg = quickstart();
  cfg.job.bytes = 64u << 10;
  cfg.job.message_bytes = 16u << 10;
  cfg.topology.links[0].impairment = LinkImpairment{1.0, 0, 0, 0};  // h0's link loses all
  cfg.sim.until_ns = 10 * kNsPerSec;
  const JobResult dead = run_write_job_virtual(cfg);
  ASSERT_FALSE(dead.completed);
  EXPECT_NE(dead.failure.find("RDMA WRITE 1 of 4 completed with status 12 (transport retry "
                              "counter exceeded), and later ones were flushed"),
            std::string::npos)
      << dead.failure;
  EXPECT_EQ(dead.failure.rfind("QP 0x", 0), 0u) << dead.failure;
  EXPECT_NE(to_text(dead).find("  not completed: QP 0x"), std::string::npos);
  EXPECT_NE(to_json(dead).find("\"failure\": \"QP 0x"), std::string::npos);

  cfg.sim.until_ns = 50 * kNsPerUs;  // ends long before the retries run out
  const JobResult cut = run_write_job_virtual(cfg);
  ASSERT_FALSE(cut.completed);
  EXPECT_NE(cut.failure.find(": 0 of 4 RDMA WRITEs completed, 4 posted, no error completion when "
                             "the run ended at 0.050 ms"),
            std::string::npos)
      << cut.failure;
  const JobResult ok = run_write_job_virtual(quickstart());
  ASSERT_TRUE(ok.completed);
  EXPECT_EQ(ok.failure, "");
  EXPECT_EQ(to_json(ok).find("failure"), std::string::npos);
}

// The congestion columns of the summary: the quickstart with h1's link at 2 Gbps and DCQCN
// on. s0 CE-marks on its port to h1, h1's NIC answers with CNPs, h0's NIC receives each one
// (the control class is lossless and never dropped), and the PAUSE frames s0 sends on a port
// are the ones the host behind it receives.
TEST(QuickstartSim, SummaryCountsEcnMarksCnpsAndPausesPerPort) {
  quickstart();  // EAL
  const auto dir =
      std::filesystem::temp_directory_path() / ("rocemu-fabric-cnp-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string text = slurp(std::string(ROCEMU_SOURCE_ROOT) + "/configs/quickstart.toml");
  const std::string h1_link = "b = \"s0\"\nrate_gbps = 10";
  const size_t second = text.find(h1_link, text.find(h1_link) + 1);
  ASSERT_NE(second, std::string::npos);
  text.replace(second, h1_link.size(), "b = \"s0\"\nrate_gbps = 2");
  text += "\n[dcqcn]\nprofile = \"" ROCEMU_SOURCE_ROOT "/configs/dcqcn/paper.toml\"\n";
  { std::ofstream(dir / "run.toml") << text; }
  const RunConfig cfg = load_run_config((dir / "run.toml").string());
  const JobResult r = run_write_job_virtual(cfg, dir.string());
  ASSERT_TRUE(r.completed && r.verified);
  ASSERT_EQ(r.ports.size(), 4u);  // h0:0, h1:0, s0:0 (to h0), s0:1 (to h1)
  const PortSummary &h0 = r.ports[0], &h1 = r.ports[1], &s0_h0 = r.ports[2], &s0_h1 = r.ports[3];
  ASSERT_EQ(s0_h1.node, "s0");
  EXPECT_GT(s0_h1.ecn_marked_packets, 0u);
  EXPECT_GT(h1.cnps_sent, 0u);
  EXPECT_LE(h1.cnps_sent, s0_h1.ecn_marked_packets) << "at most one CNP per CE-marked packet";
  EXPECT_EQ(h0.cnps_received, h1.cnps_sent);
  EXPECT_EQ(h0.cnps_sent + h1.cnps_received, 0u) << "no data flows from h1 to h0";
  EXPECT_EQ(s0_h0.ecn_marked_packets, 0u);
  EXPECT_EQ(h0.pfc_pauses_received, s0_h0.pfc_pauses_sent);
  EXPECT_EQ(h1.pfc_pauses_received, s0_h1.pfc_pauses_sent);
  const std::string table = to_text(r);
  EXPECT_NE(table.find("ecn  cnp_tx  cnp_rx  pfc_tx  pfc_rx"), std::string::npos) << table;
  EXPECT_NE(to_json(r).find("\"cnps_sent\": " + std::to_string(h1.cnps_sent)), std::string::npos);
  EXPECT_NE(to_csv(r).find(",pfc_pauses_received,cnps_sent,cnps_received\n"), std::string::npos);

  // [telemetry] dcqcn_interval_us: h0's reaction point traced into dcqcn_h0.csv from its first
  // CNP on, every 10 us; sampling changes nothing (the same summary without the trace).
  { std::ofstream(dir / "run.toml", std::ios::app) << "\n[telemetry]\ndcqcn_interval_us = 10\n"; }
  const RunConfig traced = load_run_config((dir / "run.toml").string());
  ASSERT_EQ(traced.telemetry.dcqcn_interval_ns, 10 * kNsPerUs);
  const auto tdir = dir / "traced";
  const JobResult t = run_write_job_virtual(traced, tdir.string());
  EXPECT_EQ(to_json(t), to_json(r)) << "tracing DCQCN changed the run";
  std::ifstream f(tdir / "dcqcn_h0.csv");
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line, "time_ns,qp,rate_gbps,target_gbps,alpha,cnps");
  int rows = 0, below_line_rate = 0;
  uint64_t last_cnps = 0;
  TimeNs last_t = 0;
  while (std::getline(f, line)) {
    std::vector<std::string> c;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) c.push_back(x);
    ASSERT_EQ(c.size(), 6u) << line;
    ++rows;
    const TimeNs at = std::stoll(c[0]);
    EXPECT_EQ(at % (10 * kNsPerUs), 0) << line;
    EXPECT_GT(at, last_t) << "one QP: one row per sample";
    last_t = at;
    EXPECT_LE(std::stod(c[2]), 10.0 + 1e-9) << line;
    if (std::stod(c[2]) < 9.0) ++below_line_rate;
    const double alpha = std::stod(c[4]);
    EXPECT_TRUE(alpha >= 0 && alpha <= 1) << line;
    const uint64_t cnps = std::stoull(c[5]);
    EXPECT_GE(cnps, last_cnps) << line;
    last_cnps = cnps;
  }
  EXPECT_GT(rows, 10);
  EXPECT_GT(below_line_rate, 0) << "DCQCN cut h0's rate";
  EXPECT_GE(last_cnps, 1u);
  EXPECT_LE(last_cnps, h0.cnps_received);
  ASSERT_TRUE(std::filesystem::exists(tdir / "dcqcn_h1.csv"));
  EXPECT_EQ(std::filesystem::file_size(tdir / "dcqcn_h1.csv"),
            std::string("time_ns,qp,rate_gbps,target_gbps,alpha,cnps\n").size())
      << "h1 receives no CNP: only the header";
  std::filesystem::remove_all(dir);
}

TEST(QuickstartSim, CapturesAChosenSwitchPortToPcapng) {
  RunConfig cfg = quickstart();
  cfg.job.bytes = 64u << 10;
  cfg.capture.ports = {PortRef{2, 1}};
  cfg.capture.names = {"s0:1"};
  cfg.capture.file = "s0-1.pcapng";
  const auto dir = std::filesystem::temp_directory_path() / ("rocemu-fabric-cap-" + std::to_string(getpid()));
  const JobResult r = run_write_job_virtual(cfg, dir.string());
  ASSERT_TRUE(r.completed && r.verified);
  const std::string bytes = slurp(dir / "s0-1.pcapng");
  ASSERT_GE(bytes.size(), 4u);
  EXPECT_EQ(bytes.substr(0, 4), std::string("\x0a\x0d\x0d\x0a", 4));  // section header block
  // Every frame out of s0 port 1 (64 data frames) and in (ACKs) is in the file.
  const uint64_t frames_bytes = r.ports[3].tx_bytes + r.ports[3].rx_bytes;
  EXPECT_GT(bytes.size(), frames_bytes);
  // Enhanced Packet Blocks (type 6) carry engine time from 2000-01-01T00:00:00Z, in order.
  uint64_t epbs = 0, first_ts = 0, last_ts = 0;
  for (size_t at = 0; at + 12 <= bytes.size();) {
    uint32_t type, len;
    std::memcpy(&type, bytes.data() + at, 4);
    std::memcpy(&len, bytes.data() + at + 4, 4);
    ASSERT_GE(len, 12u);
    ASSERT_LE(at + len, bytes.size());
    if (type == 6) {
      uint32_t hi, lo;
      std::memcpy(&hi, bytes.data() + at + 12, 4);
      std::memcpy(&lo, bytes.data() + at + 16, 4);
      const uint64_t ts = uint64_t{hi} << 32 | lo;
      if (epbs++ == 0) first_ts = ts;
      EXPECT_GE(ts, last_ts);
      last_ts = ts;
    }
    at += len;
  }
  EXPECT_EQ(epbs, r.ports[3].tx_packets + r.ports[3].rx_packets);
  EXPECT_GE(first_ts, static_cast<uint64_t>(kVirtualTimeCaptureEpochNs));
  EXPECT_LE(last_ts, static_cast<uint64_t>(kVirtualTimeCaptureEpochNs + r.elapsed_ns));
  // A second run with the seed writes the same bytes: no heap address on the wire (RETH
  // VAs are the regions' fixed IOVAs) and no wall clock in the stamps.
  const auto dir2 = dir.string() + "-again";
  ASSERT_TRUE(run_write_job_virtual(cfg, dir2).completed);
  EXPECT_TRUE(slurp(std::filesystem::path(dir2) / "s0-1.pcapng") == bytes)
      << "two virtual-time captures with one seed differ";
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(dir2);
}

}  // namespace rocemu::fabric

namespace rocemu::fabric {

TEST(QuickstartSim, TelemetrySeriesShowTheBottleneckPortBusyWhileTheWriteRuns) {
  RunConfig cfg = quickstart();
  cfg.telemetry.interval_ns = 100 * kNsPerUs;
  const auto dir = std::filesystem::temp_directory_path() / ("rocemu-fabric-tel-" + std::to_string(getpid()));
  const JobResult r = run_write_job_virtual(cfg, dir.string());
  ASSERT_TRUE(r.completed && r.verified);
  std::ifstream f(dir / "queues_s0.csv");
  std::string line;
  std::getline(f, line);
  ASSERT_EQ(line.rfind("time_ns,node,port,queue_bytes", 0), 0u);
  int rows = 0, busy = 0;
  while (std::getline(f, line)) {
    ++rows;
    // time_ns,node,port,queue_bytes,peak,tx_bytes,utilisation,...
    std::vector<std::string> c;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) c.push_back(x);
    ASSERT_GE(c.size(), 7u);
    EXPECT_EQ(c[1], "s0") << "the node column names the switch, as the file name does";
    const TimeNs t = std::stoll(c[0]);
    if (c[2] == "1" && t >= 200 * kNsPerUs && t + 100 * kNsPerUs <= r.elapsed_ns) {
      // Data leaves s0 on port 1 at the 10 Gbps line rate (1082-byte frames back to back).
      EXPECT_GT(std::stod(c[6]), 0.95) << line;
      ++busy;
    }
  }
  EXPECT_EQ(rows, 2 * (static_cast<int>(r.elapsed_ns / (100 * kNsPerUs)) + 1));
  EXPECT_GT(busy, 30);
  std::filesystem::remove_all(dir);
}

}  // namespace rocemu::fabric
