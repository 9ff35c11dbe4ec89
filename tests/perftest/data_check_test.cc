// data_check_test.cc — the --check_data pattern (apps/perftest/data_check.h): what one side
// fills, the other finds intact, and any changed, shifted or missing byte is found at its
// offset.
#include "apps/perftest/data_check.h"

#include <gtest/gtest.h>

#include <vector>

namespace rocemu::perftest {
namespace {

TEST(DataCheck, FilledBufferMatchesForEveryLengthAndQp) {
  for (uint64_t len : {0u, 1u, 7u, 8u, 13u, 4096u, 65541u}) {
    for (uint32_t q : {0u, 1u, 15u}) {
      std::vector<uint8_t> b(len);
      fill_check_pattern(b.data(), len, q);
      EXPECT_EQ(first_pattern_mismatch(b.data(), len, q), -1) << len << " " << q;
      for (uint64_t i = 0; i < len; i += 997) EXPECT_EQ(b[i], check_pattern_byte(q, i));
    }
  }
}

TEST(DataCheck, ByteIsTheLittleEndianByteOfTheInteropPatternWord) {
  const uint64_t w = rc_pattern_word(3, 5);  // QP 2's seed is 3
  for (uint64_t k = 0; k < 8; ++k)
    EXPECT_EQ(check_pattern_byte(2, 40 + k), static_cast<uint8_t>(w >> (8 * k)));
}

TEST(DataCheck, AChangedByteIsFoundAtItsOffset) {
  std::vector<uint8_t> b(10000);
  fill_check_pattern(b.data(), b.size(), 0);
  for (uint64_t at : {0u, 5u, 8u, 4095u, 9999u}) {
    std::vector<uint8_t> c = b;
    c[at] ^= 0x01;
    EXPECT_EQ(first_pattern_mismatch(c.data(), c.size(), 0), static_cast<int64_t>(at));
  }
  // Zeros (the peer filled nothing), another QP's pattern, a shift by one word: all found.
  std::vector<uint8_t> zero(4096, 0);
  EXPECT_EQ(first_pattern_mismatch(zero.data(), zero.size(), 0), 0);
  std::vector<uint8_t> other(4096);
  fill_check_pattern(other.data(), other.size(), 1);
  EXPECT_GE(first_pattern_mismatch(other.data(), other.size(), 0), 0);
  EXPECT_GE(first_pattern_mismatch(b.data() + 8, 4096, 0), 0);
}

}  // namespace
}  // namespace rocemu::perftest
