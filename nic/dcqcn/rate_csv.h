// rate_csv.h — DCQCN telemetry: per-QP samples of rate, target, alpha and CNP count, and a
// time-series CSV writer for them (plotted by scripts/plot_dcqcn.py).
//
// CSV columns: time_ns,qp,rate_gbps,target_gbps,alpha,cnps — one row per QP per sample.
// Sampling is the caller's choice (e.g. every 10 us of virtual time); writing is not meant
// for the per-packet path. Units in the column names.
#pragma once

#include <cstdint>
#include <ostream>

#include "common/time_ns.h"
#include "nic/dcqcn/rp.h"

namespace rocemu::dcqcn {

struct RpSample {
  TimeNs time_ns = 0;
  uint32_t qp = 0;
  double rate_bps = 0;
  double target_bps = 0;
  double alpha = 0;
  uint64_t cnps = 0;
};

/// Samples `rp` as it is at `now`: a copy is brought up to `now` (the RP updates lazily), the
/// RP itself is left alone, so sampling never changes what DCQCN does next.
RpSample sample_rp(const DcqcnRp& rp, uint32_t qp, TimeNs now) noexcept;

class RateCsvWriter {
 public:
  static constexpr const char* kHeader = "time_ns,qp,rate_gbps,target_gbps,alpha,cnps";

  /// Writes to `out` (not owned; must outlive the writer). Writes the header line now.
  explicit RateCsvWriter(std::ostream& out);
  void write(const RpSample& s);
  uint64_t rows() const noexcept { return rows_; }

 private:
  std::ostream* out_;
  uint64_t rows_ = 0;
};

}  // namespace rocemu::dcqcn
