#include "common/time_ns.h"

#include <gtest/gtest.h>

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

}  // namespace rocemu
