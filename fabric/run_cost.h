// run_cost.h — what a run cost, for the stdout summaries of every job: engine events and
// link-hops (one packet — data, ACK, CNP or pause — crossing one link: the unit simulators
// such as htsim are compared in), each per second of wall time, and the process's peak
// resident memory. Not in the result files that runs with one seed write byte for byte
// (wall time and memory differ run to run; metrics.csv carries link_hops), but in a cost
// file of their own beside them (run_cost_csv).
#pragma once

#include <cstdint>
#include <string>

namespace rocemu::fabric {

/// Peak resident set size of this process so far (getrusage), bytes.
int64_t peak_rss_bytes() noexcept;

/// "   events N (X M/s)   link-hops N (Y M/s)   peak RSS Z MiB" (events only when > 0).
std::string run_cost_text(uint64_t events, uint64_t link_hops, int64_t wall_ns);

/// The same as a two-column CSV (header metric,value): events, link_hops, wall_ns,
/// events_per_s, link_hops_per_s, peak_rss_bytes (events rows only when events > 0).
std::string run_cost_csv(uint64_t events, uint64_t link_hops, int64_t wall_ns);

}  // namespace rocemu::fabric
