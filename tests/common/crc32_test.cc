// crc32_test.cc — every CRC-32 implementation (tables, PCLMULQDQ, AVX-512) against the
// bit-by-bit reference: all lengths around the lane and step boundaries, every alignment,
// a running CRC split anywhere, and the copy variant's bytes (nothing written outside dst).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "common/icrc.h"

namespace rocemu {
namespace {

class Crc32 : public ::testing::TestWithParam<Crc32Impl> {
 protected:
  void SetUp() override {
    before_ = crc32_impl();
    // The CI machine has all three; a CPU without one runs the others.
    if (!crc32_use(GetParam())) GTEST_SKIP() << "this CPU lacks the implementation";
  }
  void TearDown() override { crc32_use(before_); }
  Crc32Impl before_{};
};

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

TEST(Crc32Reference, KnownValues) {
  const char* s = "123456789";
  EXPECT_EQ(crc32_reference(0, reinterpret_cast<const uint8_t*>(s), 9), 0xCBF43926u);
  EXPECT_EQ(crc32_reference(0, nullptr, 0), 0u);
}

TEST_P(Crc32, EqualsTheReferenceAtEveryLengthAndAlignment) {
  const auto buf = random_bytes(10000, 1);
  // Every length to 1100 (the 16-, 64- and 256-byte steps and their remainders), then the
  // sizes frames have, at all 64 alignments of the start.
  std::vector<size_t> lens;
  for (size_t n = 0; n <= 1100; ++n) lens.push_back(n);
  for (size_t n : {1500u, 2047u, 2048u, 2049u, 4096u, 4111u, 4144u, 4160u, 8192u, 9000u})
    lens.push_back(n);
  for (size_t n : lens)
    for (size_t a = 0; a < 64; a += (n < 1100 ? 13 : 1)) {
      const uint32_t want = crc32_reference(0, buf.data() + a, static_cast<uint32_t>(n));
      ASSERT_EQ(crc32_update(0, buf.data() + a, n), want) << "len " << n << " align " << a;
    }
}

TEST_P(Crc32, ARunningCrcSplitAnywhereGivesTheWholeOne) {
  const auto buf = random_bytes(9000, 2);
  std::mt19937_64 rng(3);
  for (int t = 0; t < 4000; ++t) {
    const size_t n = rng() % 9000, cut = n == 0 ? 0 : rng() % (n + 1);
    const uint32_t want = crc32_reference(0, buf.data(), static_cast<uint32_t>(n));
    const uint32_t head = crc32_update(0, buf.data(), cut);
    ASSERT_EQ(crc32_update(head, buf.data() + cut, n - cut), want) << n << " cut " << cut;
  }
}

TEST_P(Crc32, CopyWritesExactlyTheBytesAndTheSameCrc) {
  const auto src = random_bytes(9100, 4);
  std::vector<uint8_t> dst(9300);
  std::mt19937_64 rng(5);
  for (int t = 0; t < 3000; ++t) {
    const size_t n = t < 600 ? static_cast<size_t>(t) : rng() % 9000;
    const size_t s = rng() % 64, d = 64 + rng() % 64;
    std::fill(dst.begin(), dst.end(), 0xA5);
    const uint32_t seed = static_cast<uint32_t>(rng());
    const uint32_t got = crc32_copy(seed, dst.data() + d, src.data() + s, n);
    ASSERT_EQ(got, crc32_reference(seed, src.data() + s, static_cast<uint32_t>(n))) << n;
    ASSERT_EQ(std::memcmp(dst.data() + d, src.data() + s, n), 0) << n;
    for (size_t i = 0; i < d; ++i) ASSERT_EQ(dst[i], 0xA5) << "before dst, len " << n;
    for (size_t i = d + n; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xA5) << "after dst, len " << n;
  }
}

TEST_P(Crc32, AfterAMaskedPrefixEqualsTheCrcOfBothAndCopiesOnlyTheRest) {
  const auto src = random_bytes(9100, 6);
  const auto pre = random_bytes(200, 7);
  auto mask = random_bytes(200, 9);
  for (auto& b : mask) b &= random_bytes(1, b)[0];  // sparse ones, as the ICRC's are
  std::vector<uint8_t> dst(9300), both(9400);
  std::mt19937_64 rng(8);
  for (int t = 0; t < 4000; ++t) {
    // Every prefix length (those over 128 take the two-step path), short and long rests.
    const size_t p = static_cast<size_t>(t) % 140;
    const size_t n = t < 1400 ? static_cast<size_t>(t) % 300 : rng() % 9000;
    const size_t d = rng() % 64;
    const uint32_t seed = t % 2 ? static_cast<uint32_t>(rng()) : 0;
    const uint8_t* m = t % 3 == 0 ? nullptr : mask.data();  // the ORed mask, or none
    for (size_t i = 0; i < p; ++i) both[i] = pre[i] | (m ? m[i] : 0);
    std::memcpy(both.data() + p, src.data(), n);
    const uint32_t want = crc32_reference(seed, both.data(), static_cast<uint32_t>(p + n));
    ASSERT_EQ(crc32_copy_after(seed, pre.data(), p, m, nullptr, src.data(), n), want)
        << p << "+" << n;
    std::fill(dst.begin(), dst.end(), 0xA5);
    ASSERT_EQ(crc32_copy_after(seed, pre.data(), p, m, dst.data() + d, src.data(), n), want)
        << p << "+" << n;
    ASSERT_EQ(std::memcmp(dst.data() + d, src.data(), n), 0) << p << "+" << n;
    for (size_t i = 0; i < d; ++i) ASSERT_EQ(dst[i], 0xA5) << "before dst";
    for (size_t i = d + n; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xA5) << "after dst";
  }
}

INSTANTIATE_TEST_SUITE_P(AllImplementations, Crc32,
                         ::testing::Values(Crc32Impl::kTables, Crc32Impl::kPclmul,
                                           Crc32Impl::kAvx512),
                         [](const auto& info) {
                           switch (info.param) {
                             case Crc32Impl::kTables: return std::string("Tables");
                             case Crc32Impl::kPclmul: return std::string("Pclmul");
                             case Crc32Impl::kAvx512: return std::string("Avx512");
                           }
                           return std::string("Unknown");
                         });

}  // namespace
}  // namespace rocemu
