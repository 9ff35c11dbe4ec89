// rdma_cm_sim_test.cc — rdma_cm between two RoceHosts back to back in virtual time
// (nic/cm_agent.h): QP1 carries the CM's MADs as UD SENDs, a REQ/REP/RTU connects an RC QP
// on each side that then carries SENDs both ways with data verified, DREQ/DREP tears it
// down (QPs to ERR); a lossy wire still connects (resends); no listener is refused at once.
#include <gtest/gtest.h>

#include <memory>

#include "nic/cm_agent.h"
#include "tests/nic/host_pair.h"

namespace rocemu::test {
namespace {

using namespace nic::cm;

/// A RoceHost with its CM agent as one Node, so the wire's loop runs the agent's timers.
struct CmNode final : Node {
  nic::RoceHost& host;
  std::unique_ptr<nic::CmAgent> cm;
  TimeNs last_now = 0;
  explicit CmNode(nic::RoceHost& h) : host(h) {}
  uint16_t num_ports() const noexcept override { return 1; }
  void rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept override {
    host.rx(port, pkts, n, now);
    last_now = now;
    cm->poll(now);
  }
  rte_mbuf* tx(uint16_t port, TimeNs now) noexcept override {
    last_now = now;
    cm->poll(now);
    return host.tx(port, now);
  }
  TimeNs next_deadline() const noexcept override {
    // An event waiting for the test stops the clock (the wire's loop checks the test's
    // condition at the next step).
    if (cm->has_events()) return last_now;
    return std::min(host.next_deadline(), cm->next_deadline());
  }
  void on_timer(TimeNs now) noexcept override {
    last_now = now;
    if (host.next_deadline() <= now) host.on_timer(now);
    cm->poll(now);
  }
};

struct CmPair {
  Topology topo;
  std::unique_ptr<nic::RoceHost> host[2];
  std::unique_ptr<CmNode> node[2];
  uint32_t pd[2]{}, cq[2]{};
  std::unique_ptr<BackToBack> wire;
  static constexpr uint16_t kPort = 7174;

  CmPair() {
    topo.add_node("h0", NodeKind::kHost);
    topo.add_node("h1", NodeKind::kHost);
    topo.add_link(0, 1, 100 * kBpsPerGbps, 1000);
    rte_mempool* pool = test_mempool();
    for (int i = 0; i < 2; ++i) {
      nic::NicParams p;
      p.random_qpns = true;
      host[i] = std::make_unique<nic::RoceHost>(p, topo, i, pool, 11 + i);
      pd[i] = host[i]->alloc_pd();
      cq[i] = host[i]->create_cq(256);
      node[i] = std::make_unique<CmNode>(*host[i]);
      CmConfig c;
      c.ipv4 = host[i]->ipv4();
      c.first_comm_id = 0x1000 + 0x100 * i;
      c.cm_response_timeout = 14;  // 67 ms
      c.packet_life_time = 12;
      node[i]->cm = std::make_unique<nic::CmAgent>(*host[i], pd[i], c);
    }
    wire = std::make_unique<BackToBack>(*node[0], *node[1], 100 * kBpsPerGbps, 1000, 3, pool);
  }
  uint32_t rc_qp(int i) {
    nic::QpInitAttr a;
    a.pd = pd[i];
    a.send_cq = a.recv_cq = cq[i];
    return host[i]->create_qp(a);
  }
  /// Runs until side i has an event (returned through e) or `limit_ns`.
  bool wait_event(int i, CmEvent& e, TimeNs limit_ns) {
    return wire->run_until([&] { return node[i]->cm->pop_event(e); }, limit_ns);
  }
};

void send_and_check(CmPair& w, int from, uint32_t qfrom, uint32_t qto, uint64_t seed) {
  const int to = 1 - from;
  auto src = pattern(3000, seed);
  std::vector<uint8_t> dst(3000, 0);
  const auto smr = w.host[from]->reg_mr(w.pd[from], src.data(), src.size(), 0);
  const auto dmr = w.host[to]->reg_mr(w.pd[to], dst.data(), dst.size(), IBV_ACCESS_LOCAL_WRITE);
  ibv_sge rs{dmr.addr, 3000, dmr.lkey};
  ibv_recv_wr rw{};
  rw.sg_list = &rs;
  rw.num_sge = 1;
  ASSERT_EQ(w.host[to]->post_recv(qto, &rw, nullptr), 0);
  ibv_sge ss{smr.addr, 3000, smr.lkey};
  ibv_send_wr sw = make_wr(5, IBV_WR_SEND, &ss, 1);
  ASSERT_EQ(w.host[from]->post_send(qfrom, &sw, nullptr), 0);
  int done = 0;
  ASSERT_TRUE(w.wire->run_until(
      [&] {
        ibv_wc wc[4];
        for (int s = 0; s < 2; ++s) {
          const int n = w.host[s]->poll_cq(w.cq[s], 4, wc);
          for (int k = 0; k < n; ++k) {
            EXPECT_EQ(wc[k].status, IBV_WC_SUCCESS);
            ++done;
          }
        }
        return done == 2;
      },
      10 * kNsPerMs));
  EXPECT_EQ(src, dst);
}

void connect_send_disconnect(CmPair& w, TimeNs limit_ns) {
  w.node[1]->cm->listen(CmPair::kPort);
  const uint32_t qa = w.rc_qp(0), qb = w.rc_qp(1);
  nic::RdmaConnParams p;
  p.private_data = {0xab, 0xcd};
  const uint32_t conn = w.node[0]->cm->connect(qa, w.host[1]->ipv4(), CmPair::kPort, p, 0);
  CmEvent e;
  ASSERT_TRUE(w.wait_event(1, e, limit_ns));
  ASSERT_EQ(e.kind, CmEventKind::kConnectRequest);
  EXPECT_EQ(e.remote_qpn, qa);
  EXPECT_EQ(e.peer_ipv4, w.host[0]->ipv4());
  EXPECT_EQ(e.private_data[0], 0xab);
  nic::RdmaConnParams pb;
  pb.responder_resources = 4;
  ASSERT_TRUE(w.node[1]->cm->accept(e, qb, pb, w.wire->now()));
  EXPECT_EQ(w.host[1]->qp_state(qb), IBV_QPS_RTS);
  CmEvent ea;
  ASSERT_TRUE(w.wait_event(0, ea, limit_ns));
  ASSERT_EQ(ea.kind, CmEventKind::kEstablished);
  EXPECT_EQ(ea.conn, conn);
  EXPECT_EQ(ea.remote_qpn, qb);
  EXPECT_EQ(ea.remote_responder_resources, 4);
  EXPECT_EQ(w.host[0]->qp_state(qa), IBV_QPS_RTS);
  EXPECT_EQ(w.node[0]->cm->qpn_of(conn), qa);
  CmEvent eb;
  ASSERT_TRUE(w.wait_event(1, eb, limit_ns));
  EXPECT_EQ(eb.kind, CmEventKind::kEstablished);
  send_and_check(w, 0, qa, qb, 1);
  send_and_check(w, 1, qb, qa, 2);
  ASSERT_TRUE(w.node[1]->cm->disconnect(eb.conn, w.wire->now()));  // the passive side
  ASSERT_TRUE(w.wait_event(0, ea, limit_ns));
  EXPECT_EQ(ea.kind, CmEventKind::kDisconnected);
  ASSERT_TRUE(w.wait_event(1, eb, limit_ns));
  EXPECT_EQ(eb.kind, CmEventKind::kDisconnected);
  EXPECT_EQ(w.host[0]->qp_state(qa), IBV_QPS_ERR);
  EXPECT_EQ(w.host[1]->qp_state(qb), IBV_QPS_ERR);
}

TEST(RdmaCmSim, ConnectSendBothWaysDisconnect) {
  CmPair w;
  connect_send_disconnect(w, 5 * kNsPerMs);
  // Exactly REQ, REP, RTU, DREQ, DREP: nothing resent on a clean wire.
  EXPECT_EQ(w.node[0]->cm->connections().counters().sent, 3u);  // REQ, RTU, DREP
  EXPECT_EQ(w.node[1]->cm->connections().counters().sent, 2u);  // REP, DREQ
  EXPECT_EQ(w.node[0]->cm->connections().counters().received, 2u);
  EXPECT_EQ(w.node[0]->cm->connections().counters().resent, 0u);
  EXPECT_EQ(w.node[1]->cm->connections().counters().resent, 0u);
  EXPECT_EQ(w.host[0]->counters().drops_total(), 0u);
  EXPECT_EQ(w.host[1]->counters().drops_total(), 0u);
}

TEST(RdmaCmSim, LossyWireStillConnectsByResending) {
  CmPair w;
  int mads = 0;
  // Every third MAD on the wire is lost (either direction): the CM resends until through.
  w.wire->set_filter([&](int, const uint8_t* f, uint32_t len) {
    nic::RocePacket p;
    std::vector<uint8_t> c(f, f + len);
    if (nic::parse_roce(c.data(), len, p) != nic::RxDrop::kNone || p.dqpn != kGsiQpn) return false;
    return mads++ % 3 == 0;  // every third MAD lost
  });
  connect_send_disconnect(w, 3 * kNsPerSec);
  EXPECT_GT(w.node[0]->cm->connections().counters().resent +
                w.node[1]->cm->connections().counters().resent,
            0u);
}

TEST(RdmaCmSim, TrafficClassOfTheReqMarksBothSidesPackets) {
  // perftest -T: the active side's RdmaConnParams::traffic_class rides in the REQ's primary
  // path; the passive side takes it from there, so the data QPs' packets carry its DSCP both
  // ways (the ECN bits stay the NIC's; ACKs keep the control DSCP), and every MAD (REQ, REP,
  // RTU) goes with it too.
  CmPair w;
  constexpr uint8_t kTos = 46 << 2;  // DSCP 46 (EF), the hosts' default data DSCP being 26
  int data[2] = {0, 0}, wrong[2] = {0, 0};
  w.wire->set_inspector([&](int from, const uint8_t* f, uint32_t len) {
    nic::RocePacket p;
    std::vector<uint8_t> c(f, f + len);
    if (nic::parse_roce(c.data(), len, p) != nic::RxDrop::kNone) return;  // ARP
    if (p.opcode == wire::kRcAcknowledge) return;  // ACKs keep the control DSCP (48)
    ++data[from];
    if ((p.tos >> 2) != (kTos >> 2)) ++wrong[from];
  });
  w.node[1]->cm->listen(CmPair::kPort);
  const uint32_t qa = w.rc_qp(0), qb = w.rc_qp(1);
  nic::RdmaConnParams p;
  p.traffic_class = kTos;
  w.node[0]->cm->connect(qa, w.host[1]->ipv4(), CmPair::kPort, p, 0);
  CmEvent e;
  ASSERT_TRUE(w.wait_event(1, e, 5 * kNsPerMs));
  ASSERT_EQ(e.kind, CmEventKind::kConnectRequest);
  EXPECT_EQ(e.traffic_class, kTos);
  ASSERT_TRUE(w.node[1]->cm->accept(e, qb, {}, w.wire->now()));  // no class of its own
  CmEvent ea, eb;
  ASSERT_TRUE(w.wait_event(0, ea, 5 * kNsPerMs));
  ASSERT_EQ(ea.kind, CmEventKind::kEstablished);
  ASSERT_TRUE(w.wait_event(1, eb, 5 * kNsPerMs));
  ASSERT_EQ(eb.kind, CmEventKind::kEstablished);
  send_and_check(w, 0, qa, qb, 3);
  send_and_check(w, 1, qb, qa, 4);
  EXPECT_GE(data[0], 3);  // REQ, RTU, a SEND
  EXPECT_GE(data[1], 2);  // REP, a SEND
  EXPECT_EQ(wrong[0], 0);
  EXPECT_EQ(wrong[1], 0);
}

TEST(RdmaCmSim, NoListenerIsRefusedWithinARoundTrip) {
  CmPair w;
  const uint32_t qa = w.rc_qp(0);
  w.node[0]->cm->connect(qa, w.host[1]->ipv4(), 9999, {}, 0);
  CmEvent e;
  ASSERT_TRUE(w.wait_event(0, e, 100 * kNsPerUs));
  EXPECT_EQ(e.kind, CmEventKind::kRejected);
  EXPECT_EQ(e.reject_reason, kRejInvalidServiceId);
  EXPECT_EQ(w.host[0]->qp_state(qa), IBV_QPS_RESET);  // never connected: left as it was
}

}  // namespace
}  // namespace rocemu::test
