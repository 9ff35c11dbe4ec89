#include "common/time_ns.h"

#include <gtest/gtest.h>

#include <random>

namespace rocemu {

TEST(Time, SerialisationOfThousandBytesAtTenGbpsIs800ns) {
  EXPECT_EQ(serialization_ns(1000, 10 * kBpsPerGbps), 800);
}

TEST(Time, SerialisationRoundsUpToWholeNanoseconds) {
  EXPECT_EQ(serialization_ns(1, 25 * kBpsPerGbps), 1);  // 0.32 ns -> 1
  EXPECT_EQ(serialization_ns(1082, 25 * kBpsPerGbps), 347);  // 346.24 ns -> 347
}

TEST(Time, BytesInIsTheInverseOfSerialisation) {
  EXPECT_EQ(bytes_in(800, 10 * kBpsPerGbps), 1000u);
  EXPECT_EQ(bytes_in(0, 10 * kBpsPerGbps), 0u);
  EXPECT_EQ(bytes_in(-5, 10 * kBpsPerGbps), 0u);
}

// serialization_ns and bytes_in take 64-bit paths where the products fit (time_ns.h): over
// random sizes, rates and durations on both sides of those bounds, the 128-bit formulas'
// results.
TEST(Time, SixtyFourBitPathsGiveTheExactResults) {
  std::mt19937_64 g(15);
  const auto ref_ser = [](uint64_t b, uint64_t r) {
    const unsigned __int128 n = static_cast<unsigned __int128>(b) * 8 * 1'000'000'000ULL;
    return static_cast<TimeNs>((n + r - 1) / r);
  };
  const auto ref_in = [](TimeNs d, uint64_t r) {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(d) * r / 8'000'000'000ULL);
  };
  for (int i = 0; i < 200000; ++i) {
    const uint64_t bytes = g() >> (33 + g() % 31);    // up to 2^31: across the 2^30 bound
    const uint64_t rate = (g() >> (22 + g() % 42)) + 1;  // up to 2^42: across the 2^40 bound
    ASSERT_EQ(serialization_ns(bytes, rate), ref_ser(bytes, rate)) << bytes << " B at " << rate;
    const auto dt = static_cast<TimeNs>(g() >> (39 + g() % 25));  // up to 2^25 ns: across 2^23
    ASSERT_EQ(bytes_in(dt, rate), ref_in(dt, rate)) << dt << " ns at " << rate;
  }
}

}  // namespace rocemu
