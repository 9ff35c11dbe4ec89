// bw_peak.h — perftest's "BW peak": the best rate over any run of consecutive messages.
//
// perftest (src/perftest_parameters.c, print_report_bw) records when each message was posted
// (tposted[i]) and completed (tcompleted[j]) and reports
//     peak = size / min over i <= j of (tcompleted[j] - tposted[i]) / (j - i + 1),
// scanning every pair (O(n^2)); with -D (duration mode) it does not measure a peak
// (noPeak) and prints 0. This computes the same minimum exactly in O(n log n): with points
// L_i = (i - 1, posted[i]) and R_j = (j, completed[j]) the quantity is the slope from L_i
// to R_j, whose minimum over the L points left of R_j lies on their upper convex hull
// (added in x order) and is found by binary search for the tangent from R_j.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/time_ns.h"

namespace rocemu::perftest {

/// min over 0 <= i <= j < n of (completed_ns[j] - posted_ns[i]) / (j - i + 1), in ns per
/// message (n = the shorter vector's length); 0 if n == 0. Exact (integer geometry).
inline double min_ns_per_message(const std::vector<TimeNs>& posted_ns,
                                 const std::vector<TimeNs>& completed_ns) {
  using i128 = __int128;
  struct Pt {
    int64_t x;
    TimeNs y;
  };
  const size_t n = std::min(posted_ns.size(), completed_ns.size());
  if (n == 0) return 0;
  // cross((b - a), (c - a)) > 0: a left (counter-clockwise) turn a -> b -> c.
  auto cross = [](const Pt& a, const Pt& b, const Pt& c) {
    return static_cast<i128>(b.x - a.x) * (c.y - a.y) - static_cast<i128>(b.y - a.y) * (c.x - a.x);
  };
  std::vector<Pt> hull;  // upper hull of the L points, x increasing
  hull.reserve(n);
  i128 best_num = 0, best_den = 0;  // best slope as a fraction (den > 0)
  for (size_t j = 0; j < n; ++j) {
    const Pt l{static_cast<int64_t>(j) - 1, posted_ns[j]};
    while (hull.size() >= 2 && cross(hull[hull.size() - 2], hull.back(), l) >= 0) hull.pop_back();
    hull.push_back(l);
    const Pt r{static_cast<int64_t>(j), completed_ns[j]};
    // First hull index k whose next vertex is not above the line from hull[k] to r.
    size_t lo = 0, hi = hull.size() - 1;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      // next vertex above the line hull[mid] -> r  <=>  left turn hull[mid] -> r -> next
      if (cross(hull[mid], r, hull[mid + 1]) > 0) lo = mid + 1;
      else hi = mid;
    }
    const i128 num = static_cast<i128>(r.y) - hull[lo].y;
    const i128 den = static_cast<i128>(r.x) - hull[lo].x;
    if (best_den == 0 || num * best_den < best_num * den) {
      best_num = num;
      best_den = den;
    }
  }
  return static_cast<double>(best_num) / static_cast<double>(best_den);
}

/// perftest's BW peak in bytes/s for `size_bytes` messages; 0 if no message or if the
/// best run took no time.
inline double perftest_peak_bytes_per_s(const std::vector<TimeNs>& posted_ns,
                                        const std::vector<TimeNs>& completed_ns,
                                        uint64_t size_bytes) {
  const double ns = min_ns_per_message(posted_ns, completed_ns);
  return ns > 0 ? static_cast<double>(size_bytes) * 1e9 / ns : 0;
}

}  // namespace rocemu::perftest
