// pacer.cc — per-QP rate limiter and earliest-eligible-first scheduler (see pacer.h).
#include "nic/dcqcn/pacer.h"

#include <algorithm>

namespace rocemu::dcqcn {

namespace {
constexpr int64_t kPsPerNs = 1000;
}  // namespace

Pacer::Pacer(uint32_t max_qps, uint64_t initial_rate_bps, uint64_t burst_bytes)
    : slots_(max_qps), burst_bytes_(burst_bytes) {
  for (auto& s : slots_) set_slot_rate(s, initial_rate_bps);
}

void Pacer::set_slot_rate(Slot& s, uint64_t rate_bps) const noexcept {
  s.rate_bps = std::max<uint64_t>(1, rate_bps);
  // 8e12 ps*bit/s per byte, shifted by 32 (fits: 8e12 * 2^32 < 2^75), divided once here.
  constexpr unsigned __int128 kBitPsQ32 = static_cast<unsigned __int128>(8'000'000'000'000ULL)
                                          << 32;
  s.ps_per_byte_q32 = kBitPsQ32 / s.rate_bps;
  s.floor_offset_ps = spacing_ps(s, burst_bytes_) + (kPsPerNs - 1);
}

int64_t Pacer::spacing_ps(const Slot& s, uint64_t bytes) noexcept {
  // bytes * 8e12 / rate, floor; error below 2^-32 ps per byte.
  const unsigned __int128 ps = (s.ps_per_byte_q32 * bytes) >> 32;
  constexpr unsigned __int128 kMax = static_cast<unsigned __int128>(INT64_MAX / 4);
  return static_cast<int64_t>(ps > kMax ? kMax : ps);
}

void Pacer::set_rate(uint32_t qp, uint64_t rate_bps, TimeNs now) noexcept {
  Slot& s = slots_[qp];
  rate_bps = std::max<uint64_t>(1, rate_bps);
  if (rate_bps == s.rate_bps) return;
  const int64_t now_ps = now * kPsPerNs;
  if (s.next_ps > now_ps) {
    // remaining' = remaining * old / new (128-bit: remaining < 2^62 ps, rates < 2^44).
    const unsigned __int128 rem = static_cast<unsigned __int128>(s.next_ps - now_ps) * s.rate_bps;
    const unsigned __int128 wait_ps = rem / rate_bps;
    constexpr unsigned __int128 kMaxWaitPs = static_cast<unsigned __int128>(INT64_MAX / 4);
    s.next_ps = now_ps + static_cast<int64_t>(wait_ps > kMaxWaitPs ? kMaxWaitPs : wait_ps);
  }
  set_slot_rate(s, rate_bps);
}

void Pacer::reset_slot(uint32_t qp, uint64_t rate_bps) noexcept {
  slots_[qp] = Slot{};
  set_slot_rate(slots_[qp], rate_bps);
}

void Pacer::set_active(uint32_t qp, bool has_data) noexcept { slots_[qp].active = has_data; }

bool Pacer::may_send(uint32_t qp, TimeNs now) const noexcept {
  return now * kPsPerNs >= slots_[qp].next_ps;
}

void Pacer::on_sent(uint32_t qp, uint32_t bytes, TimeNs now) noexcept {
  Slot& s = slots_[qp];
  s.next_ps = std::max(s.next_ps, credit_floor_ps(s, now * kPsPerNs)) + spacing_ps(s, bytes);
  s.served_seq = ++sends_;
}

int32_t Pacer::pick(TimeNs now) noexcept {
  const int64_t now_ps = now * kPsPerNs;
  int32_t best = -1;
  int64_t best_ps = 0;
  uint64_t best_seq = 0;
  for (uint32_t i = 0; i < size(); ++i) {
    const Slot& s = slots_[i];
    if (!s.active || s.next_ps > now_ps) continue;
    // Banked credit does not buy priority: compare eligible times clipped to the floor.
    const int64_t eligible_ps = std::max(s.next_ps, credit_floor_ps(s, now_ps));
    if (best < 0 || eligible_ps < best_ps || (eligible_ps == best_ps && s.served_seq < best_seq)) {
      best = static_cast<int32_t>(i);
      best_ps = eligible_ps;
      best_seq = s.served_seq;
    }
  }
  return best;
}

TimeNs Pacer::next_eligible_ns(uint32_t qp) const noexcept {
  const int64_t ps = slots_[qp].next_ps;
  return ps <= 0 ? ps / kPsPerNs : (ps + kPsPerNs - 1) / kPsPerNs;
}

TimeNs Pacer::next_eligible_ns() const noexcept {
  TimeNs t = kNever;
  for (uint32_t i = 0; i < size(); ++i)
    if (slots_[i].active) t = std::min(t, next_eligible_ns(i));
  return t;
}

}  // namespace rocemu::dcqcn
