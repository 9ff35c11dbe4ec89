// eal_env.h — DPDK EAL for test binaries that need mbufs (unit/sim/dpdk suites).
//
// Initialises EAL once per process with fabric's bootstrap (fabric/eal.h, as the apps do:
// `--in-memory` with free hugepages, else `--no-huge -m 1024 --file-prefix rocemu-<pid>`;
// the two modes do not combine). Creates one mbuf pool shared by the tests. Never skips:
// if EAL cannot start, the test binary fails with the rte_strerror reason.
#pragma once

#include <cstdint>

struct rte_mempool;

namespace rocemu::test {

/// Starts EAL (idempotent) and returns a pool of `kTestPoolMbufs` mbufs with 9 KB data
/// rooms (enough for a 4096-byte MTU frame in one segment). Aborts the process with a
/// message if EAL cannot start.
rte_mempool* test_mempool();

inline constexpr uint32_t kTestPoolMbufs = 16383;

}  // namespace rocemu::test
