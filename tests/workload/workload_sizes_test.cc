// workload_sizes_test.cc — the region bytes (the largest flow) and the FCT size bins a
// workload implies (workload_sizes.h).
#include "fabric/workload/workload_sizes.h"

#include <gtest/gtest.h>

#include <vector>

namespace rocemu::workload {
namespace {

std::vector<HostSpec> three_hosts() {
  return {{0, 25 * kBpsPerGbps}, {1, 25 * kBpsPerGbps}, {2, 25 * kBpsPerGbps}};
}

WorkloadConfig with_cdf(const char* text) {
  WorkloadParams p;
  p.load = 0.5;
  p.duration_ns = kNsPerMs;
  return make_workload_config(p, three_hosts(), FlowSizeCdf::parse(text, "t"));
}

TEST(WorkloadSizes, RegionsHoldTheLargestFlow) {
  // CDF up to 4096.5 bytes: ceil + 1.
  EXPECT_EQ(workload_region_bytes(with_cdf("100 0\n4096.5 100\n")), 4098u);
  WorkloadConfig c = with_cdf("100 0\n4096 100\n");
  EXPECT_EQ(workload_region_bytes(c), 4097u);
  c.params.incast = IncastParams{.senders = 2, .size_bytes = 65536};
  EXPECT_EQ(workload_region_bytes(c), 65536u) << "the incast size if larger";
  c.params.incast->size_bytes = 10;
  EXPECT_EQ(workload_region_bytes(c), 4097u);
  WorkloadConfig fixed;
  fixed.params.matrix = MatrixParams{.size_bytes = 1 << 20};
  EXPECT_EQ(workload_region_bytes(fixed), 1u << 20);
  EXPECT_EQ(workload_region_bytes(WorkloadConfig{}), 1u) << "nothing to send: one byte";
}

TEST(WorkloadSizes, BinsAreTheCdfsDecilesOrOneEdgePerFixedSize) {
  const WorkloadConfig c = with_cdf("100 0\n1000 50\n100000 100\n");
  EXPECT_EQ(workload_size_bins(c).edges(), SizeBins::from_quantiles(*c.cdf).edges());
  WorkloadConfig fixed;
  fixed.params.incast = IncastParams{.senders = 2, .size_bytes = 4096};
  fixed.params.matrix = MatrixParams{.size_bytes = 1024};
  EXPECT_EQ(workload_size_bins(fixed).edges(), (std::vector<uint64_t>{1024, 4096}));
  fixed.params.matrix->size_bytes = 4096;
  EXPECT_EQ(workload_size_bins(fixed).edges(), (std::vector<uint64_t>{4096}));
  EXPECT_EQ(workload_size_bins(WorkloadConfig{}).edges(), (std::vector<uint64_t>{1}));
}

}  // namespace
}  // namespace rocemu::workload
