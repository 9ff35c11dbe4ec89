// fluid_fixed_point_test.cc — N DCQCN flows (paper profile) on one 25 Gbps bottleneck
// with RED-ECN (Kmin/Kmax/Pmax from the same profile) converge to the fluid model's fixed
// point (Zhu et al., SIGCOMM 2015, section 4): C/N each, full utilisation, bounded queue.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/dcqcn/bottleneck_sim.h"

namespace rocemu::dcqcn::test {
namespace {

class DcqcnFixedPoint : public ::testing::TestWithParam<uint32_t> {};

TEST_P(DcqcnFixedPoint, FlowsConvergeToFairShareWithFullLinkAndBoundedQueue) {
  const DcqcnProfile prof = load_dcqcn_profile("configs/dcqcn/paper.toml");
  ASSERT_TRUE(prof.ecn.has_value());
  BottleneckScenario s;
  s.flows = GetParam();
  s.ecn = *prof.ecn;
  s.cfg = make_dcqcn_config(prof.dcqcn, 25 * kBpsPerGbps);
  s.seed = 42 + s.flows;
  std::ofstream rate_f, queue_f;
  if (const char* dir = std::getenv("DCQCN_TRACE_DIR")) {
    const std::string base = std::string(dir) + "/fixed_point_n" + std::to_string(s.flows);
    rate_f.open(base + "_rates.csv");
    queue_f.open(base + "_queue.csv");
    s.rate_csv = &rate_f;
    s.queue_csv = &queue_f;
  }
  const BottleneckResult r = run_bottleneck(s);

  const double fair = 25e9 / s.flows;
  std::printf("N=%u util=%.4f jain=%.5f mean_q=%.0f B max_q=%lu B time_above_kmax=%.4f "
              "time_empty=%.4f marked=%lu cnps=%lu\n",
              s.flows, r.utilisation, r.jain, r.mean_queue_bytes,
              static_cast<unsigned long>(r.max_queue_bytes), r.frac_time_above_kmax,
              r.frac_time_empty, static_cast<unsigned long>(r.marked),
              static_cast<unsigned long>(r.cnps));
  for (uint32_t i = 0; i < s.flows; ++i) {
    std::printf("  flow %u: %.3f Gbps (%.3f of fair share)\n", i, r.flow_bps[i] / 1e9,
                r.flow_bps[i] / fair);
    EXPECT_NEAR(r.flow_bps[i] / fair, 1.0, 0.10) << "flow " << i;
  }
  EXPECT_GE(r.jain, 0.99);
  EXPECT_GE(r.utilisation, 0.95);
  // Queue bound, derived from the RED curve. At the fixed point the marking probability
  // p* is in (0, Pmax] (or the queue rests at the Kmax cliff when the ramp cannot supply
  // p*, as for N = 16 here), so q* = Kmin + (Kmax - Kmin) p*/Pmax is in (Kmin, Kmax]: the
  // time-averaged queue must lie there.
  EXPECT_GT(r.mean_queue_bytes, s.ecn.kmin_bytes);
  EXPECT_LE(r.mean_queue_bytes, s.ecn.kmax_bytes);
  // Above Kmax every frame is marked, so each flow's next frame triggers a CNP within the
  // CNP interval, which reaches the RP after the feedback delay D: all flows are cut within
  // tau = cnp_interval + D. Assuming each flow is at most one hyper-increase step (R_HAI)
  // above its share when the queue crosses Kmax, the overshoot is at most
  // N * R_HAI * tau / 8 bytes.
  const double tau_s = static_cast<double>(s.cfg.cnp_interval_ns + s.feedback_ns) / kNsPerSec;
  const double overshoot_bytes = s.flows * s.cfg.rate_hai_bps * tau_s / 8;
  EXPECT_LE(static_cast<double>(r.max_queue_bytes), s.ecn.kmax_bytes + overshoot_bytes);
}

INSTANTIATE_TEST_SUITE_P(Flows, DcqcnFixedPoint, ::testing::Values(2u, 4u, 8u, 16u),
                         [](const auto& info) { return "N" + std::to_string(info.param); });

}  // namespace
}  // namespace rocemu::dcqcn::test
