// rate_csv.cc — DCQCN telemetry samples and CSV rows (see rate_csv.h).
#include "nic/dcqcn/rate_csv.h"

#include <cinttypes>
#include <cstdio>

namespace rocemu::dcqcn {

RpSample sample_rp(const DcqcnRp& rp, uint32_t qp, TimeNs now) noexcept {
  DcqcnRp at = rp;
  at.advance(now);
  return RpSample{now, qp, at.rate_bps(), at.target_bps(), at.alpha(), at.counters().cnps};
}

RateCsvWriter::RateCsvWriter(std::ostream& out) : out_(&out) { *out_ << kHeader << '\n'; }

void RateCsvWriter::write(const RpSample& s) {
  char line[160];
  const int n =
      std::snprintf(line, sizeof(line), "%" PRId64 ",%u,%.6f,%.6f,%.6f,%" PRIu64 "\n", s.time_ns,
                    s.qp, s.rate_bps / 1e9, s.target_bps / 1e9, s.alpha, s.cnps);
  constexpr int kMax = static_cast<int>(sizeof(line)) - 1;  // snprintf truncates at this
  if (n > 0) out_->write(line, static_cast<std::streamsize>(n < kMax ? n : kMax));
  ++rows_;
}

}  // namespace rocemu::dcqcn
