// fuzz_cdf.cc — libFuzzer target for the flow-size CDF reader (fabric/workload/
// flow_size_cdf.h: FlowSizeCdf::parse, what FlowSizeCdf::load does with a file's bytes) and
// what a workload does with a CDF it accepted (moments, quantiles, sampling).
// Aborts when: anything but a ConfigError escapes, an error does not name the file and line,
// or an accepted CDF breaks its contract: knots non-decreasing in size and CDF, the last at
// 1, sizes within [0, 2^31]; mean within [min, max], stddev finite; quantile() monotone and
// within [min, max]; cdf_at() within [0, 1]; samples within [1, kMaxFlowBytes].
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include "common/config.h"
#include "fabric/workload/flow_size_cdf.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_cdf: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using rocemu::workload::FlowSizeCdf;
  using rocemu::workload::kMaxFlowBytes;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<FlowSizeCdf> parsed;
  try {
    parsed.emplace(FlowSizeCdf::parse(text, "fuzz.cdf"));
  } catch (const rocemu::ConfigError& e) {
    if (std::string(e.what()).rfind("fuzz.cdf:", 0) != 0) fail("error does not name the file");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_cdf: %s\n", e.what());
    fail("not a ConfigError");
  }
  const FlowSizeCdf& c = *parsed;
  const auto& k = c.knots();
  if (k.empty() || k.back().cdf != 1.0) fail("accepted CDF does not end at 1");
  for (size_t i = 0; i < k.size(); ++i) {
    if (!(k[i].size_bytes >= 0 && k[i].size_bytes <= static_cast<double>(kMaxFlowBytes)))
      fail("knot size outside [0, 2^31]");
    if (!(k[i].cdf >= 0 && k[i].cdf <= 1)) fail("knot CDF outside [0, 1]");
    if (i > 0 && (k[i].size_bytes < k[i - 1].size_bytes || k[i].cdf < k[i - 1].cdf))
      fail("knots decrease");
  }
  const double lo = c.min_bytes(), hi = c.max_bytes();
  if (!(c.mean_bytes() >= lo * (1 - 1e-12) && c.mean_bytes() <= hi * (1 + 1e-12)))
    fail("mean outside [min, max]");
  if (!std::isfinite(c.stddev_bytes()) || c.stddev_bytes() < 0) fail("stddev not finite");
  double prev = -1;
  for (int i = 0; i <= 64; ++i) {
    const double p = i / 64.0;
    const double q = c.quantile(p);
    if (!(q >= lo && q <= hi)) {
      std::fprintf(stderr, "fuzz_cdf: quantile(%.17g) = %.17g, min %.17g, max %.17g\n", p, q, lo,
                   hi);
      fail("quantile outside [min, max]");
    }
    if (q < prev) fail("quantile decreases");
    prev = q;
    const double f = c.cdf_at(q);
    if (!(f >= 0 && f <= 1)) fail("cdf_at outside [0, 1]");
  }
  rocemu::Rng rng(size, "fuzz_cdf");
  for (int i = 0; i < 16; ++i) {
    const uint64_t s = c.sample(rng);
    if (s < 1 || s > kMaxFlowBytes) fail("sample outside [1, 2^31]");
  }
  return 0;
}
