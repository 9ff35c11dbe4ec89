// window_csv_test.cc — the optional BDP window and the rate telemetry CSV.
#include <gtest/gtest.h>

#include <sstream>

#include "nic/dcqcn/rate_csv.h"
#include "nic/dcqcn/window.h"

namespace rocemu::dcqcn {
namespace {

TEST(DcqcnWindow, BdpIsRateTimesRtt) {
  EXPECT_EQ(BdpWindow::bdp_bytes(100 * kBpsPerGbps, 10'000), 125'000u);
  EXPECT_EQ(BdpWindow::bdp_bytes(1, 1), 1u);  // rounds up
  EXPECT_EQ(BdpWindow::bdp_bytes(25 * kBpsPerGbps, 0), 0u);
}

TEST(DcqcnWindow, LimitsBytesInFlightAndReopensOnAck) {
  BdpWindow w(3000);
  EXPECT_TRUE(w.may_send(1000));
  w.on_sent(1000);
  w.on_sent(1000);
  EXPECT_TRUE(w.may_send(1000));
  w.on_sent(1000);
  EXPECT_FALSE(w.may_send(1));
  w.on_acked(1000);
  EXPECT_TRUE(w.may_send(1000));
  EXPECT_FALSE(w.may_send(1001));
  w.on_acked(100'000);  // duplicate/over-ack saturates at 0
  EXPECT_EQ(w.inflight_bytes(), 0u);
}

TEST(DcqcnWindow, OneFrameLeavesAnEmptyWindowAndZeroLimitMeansNoWindow) {
  BdpWindow small(500);
  EXPECT_TRUE(small.may_send(4096));
  small.on_sent(4096);
  EXPECT_FALSE(small.may_send(1));
  BdpWindow none(0);
  none.on_sent(uint64_t{1} << 40);
  EXPECT_TRUE(none.may_send(4096));
}

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
