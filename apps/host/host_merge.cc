// host_merge.cc — reading rocemu-host's per-host result files back and merging them (see
// host_merge.h).
#include "apps/host/host_merge.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "apps/cli_numbers.h"
#include "common/file_read.h"
#include "nic/roce_host.h"

namespace rocemu::apps {

namespace {

// A host's result file holds a row per flow: ~100 bytes each, 10 M flows.
constexpr uint64_t kMaxResultFileBytes = uint64_t{1} << 30;

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> f;
  std::string cur;
  std::istringstream in(line);
  while (std::getline(in, cur, ',')) f.push_back(cur);
  if (!line.empty() && line.back() == ',') f.emplace_back();
  return f;
}

uint64_t metric_u64(const HostResultFiles& p, const char* name) {
  const auto it = p.metrics.find(name);
  uint64_t v = 0;
  if (it == p.metrics.end() || !parse_u64(it->second, v))
    throw std::runtime_error(p.dir + "/metrics.csv: missing or bad '" + std::string(name) + "'");
  return v;
}

// One of a host's result files, whole (common/file_read.h: a regular file; a FIFO or a
// device in its place is refused, not read without end).
std::istringstream result_file(const std::string& dir, const char* name) {
  const auto path = (std::filesystem::path(dir) / name).string();
  std::string text;
  if (const std::string why = read_regular_file(path, kMaxResultFileBytes, &text); !why.empty())
    throw std::runtime_error(path + ": cannot read: " + why);
  return std::istringstream(std::move(text));
}

}  // namespace

bool parse_flows_csv(std::istream& in, std::vector<workload::FlowRecord>& out, std::string& error) {
  static const char* kHeader =
      "id,src,dst,size_bytes,op,incast,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown";
  std::string line;
  size_t n = 0;
  if (!std::getline(in, line) || line != kHeader) {
    error = "line 1: expected the header '" + std::string(kHeader) + "'";
    return false;
  }
  ++n;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const auto f = split(line);
    auto bad = [&](const std::string& why) {
      error = "line " + std::to_string(n) + ": " + why;
      return false;
    };
    if (f.size() != 11) return bad("expected 11 fields, found " + std::to_string(f.size()));
    workload::FlowRecord r;
    uint64_t id = 0, src = 0, dst = 0, size = 0;
    int64_t incast = 0, start = 0, finish = 0, fct = 0, ideal = 0;
    if (!parse_u64(f[0], id) || !parse_u64(f[1], src) || !parse_u64(f[2], dst) || !parse_u64(f[3], size))
      return bad("id, src, dst and size_bytes must be non-negative integers");
    if (f[4] != "write" && f[4] != "send") return bad("op '" + f[4] + "' is not write or send");
    if (!parse_i64(f[5], incast) || incast < -1 || incast > UINT32_MAX - 1)
      return bad("bad incast '" + f[5] + "'");
    if (!parse_i64(f[6], start) || !parse_i64(f[7], finish) || !parse_i64(f[8], fct) || !parse_i64(f[9], ideal))
      return bad("start_ns, finish_ns, fct_ns and ideal_fct_ns must be integers");
    if (fct != finish - start) return bad("fct_ns is not finish_ns - start_ns");
    r.flow.id = id;
    r.flow.src = static_cast<uint32_t>(src);
    r.flow.dst = static_cast<uint32_t>(dst);
    r.flow.size_bytes = size;
    r.flow.op = f[4] == "write" ? workload::FlowOp::kWrite : workload::FlowOp::kSend;
    r.flow.incast = incast < 0 ? workload::kNotIncast : static_cast<uint32_t>(incast);
    r.flow.start_ns = start;
    r.finish_ns = finish;
    r.ideal_ns = ideal;
    out.push_back(r);
  }
  return true;
}

HostResultFiles read_host_results(const std::string& dir) {
  HostResultFiles p;
  p.dir = dir;
  const auto flows = std::filesystem::path(dir) / "flows.csv";
  std::istringstream f = result_file(dir, "flows.csv");
  std::string error;
  if (!parse_flows_csv(f, p.records, error)) throw std::runtime_error(flows.string() + ":" + error);
  std::istringstream m = result_file(dir, "metrics.csv");
  std::string line;
  std::getline(m, line);  // header
  while (std::getline(m, line)) {
    const auto comma = line.find(',');
    if (comma != std::string::npos) p.metrics[line.substr(0, comma)] = line.substr(comma + 1);
  }
  const auto failures = std::filesystem::path(dir) / "failures.csv";
  std::istringstream fl = result_file(dir, "failures.csv");
  std::getline(fl, line);  // header: flow_id,src,dst,size_bytes,status
  for (int n = 2; std::getline(fl, line); ++n) {
    std::vector<std::string> col;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) col.push_back(c);
    fabric::FlowFailure ff;
    if (col.size() != 5 || !parse_u64(col[0], ff.flow.id) || !parse_u64(col[3], ff.flow.size_bytes))
      throw std::runtime_error(failures.string() + ":" + std::to_string(n) +
                               ": expected flow_id,src,dst,size_bytes,status");
    ff.src = col[1];
    ff.dst = col[2];
    ff.status = -1;  // "post_refused"
    for (int s = 0; s <= IBV_WC_GENERAL_ERR && col[4] != "post_refused"; ++s)
      if (col[4] == nic::wc_status_name(s)) ff.status = s;
    p.failures.push_back(std::move(ff));
  }
  return p;
}

fabric::WorkloadResult merge_host_results(const workload::SizeBins& bins, uint64_t seed,
                                          const std::vector<HostResultFiles>& parts) {
  fabric::WorkloadResult r;
  r.engine = "hosts";
  r.seed = seed;
  r.all_finished = !parts.empty();
  uint64_t unfinished = 0, pfc = 0, cnps = 0;
  for (const HostResultFiles& p : parts) {
    // Parts of one run share its seed (and so its flows and QP plan).
    if (metric_u64(p, "seed") != seed)
      throw std::runtime_error(p.dir + "/metrics.csv: seed " + p.metrics.at("seed") +
                               ", but the run's is " + std::to_string(seed) +
                               " (results of another run?)");
    r.records.insert(r.records.end(), p.records.begin(), p.records.end());
    r.failures.insert(r.failures.end(), p.failures.begin(), p.failures.end());
    r.pfc.switch_pauses_received += metric_u64(p, "switch_pfc_pauses_received");
    r.pfc.nic_pauses_received += metric_u64(p, "nic_pfc_pauses_received");
    r.pfc.nic_paused_ns += metric_u64(p, "nic_paused_ns");
    r.pfc.switch_storms += metric_u64(p, "switch_pfc_storms");
    r.pfc.nic_storms += metric_u64(p, "nic_pfc_storms");
    r.flows_generated += metric_u64(p, "flows_generated");
    r.flows_posted += metric_u64(p, "flows_posted");
    r.flows_failed += metric_u64(p, "flows_failed");
    r.retransmitted_packets += metric_u64(p, "retransmitted_packets");
    r.timeouts += metric_u64(p, "timeouts");
    r.switch_drops += metric_u64(p, "switch_drops");
    r.ecn_marked_packets += metric_u64(p, "ecn_marked_packets");
    unfinished += metric_u64(p, "flows_unfinished");
    pfc += metric_u64(p, "pfc_pauses");
    cnps += metric_u64(p, "cnps");
    r.end_ns = std::max<TimeNs>(r.end_ns, static_cast<TimeNs>(metric_u64(p, "end_ns")));
    const auto it = p.metrics.find("all_finished");
    if (it == p.metrics.end() || it->second != "true") r.all_finished = false;
  }
  std::sort(r.records.begin(), r.records.end(),
            [](const workload::FlowRecord& a, const workload::FlowRecord& b) {
              return a.flow.id < b.flow.id;
            });
  std::sort(r.failures.begin(), r.failures.end(),
            [](const fabric::FlowFailure& a, const fabric::FlowFailure& b) {
              return a.flow.id < b.flow.id;
            });
  for (size_t i = 1; i < r.records.size(); ++i)
    if (r.records[i].flow.id == r.records[i - 1].flow.id)
      throw std::runtime_error("flow " + std::to_string(r.records[i].flow.id) +
                               " appears in two result directories (the same host twice?)");
  workload::FctStats st(bins);
  for (const auto& rec : r.records) st.add(rec);
  st.add_unfinished(unfinished);
  st.add_pfc_pauses(pfc);
  st.add_cnps(cnps);
  r.summary = st.summarize();
  return r;
}

}  // namespace rocemu::apps
