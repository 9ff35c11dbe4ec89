// workload_results.cc — result files and stdout text of the workload job (workload_job.h).
// flows.csv, bins.csv and metrics.csv hold engine-time values only, with fixed formatting
// (fabric/workload/fct.h), so virtual-time runs with one seed write byte-identical files.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "fabric/port_info.h"
#include "fabric/run_cost.h"
#include "fabric/workload_job.h"
#include "nic/roce_host.h"

namespace rocemu::fabric {

namespace {
constexpr size_t kFailuresShown = 10;  // on stdout; failures.csv has all that were kept
// One engine saw every link and ran the whole run; merged host processes (engine "hosts",
// apps/host/host_merge.cc) did not: no link-hop total, no single cost.
bool one_engine(const WorkloadResult& r) { return r.engine != "hosts"; }
}  // namespace

std::string workload_metrics_csv(const WorkloadResult& r) {
  std::ostringstream os;
  workload::write_metrics_csv(os, r.summary);
  os << "engine," << r.engine << '\n'
     << "seed," << r.seed << '\n'
     << "flows_generated," << r.flows_generated << '\n'
     << "flows_posted," << r.flows_posted << '\n'
     << "flows_failed," << r.flows_failed << '\n'
     << "all_finished," << (r.all_finished ? "true" : "false") << '\n'
     << "end_ns," << r.end_ns << '\n'
     << "retransmitted_packets," << r.retransmitted_packets << '\n'
     << "timeouts," << r.timeouts << '\n'
     << "switch_drops," << r.switch_drops << '\n'
     << "ecn_marked_packets," << r.ecn_marked_packets << '\n'
     << "switch_pfc_pauses_received," << r.pfc.switch_pauses_received << '\n'
     << "nic_pfc_pauses_received," << r.pfc.nic_pauses_received << '\n'
     << "nic_paused_ns," << r.pfc.nic_paused_ns << '\n'
     << "switch_pfc_storms," << r.pfc.switch_storms << '\n'
     << "nic_pfc_storms," << r.pfc.nic_storms << '\n';
  // Merged host processes: the switch counts its own.
  if (one_engine(r)) os << "link_hops," << r.link_hops << '\n';
  if (r.qp_per_flow)
    os << "qps_connected," << r.qps_connected << '\n'
       << "qps_live_at_end," << r.qps_live_at_end << '\n';
  if (!r.agent.policy.empty())
    os << "agent_policy," << r.agent.policy << '\n'
       << "agent_interval_ns," << r.agent.interval_ns << '\n'
       << "agent_intervals," << r.agent.intervals << '\n'
       << "agent_settings_changed," << r.agent.settings_changed << '\n'
       << "agent_missed_intervals," << r.agent.missed_intervals << '\n'
       << "agent_errors," << r.agent.errors << '\n';
  return os.str();
}

std::string workload_files_line(const WorkloadResult& r, const std::string& dir) {
  return "results: " + dir + "/flows.csv, " + dir + "/bins.csv, " + dir + "/metrics.csv, " + dir +
         "/failures.csv" + (one_engine(r) ? ", " + dir + "/cost.csv" : "") + "\n";
}

std::string workload_failures_csv(const WorkloadResult& r) {
  std::ostringstream os;
  os << "flow_id,src,dst,size_bytes,status\n";
  for (const FlowFailure& f : r.failures)
    os << f.flow.id << ',' << f.src << ',' << f.dst << ',' << f.flow.size_bytes << ','
       << (f.status < 0 ? "post_refused" : nic::wc_status_name(f.status)) << '\n';
  return os.str();
}

void write_workload_files(const WorkloadResult& r, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("--out " + dir + ": " + ec.message());
  std::ostringstream flows, bins;
  workload::write_flows_csv(flows, r.records);
  workload::write_bins_csv(bins, r.summary);
  std::vector<std::pair<const char*, std::string>> files = {
      {"flows.csv", flows.str()},
      {"bins.csv", bins.str()},
      {"metrics.csv", workload_metrics_csv(r)},
      {"failures.csv", workload_failures_csv(r)}};
  if (one_engine(r)) files.emplace_back("cost.csv", run_cost_csv(r.events, r.link_hops, r.wall_ns));
  for (const auto& [name, text] : files) {
    const auto path = std::filesystem::path(dir) / name;
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + path.string());
  }
}

int workload_exit_status(const WorkloadResult& r) {
  if (r.flows_failed > 0) return 1;
  if (r.records.empty() && r.flows_generated > 0) return 1;
  return 0;
}

std::string workload_text(const WorkloadResult& r) {
  char line[256];
  std::string s =
      "job: workload (" + std::string(r.engine == "virtual" ? "virtual" : "real") + " time)\n";
  std::snprintf(
      line, sizeof line,
      "  flows generated %llu, posted %llu, failed %llu; all finished: %s; engine time %.3f ms\n",
      static_cast<unsigned long long>(r.flows_generated),
      static_cast<unsigned long long>(r.flows_posted),
      static_cast<unsigned long long>(r.flows_failed), r.all_finished ? "yes" : "NO",
      static_cast<double>(r.end_ns) / 1e6);
  s += line;
  std::snprintf(line, sizeof line,
                "  retransmitted packets %llu, timeouts %llu, switch drops %llu, ECN-marked %llu\n",
                static_cast<unsigned long long>(r.retransmitted_packets),
                static_cast<unsigned long long>(r.timeouts),
                static_cast<unsigned long long>(r.switch_drops),
                static_cast<unsigned long long>(r.ecn_marked_packets));
  s += line;
  std::snprintf(line, sizeof line,
                "  PFC: pauses sent by switches %llu, received by switches %llu and by NICs %llu "
                "(NIC priorities paused %.3f ms in all)\n",
                static_cast<unsigned long long>(r.summary.pfc_pauses),
                static_cast<unsigned long long>(r.pfc.switch_pauses_received),
                static_cast<unsigned long long>(r.pfc.nic_pauses_received),
                static_cast<double>(r.pfc.nic_paused_ns) / 1e6);
  s += line;
  if (r.nic_alloc_failures + r.switch_alloc_failures > 0) {
    std::snprintf(line, sizeof line,
                  "  mbuf pool ran dry: %llu frames NICs could not build, %llu PFC frames switches "
                  "could not: the pool (%u mbufs), not the network, shaped this run; raise "
                  "[testbed] pool_mbufs\n",
                  static_cast<unsigned long long>(r.nic_alloc_failures),
                  static_cast<unsigned long long>(r.switch_alloc_failures), r.pool_mbufs);
    s += line;
  }
  s += pci_ports_text(r.pci_ports);
  if (r.pfc.switch_storms + r.pfc.nic_storms > 0) {
    std::snprintf(line, sizeof line, "  PFC watchdog: %llu storms on switch ports, %llu on NICs\n",
                  static_cast<unsigned long long>(r.pfc.switch_storms),
                  static_cast<unsigned long long>(r.pfc.nic_storms));
    s += line;
  }
  for (size_t i = 0; i < r.failures.size() && i < kFailuresShown; ++i) {
    const FlowFailure& f = r.failures[i];
    std::snprintf(line, sizeof line, "  failed: flow %llu %s -> %s (%llu bytes): %s\n",
                  static_cast<unsigned long long>(f.flow.id), f.src.c_str(), f.dst.c_str(),
                  static_cast<unsigned long long>(f.flow.size_bytes),
                  f.status < 0 ? "post refused by the NIC" : nic::wc_status_name(f.status));
    s += line;
  }
  if (r.flows_failed > kFailuresShown && !r.failures.empty()) {
    std::snprintf(line, sizeof line, "  ... %llu failed flows in all (failures.csv lists %zu)\n",
                  static_cast<unsigned long long>(r.flows_failed), r.failures.size());
    s += line;
  }
  if (r.qp_per_flow) {
    std::snprintf(line, sizeof line,
                  "  one QP pair per flow: %llu connected, %llu live at the end\n",
                  static_cast<unsigned long long>(r.qps_connected),
                  static_cast<unsigned long long>(r.qps_live_at_end));
    s += line;
  }
  std::snprintf(line, sizeof line, "  wall time %.3f s", static_cast<double>(r.wall_ns) / 1e9);
  s += line;
  s += run_cost_text(r.events, r.link_hops, r.wall_ns) + "\n";
  s += agent_text(r.agent);
  s += workload::format_summary(r.summary);
  return s;
}

}  // namespace rocemu::fabric
