// rng.h — seeded, reproducible random numbers, one stream per component.
//
// xoshiro256** (Blackman & Vigna) seeded through splitmix64 from (run seed, component
// id), so each switch, NIC or generator draws from its own stream and a virtual-time run
// replays exactly for a given seed regardless of how other components consume numbers.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace rocemu {

class Rng {
 public:
  /// Stream for `component` (e.g. a node name) under the run's `seed`.
  Rng(uint64_t seed, std::string_view component) noexcept : Rng(seed ^ fnv1a(component)) {}
  explicit Rng(uint64_t seed) noexcept {
    uint64_t x = seed;
    for (auto& s : s_) s = splitmix64(x);
  }

  /// Uniform 64-bit value.
  uint64_t next() noexcept {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform double in [0, 1) with 53 random bits.
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n) (n > 0); Lemire's multiply-shift, bias below 2^-32 for n < 2^32.
  uint64_t below(uint64_t n) noexcept {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

  /// The generator's whole state, to save and restore a stream (e.g. a training checkpoint).
  std::array<uint64_t, 4> state() const noexcept { return {s_[0], s_[1], s_[2], s_[3]}; }
  void set_state(const std::array<uint64_t, 4>& s) noexcept {
    for (size_t i = 0; i < 4; ++i) s_[i] = s[i];
  }

  static constexpr uint64_t fnv1a(std::string_view s) noexcept {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
    return h;
  }

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  static constexpr uint64_t splitmix64(uint64_t& x) noexcept {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
};

}  // namespace rocemu
