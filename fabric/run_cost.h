// run_cost.h — what a run cost, for the stdout summaries of every job: engine events and
// link-hops (one packet — data, ACK, CNP or pause — crossing one link: the unit simulators
// such as htsim are compared in), each per second of wall time, and the process's peak
// resident memory. Not in result files: wall time and memory differ run to run (link-hops
// and events do not, and metrics.csv carries link_hops).
#pragma once

#include <cstdint>
#include <string>

namespace rocemu::fabric {

/// Peak resident set size of this process so far (getrusage), bytes.
int64_t peak_rss_bytes() noexcept;

/// "   events N (X M/s)   link-hops N (Y M/s)   peak RSS Z MiB" (events only when > 0).
std::string run_cost_text(uint64_t events, uint64_t link_hops, int64_t wall_ns);

}  // namespace rocemu::fabric
