// host_run.h — one host of a workload run as its own process (rocemu-host): the checks
// before anything starts, the wait for the common start instant, and the run of the host's
// RoceHost on fabric's real-time engine (docs/workload_runs.md "Host processes in
// namespaces").
//
// Time: the process waits (sleep, then a short spin) until CLOCK_REALTIME reaches
// --start-at and resets the engine's clock there, so workload time 0 = --start-at in every
// process (to the accuracy of the hosts' clock, one machine here). The engine runs the
// topology with every node but this host external: one af_packet port on -d, rx burst ->
// node, timers, and tx while the emulated wire is free (port rate of the host's topology
// link). Its periodic callback schedules the flows and stops the run when this host's own
// flows are over and the workload's last flow start + grace has passed (peers' flows to us
// are then done, or have had their time), or at the time limit.
#pragma once

#include <cstdint>
#include <string>

#include "apps/host/host_options.h"
#include "common/topology.h"
#include "fabric/run_config.h"

namespace rocemu::apps {

/// Checks that would make a run pointless, with a message for each: `host` names a host of
/// cfg's topology, the run has a [workload], `iface` exists with a MAC and an IPv4 address
/// equal to the host's, and `start_at_ns` is not more than `max_lag_ns` before `now_ns`.
/// Returns the problems (empty: fine). Warnings (MAC differs from the topology's) go to
/// `warnings`.
std::vector<std::string> check_host_run(const fabric::RunConfig& cfg, const HostOptions& o,
                                        int64_t now_ns, std::vector<std::string>& warnings);

/// Runs host o.host of `cfg` (already checked) until done; writes o.out_dir. Returns the exit
/// status (fabric::workload_exit_status: 0 none of its flows failed and one finished or it had
/// none; 1 failures, no flow finished, or setup failure).
int run_host(const fabric::RunConfig& cfg, const HostOptions& o);

/// CLOCK_REALTIME in ns.
int64_t realtime_ns() noexcept;

}  // namespace rocemu::apps
