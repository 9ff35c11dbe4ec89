// action_table.cc — the 120-entry ECN action table (GraphCC Sec. 4, ACC Sec. 4.2).
#include "agent/action_table.h"

#include <bit>

namespace rocemu::agent {

namespace {
std::array<EcnSetting, kNumActions> build() noexcept {
  std::array<EcnSetting, kNumActions> t{};
  int i = 0;
  for (uint32_t kmin : kKminKb)
    for (uint32_t kmax : kKmaxKb) {
      if (kmin > kmax) continue;
      for (double p : kPmax) t[i++] = EcnSetting{kmin * 1024, kmax * 1024, p};
    }
  return t;
}

uint64_t fnv1a_u64(uint64_t h, uint64_t v) noexcept {
  for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
  return h;
}
}  // namespace

const std::array<EcnSetting, kNumActions>& action_table() noexcept {
  static const std::array<EcnSetting, kNumActions> table = build();
  return table;
}

int action_index(const EcnSetting& s) noexcept {
  const auto& t = action_table();
  for (int i = 0; i < kNumActions; ++i)
    if (t[i] == s) return i;
  return -1;
}

uint64_t action_table_hash() noexcept {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const auto& e : action_table()) {
    h = fnv1a_u64(h, e.kmin_bytes);
    h = fnv1a_u64(h, e.kmax_bytes);
    h = fnv1a_u64(h, std::bit_cast<uint64_t>(e.pmax));
  }
  return h;
}

}  // namespace rocemu::agent
