// flow_size_cdf.h — empirical flow-size distributions given as piecewise-linear CDFs.
//
// File format (HPCC traffic_gen/, see configs/workloads/SOURCES.md): one knot per line,
// `<flow size bytes> <CDF percent 0..100>`; blank lines are ignored and '#' starts a
// comment. Between two knots the CDF is linear, i.e. the size is uniform on the segment; a
// first knot with a CDF above 0 (or two knots with the same size) is a point mass. Sizes and
// percents must be non-decreasing and the last percent must be 100. Units: bytes; CDF values
// are stored as fractions in [0, 1]. docs/workloads.md has the formulas.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/rng.h"

namespace rocemu::workload {

/// The largest flow a workload may have: one RDMA message, at most 2^31 bytes (IBTA's
/// maximum message size). Every host registers a source and a sink region of the largest
/// flow, so this also bounds the run's memory (2 x 2 GiB); larger CDF sizes or incasts are
/// refused when the workload is loaded.
inline constexpr uint64_t kMaxFlowBytes = uint64_t{1} << 31;
/// The largest flow-size CDF file read (the published CDFs are under a kilobyte; a CDF with
/// a knot per byte size up to kMaxFlowBytes would not be one to sample from).
inline constexpr uint64_t kMaxCdfFileBytes = 16ull << 20;

class FlowSizeCdf {
 public:
  struct Knot {
    double size_bytes = 0;
    double cdf = 0;  // P(size <= size_bytes), in [0, 1]
  };

  /// Parses CDF text. `source` (a file name) prefixes every error. Throws ConfigError with
  /// `source:line: reason` for an unparsable line, a negative size, a percent outside
  /// [0, 100], a size or percent that decreases, or a last percent that is not 100.
  static FlowSizeCdf parse(std::string_view text, const std::string& source);
  /// Reads and parses `path`; throws ConfigError `path: cannot read (...)` if it cannot.
  static FlowSizeCdf load(const std::string& path);

  /// Exact mean of the piecewise-linear distribution: sum over segments of the midpoint
  /// times the segment's probability (the trapezoid rule of HPCC's CustomRand.getAvg, which
  /// is exact here because the size is uniform within a segment).
  double mean_bytes() const noexcept { return mean_bytes_; }
  /// Standard deviation of the same distribution (exact, per-segment uniform moments).
  double stddev_bytes() const noexcept { return stddev_bytes_; }
  /// F(x) = P(size <= x) of the continuous distribution.
  double cdf_at(double size_bytes) const noexcept;
  /// Inverse CDF: the smallest x with F(x) >= p, for p in [0, 1] (clamped).
  double quantile(double p) const noexcept;
  /// One flow size: quantile(u) for u uniform in [0, 1), rounded to the nearest byte and at
  /// least 1 byte. Thread: the caller owns `rng`.
  uint64_t sample(Rng& rng) const noexcept;

  double min_bytes() const noexcept { return knots_.front().size_bytes; }
  double max_bytes() const noexcept { return knots_.back().size_bytes; }
  const std::vector<Knot>& knots() const noexcept { return knots_; }
  const std::string& source() const noexcept { return source_; }

 private:
  FlowSizeCdf(std::vector<Knot> knots, std::string source);

  std::vector<Knot> knots_;
  std::vector<double> cdfs_;  // knots_[i].cdf, contiguous for the binary search
  std::string source_;
  double mean_bytes_ = 0;
  double stddev_bytes_ = 0;
};

}  // namespace rocemu::workload
