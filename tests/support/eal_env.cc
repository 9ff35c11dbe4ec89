// eal_env.cc — EAL bootstrap for tests.
#include "tests/support/eal_env.h"

#include <rte_errno.h>
#include <rte_mbuf.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "tests/support/fabric_eal.h"

namespace rocemu::test {

rte_mempool* test_mempool() {
  static rte_mempool* pool = [] {
    // The apps' own bootstrap (fabric/eal.h), so tests start EAL as users' runs do.
    try {
      start_fabric_eal("rocemu-test");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "eal_env: EAL could not start: %s\n", e.what());
      std::abort();
    }
    rte_mempool* p = rte_pktmbuf_pool_create("test_pool", kTestPoolMbufs, 256, 0,
                                             RTE_PKTMBUF_HEADROOM + 9216, SOCKET_ID_ANY);
    if (!p) {
      std::fprintf(stderr, "eal_env: mbuf pool: %s\n", rte_strerror(rte_errno));
      std::abort();
    }
    return p;
  }();
  return pool;
}

}  // namespace rocemu::test
