// flow_size_cdf.cc — parsing, exact moments and inverse sampling of piecewise-linear CDFs.
//
// Moments: within a segment [a, b] of mass m the size is uniform, so the segment adds
// m * (a + b) / 2 to the mean and m * (a^2 + a*b + b^2) / 3 to E[X^2]; a point mass m at x
// adds m * x and m * x^2. This is the trapezoid rule of HPCC's CustomRand.getAvg.
#include "fabric/workload/flow_size_cdf.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <sstream>

#include "common/config.h"
#include "common/file_read.h"

namespace rocemu::workload {

namespace {

constexpr double kPercentTolerance = 1e-9;

// a + (b - a) * t for t in [0, 1], never outside [a, b]. The fraction is formed first (a
// quotient of x <= y is <= 1 exactly), and the result is clamped: a + (b - a) can round past
// b, and (b - a) * x / y, the old order, past it by more (quantile(1) of a CDF ending at
// 6,229,795 B gave 6,229,795.0000000009, above the largest flow).
double interpolate(double a, double b, double t) noexcept {
  return std::clamp(a + (b - a) * t, a, b);
}

[[noreturn]] void fail(const std::string& source, int line, const std::string& reason) {
  throw ConfigError(source + ":" + std::to_string(line) + ": " + reason);
}

bool parse_double(std::string_view tok, double& out) {
  const char* first = tok.data();
  const char* last = tok.data() + tok.size();
  if (first != last && *first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr == last && std::isfinite(out);
}

std::vector<std::string_view> split_ws(std::string_view line) {
  std::vector<std::string_view> toks;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) toks.push_back(line.substr(i, j - i));
    i = j;
  }
  return toks;
}

}  // namespace

FlowSizeCdf FlowSizeCdf::parse(std::string_view text, const std::string& source) {
  std::vector<Knot> knots;
  int line_no = 0;
  int last_line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (const size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    pos = end + 1;
    ++line_no;
    const auto toks = split_ws(line);
    if (toks.empty()) continue;
    if (toks.size() != 2) {
      fail(source, line_no,
           "expected `<size bytes> <CDF percent>`, got '" + std::string(line) + "'");
    }
    double size = 0;
    double pct = 0;
    if (!parse_double(toks[0], size)) {
      fail(source, line_no, "flow size '" + std::string(toks[0]) + "' is not a number");
    }
    if (!parse_double(toks[1], pct)) {
      fail(source, line_no, "CDF percent '" + std::string(toks[1]) + "' is not a number");
    }
    if (size < 0) fail(source, line_no, "flow size " + std::string(toks[0]) + " is negative");
    if (size > static_cast<double>(kMaxFlowBytes))
      fail(source, line_no,
           "flow size " + std::string(toks[0]) +
               " exceeds 2147483648 bytes (2^31, the largest RDMA message; each flow is one)");
    if (pct < 0 || pct > 100 + kPercentTolerance) {
      fail(source, line_no, "CDF percent " + std::string(toks[1]) + " is outside [0, 100]");
    }
    if (!knots.empty()) {
      if (size < knots.back().size_bytes) {
        fail(source, line_no,
             "flow size " + std::string(toks[0]) + " decreases (CDF must be monotone in size)");
      }
      if (pct / 100.0 < knots.back().cdf) {
        fail(source, line_no,
             "CDF percent " + std::string(toks[1]) + " decreases (CDF must be non-decreasing)");
      }
    }
    knots.push_back({size, std::min(pct, 100.0) / 100.0});
    last_line = line_no;
  }
  if (knots.empty()) fail(source, std::max(line_no, 1), "no knots (empty CDF)");
  if (std::abs(knots.back().cdf - 1.0) > kPercentTolerance / 100.0) {
    std::ostringstream os;
    os << "last CDF percent is " << knots.back().cdf * 100.0 << ", must end at 100";
    fail(source, last_line, os.str());
  }
  knots.back().cdf = 1.0;
  if (knots.back().size_bytes <= 0) fail(source, last_line, "largest flow size must be > 0");
  return FlowSizeCdf(std::move(knots), source);
}

FlowSizeCdf FlowSizeCdf::load(const std::string& path) {
  std::string text;
  const std::string why = read_regular_file(path, kMaxCdfFileBytes, &text);
  if (!why.empty()) throw ConfigError(path + ": cannot read flow-size CDF file (" + why + ")");
  return parse(text, path);
}

FlowSizeCdf::FlowSizeCdf(std::vector<Knot> knots, std::string source)
    : knots_(std::move(knots)), source_(std::move(source)) {
  cdfs_.reserve(knots_.size());
  for (const auto& k : knots_) cdfs_.push_back(k.cdf);
  // Point mass at the first knot, then one uniform segment per pair of knots.
  double mean = knots_[0].cdf * knots_[0].size_bytes;
  double second = knots_[0].cdf * knots_[0].size_bytes * knots_[0].size_bytes;
  for (size_t i = 1; i < knots_.size(); ++i) {
    const double a = knots_[i - 1].size_bytes;
    const double b = knots_[i].size_bytes;
    const double m = knots_[i].cdf - knots_[i - 1].cdf;
    mean += m * (a + b) / 2.0;
    second += m * (a * a + a * b + b * b) / 3.0;
  }
  mean_bytes_ = mean;
  stddev_bytes_ = std::sqrt(std::max(0.0, second - mean * mean));
}

double FlowSizeCdf::cdf_at(double x) const noexcept {
  if (x < knots_.front().size_bytes) return 0.0;
  if (x >= knots_.back().size_bytes) return 1.0;
  // k = last knot with size <= x; knots_[k + 1].size_bytes > x >= knots_[k].size_bytes.
  const auto it = std::upper_bound(knots_.begin(), knots_.end(), x,
                                   [](double v, const Knot& k) { return v < k.size_bytes; });
  const size_t k = static_cast<size_t>(it - knots_.begin()) - 1;
  const Knot& lo = knots_[k];
  const Knot& hi = knots_[k + 1];
  return interpolate(lo.cdf, hi.cdf, (x - lo.size_bytes) / (hi.size_bytes - lo.size_bytes));
}

double FlowSizeCdf::quantile(double p) const noexcept {
  p = std::clamp(p, 0.0, 1.0);
  // i = first knot with cdf >= p; then cdf[i-1] < p <= cdf[i] and the answer lies in the
  // segment (i-1, i) — or at the first knot's point mass when i == 0.
  const size_t i =
      static_cast<size_t>(std::lower_bound(cdfs_.begin(), cdfs_.end(), p) - cdfs_.begin());
  if (i == 0) return knots_[0].size_bytes;
  if (i >= knots_.size()) return knots_.back().size_bytes;  // unreachable: cdf ends at 1
  const Knot& lo = knots_[i - 1];
  const Knot& hi = knots_[i];
  return interpolate(lo.size_bytes, hi.size_bytes, (p - lo.cdf) / (hi.cdf - lo.cdf));
}

uint64_t FlowSizeCdf::sample(Rng& rng) const noexcept {
  const double x = quantile(rng.uniform());
  const auto bytes = static_cast<uint64_t>(std::llround(x));
  return bytes < 1 ? 1 : bytes;
}

}  // namespace rocemu::workload
