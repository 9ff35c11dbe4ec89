// topology_generators.h — parametric topologies: dumbbell, star, 2-layer Clos. The one
// place they are built: run files ([topology] kind), the agent's QueueEnv (rocemu-train
// --env queue) and the tests all use these, so ports are numbered alike everywhere.
//
// The Clos defaults are the GraphCC paper's evaluation fabric (Section 5.1: 24 hosts under
// 4 leaves, 2 spines, 25 Gbps host links, 100 Gbps leaf-spine links, 1 us per link).
// Node names: hosts "h0".."hN-1"; switches "s0"/"s1" (star, dumbbell) or "leaf<i>",
// "spine<j>" (Clos). Hosts are added first, so host i is node i. Units in names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/time_ns.h"
#include "common/topology.h"

namespace rocemu {

struct StarParams {
  uint32_t hosts = 2;
  uint64_t rate_bps = 10 * kBpsPerGbps;
  TimeNs delay_ns = kNsPerUs;
};

struct DumbbellParams {
  uint32_t left_hosts = 2;   // h0..h{left-1} under s0
  uint32_t right_hosts = 2;  // the rest under s1
  uint64_t host_rate_bps = 10 * kBpsPerGbps;
  uint64_t bottleneck_rate_bps = 10 * kBpsPerGbps;  // the s0-s1 link
  TimeNs delay_ns = kNsPerUs;
};

struct ClosParams {
  uint32_t hosts = 24;  // split evenly: hosts / leaves under each leaf
  uint32_t leaves = 4;
  uint32_t spines = 2;  // every leaf has one link to every spine
  uint64_t host_rate_bps = 25 * kBpsPerGbps;
  uint64_t fabric_rate_bps = 100 * kBpsPerGbps;
  TimeNs delay_ns = kNsPerUs;
};

/// A 3-tier k-ary fat tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and k/2
/// aggregation switches, (k/2)^2 core switches; every edge switch has k/2 uplinks (one to
/// each aggregation switch of its pod) and oversubscription x k/2 hosts, so k^3/4 hosts when
/// non-blocking; aggregation switch j of a pod links to cores j*k/2 .. j*k/2 + k/2 - 1.
struct FatTreeParams {
  uint32_t k = 4;                              // even, >= 2
  uint32_t oversubscription = 1;               // hosts per edge switch = oversubscription x k/2
  uint64_t host_rate_bps = 100 * kBpsPerGbps;  // host - edge
  uint64_t edge_rate_bps = 100 * kBpsPerGbps;  // edge - aggregation
  uint64_t core_rate_bps = 100 * kBpsPerGbps;  // aggregation - core
  TimeNs host_delay_ns = kNsPerUs;
  TimeNs edge_delay_ns = kNsPerUs;
  TimeNs core_delay_ns = kNsPerUs;
};

/// Leaf-spine links taken down at the start of a run (the GraphCC paper's link-failure
/// scenario): `named` ("leaf<i>-spine<j>") first, then `random` more chosen with `seed`
/// among the remaining up ones, skipping any whose loss would cut a host pair off.
struct ClosFailures {
  std::vector<std::string> named;
  uint32_t random = 0;
  uint64_t seed = 1;
};

/// One switch "s0" with `hosts` hosts. Links: host i is link i.
Topology make_star(const StarParams& p);
/// Two switches joined by one bottleneck link (the last link).
Topology make_dumbbell(const DumbbellParams& p);
/// Two-layer leaf-spine. Links: host links first (host i on leaf i / (hosts/leaves)), then
/// leaf l to spine s as link hosts + l * spines + s. Throws std::invalid_argument if hosts
/// is not a positive multiple of leaves or leaves/spines is zero.
Topology make_clos(const ClosParams& p);

/// Empty if `p` is buildable, else why not.
std::string validate(const ClosParams& p);

/// A fat tree. Nodes: hosts first (host i is node i; pod p, edge e, host j is
/// i = (p k/2 + e) h + j with h hosts per edge), then per pod its edges "edge<p>_<e>" and
/// aggregations "agg<p>_<a>", then cores "core<c>". Links: host links in host order, then
/// edge-aggregation (pod by pod, edge by edge), then aggregation-core. Port numbers follow
/// link order: an edge's ports are its hosts, then its aggregations; an aggregation's its
/// edges, then its cores; core c's port p faces pod p. Throws std::invalid_argument if
/// validate(p) is not empty.
Topology make_fattree(const FatTreeParams& p);
std::string validate(const FatTreeParams& p);

/// Marks the links of `f` down in `t` (built by make_clos(p)). Returns the names of the
/// links it took down, in order; throws std::invalid_argument naming the problem (unknown
/// or repeated link name, a named failure that disconnects hosts, fewer than f.random links
/// that can fail without disconnecting hosts). Deterministic for f.seed.
std::vector<std::string> fail_clos_links(Topology& t, const ClosParams& p, const ClosFailures& f);

}  // namespace rocemu
