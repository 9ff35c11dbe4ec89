// workload_sizes.h — sizes a workload implies before it runs: the FCT size bins its records
// are binned by, and the bytes of the source and sink regions every host registers (a flow
// is one work request of its whole size, so the regions hold the largest flow). Units: bytes.
#pragma once

#include <cstdint>

#include "fabric/workload/fct.h"
#include "fabric/workload/flow_generator.h"

namespace rocemu::workload {

/// The FCT size bins of a workload: deciles of its CDF, or else one bin edge per distinct
/// fixed size (incast, matrix), or {1} when it has neither.
SizeBins workload_size_bins(const WorkloadConfig& wcfg);

/// Bytes of the source and of the sink region: the largest flow (the CDF's largest size,
/// rounded up, + 1; the incast or matrix size if larger), at least 1.
uint64_t workload_region_bytes(const WorkloadConfig& wcfg);

}  // namespace rocemu::workload
