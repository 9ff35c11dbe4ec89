// workload_sink.h — the source and sink regions of a workload run, and the shared sink
// mapping of per-host processes.
//
// Every host registers one source region and one sink region of workload_region_bytes (the
// largest flow); in one process all hosts share the same two buffers (the payload is not
// verified, only timed). A per-host process (apps/host) maps its sink at kSharedSinkAddress
// so that it has the same virtual address in every process of the run: the RDMA WRITE
// target its peers compute without asking (docs/workload_runs.md, "Host processes in
// namespaces"). Units: bytes. Setup time only; one owner.
#pragma once

#include <cstdint>

namespace rocemu::fabric {

/// The source and the sink of `bytes` each. The source is filled with 0x5a if `fill_source`;
/// else (frames that carry their payload's length only, NicParams::elide_payload) nothing
/// reads it and its pages are never touched. The sink is `shared_sink`
/// (map_shared_sink_region's mapping; it must outlive this) or, if null, a private zeroed
/// mapping (pages touched only where written). Throws std::runtime_error if memory cannot be
/// mapped.
class WorkloadRegions {
 public:
  WorkloadRegions(uint64_t bytes, uint8_t* shared_sink, bool fill_source = true);
  ~WorkloadRegions();
  WorkloadRegions(const WorkloadRegions&) = delete;
  WorkloadRegions& operator=(const WorkloadRegions&) = delete;

  uint8_t* source() noexcept { return source_; }
  uint8_t* sink() noexcept { return sink_; }
  uint64_t bytes() const noexcept { return bytes_; }

 private:
  uint8_t* source_ = nullptr;
  uint8_t* private_sink_ = nullptr;
  uint8_t* sink_;
  uint64_t bytes_;
};

/// The sink region of a per-host process: `bytes` (rounded up to pages) mapped read-write at
/// kSharedSinkAddress, so it has the same virtual address in every process of a run (the
/// RDMA WRITE target peers compute without asking). Throws std::runtime_error if that range
/// is taken. unmap_shared_sink_region releases it.
uint8_t* map_shared_sink_region(uint64_t bytes);
void unmap_shared_sink_region(uint8_t* p, uint64_t bytes) noexcept;
inline constexpr uint64_t kSharedSinkAddress = 0x3f0000000000ull;

}  // namespace rocemu::fabric
