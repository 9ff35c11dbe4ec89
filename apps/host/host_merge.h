// host_merge.h — combining the per-host result directories of rocemu-host into the files of
// the in-process workload job (fabric/workload_job.h write_workload_files): flows.csv (every
// host's flows, by flow id), bins.csv and metrics.csv (the FctSummary recomputed over all
// flows with the run's size bins; counters summed). Queue-length samples come from switches,
// which per-host processes do not run: the merged queue metrics are empty (NaN), and
// switch_drops / ecn_marked_packets / pfc_pauses are whatever the parts reported (0).
// Units: ns, bytes.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <vector>

#include "fabric/workload/fct.h"
#include "fabric/workload_job.h"

namespace rocemu::apps {

/// One per-host result directory read back.
struct HostResultFiles {
  std::string dir;
  std::vector<workload::FlowRecord> records;
  std::map<std::string, std::string> metrics;  // metrics.csv: metric -> value
  std::vector<fabric::FlowFailure> failures;   // failures.csv
};

/// Parses flows.csv text (workload::write_flows_csv's format) into `out`. On a malformed
/// line returns false with `error` = "line N: reason".
bool parse_flows_csv(std::istream& in, std::vector<workload::FlowRecord>& out, std::string& error);
/// Reads DIR/flows.csv, DIR/metrics.csv and DIR/failures.csv. Throws std::runtime_error
/// naming the file (and line).
HostResultFiles read_host_results(const std::string& dir);
/// The combined result: records of every part sorted by flow id, the summary over `bins`,
/// counters summed, engine "hosts". Throws std::runtime_error for a flow id seen twice or a
/// part whose seed is not `seed` (another run's results).
fabric::WorkloadResult merge_host_results(const workload::SizeBins& bins, uint64_t seed,
                                          const std::vector<HostResultFiles>& parts);

}  // namespace rocemu::apps
