// workload_sink.cc — source/sink buffers and the fixed-address sink mapping (see
// workload_sink.h). All of them are anonymous mappings, so untouched pages cost nothing.
#include "fabric/workload_sink.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace rocemu::fabric {

namespace {

/// `bytes` rounded up to whole pages (at least one).
uint64_t page_bytes(uint64_t bytes) noexcept {
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return std::max<uint64_t>(1, (bytes + page - 1) / page) * page;
}

/// Private anonymous memory of `bytes`, zero, no page touched until used.
uint8_t* map_zero_pages(uint64_t bytes, const char* what) {
  void* p = ::mmap(nullptr, page_bytes(bytes), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw std::runtime_error(std::string("cannot map the ") + std::to_string(bytes) + "-byte " +
                             what + " region: " + std::strerror(errno));
  return static_cast<uint8_t*>(p);
}

}  // namespace

WorkloadRegions::WorkloadRegions(uint64_t bytes, uint8_t* shared_sink, bool fill_source)
    : sink_(shared_sink), bytes_(bytes) {
  source_ = map_zero_pages(bytes, "workload source");
  if (fill_source) std::memset(source_, 0x5a, bytes);
  if (!sink_) {
    try {
      private_sink_ = map_zero_pages(bytes, "workload sink");
    } catch (...) {
      unmap_shared_sink_region(source_, bytes_);
      throw;
    }
    sink_ = private_sink_;
  }
}

WorkloadRegions::~WorkloadRegions() {
  unmap_shared_sink_region(source_, bytes_);
  unmap_shared_sink_region(private_sink_, bytes_);
}

uint8_t* map_shared_sink_region(uint64_t bytes) {
  const uint64_t len = page_bytes(bytes);
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
  if (p) ::munmap(p, page_bytes(bytes));
}

}  // namespace rocemu::fabric
