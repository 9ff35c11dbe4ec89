// workload_sink.cc — source/sink buffers and the fixed-address sink mapping (see
// workload_sink.h).
#include "fabric/workload_sink.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace rocemu::fabric {

WorkloadRegions::WorkloadRegions(uint64_t bytes, uint8_t* shared_sink)
    : source_(bytes, 0x5a), sink_(shared_sink), bytes_(bytes) {
  if (!sink_) {
    private_sink_.assign(bytes, 0);
    sink_ = private_sink_.data();
  }
}

uint8_t* map_shared_sink_region(uint64_t bytes) {
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t len = (bytes + page - 1) / page * page;
  void* want = reinterpret_cast<void*>(kSharedSinkAddress);
  void* p = ::mmap(want, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED || p != want) {
    const int err = errno;
    if (p != MAP_FAILED) ::munmap(p, len);
    char addr[32];
    std::snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(kSharedSinkAddress));
    throw std::runtime_error(
        std::string("cannot map the ") + std::to_string(len) + "-byte sink region at " + addr +
        ": " + (p == MAP_FAILED ? std::strerror(err) : "kernel chose another address"));
  }
  return static_cast<uint8_t*>(p);
}

void unmap_shared_sink_region(uint8_t* p, uint64_t bytes) noexcept {
  if (!p) return;
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  ::munmap(p, (bytes + page - 1) / page * page);
}

}  // namespace rocemu::fabric
