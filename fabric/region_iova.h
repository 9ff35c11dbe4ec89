// region_iova.h — the I/O virtual addresses at which the jobs (write job, workload fabric)
// register their source and sink regions with RoceHost::reg_mr_iova. Fixed, so the RETHs on
// the wire — and so captures — do not depend on where the heap or mmap put a buffer: two
// virtual-time runs with one seed write byte-identical pcapng files. Each host has its own
// address space; regions are at most 2^32 bytes, far below the 16 TiB between the two.
#pragma once

#include <cstdint>

namespace rocemu::fabric {

inline constexpr uint64_t kSourceRegionIova = uint64_t{1} << 44;
inline constexpr uint64_t kSinkRegionIova = uint64_t{2} << 44;

}  // namespace rocemu::fabric
