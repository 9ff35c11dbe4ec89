// eal_env.cc — EAL bootstrap for tests.
#include "tests/support/eal_env.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

namespace rocemu::test {

namespace {
bool try_init(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  const int rc = rte_eal_init(static_cast<int>(argv.size()), argv.data());
  if (rc < 0) {
    std::fprintf(stderr, "eal_env: rte_eal_init failed: %s\n", rte_strerror(rte_errno));
    return false;
  }
  return true;
}
// True if a hugetlbfs is mounted and the kernel has free huge pages.
bool hugepages_available() {
  std::ifstream mounts("/proc/mounts");
  std::string line;
  bool mounted = false;
  while (std::getline(mounts, line)) mounted |= line.find(" hugetlbfs ") != std::string::npos;
  std::ifstream meminfo("/proc/meminfo");
  while (std::getline(meminfo, line))
    if (line.rfind("HugePages_Free:", 0) == 0) return mounted && std::stol(line.substr(15)) > 0;
  return false;
}
}  // namespace

rte_mempool* test_mempool() {
  static rte_mempool* pool = [] {
    // rte_eal_init cannot be retried in one process, so choose the mode before calling it.
    if (!hugepages_available() ||
        !try_init({"rocemu-test", "-l", "0", "--no-pci", "--in-memory", "--no-telemetry",
                   "--log-level", "lib.eal:error"})) {
      if (!try_init({"rocemu-test", "-l", "0", "--no-pci", "--no-huge", "-m", "1024",
                     "--file-prefix", "rocemu-test-" + std::to_string(getpid()), "--no-telemetry",
                     "--log-level", "lib.eal:error"})) {
        std::fprintf(stderr, "eal_env: EAL could not start; failing\n");
        std::abort();
      }
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
