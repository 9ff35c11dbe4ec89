// rdmacm_golden_test.cc — rdma_cm over RoCEv2 against Linux (golden capture 13: `ib_send_bw
// -R -T 3` between two rxe guests, rdma-core 44, kernel 6.1; data/SOURCES.md). Every MAD to
// QP1 in it: a UD SEND ONLY from QP1 to QP1 with Q_Key 0x80010000, a valid ICRC, a CM MAD
// that decodes, with the fields rdma_cm puts there, and re-encodes byte for byte. Then the
// state machine (cm_conn.h) configured as each guest was produces the guests' own MADs
// byte for byte, and walks both connections of the capture to their ends.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/wire.h"
#include "nic/cm_conn.h"
#include "nic/cm_mad.h"
#include "nic/opcode_table.h"
#include "nic/packet.h"
#include "tests/conformance/pcapng_reader.h"

namespace rocemu::test {
namespace {

using namespace nic::cm;

constexpr uint32_t kClientIp = 0x0a4d000c;             // 10.77.0.12: ib_send_bw -R (client)
constexpr uint32_t kServerIp = 0x0a4d000b;             // 10.77.0.11: ib_send_bw -R (server)
constexpr uint16_t kServerPort = 0x48b5;               // 18613
constexpr uint16_t kClientPorts[] = {0xa5a9, 0xbcbc};  // rdma_cm's source port per connection

struct GsiFrame {
  std::vector<uint8_t> frame;
  nic::RocePacket p;
  const uint8_t* mad() const { return frame.data() + p.payload_off; }
};

std::vector<GsiFrame> gsi_frames() {
  std::vector<GsiFrame> out;
  for (auto& f : read_pcapng("data/13_rdmacm_send_tos3_ce.pcapng")) {
    if (f.size() < 42 || f[12] != 0x08 || f[13] != 0x00 || f[23] != 17 ||
        wire::detail::get16(f.data() + 36) != wire::kRoceV2Port)
      continue;
    GsiFrame g;
    g.frame = f;
    if (nic::parse_roce(g.frame.data(), static_cast<uint32_t>(g.frame.size()), g.p) !=
        nic::RxDrop::kNone)
      continue;
    if (g.p.dqpn == kGsiQpn) out.push_back(std::move(g));
  }
  return out;
}

TEST(RdmaCmGolden, EveryMadIsAUdSendFromQp1ToQp1WithValidIcrc) {
  const auto frames = gsi_frames();
  ASSERT_EQ(frames.size(), 10u);
  for (const auto& g : frames) {
    EXPECT_EQ(g.p.opcode, nic::kUdSendOnly);
    EXPECT_EQ(g.p.qkey, kGsiQkey);
    EXPECT_EQ(g.p.src_qpn, kGsiQpn);
    EXPECT_EQ(g.p.pkey, 0xffff);
    EXPECT_TRUE(g.p.ack_req);  // rxe sets AckReq on QP1's sends (datagram.cc does too)
    EXPECT_EQ(g.p.payload_len, kMadBytes);
    EXPECT_TRUE(nic::icrc_ok(g.p));
    std::vector<uint8_t> out(g.frame.size() + 8);
    out.resize(nic::encode_roce(g.p, g.mad(), out.data()));
    EXPECT_EQ(out, g.frame);
  }
}

TEST(RdmaCmGolden, EveryMadDecodesAndReencodesByteForByte) {
  const std::vector<uint16_t> expected = {0x10, 0x13, 0x14, 0x10, 0x13,
                                          0x14, 0x15, 0x16, 0x15, 0x16};
  const auto frames = gsi_frames();
  ASSERT_EQ(frames.size(), expected.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    CmMad m;
    ASSERT_EQ(decode_cm_mad(frames[i].mad(), kMadBytes, m), MadError::kNone) << i;
    EXPECT_EQ(m.hdr.base_version, 1);
    EXPECT_EQ(m.hdr.mgmt_class, 0x07);
    EXPECT_EQ(m.hdr.class_version, 2);
    EXPECT_EQ(m.hdr.method, kMethodSend);
    EXPECT_EQ(m.hdr.attr_id, expected[i]) << i << " " << cm_attr_name(m.hdr.attr_id);
    EXPECT_EQ(m.hdr.tid >> 32, 2u);
    uint8_t out[kMadBytes];
    encode_cm_mad(m, out);
    EXPECT_EQ(std::memcmp(out, frames[i].mad(), kMadBytes), 0) << i;
  }
}

TEST(RdmaCmGolden, ReqCarriesWhatRdmaCmPutsThere) {
  const auto frames = gsi_frames();
  ASSERT_GE(frames.size(), 4u);
  for (int k : {0, 3}) {  // the two connections' REQs (the second with -T 3: traffic class 3)
    const uint16_t kClientPort = kClientPorts[k / 3];
    CmMad m;
    ASSERT_EQ(decode_cm_mad(frames[k].mad(), kMadBytes, m), MadError::kNone);
    const auto& r = std::get<CmReq>(m.body);
    EXPECT_EQ(frames[k].p.src_ip, kClientIp);
    EXPECT_EQ(r.service_id, rdma_cm_service_id(kServerPort));
    EXPECT_EQ(rdma_cm_port(r.service_id), kServerPort);
    EXPECT_EQ(r.local_ca_guid, 0x505400fffe770012ull);
    EXPECT_EQ(r.local_qpn, k == 0 ? 0x1du : 0x1eu);
    EXPECT_EQ(r.transport_service_type, 0);  // RC
    EXPECT_EQ(r.remote_cm_response_timeout, 20);
    EXPECT_EQ(r.local_cm_response_timeout, 20);
    EXPECT_EQ(r.retry_count, 7);
    EXPECT_EQ(r.rnr_retry_count, 7);
    EXPECT_EQ(r.max_cm_retries, 15);
    EXPECT_EQ(r.pkey, 0xffff);
    EXPECT_EQ(r.path_mtu, 3);  // IBV_MTU_1024
    EXPECT_EQ(r.primary.local_lid, 0xffff);
    EXPECT_EQ(r.primary.remote_lid, 0xffff);
    EXPECT_EQ(r.primary.local_gid, ipv4_gid(kClientIp));
    EXPECT_EQ(r.primary.remote_gid, ipv4_gid(kServerIp));
    EXPECT_EQ(r.primary.flow_label, rdma_cm_flow_label(kClientPort, kServerPort));
    EXPECT_EQ(r.primary.traffic_class, k == 0 ? 0 : 3);
    EXPECT_EQ(r.primary.hop_limit, 64);
    EXPECT_EQ(r.primary.local_ack_timeout, 19);
    CmaHeader h;
    ASSERT_TRUE(decode_cma_header(r.private_data.data(), h));
    EXPECT_EQ(h.ip_version, 4);
    EXPECT_EQ(h.src_port, kClientPort);
    EXPECT_EQ(h.src_ipv4(), kClientIp);
    EXPECT_EQ(h.dst_ipv4(), kServerIp);
    EXPECT_EQ(frames[k].p.tos >> 2, 0);  // the MAD's IP header carries the ECN bits only
  }
}

TEST(RdmaCmGolden, RepRtuDreqDrepFields) {
  const auto frames = gsi_frames();
  CmMad m;
  ASSERT_EQ(decode_cm_mad(frames[1].mad(), kMadBytes, m), MadError::kNone);
  const auto& rep = std::get<CmRep>(m.body);
  EXPECT_EQ(rep.local_comm_id, 0xc2fc62dbu);
  EXPECT_EQ(rep.remote_comm_id, 0xcdd384edu);
  EXPECT_EQ(rep.local_qpn, 0x1du);
  EXPECT_EQ(rep.starting_psn, 0x0ba244u);
  EXPECT_EQ(rep.target_ack_delay, 15);
  EXPECT_EQ(rep.failover_accepted, 0);
  EXPECT_EQ(rep.rnr_retry_count, 7);
  EXPECT_EQ(rep.local_ca_guid, 0x505400fffe770011ull);
  ASSERT_EQ(decode_cm_mad(frames[8].mad(), kMadBytes, m), MadError::kNone);
  const auto& dreq = std::get<CmDreq>(m.body);
  EXPECT_EQ(dreq.local_comm_id, 0xcdd384edu);
  EXPECT_EQ(dreq.remote_comm_id, 0xc2fc62dbu);
  EXPECT_EQ(dreq.remote_qpn, 0x1du);
}

/// The capture's connection k (0: the first, traffic class 0; 1: the second, -T 3): REQ,
/// REP, RTU at frames 3k..3k+2, DREQ/DREP at 8-2k, 9-2k.
struct Conn {
  int req, rep, rtu, dreq, drep;
  uint16_t client_port;
};
constexpr Conn kConns[] = {{0, 1, 2, 8, 9, kClientPorts[0]}, {3, 4, 5, 6, 7, kClientPorts[1]}};

CmMad decoded(const GsiFrame& g) {
  CmMad m;
  EXPECT_EQ(decode_cm_mad(g.mad(), kMadBytes, m), MadError::kNone);
  return m;
}

TEST(RdmaCmGolden, ActiveSideSendsTheClientsReqRtuAndDreqByteForByte) {
  const auto frames = gsi_frames();
  for (const Conn& k : kConns) {
    const auto req = std::get<CmReq>(decoded(frames[k.req]).body);
    CmConfig cfg;
    cfg.ipv4 = kClientIp;
    cfg.ca_guid = req.local_ca_guid;
    cfg.tid_hi = 2;
    cfg.first_comm_id = req.local_comm_id;
    CmConnections cm(cfg);
    CmLocalQp qp;
    qp.qpn = req.local_qpn;
    qp.psn = req.starting_psn;
    qp.responder_resources = req.responder_resources;
    qp.initiator_depth = req.initiator_depth;
    qp.traffic_class = req.primary.traffic_class;
    const std::vector<uint8_t> user(req.private_data.begin() + kCmaHeaderBytes,
                                    req.private_data.end());
    const uint32_t id = cm.connect(kServerIp, kServerPort, k.client_port, qp, user, 0);
    CmSend s;
    ASSERT_TRUE(cm.pop_send(s));
    EXPECT_EQ(s.dst_ipv4, kServerIp);
    EXPECT_EQ(std::memcmp(s.mad.data(), frames[k.req].mad(), kMadBytes), 0) << "REQ";
    EXPECT_EQ(cm.on_mad(kServerIp, frames[k.rep].mad(), kMadBytes, kNsPerMs), CmRx::kAccepted);
    CmEvent e;
    ASSERT_TRUE(cm.pop_event(e));
    EXPECT_EQ(e.kind, CmEventKind::kEstablished);
    EXPECT_EQ(e.remote_qpn, std::get<CmRep>(decoded(frames[k.rep]).body).local_qpn);
    ASSERT_TRUE(cm.pop_send(s));
    EXPECT_EQ(std::memcmp(s.mad.data(), frames[k.rtu].mad(), kMadBytes), 0) << "RTU";
    ASSERT_TRUE(cm.disconnect(id, 2 * kNsPerMs));
    ASSERT_TRUE(cm.pop_send(s));
    EXPECT_EQ(std::memcmp(s.mad.data(), frames[k.dreq].mad(), kMadBytes), 0) << "DREQ";
    EXPECT_EQ(cm.on_mad(kServerIp, frames[k.drep].mad(), kMadBytes, 3 * kNsPerMs), CmRx::kAccepted);
    ASSERT_TRUE(cm.pop_event(e));
    EXPECT_EQ(e.kind, CmEventKind::kDisconnected);
    EXPECT_EQ(cm.state(id), CmState::kTimeWait);
    EXPECT_FALSE(cm.pop_send(s));
  }
}

TEST(RdmaCmGolden, PassiveSideSendsTheServersRepAndDrepByteForByte) {
  const auto frames = gsi_frames();
  for (const Conn& k : kConns) {
    const auto rep = std::get<CmRep>(decoded(frames[k.rep]).body);
    CmConfig cfg;
    cfg.ipv4 = kServerIp;
    cfg.ca_guid = rep.local_ca_guid;
    cfg.tid_hi = 2;
    cfg.first_comm_id = rep.local_comm_id;
    CmConnections cm(cfg);
    cm.listen(kServerPort);
    ASSERT_EQ(cm.on_mad(kClientIp, frames[k.req].mad(), kMadBytes, 0), CmRx::kAccepted);
    CmEvent e;
    ASSERT_TRUE(cm.pop_event(e));
    ASSERT_EQ(e.kind, CmEventKind::kConnectRequest);
    const auto req = std::get<CmReq>(decoded(frames[k.req]).body);
    EXPECT_EQ(e.peer_ipv4, kClientIp);
    EXPECT_EQ(e.peer_port, k.client_port);
    EXPECT_EQ(e.local_port, kServerPort);
    EXPECT_EQ(e.remote_qpn, req.local_qpn);
    EXPECT_EQ(e.remote_psn, req.starting_psn);
    EXPECT_EQ(e.path_mtu, 3);
    EXPECT_EQ(e.traffic_class, req.primary.traffic_class);
    EXPECT_EQ(e.private_data.size(), kReqUserPrivateBytes);
    CmLocalQp qp;
    qp.qpn = rep.local_qpn;
    qp.psn = rep.starting_psn;
    qp.responder_resources = rep.responder_resources;
    qp.initiator_depth = rep.initiator_depth;
    ASSERT_TRUE(cm.accept(e.conn, qp, {}, kNsPerMs));
    CmSend s;
    ASSERT_TRUE(cm.pop_send(s));
    EXPECT_EQ(s.dst_ipv4, kClientIp);
    EXPECT_EQ(s.traffic_class, req.primary.traffic_class);  // the path's, as the capture's
    EXPECT_EQ(std::memcmp(s.mad.data(), frames[k.rep].mad(), kMadBytes), 0) << "REP";
    EXPECT_EQ(cm.on_mad(kClientIp, frames[k.rtu].mad(), kMadBytes, 2 * kNsPerMs), CmRx::kAccepted);
    ASSERT_TRUE(cm.pop_event(e));
    EXPECT_EQ(e.kind, CmEventKind::kEstablished);
    EXPECT_EQ(cm.on_mad(kClientIp, frames[k.dreq].mad(), kMadBytes, 3 * kNsPerMs), CmRx::kAccepted);
    ASSERT_TRUE(cm.pop_event(e));
    EXPECT_EQ(e.kind, CmEventKind::kDisconnected);
    ASSERT_TRUE(cm.pop_send(s));
    EXPECT_EQ(std::memcmp(s.mad.data(), frames[k.drep].mad(), kMadBytes), 0) << "DREP";
    // The same DREQ again (its DREP lost): the same DREP again, counted as a duplicate.
    EXPECT_EQ(cm.on_mad(kClientIp, frames[k.dreq].mad(), kMadBytes, 4 * kNsPerMs),
              CmRx::kDuplicate);
    ASSERT_TRUE(cm.pop_send(s));
    EXPECT_EQ(std::memcmp(s.mad.data(), frames[k.drep].mad(), kMadBytes), 0) << "DREP again";
  }
}

}  // namespace
}  // namespace rocemu::test
