// cm_fuzz_harness.h — the rdma_cm connection state machine (nic/cm_conn.h) under a hostile
// network, shared by the seeded gtest corpus (unit suite) and the libFuzzer target
// (tests/fuzz/fuzz_cm.cc). Two CmConnections, A and B, each listening and each connecting to
// the other, exchange MADs through a network the input controls: it delivers, drops,
// duplicates or garbles each MAD in flight, delivers MADs of its own (raw, or decoded and
// re-encoded with their comm IDs aimed at live connections), lets time pass and makes the
// applications accept, reject or disconnect. Each input starts from fresh machines.
//
// Invariants: every MAD either side sends decodes, and re-encodes to its own bytes; a MAD
// that decodes re-encodes to bytes that decode to the same message; per connection the events
// follow the state machine (a connect request first on the passive side, established at most
// once, nothing after rejected, timed out or disconnected); after on_timer(now) no deadline
// is at or before now; and with the network then silent, the timers stop within a bounded
// number of firings (every connection ends established, or forgotten).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "nic/cm_conn.h"
#include "nic/cm_mad.h"

namespace rocemu::test {

namespace cm = nic::cm;

class CmFuzzHarness {
 public:
  static constexpr uint32_t kIp[2] = {0x0a000001, 0x0a000002};
  static constexpr uint16_t kPort = 7471;

  /// Fresh machines: both listen on kPort and each sends a REQ to the other.
  void start() {
    for (int s = 0; s < 2; ++s) {
      cm::CmConfig c;
      c.ipv4 = kIp[s];
      c.first_comm_id = s == 0 ? 0x100 : 0xfffffffe;  // B's IDs wrap after two
      c.cm_response_timeout = 12;
      c.packet_life_time = 10;
      c.max_cm_retries = 3;
      c.timewait_ns = 50 * kNsPerMs;
      side_[s] = std::make_unique<cm::CmConnections>(c);
      side_[s]->listen(kPort);
      flight_[s].clear();
      history_[s].clear();
      conns_[s].clear();
      peer_ids_[s].clear();
      pending_[s].clear();
      phase_[s].clear();
    }
    now_ = 0;
    for (int s = 0; s < 2; ++s) {
      cm::CmLocalQp q;
      q.qpn = 0x100 + s;
      q.psn = 0x1000 + s;
      conns_[s].push_back(side_[s]->connect(kIp[1 - s], kPort, static_cast<uint16_t>(40000 + s), q, {1, 2}, now_));
    }
  }

  /// One step of the network or the applications, driven by `op` and its operand bytes.
  /// Returns "" or the broken invariant.
  std::string step(uint8_t op, const uint8_t* arg, size_t arg_len) {
    const int s = op >> 7;  // the side the step is about
    std::string e = collect();
    if (!e.empty()) return e;
    switch (op & 7) {
      case 0:  // deliver the oldest MAD in flight to side s
      case 1:
        if (!flight_[s].empty()) {
          const auto m = flight_[s].front();
          flight_[s].pop_front();
          side_[s]->on_mad(kIp[1 - s], m.data(), cm::kMadBytes, now_);
        }
        break;
      case 2:  // drop it
        if (!flight_[s].empty()) flight_[s].pop_front();
        break;
      case 3:  // deliver it twice, or garbled at one byte
        if (!flight_[s].empty()) {
          auto m = flight_[s].front();
          side_[s]->on_mad(kIp[1 - s], m.data(), cm::kMadBytes, now_);
          if (arg_len >= 2) m[arg[0]] ^= arg[1] | 1;
          side_[s]->on_mad(kIp[1 - s], m.data(), cm::kMadBytes, now_);
        }
        break;
      case 4: {  // a MAD of the input's, raw, from the peer or from a stranger
        std::vector<uint8_t> m(arg, arg + arg_len);
        if (std::string r = round_trip(m); !r.empty()) return r;
        side_[s]->on_mad((op & 0x40) ? 0x0b000001 : kIp[1 - s], m.data(), static_cast<uint32_t>(m.size()), now_);
        break;
      }
      case 5: {  // the input's bytes as a CM message aimed at a live connection of side s
        std::vector<uint8_t> m(cm::kMadBytes, 0);
        if (arg_len) std::memcpy(m.data(), arg, arg_len < m.size() ? arg_len : m.size());
        m[0] = 1, m[1] = 7, m[2] = 2, m[3] = 3;  // base version, CM class, class version, Send
        m[16] = 0, m[17] = static_cast<uint8_t>(0x10 + (m[17] % 7));  // REQ ... DREP
        cm::CmMad mad;
        if (cm::decode_cm_mad(m.data(), cm::kMadBytes, mad) != cm::MadError::kNone) break;
        aim(mad, s, m[18]);
        cm::encode_cm_mad(mad, m.data());
        side_[s]->on_mad(kIp[1 - s], m.data(), cm::kMadBytes, now_);
        break;
      }
      case 6: {  // time passes: the operand x 64 us
        uint32_t v = arg_len ? arg[0] : 1;
        if (arg_len > 1) v = v << 8 | arg[1];
        if (std::string r = advance(now_ + static_cast<TimeNs>(v) * 64 * kNsPerUs); !r.empty()) return r;
        break;
      }
      default: {  // side s's application answers or ends a connection
        const uint8_t what = arg_len ? arg[0] : 0;
        if (!pending_[s].empty()) {
          const uint32_t c = pending_[s].front();
          pending_[s].pop_front();
          if (what % 3 == 0) {
            side_[s]->reject(c, cm::kRejConsumerDefined, now_);
          } else {
            cm::CmLocalQp q;
            q.qpn = 0x200 + s;
            q.psn = 0x2000 + s;
            side_[s]->accept(c, q, {3}, now_);
          }
        } else if (!conns_[s].empty()) {
          side_[s]->disconnect(conns_[s][what % conns_[s].size()], now_);
        }
        break;
      }
    }
    return collect();
  }

  /// The network falls silent (what is in flight is delivered, then nothing): timers run
  /// until none is left. Returns "" or the broken invariant.
  std::string finish() {
    for (int round = 0; round < 4; ++round)
      for (int s = 0; s < 2; ++s)
        while (!flight_[s].empty()) {
          if (std::string e = step(static_cast<uint8_t>(s << 7), nullptr, 0); !e.empty()) return e;
        }
    for (int n = 0;; ++n) {
      if (std::string e = collect(); !e.empty()) return e;
      for (int s = 0; s < 2; ++s) flight_[s].clear();  // silent: lost
      const TimeNs d = std::min(side_[0]->next_deadline(), side_[1]->next_deadline());
      if (d == kNever) return "";
      if (n == kMaxTimerFirings) return "the CM's timers still run after " + std::to_string(n) + " firings";
      if (std::string e = advance(d); !e.empty()) return e;
    }
  }

  const cm::CmConnections& side(int s) const { return *side_[s]; }
  /// Events seen so far per side, in order.
  const std::vector<cm::CmEvent>& events(int s) const { return history_[s]; }

 private:
  static constexpr int kMaxTimerFirings = 10000;

  /// Decodes `m`; when it decodes, its re-encoding must decode to the same message and
  /// encode to the same bytes.
  static std::string round_trip(const std::vector<uint8_t>& m) {
    cm::CmMad a, b;
    if (cm::decode_cm_mad(m.data(), static_cast<uint32_t>(m.size()), a) != cm::MadError::kNone) return "";
    uint8_t x[cm::kMadBytes], y[cm::kMadBytes];
    cm::encode_cm_mad(a, x);
    if (cm::decode_cm_mad(x, cm::kMadBytes, b) != cm::MadError::kNone) return "a decoded MAD re-encodes to one that does not decode";
    cm::encode_cm_mad(b, y);
    if (std::memcmp(x, y, cm::kMadBytes) != 0) return "a decoded MAD does not re-encode to the same bytes twice";
    return "";
  }

  /// Points a message's comm IDs at side s's connections (local ID = one of the peer's,
  /// remote ID = one of ours), so that it reaches their handlers.
  void aim(cm::CmMad& mad, int s, uint8_t pick) {
    const uint32_t ours = conns_[s].empty() ? 0 : conns_[s][pick % conns_[s].size()];
    const uint32_t theirs = peer_ids_[s].empty() ? 0 : peer_ids_[s][pick % peer_ids_[s].size()];
    std::visit([&](auto& b) {
      using T = std::decay_t<decltype(b)>;
      if constexpr (std::is_same_v<T, cm::CmReq>) {
        b.local_comm_id = theirs;
        b.service_id = cm::rdma_cm_service_id(kPort);
      } else {
        b.local_comm_id = theirs;
        b.remote_comm_id = ours;
      }
    }, mad.body);
  }

  std::string advance(TimeNs t) {
    for (;;) {
      const TimeNs d = std::min(side_[0]->next_deadline(), side_[1]->next_deadline());
      if (d > t) break;
      now_ = d > now_ ? d : now_;
      for (int s = 0; s < 2; ++s) {
        side_[s]->on_timer(now_);
        if (side_[s]->next_deadline() <= now_) return "a deadline at or before now after on_timer";
      }
      if (std::string e = collect(); !e.empty()) return e;
    }
    now_ = t > now_ ? t : now_;
    return "";
  }

  /// Takes what both sides sent (checked, then in flight to the other) and their events
  /// (checked against the state machine).
  std::string collect() {
    for (int s = 0; s < 2; ++s) {
      cm::CmSend out;
      while (side_[s]->pop_send(out)) {
        cm::CmMad m;
        if (cm::decode_cm_mad(out.mad.data(), cm::kMadBytes, m) != cm::MadError::kNone)
          return "side " + std::to_string(s) + " sent a MAD that does not decode";
        uint8_t again[cm::kMadBytes];
        cm::encode_cm_mad(m, again);
        if (std::memcmp(again, out.mad.data(), cm::kMadBytes) != 0)
          return "side " + std::to_string(s) + " sent a MAD that does not re-encode to its bytes";
        std::visit([&](const auto& b) { note_peer_id(1 - s, b.local_comm_id); }, m.body);
        if (out.dst_ipv4 == kIp[1 - s] && flight_[1 - s].size() < kMaxInFlight)
          flight_[1 - s].push_back(out.mad);
      }
      cm::CmEvent e;
      while (side_[s]->pop_event(e)) {
        if (std::string r = check_event(s, e); !r.empty()) return r;
        history_[s].push_back(e);
        if (e.kind == cm::CmEventKind::kConnectRequest) {
          pending_[s].push_back(e.conn);
          conns_[s].push_back(e.conn);
        }
      }
    }
    return "";
  }

  void note_peer_id(int s, uint32_t id) {
    for (uint32_t x : peer_ids_[s])
      if (x == id) return;
    if (peer_ids_[s].size() < 16) peer_ids_[s].push_back(id);
  }

  std::string check_event(int s, const cm::CmEvent& e) {
    auto& st = phase_[s][e.conn];  // 0 new, 1 requested, 2 established, 3 ended
    using K = cm::CmEventKind;
    const std::string who = "side " + std::to_string(s) + " connection " + std::to_string(e.conn) + ": ";
    if (st == 3) return who + cm::cm_event_name(e.kind) + " after the connection ended";
    switch (e.kind) {
      case K::kConnectRequest:
        if (st != 0) return who + "a second connect request";
        st = 1;
        break;
      case K::kEstablished:
        if (st == 2) return who + "established twice";
        st = 2;
        break;
      default:
        st = 3;
        break;
    }
    return "";
  }

  static constexpr size_t kMaxInFlight = 64;
  std::unique_ptr<cm::CmConnections> side_[2];
  std::deque<std::array<uint8_t, cm::kMadBytes>> flight_[2];  // to side s
  std::vector<cm::CmEvent> history_[2];
  std::vector<uint32_t> conns_[2];     // side s's connection IDs (its REQs and the REQs it got)
  std::vector<uint32_t> peer_ids_[2];  // comm IDs side s's peer has used
  std::deque<uint32_t> pending_[2];    // connect requests side s has not answered
  std::map<uint32_t, int> phase_[2];
  TimeNs now_ = 0;
};

}  // namespace rocemu::test
