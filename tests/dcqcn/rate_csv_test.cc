// rate_csv_test.cc — the rate telemetry CSV (nic/dcqcn/rate_csv.h).
#include "nic/dcqcn/rate_csv.h"

#include <gtest/gtest.h>

#include <sstream>

namespace rocemu::dcqcn {
namespace {

TEST(DcqcnRateCsv, WritesHeaderAndOneRowPerSampleInGbps) {
  std::ostringstream os;
  RateCsvWriter w(os);
  w.write(RpSample{1500, 3, 12.5e9, 25e9, 0.5, 7});
  auto cfg = make_dcqcn_config(DcqcnParams{}, 25 * kBpsPerGbps);
  DcqcnRp rp(cfg);
  rp.on_cnp(0);
  w.write(sample_rp(rp, 0, 10));
  EXPECT_EQ(os.str(),
            "time_ns,qp,rate_gbps,target_gbps,alpha,cnps\n"
            "1500,3,12.500000,25.000000,0.500000,7\n"
            "10,0,12.500000,25.000000,1.000000,1\n");
  EXPECT_EQ(w.rows(), 2u);
}

}  // namespace
}  // namespace rocemu::dcqcn
