// fabric_pool.h — EAL and one mbuf pool for fabric tests, started through fabric's own
// eal_start() (hugepage detection first, then --in-memory or --no-huge). Used instead of
// tests/support/eal_env.h, whose retry-after-failure cannot work on a machine without
// hugepages: a second rte_eal_init() in one process rejects the repeated `-l` option.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>

#include <rte_errno.h>
#include <rte_mbuf.h>

#include "fabric/eal.h"

namespace rocemu::fabric::tnodes {

/// Starts EAL (once) and returns a shared pool of 16383 mbufs with 9 KB data rooms.
/// Aborts with the reason if EAL or the pool cannot be created (never skips).
inline rte_mempool* test_pool() {
  static rte_mempool* pool = [] {
    try {
      EalOptions o;
      o.program = "rocemu-fabric-test";
      o.user_args = {"--log-level", "lib.eal:error"};
      eal_start(o);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fabric tests: %s\n", e.what());
      std::abort();
    }
    rte_mempool* p = rte_pktmbuf_pool_create("fabric_test_pool", 16383, 256, 0,
                                             RTE_PKTMBUF_HEADROOM + 9216, SOCKET_ID_ANY);
    if (!p) {
      std::fprintf(stderr, "fabric tests: mbuf pool: %s\n", rte_strerror(rte_errno));
      std::abort();
    }
    return p;
  }();
  return pool;
}

}  // namespace rocemu::fabric::tnodes
