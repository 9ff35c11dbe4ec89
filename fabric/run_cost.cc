// run_cost.cc — see run_cost.h.
#include "fabric/run_cost.h"

#include <sys/resource.h>

#include <cstdio>

namespace rocemu::fabric {

int64_t peak_rss_bytes() noexcept {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<int64_t>(u.ru_maxrss) * 1024;  // Linux: kilobytes
}

namespace {
double per_second(uint64_t n, int64_t wall_ns) noexcept {
  return wall_ns > 0 ? static_cast<double>(n) * 1e9 / static_cast<double>(wall_ns) : 0.0;
}
}  // namespace

std::string run_cost_csv(uint64_t events, uint64_t link_hops, int64_t wall_ns) {
  char line[128];
  std::string s = "metric,value\n";
  if (events > 0) {
    std::snprintf(line, sizeof line, "events,%llu\n", static_cast<unsigned long long>(events));
    s += line;
  }
  std::snprintf(line, sizeof line, "link_hops,%llu\nwall_ns,%lld\n",
                static_cast<unsigned long long>(link_hops), static_cast<long long>(wall_ns));
  s += line;
  if (events > 0) {
    std::snprintf(line, sizeof line, "events_per_s,%.0f\n", per_second(events, wall_ns));
    s += line;
  }
  std::snprintf(line, sizeof line, "link_hops_per_s,%.0f\npeak_rss_bytes,%lld\n",
                per_second(link_hops, wall_ns), static_cast<long long>(peak_rss_bytes()));
  s += line;
  return s;
}

std::string run_cost_text(uint64_t events, uint64_t link_hops, int64_t wall_ns) {
  const auto per_us = [&](uint64_t n) { return per_second(n, wall_ns) / 1e6; };
  char line[256];
  std::string s;
  if (events > 0) {
    std::snprintf(line, sizeof line, "   events %llu (%.2f M/s)",
                  static_cast<unsigned long long>(events), per_us(events));
    s += line;
  }
  std::snprintf(line, sizeof line, "   link-hops %llu (%.2f M/s)   peak RSS %.0f MiB",
                static_cast<unsigned long long>(link_hops), per_us(link_hops),
                static_cast<double>(peak_rss_bytes()) / (1 << 20));
  s += line;
  return s;
}

}  // namespace rocemu::fabric
