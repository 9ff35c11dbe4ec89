// workload_sizes.cc — FCT size bins and region bytes of a workload (see workload_sizes.h).
#include "fabric/workload/workload_sizes.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace rocemu::workload {

SizeBins workload_size_bins(const WorkloadConfig& wcfg) {
  if (wcfg.cdf) return SizeBins::from_quantiles(*wcfg.cdf);
  // Fixed sizes only: one bin edge per distinct size (incast, matrix).
  std::vector<uint64_t> edges;
  if (wcfg.params.incast) edges.push_back(wcfg.params.incast->size_bytes);
  if (wcfg.params.matrix) edges.push_back(wcfg.params.matrix->size_bytes);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  return SizeBins::fixed(edges.empty() ? std::vector<uint64_t>{1} : edges);
}

uint64_t workload_region_bytes(const WorkloadConfig& wcfg) {
  uint64_t largest = 1;
  if (wcfg.cdf) largest = static_cast<uint64_t>(std::ceil(wcfg.cdf->max_bytes())) + 1;
  if (wcfg.params.incast) largest = std::max(largest, wcfg.params.incast->size_bytes);
  if (wcfg.params.matrix) largest = std::max(largest, wcfg.params.matrix->size_bytes);
  return largest;
}

}  // namespace rocemu::workload
