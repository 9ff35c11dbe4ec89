// job_summary.cc — summary.json / summary.csv / stdout text of a job (write_job.h).
// Files contain engine-time values only, formatted with fixed precision, so virtual-time
// runs with one seed produce byte-identical files.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "fabric/port_info.h"
#include "fabric/run_cost.h"
#include "fabric/write_job.h"

namespace rocemu::fabric {

namespace {
std::string json_escape(const std::string& in) {
  std::string out;
  for (const char c : in) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char u[8];
      std::snprintf(u, sizeof u, "\\u%04x", static_cast<unsigned>(c));
      out += u;
    } else {
      out += c;
    }
  }
  return out;
}
std::string fixed(double v, int digits = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
std::string b(bool v) { return v ? "true" : "false"; }
}  // namespace

std::string to_json(const JobResult& r) {
  std::string s = "{\n";
  s += "  \"engine\": \"" + r.engine + "\",\n";
  s += "  \"seed\": " + std::to_string(r.seed) + ",\n";
  s += "  \"bytes\": " + std::to_string(r.bytes) + ",\n";
  s += "  \"completed\": " + b(r.completed) + ",\n";
  s += "  \"verified\": " + b(r.verified) + ",\n";
  s += "  \"elapsed_ns\": " + std::to_string(r.elapsed_ns) + ",\n";
  s += "  \"goodput_gbps\": " + fixed(r.goodput_gbps) + ",\n";
  s += "  \"retransmitted_packets\": " + std::to_string(r.retransmitted_packets) + ",\n";
  s += "  \"timeouts\": " + std::to_string(r.timeouts) + ",\n";
  if (!r.failure.empty()) s += "  \"failure\": \"" + json_escape(r.failure) + "\",\n";
  if (!r.agent.policy.empty())
    s += "  \"agent\": {\"policy\": \"" + r.agent.policy +
         "\", \"interval_ns\": " + std::to_string(r.agent.interval_ns) +
         ", \"intervals\": " + std::to_string(r.agent.intervals) +
         ", \"settings_changed\": " + std::to_string(r.agent.settings_changed) +
         ", \"missed_intervals\": " + std::to_string(r.agent.missed_intervals) +
         ", \"errors\": " + std::to_string(r.agent.errors) + "},\n";
  s += "  \"ports\": [\n";
  for (size_t i = 0; i < r.ports.size(); ++i) {
    const auto& p = r.ports[i];
    s += "    {\"node\": \"" + p.node + "\", \"port\": " + std::to_string(p.port) +
         ", \"tx_packets\": " + std::to_string(p.tx_packets) +
         ", \"tx_bytes\": " + std::to_string(p.tx_bytes) +
         ", \"rx_packets\": " + std::to_string(p.rx_packets) +
         ", \"rx_bytes\": " + std::to_string(p.rx_bytes) +
         ", \"wire_drops\": " + std::to_string(p.wire_drops) +
         ", \"peak_queue_bytes\": " + std::to_string(p.peak_queue_bytes) +
         ", \"switch_drops\": " + std::to_string(p.switch_drops) +
         ", \"ecn_marked_packets\": " + std::to_string(p.ecn_marked_packets) +
         ", \"pfc_pauses_sent\": " + std::to_string(p.pfc_pauses_sent) +
         ", \"pfc_pauses_received\": " + std::to_string(p.pfc_pauses_received) +
         ", \"cnps_sent\": " + std::to_string(p.cnps_sent) +
         ", \"cnps_received\": " + std::to_string(p.cnps_received) + "}" +
         (i + 1 < r.ports.size() ? ",\n" : "\n");
  }
  s += "  ]\n}\n";
  return s;
}

std::string to_csv(const JobResult& r) {
  std::string s =
      "engine,seed,bytes,completed,verified,elapsed_ns,goodput_gbps,node,port,tx_packets,tx_bytes,"
      "rx_packets,rx_bytes,wire_drops,peak_queue_bytes,switch_drops,ecn_marked_packets,"
      "pfc_pauses_sent,pfc_pauses_received,cnps_sent,cnps_received\n";
  for (const auto& p : r.ports) {
    s += r.engine + "," + std::to_string(r.seed) + "," + std::to_string(r.bytes) + "," +
         b(r.completed) + "," + b(r.verified) + "," + std::to_string(r.elapsed_ns) + "," +
         fixed(r.goodput_gbps) + "," + p.node + "," + std::to_string(p.port) + "," +
         std::to_string(p.tx_packets) + "," + std::to_string(p.tx_bytes) + "," +
         std::to_string(p.rx_packets) + "," + std::to_string(p.rx_bytes) + "," +
         std::to_string(p.wire_drops) + "," + std::to_string(p.peak_queue_bytes) + "," +
         std::to_string(p.switch_drops) + "," + std::to_string(p.ecn_marked_packets) + "," +
         std::to_string(p.pfc_pauses_sent) + "," + std::to_string(p.pfc_pauses_received) + "," +
         std::to_string(p.cnps_sent) + "," + std::to_string(p.cnps_received) + "\n";
  }
  return s;
}

std::string to_text(const JobResult& r) {
  std::string s;
  s += "job: RDMA WRITE of " + std::to_string(r.bytes) + " bytes (" + (r.engine == "virtual" ? "virtual" : "real") + " time)\n";
  s += "  completed: " + std::string(r.completed ? "yes" : "NO") +
       "   data verified: " + std::string(r.verified ? "yes" : "NO") + "\n";
  if (!r.failure.empty()) s += "  not completed: " + r.failure + "\n";
  s += "  elapsed (engine time): " + fixed(static_cast<double>(r.elapsed_ns) / 1e3, 3) + " us   goodput: " +
       fixed(r.goodput_gbps, 3) + " Gbps   retransmitted packets: " + std::to_string(r.retransmitted_packets) +
       "\n";
  s += agent_text(r.agent);
  s += pci_ports_text(r.pci_ports);
  s += "  wall time: " + fixed(static_cast<double>(r.wall_ns) / 1e6, 3) + " ms   engine CPU time: " +
       fixed(static_cast<double>(r.cpu_ns) / 1e6, 3) + " ms";
  uint64_t link_hops = 0;  // every frame a port sent crossed one link
  for (const auto& p : r.ports) link_hops += p.tx_packets;
  s += run_cost_text(r.events, link_hops, r.wall_ns) + "\n";
  // ecn: packets the switch port CE-marked; cnp_tx / cnp_rx: CNPs the host's NIC sent (as
  // notification point) / received (as reaction point); pfc_tx / pfc_rx: PAUSE frames.
  char line[320];
  std::snprintf(line, sizeof line, "  %-10s %4s %10s %12s %10s %12s %10s %8s %8s %7s %7s %7s %7s\n",
                "node", "port", "tx_pkts", "tx_bytes", "rx_pkts", "rx_bytes", "peak_q_B", "drops",
                "ecn", "cnp_tx", "cnp_rx", "pfc_tx", "pfc_rx");
  s += line;
  const auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  for (const auto& p : r.ports) {
    std::snprintf(
        line, sizeof line,
        "  %-10s %4u %10llu %12llu %10llu %12llu %10llu %8llu %8llu %7llu %7llu %7llu %7llu\n",
        p.node.c_str(), p.port, u(p.tx_packets), u(p.tx_bytes), u(p.rx_packets), u(p.rx_bytes),
        u(p.peak_queue_bytes), u(p.wire_drops + p.switch_drops), u(p.ecn_marked_packets),
        u(p.cnps_sent), u(p.cnps_received), u(p.pfc_pauses_sent), u(p.pfc_pauses_received));
    s += line;
  }
  return s;
}

void write_result_files(const JobResult& r, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("--out " + dir + ": " + ec.message());
  for (const auto& [name, text] : {std::pair{"summary.json", to_json(r)}, std::pair{"summary.csv", to_csv(r)}}) {
    const auto path = std::filesystem::path(dir) / name;
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + path.string());
  }
}

}  // namespace rocemu::fabric
