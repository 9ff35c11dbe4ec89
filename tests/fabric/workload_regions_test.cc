// workload_regions_test.cc — the workload's source and sink buffers (fabric/workload_sink.h).
#include <sys/resource.h>

#include <gtest/gtest.h>

#include <algorithm>

#include "fabric/workload_sink.h"

namespace rocemu::fabric {
namespace {

long max_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(WorkloadRegions, FilledSourceAndZeroSink) {
  WorkloadRegions r(3 * 4096 + 5, nullptr);
  ASSERT_EQ(r.bytes(), 3u * 4096 + 5);
  EXPECT_TRUE(std::all_of(r.source(), r.source() + r.bytes(), [](uint8_t b) { return b == 0x5a; }));
  EXPECT_TRUE(std::all_of(r.sink(), r.sink() + r.bytes(), [](uint8_t b) { return b == 0; }));
  r.sink()[r.bytes() - 1] = 7;  // writable to its last byte
  EXPECT_NE(r.source(), r.sink());
}

TEST(WorkloadRegions, AnUnfilledSourceTouchesNoPage) {
  // 256 MiB each: were either written at set-up (as a std::vector would), the peak RSS would
  // grow by that much.
  constexpr uint64_t kBytes = uint64_t{256} << 20;
  const long before = max_rss_kib();
  {
    WorkloadRegions r(kBytes, nullptr, /*fill_source=*/false);
    EXPECT_EQ(r.source()[kBytes / 2], 0);  // readable (one zero page)
    r.sink()[0] = 1;
  }
  EXPECT_LT(max_rss_kib() - before, 64 * 1024) << "KiB of peak RSS for two untouched 256 MiB regions";
}

TEST(WorkloadRegions, ASharedSinkIsUsedAsGiven) {
  uint8_t* shared = map_shared_sink_region(8192);
  {
    WorkloadRegions r(8192, shared, false);
    EXPECT_EQ(r.sink(), shared);
  }
  shared[8191] = 1;  // still mapped: the regions do not own it
  unmap_shared_sink_region(shared, 8192);
}

TEST(WorkloadRegions, EmptyRegionsAreValid) {
  WorkloadRegions r(0, nullptr);
  EXPECT_NE(r.source(), nullptr);
  EXPECT_NE(r.sink(), nullptr);
  EXPECT_EQ(r.bytes(), 0u);
}

}  // namespace
}  // namespace rocemu::fabric
