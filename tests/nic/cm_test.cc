// cm_test.cc — the CM MAD codec and connection state machine (nic/cm_mad.h, nic/cm_conn.h)
// against IBTA Vol. 1 ch. 12: field positions, round trips, and two state machines talking
// through a lossy in-memory wire in virtual time: connect, refuse, duplicates answered
// idempotently, resends after the CM response time, MRA, time-outs, disconnect both ways,
// malformed MADs counted and dropped.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "common/rng.h"
#include "nic/cm_conn.h"
#include "nic/cm_mad.h"

namespace rocemu::test {
namespace {

using namespace nic::cm;

constexpr uint32_t kIpA = 0x0a000001, kIpB = 0x0a000002;
constexpr uint16_t kPort = 7174;  // rping's default

TEST(CmMad, ReqFieldsSitWhereTheSpecPutsThem) {
  CmMad m;
  CmReq r;
  r.local_comm_id = 0x11223344;
  r.service_id = rdma_cm_service_id(kPort);
  r.local_qpn = 0xabcdef;
  r.responder_resources = 0x12;
  r.starting_psn = 0x654321;
  r.local_cm_response_timeout = 20;
  r.retry_count = 7;
  r.remote_cm_response_timeout = 20;
  r.path_mtu = 3;
  r.rnr_retry_count = 5;
  r.max_cm_retries = 15;
  r.primary.flow_label = 0xfffff;
  r.primary.local_ack_timeout = 19;
  m.body = r;
  uint8_t out[kMadBytes];
  encode_cm_mad(m, out);
  const uint8_t* d = out + kMadHeaderBytes;
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 0x07);
  EXPECT_EQ(out[2], 2);
  EXPECT_EQ(out[3], 0x03);
  EXPECT_EQ(out[16], 0x00);
  EXPECT_EQ(out[17], 0x10);  // REQ
  EXPECT_EQ(d[0], 0x11);
  EXPECT_EQ(d[3], 0x44);
  EXPECT_EQ(d[12], 0x01);  // service ID 0x0000000001061c06
  EXPECT_EQ(d[13], 0x06);
  EXPECT_EQ(d[14], kPort >> 8);
  EXPECT_EQ(d[15], kPort & 0xff);
  EXPECT_EQ(d[32], 0xab);
  EXPECT_EQ(d[34], 0xef);
  EXPECT_EQ(d[35], 0x12);
  EXPECT_EQ(d[43], 20 << 3);  // remote CM response timeout, RC, no EE flow control
  EXPECT_EQ(d[44], 0x65);
  EXPECT_EQ(d[47], (20 << 3) | 7);  // local CM response timeout | retry count
  EXPECT_EQ(d[50], (3 << 4) | 5);   // path MTU | RDC 0 | RNR retry count
  EXPECT_EQ(d[51], 15 << 4);        // max CM retries
  EXPECT_EQ(d[88], 0xff);           // flow label: 20 bits from the MSB
  EXPECT_EQ(d[90], 0xf0);
  EXPECT_EQ(d[95], 19 << 3);  // local ACK timeout
}

template <typename T>
void expect_round_trip(const T& body, uint64_t seed) {
  CmMad m;
  m.hdr.tid = seed * 0x9e3779b97f4a7c15ull;
  m.hdr.attr_mod = static_cast<uint32_t>(seed);
  m.body = body;
  uint8_t a[kMadBytes], b[kMadBytes];
  encode_cm_mad(m, a);
  CmMad back;
  ASSERT_EQ(decode_cm_mad(a, kMadBytes, back), MadError::kNone);
  EXPECT_EQ(back.hdr.tid, m.hdr.tid);
  EXPECT_EQ(back.hdr.attr_id, cm_attr_of(m.body));
  encode_cm_mad(back, b);
  EXPECT_EQ(std::memcmp(a, b, kMadBytes), 0);
}

TEST(CmMad, EveryMessageRoundTripsWithRandomFields) {
  Rng rng(5);
  auto fill = [&](auto& arr) {
    for (auto& x : arr) x = static_cast<uint8_t>(rng.next());
  };
  for (uint64_t i = 1; i <= 50; ++i) {
    CmReq r;
    r.local_comm_id = static_cast<uint32_t>(rng.next());
    r.vendor_id = rng.next() & 0xffffff;
    r.service_id = rng.next();
    r.local_qpn = rng.next() & 0xffffff;
    r.starting_psn = rng.next() & 0xffffff;
    r.retry_count = rng.next() & 7;
    r.transport_service_type = rng.next() & 3;
    r.end_to_end_flow_control = rng.next() & 1;
    r.srq = rng.next() & 1;
    r.extended_transport_type = rng.next() & 7;
    r.primary.flow_label = rng.next() & 0xfffff;
    r.primary.packet_rate = rng.next() & 63;
    r.primary.sl = rng.next() & 15;
    r.primary.subnet_local = rng.next() & 1;
    r.alternate.local_ack_timeout = rng.next() & 31;
    r.sap_supported = rng.next() & 1;
    fill(r.primary.local_gid);
    fill(r.private_data);
    expect_round_trip(r, i);
    CmRep p;
    p.local_qpn = rng.next() & 0xffffff;
    p.vendor_id = rng.next() & 0xffffff;
    p.target_ack_delay = rng.next() & 31;
    p.failover_accepted = rng.next() & 3;
    p.end_to_end_flow_control = rng.next() & 1;
    p.rnr_retry_count = rng.next() & 7;
    p.srq = rng.next() & 1;
    p.local_ca_guid = rng.next();
    fill(p.private_data);
    expect_round_trip(p, i);
    CmRej j;
    j.message_rejected = rng.next() & 3;
    j.reject_info_length = rng.next() & 127;
    j.reason = static_cast<uint16_t>(rng.next());
    fill(j.ari);
    expect_round_trip(j, i);
    CmMra a;
    a.message_mraed = rng.next() & 3;
    a.service_timeout = rng.next() & 31;
    expect_round_trip(a, i);
    CmDreq q;
    q.remote_qpn = rng.next() & 0xffffff;
    fill(q.private_data);
    expect_round_trip(q, i);
    expect_round_trip(CmRtu{}, i);
    expect_round_trip(CmDrep{}, i);
  }
}

TEST(CmMad, MalformedMadsAreRefusedWithTheReason) {
  uint8_t mad[kMadBytes] = {};
  CmMad m;
  m.body = CmRtu{};
  encode_cm_mad(m, mad);
  CmMad out;
  EXPECT_EQ(decode_cm_mad(mad, kMadBytes - 1, out), MadError::kTruncated);
  auto with = [&](int at, uint8_t v) {
    uint8_t c[kMadBytes];
    std::memcpy(c, mad, kMadBytes);
    c[at] = v;
    return decode_cm_mad(c, kMadBytes, out);
  };
  EXPECT_EQ(with(0, 2), MadError::kBaseVersion);
  EXPECT_EQ(with(1, 0x04), MadError::kNotCm);  // a performance-management MAD
  EXPECT_EQ(with(2, 1), MadError::kClassVersion);
  EXPECT_EQ(with(3, 0x01), MadError::kMethod);      // Get
  EXPECT_EQ(with(17, 0x19), MadError::kAttribute);  // LAP
  EXPECT_EQ(with(17, 0x01), MadError::kAttribute);  // ClassPortInfo
}

TEST(CmMad, RdmaCmConventions) {
  EXPECT_EQ(rdma_cm_service_id(18515), 0x0000000001064853ull);
  EXPECT_EQ(rdma_cm_port(0x0000000001064853ull), 18515);
  EXPECT_EQ(rdma_cm_port(0x0000000002064853ull), -1);  // RDMA_PS_UDP: not RC
  const CmaHeader h = make_cma_header(kIpA, 4000, kIpB);
  uint8_t pd[92] = {};
  encode_cma_header(h, pd);
  EXPECT_EQ(pd[0], 0x00);
  EXPECT_EQ(pd[1], 0x40);
  EXPECT_EQ(pd[2], 4000 >> 8);
  EXPECT_EQ(pd[19], 0x01);  // source IPv4 in the last 4 of 16 bytes
  EXPECT_EQ(pd[35], 0x02);
  CmaHeader back;
  ASSERT_TRUE(decode_cma_header(pd, back));
  EXPECT_EQ(back.src_ipv4(), kIpA);
  EXPECT_EQ(back.dst_ipv4(), kIpB);
  pd[0] = 1;
  EXPECT_FALSE(decode_cma_header(pd, back));
  uint32_t ip = 0;
  EXPECT_TRUE(gid_ipv4(ipv4_gid(kIpB), ip));
  EXPECT_EQ(ip, kIpB);
  Gid g{};
  g[0] = 0xfe;
  EXPECT_FALSE(gid_ipv4(g, ip));
  EXPECT_EQ(cm_timeout_ns(20), 4096ll << 20);
}

/// Two state machines A (active) and B (passive, listening on kPort) and the MADs between
/// them; `drop` decides per MAD (in send order) whether the wire loses it.
struct Wire {
  CmConnections a, b;
  TimeNs now = 0;
  std::function<bool(const CmSend&, bool from_a)> drop = [](const CmSend&, bool) { return false; };
  std::vector<CmEvent> ev_a, ev_b;
  std::vector<uint16_t> sent_a, sent_b;  // attribute IDs, in order
  std::vector<CmRx> rx_a, rx_b;

  static CmConfig cfg(uint32_t ip, uint32_t first) {
    CmConfig c;
    c.ipv4 = ip;
    c.first_comm_id = first;
    c.cm_response_timeout = 12;  // 16.8 ms: short resends for the tests
    c.packet_life_time = 10;
    c.max_cm_retries = 3;
    c.timewait_ns = 100 * kNsPerMs;
    return c;
  }
  Wire() : a(cfg(kIpA, 0x100)), b(cfg(kIpB, 0x900)) { b.listen(kPort); }

  static uint16_t attr(const CmSend& s) {
    return static_cast<uint16_t>(s.mad[16] << 8 | s.mad[17]);
  }
  /// Delivers everything queued (repeatedly), then collects events.
  void pump() {
    for (bool moved = true; moved;) {
      moved = false;
      CmSend s;
      while (a.pop_send(s)) {
        moved = true;
        sent_a.push_back(attr(s));
        if (!drop(s, true)) rx_b.push_back(b.on_mad(kIpA, s.mad.data(), kMadBytes, now));
      }
      while (b.pop_send(s)) {
        moved = true;
        sent_b.push_back(attr(s));
        if (!drop(s, false)) rx_a.push_back(a.on_mad(kIpB, s.mad.data(), kMadBytes, now));
      }
      CmEvent e;
      while (a.pop_event(e)) ev_a.push_back(e);
      while (b.pop_event(e)) {
        if (e.kind == CmEventKind::kConnectRequest && auto_accept) {
          CmLocalQp q;
          q.qpn = 0x222;
          q.psn = 0x3333;
          q.responder_resources = 4;
          q.initiator_depth = 2;
          EXPECT_TRUE(b.accept(e.conn, q, {9, 8, 7}, now));
          moved = true;
        }
        ev_b.push_back(e);
      }
    }
  }
  /// Advances virtual time to `t`, firing timers at their deadlines on the way.
  void run_until(TimeNs t) {
    pump();
    for (;;) {
      const TimeNs d = std::min(a.next_deadline(), b.next_deadline());
      if (d > t) break;
      now = std::max(now, d);
      a.on_timer(now);
      b.on_timer(now);
      pump();
    }
    now = t;
  }
  uint32_t connect() {
    CmLocalQp q;
    q.qpn = 0x111;
    q.psn = 0x4444;
    q.responder_resources = 3;
    q.initiator_depth = 1;
    return a.connect(kIpB, kPort, 40000, q, {1, 2, 3}, now);
  }
  bool auto_accept = true;
};

size_t count(const std::vector<uint16_t>& v, CmAttr a) {
  return static_cast<size_t>(std::count(v.begin(), v.end(), static_cast<uint16_t>(a)));
}

TEST(CmConnections, ConnectAcceptEstablishCarriesBothQps) {
  Wire w;
  const uint32_t id = w.connect();
  w.pump();
  ASSERT_EQ(w.ev_b.size(), 2u);
  EXPECT_EQ(w.ev_b[0].kind, CmEventKind::kConnectRequest);
  EXPECT_EQ(w.ev_b[0].remote_qpn, 0x111u);
  EXPECT_EQ(w.ev_b[0].remote_psn, 0x4444u);
  EXPECT_EQ(w.ev_b[0].remote_responder_resources, 3);
  EXPECT_EQ(w.ev_b[0].remote_initiator_depth, 1);
  EXPECT_EQ(w.ev_b[0].peer_port, 40000);
  EXPECT_EQ(w.ev_b[0].local_port, kPort);
  EXPECT_EQ(w.ev_b[0].private_data[0], 1);
  EXPECT_EQ(w.ev_b[0].private_data[2], 3);
  EXPECT_EQ(w.ev_b[1].kind, CmEventKind::kEstablished);
  ASSERT_EQ(w.ev_a.size(), 1u);
  EXPECT_EQ(w.ev_a[0].kind, CmEventKind::kEstablished);
  EXPECT_EQ(w.ev_a[0].conn, id);
  EXPECT_EQ(w.ev_a[0].remote_qpn, 0x222u);
  EXPECT_EQ(w.ev_a[0].remote_psn, 0x3333u);
  EXPECT_EQ(w.ev_a[0].remote_responder_resources, 4);
  EXPECT_EQ(w.ev_a[0].remote_initiator_depth, 2);
  EXPECT_EQ(w.ev_a[0].private_data[0], 9);
  EXPECT_EQ(w.a.state(id), CmState::kEstablished);
  EXPECT_EQ(w.b.state(w.ev_b[0].conn), CmState::kEstablished);
  EXPECT_EQ(w.sent_a, (std::vector<uint16_t>{0x10, 0x14}));
  EXPECT_EQ(w.sent_b, (std::vector<uint16_t>{0x13}));
  // Nothing armed once established: no resend ever.
  EXPECT_EQ(w.a.next_deadline(), kNever);
  EXPECT_EQ(w.b.next_deadline(), kNever);
}

TEST(CmConnections, NoListenerIsRefusedAtOnceWithInvalidServiceId) {
  Wire w;
  CmLocalQp q;
  const uint32_t id = w.a.connect(kIpB, kPort + 1, 40000, q, {}, 0);
  w.pump();
  ASSERT_EQ(w.ev_a.size(), 1u);
  EXPECT_EQ(w.ev_a[0].kind, CmEventKind::kRejected);
  EXPECT_EQ(w.ev_a[0].reject_reason, kRejInvalidServiceId);
  EXPECT_EQ(w.a.state(id), CmState::kClosed);
  EXPECT_EQ(w.b.counters().no_listener, 1u);
  EXPECT_TRUE(w.ev_b.empty());
  // No resend of the refused REQ; the record goes after time-wait.
  w.run_until(kNsPerSec);
  EXPECT_EQ(count(w.sent_a, CmAttr::kReq), 1u);
  EXPECT_EQ(w.a.state(id), CmState::kIdle);
}

TEST(CmConnections, ApplicationRejectReachesThePeer) {
  Wire w;
  w.auto_accept = false;
  const uint32_t id = w.connect();
  w.pump();
  ASSERT_EQ(w.ev_b.size(), 1u);
  EXPECT_TRUE(w.b.reject(w.ev_b[0].conn, kRejConsumerDefined, w.now));
  EXPECT_FALSE(w.b.accept(w.ev_b[0].conn, {}, {}, w.now));  // answered already
  w.pump();
  ASSERT_EQ(w.ev_a.size(), 1u);
  EXPECT_EQ(w.ev_a[0].kind, CmEventKind::kRejected);
  EXPECT_EQ(w.ev_a[0].reject_reason, kRejConsumerDefined);
  EXPECT_EQ(w.a.state(id), CmState::kClosed);
}

TEST(CmConnections, LostReqIsResentAfterTheResponseTime) {
  Wire w;
  int reqs = 0;
  w.drop = [&](const CmSend& s, bool from_a) {
    return from_a && Wire::attr(s) == 0x10 && reqs++ == 0;
  };
  w.connect();
  w.pump();
  EXPECT_TRUE(w.ev_a.empty());
  const TimeNs wait = cm_timeout_ns(12) + 2 * cm_timeout_ns(10);
  w.run_until(wait - 1);
  EXPECT_EQ(count(w.sent_a, CmAttr::kReq), 1u);
  w.run_until(wait);
  EXPECT_EQ(count(w.sent_a, CmAttr::kReq), 2u);
  ASSERT_EQ(w.ev_a.size(), 1u);
  EXPECT_EQ(w.ev_a[0].kind, CmEventKind::kEstablished);
  EXPECT_EQ(w.a.counters().resent, 1u);
}

TEST(CmConnections, LostRepAnsweredByResentReqAndNotTwiceAccepted) {
  Wire w;
  int reps = 0;
  w.drop = [&](const CmSend& s, bool from_a) {
    return !from_a && Wire::attr(s) == 0x13 && reps++ == 0;
  };
  w.connect();
  w.run_until(kNsPerSec);
  // Both timers expire together: A resends its REQ, B its REP. B takes the REQ for a
  // duplicate and answers with its REP again (no second request); A takes the first REP and
  // sends its RTU, then the second REP for a duplicate and sends the RTU again, which B
  // takes for a duplicate.
  EXPECT_EQ(count(w.sent_a, CmAttr::kReq), 2u);
  EXPECT_EQ(count(w.sent_b, CmAttr::kRep), 3u);
  EXPECT_EQ(count(w.sent_a, CmAttr::kRtu), 2u);
  EXPECT_EQ(std::count(w.rx_b.begin(), w.rx_b.end(), CmRx::kDuplicate), 2);
  EXPECT_EQ(std::count(w.rx_a.begin(), w.rx_a.end(), CmRx::kDuplicate), 1);
  EXPECT_EQ(std::count_if(w.ev_b.begin(), w.ev_b.end(),
                          [](const CmEvent& e) { return e.kind == CmEventKind::kConnectRequest; }),
            1);
  ASSERT_FALSE(w.ev_a.empty());
  EXPECT_EQ(w.ev_a[0].kind, CmEventKind::kEstablished);
  EXPECT_EQ(w.ev_b.back().kind, CmEventKind::kEstablished);
}

TEST(CmConnections, LostRtuAnsweredByResentRepThenRtuAgain) {
  Wire w;
  int rtus = 0;
  w.drop = [&](const CmSend& s, bool from_a) {
    return from_a && Wire::attr(s) == 0x14 && rtus++ == 0;
  };
  const uint32_t id = w.connect();
  w.pump();
  EXPECT_EQ(w.a.state(id), CmState::kEstablished);
  EXPECT_EQ(w.b.state(w.ev_b[0].conn), CmState::kRepSent);
  w.run_until(kNsPerSec);
  EXPECT_EQ(count(w.sent_b, CmAttr::kRep), 2u);
  EXPECT_EQ(count(w.sent_a, CmAttr::kRtu), 2u);
  EXPECT_EQ(w.b.state(w.ev_b[0].conn), CmState::kEstablished);
  EXPECT_EQ(w.ev_a.size(), 1u);  // one established event however many REPs
}

TEST(CmConnections, UnansweredReqTimesOutAfterMaxRetriesWithRejTimeout) {
  Wire w;
  w.drop = [](const CmSend&, bool from_a) { return from_a; };  // B never hears A
  const uint32_t id = w.connect();
  const TimeNs wait = cm_timeout_ns(12) + 2 * cm_timeout_ns(10);
  w.run_until(4 * wait + 1);
  EXPECT_EQ(count(w.sent_a, CmAttr::kReq), 4u);  // once + max_cm_retries 3
  ASSERT_EQ(w.ev_a.size(), 1u);
  EXPECT_EQ(w.ev_a[0].kind, CmEventKind::kTimedOut);
  EXPECT_EQ(count(w.sent_a, CmAttr::kRej), 1u);
  EXPECT_EQ(w.a.state(id), CmState::kClosed);
}

TEST(CmConnections, MraPostponesTheResend) {
  Wire w;
  w.auto_accept = false;
  const uint32_t id = w.connect();
  w.pump();
  ASSERT_EQ(w.ev_b.size(), 1u);
  CmMra mra;
  mra.local_comm_id = w.ev_b[0].conn;
  mra.remote_comm_id = id;
  mra.message_mraed = kMsgReq;
  mra.service_timeout = 16;  // 268 ms
  CmMad m;
  m.body = mra;
  uint8_t raw[kMadBytes];
  encode_cm_mad(m, raw);
  EXPECT_EQ(w.a.on_mad(kIpB, raw, kMadBytes, 0), CmRx::kAccepted);
  const TimeNs wait = cm_timeout_ns(12) + 2 * cm_timeout_ns(10);
  w.run_until(cm_timeout_ns(16) + wait - 1);
  EXPECT_EQ(count(w.sent_a, CmAttr::kReq), 1u);
  w.run_until(cm_timeout_ns(16) + wait);
  EXPECT_EQ(count(w.sent_a, CmAttr::kReq), 2u);
}

TEST(CmConnections, DisconnectFromEitherSideWithLostDrep) {
  for (bool from_active : {true, false}) {
    Wire w;
    const uint32_t id = w.connect();
    w.pump();
    const uint32_t bid = w.ev_b[0].conn;
    int dreps = 0;
    w.drop = [&](const CmSend& s, bool) { return Wire::attr(s) == 0x16 && dreps++ == 0; };
    EXPECT_TRUE(from_active ? w.a.disconnect(id, w.now) : w.b.disconnect(bid, w.now));
    w.run_until(w.now + kNsPerSec / 2);
    CmConnections& initiator = from_active ? w.a : w.b;
    const auto& sent = from_active ? w.sent_a : w.sent_b;
    const auto& other_sent = from_active ? w.sent_b : w.sent_a;
    EXPECT_EQ(count(sent, CmAttr::kDreq), 2u) << from_active;
    EXPECT_EQ(count(other_sent, CmAttr::kDrep), 2u) << from_active;  // the second from time-wait
    EXPECT_EQ(initiator.counters().resent, 1u);
    const auto& ev = from_active ? w.ev_a : w.ev_b;
    const auto& other_ev = from_active ? w.ev_b : w.ev_a;
    EXPECT_EQ(ev.back().kind, CmEventKind::kDisconnected);
    EXPECT_EQ(other_ev.back().kind, CmEventKind::kDisconnected);
    EXPECT_EQ(std::count_if(other_ev.begin(), other_ev.end(),
                            [](const CmEvent& e) { return e.kind == CmEventKind::kDisconnected; }),
              1);
    // Time-wait ends: the connections are forgotten.
    w.run_until(w.now + kNsPerSec);
    EXPECT_EQ(w.a.state(id), CmState::kIdle);
    EXPECT_EQ(w.b.state(bid), CmState::kIdle);
  }
}

TEST(CmConnections, MalformedAndUnexpectedMadsAreCountedAndChangeNothing) {
  Wire w;
  const uint32_t id = w.connect();
  w.pump();
  Rng rng(9);
  uint8_t junk[kMadBytes];
  for (int i = 0; i < 2000; ++i) {
    for (auto& b : junk) b = static_cast<uint8_t>(rng.next());
    if (i % 2) {  // a valid header over random bodies: hits every handler
      junk[0] = 1;
      junk[1] = 7;
      junk[2] = 2;
      junk[3] = 3;
      junk[16] = 0;
      junk[17] = static_cast<uint8_t>(0x10 + rng.next() % 7);
    }
    w.a.on_mad(kIpB, junk, static_cast<uint32_t>(rng.next() % (kMadBytes + 1)), w.now);
    w.b.on_mad(kIpA, junk, kMadBytes, w.now);
  }
  EXPECT_GT(w.a.counters().malformed, 0u);
  EXPECT_GT(w.b.counters().unexpected + w.b.counters().no_listener, 0u);
  EXPECT_EQ(w.a.state(id), CmState::kEstablished);
  // A peer's REJ for a connection it does not have is unexpected; ours stays.
  CmRej rej;
  rej.remote_comm_id = id + 77;
  CmMad m;
  m.body = rej;
  uint8_t raw[kMadBytes];
  encode_cm_mad(m, raw);
  EXPECT_EQ(w.a.on_mad(kIpB, raw, kMadBytes, w.now), CmRx::kUnexpected);
  // A REP from the wrong address is not taken for our connection's.
  CmRep rep;
  rep.remote_comm_id = id;
  m.body = rep;
  encode_cm_mad(m, raw);
  EXPECT_EQ(w.a.on_mad(0x0b000001, raw, kMadBytes, w.now), CmRx::kUnexpected);
  EXPECT_EQ(w.a.state(id), CmState::kEstablished);
}

}  // namespace
}  // namespace rocemu::test
