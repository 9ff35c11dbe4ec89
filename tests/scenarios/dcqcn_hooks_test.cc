// dcqcn_hooks_test.cc — the DcqcnPort -> CongestionHooks adapter (fabric/cc/dcqcn_hooks.h)
// against DCQCN's rules (Zhu et al., SIGCOMM 2015, section 3.1): the first CNP halves the
// QP's rate (alpha = 1: R_C (1 - alpha/2)), the NP answers at most one CE per flow per
// 50 us, QPs outside the slots are left alone and counted, a window is refused, and the
// hooks install on every host of a topology at that host's link rate.
#include "fabric/cc/dcqcn_hooks.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include "common/config.h"
#include "common/rng.h"
#include "fabric/eal.h"
#include "nic/roce_host.h"
#include "tests/scenarios/scenario_net.h"

namespace rocemu::fabric {
namespace {

rte_mempool* pool() {
  static rte_mempool* p = [] {
    EalOptions o;
    o.program = "rocemu-dcqcn-hooks-test";
    o.user_args = {"--log-level", "lib.eal:error"};
    eal_start(o);
    return rte_pktmbuf_pool_create("hooks_pool", 1023, 0, 0, RTE_PKTMBUF_HEADROOM + 2048,
                                   SOCKET_ID_ANY);
  }();
  return p;
}

struct Pair {
  Topology topo;
  std::unique_ptr<nic::RoceHost> h0, h1;
  /// Two hosts with 5 QPs each (slots 0..4); QPNs 0x11.. or, with random_qpns, keyed.
  explicit Pair(bool random_qpns = false) {
    nic::NicParams params;
    params.random_qpns = random_qpns;
    const uint32_t a = topo.add_node("h0", NodeKind::kHost);
    const uint32_t b = topo.add_node("h1", NodeKind::kHost);
    topo.add_link(a, b, 25 * kBpsPerGbps, kNsPerUs);
    h0 = std::make_unique<nic::RoceHost>(params, topo, a, pool(), 1);
    h1 = std::make_unique<nic::RoceHost>(params, topo, b, pool(), 2);
    for (nic::RoceHost* h : {h0.get(), h1.get()}) {
      nic::QpInitAttr qa;
      qa.pd = h->alloc_pd();
      qa.send_cq = qa.recv_cq = h->create_cq(64);
      for (int i = 0; i < 5; ++i) h->create_qp(qa);
    }
  }
  uint32_t q(uint32_t slot) const { return h0->qpn_of_slot(slot); }   // a QPN of h0
  uint32_t q1(uint32_t slot) const { return h1->qpn_of_slot(slot); }  // a QPN of h1
};

TEST(DcqcnHooks, FirstCnpHalvesTheQpRate) {
  Pair p;
  DcqcnHooks hooks(scenario::dcqcn_profile("paper"), 25 * kBpsPerGbps, *p.h0);
  EXPECT_DOUBLE_EQ(hooks.rate_bps(p.q(0)), 25e9);
  hooks.on_cnp(p.q(0), 1000);
  EXPECT_DOUBLE_EQ(hooks.rate_bps(p.q(0)), 12.5e9);
  EXPECT_DOUBLE_EQ(hooks.rate_bps(p.q(1)), 25e9);  // other QPs untouched
  EXPECT_EQ(hooks.port().rp(0).counters().cnps, 1u);
  // The rate increase timer (55 us) is armed and runs through the hooks' deadline.
  EXPECT_EQ(hooks.next_deadline(), 1000 + 55 * kNsPerUs);
  hooks.on_timer(hooks.next_deadline());
  EXPECT_DOUBLE_EQ(hooks.rate_bps(p.q(0)), (25e9 + 12.5e9) / 2);  // fast recovery
}

// The hooks keep the port's earliest RP timer at hand (the NIC asks after every call): over a
// seeded stream of CNPs, sent bytes, timers and resets on 5 QPs it is always the port's.
TEST(DcqcnHooks, TheDeadlineIsAlwaysThePortsEarliestTimer) {
  Pair p;
  DcqcnHooks hooks(scenario::dcqcn_profile("paper"), 25 * kBpsPerGbps, *p.h0);
  Rng r(7);
  TimeNs now = 0;
  int timers = 0;
  for (int i = 0; i < 4000; ++i) {
    now += static_cast<TimeNs>(r.below(3000));
    const auto qp = p.q(static_cast<uint32_t>(r.below(5)));
    switch (r.below(5)) {
      case 0: hooks.on_cnp(qp, now); break;
      case 1: hooks.on_data_sent(qp, 4096, now); break;
      case 2: hooks.reset_qp(qp); break;
      case 3: (void)hooks.on_ce_marked(qp, now); break;
      default:
        if (hooks.next_deadline() <= now) {
          hooks.on_timer(now);
          ++timers;
        }
    }
    ASSERT_EQ(hooks.next_deadline(), hooks.port().next_deadline()) << "step " << i;
  }
  EXPECT_GT(timers, 20) << "RP timers fired along the way";
}

TEST(DcqcnHooks, NpAnswersAtMostOneCePerFlowPerInterval) {
  Pair p;
  DcqcnHooks hooks(scenario::dcqcn_profile("paper"), 25 * kBpsPerGbps, *p.h1);
  EXPECT_TRUE(hooks.on_ce_marked(p.q1(0), 0));
  EXPECT_FALSE(hooks.on_ce_marked(p.q1(0), 49 * kNsPerUs));
  EXPECT_TRUE(hooks.on_ce_marked(p.q1(1), 49 * kNsPerUs));  // another flow
  EXPECT_TRUE(hooks.on_ce_marked(p.q1(0), 50 * kNsPerUs));
}

TEST(DcqcnHooks, QpsOutsideTheSlotsAreLeftAloneAndCounted) {
  Pair p;
  DcqcnHooks hooks(scenario::dcqcn_profile("paper"), 25 * kBpsPerGbps, *p.h0, 4);
  EXPECT_FALSE(hooks.on_ce_marked(p.q(4), 0));
  hooks.on_cnp(p.q(4), 0);
  hooks.on_cnp(1, 0);                  // below the first QPN
  hooks.on_cnp(p.q(4) + 0x1000, 0);    // no QP of this host
  EXPECT_EQ(hooks.unmanaged_events(), 4u);
  EXPECT_DOUBLE_EQ(hooks.rate_bps(p.q(4)), 25e9);
}

// The hooks learn QP numbers from the NIC: with random QPNs they follow the QP, not 0x11.
TEST(DcqcnHooks, FollowRandomQpns) {
  Pair p(/*random_qpns=*/true);
  ASSERT_NE(p.q(0), 0x11u);
  DcqcnHooks hooks(scenario::dcqcn_profile("paper"), 25 * kBpsPerGbps, *p.h0);
  hooks.on_cnp(p.q(2), 1000);
  EXPECT_DOUBLE_EQ(hooks.rate_bps(p.q(2)), 12.5e9);
  EXPECT_DOUBLE_EQ(hooks.rate_bps(p.q(0)), 25e9);
  hooks.on_cnp(0x13, 1000);  // slot 2's number without the key: not a QP of this host
  EXPECT_EQ(hooks.unmanaged_events(), 1u);
}

TEST(DcqcnHooks, WindowIsTheHostsInFlightCap) {
  Pair p;
  dcqcn::DcqcnParams params = scenario::dcqcn_profile("paper");
  params.window_kb = 64;
  DcqcnHooks hooks(params, 25 * kBpsPerGbps, *p.h0);
  EXPECT_EQ(hooks.config().window_bytes, 64u * 1024);
  // Checked through traffic in the NIC's window tests (tests/nic) and the incast scenario.
}

TEST(DcqcnHooks, InstallGivesEachHostItsLinkRate) {
  Topology t;
  const uint32_t s = t.add_node("s0", NodeKind::kSwitch);
  const uint32_t a = t.add_node("a", NodeKind::kHost), b = t.add_node("b", NodeKind::kHost);
  t.add_link(a, s, 10 * kBpsPerGbps, kNsPerUs);
  t.add_link(b, s, 40 * kBpsPerGbps, kNsPerUs);
  nic::RoceHost ha(nic::NicParams{}, t, a, pool(), 1), hb(nic::NicParams{}, t, b, pool(), 2);
  const auto hooks = install_dcqcn(scenario::dcqcn_profile("paper"), t, {nullptr, &ha, &hb});
  ASSERT_EQ(hooks.size(), 2u);
  EXPECT_EQ(hooks[0]->config().line_rate_bps, 10 * kBpsPerGbps);
  EXPECT_EQ(hooks[1]->config().line_rate_bps, 40 * kBpsPerGbps);
}

}  // namespace
}  // namespace rocemu::fabric
