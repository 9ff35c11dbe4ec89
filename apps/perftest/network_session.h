// network_session.h — the one perftest connection of a network-mode tool (network_mode.h):
// its side channel over TCP or, with -R, over rdma_cm (network_mode_cm.cc), and its test.
// Internal to apps/perftest: network_mode.cc and network_mode_cm.cc share it.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/perftest/net_station.h"
#include "apps/perftest/network_mode.h"
#include "apps/perftest/perftest_exchange.h"
#include "nic/cm_agent.h"

namespace rocemu::perftest::net {

// The local side could not be set up (interface, EAL, port): exit 3, as in loopback mode.
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
template <class F>
auto setup_step(F&& f) {
  try {
    return f();
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    throw SetupError(e.what());
  }
}

using interop::TcpChannel;

inline constexpr int kSetupTimeoutMs = 30000;

AddressFields address_fields(const interop::PerftestKey& k);

interop::PerftestKey key_of(const AddressFields& a);

/// -R: perftest's comm QP moves one message at a time (tx and rx depth 1, create_comm_struct);
/// its largest is the 56-byte key.
inline constexpr size_t kCommBufBytes = 64;

interop::PerftestKey parse_key(const char* buf);

/// One perftest connection: the lock-step side channel and, once keys are known, the station.
class Session {
 public:
  Session(const PerftestOptions& o, const ResultFn& on_result)
      : o_(o), on_result_(on_result), client_(!o.server_name.empty()), sizes_(run_sizes(o)) {}

  int run();

 private:
  PerftestOptions o_;  // the MTU may drop to the peer's
  const ResultFn& on_result_;
  const bool client_;
  const std::vector<uint32_t> sizes_;
  std::unique_ptr<TcpChannel> ch_;
  std::unique_ptr<Station> st_;
  interop::EndpointAddress me_, peer_;
  TestState t_;
  bool lat_serving_ = false;  // latency server: answer pings while waiting on the channel
  bool count_rx_ = false;     // SEND receiver: record receive completions in t_
  uint32_t srv_size_ = 0;     // latency server: the size whose row is still to be printed
  TimeNs prev_poll_ns_ = 0;   // SEND receiver: the poll before this one
  // When a request of the peer last reached our responders (stall_report): checked once a
  // millisecond, from the QPs' expected PSNs and the duplicate and out-of-sequence drops;
  // 0 until the test's polling began.
  uint64_t requests_seen_ = 0;
  TimeNs requests_seen_ns_ = 0, requests_checked_ns_ = 0;
  // -R (perftest's rdma_cm): the side channel's messages are SENDs on an RC QP of their own
  // (comm_qpn_, connected first through the CM agent, as perftest's create_comm_struct and
  // establish_connection), and the data QPs are connected by the same agent afterwards.
  std::unique_ptr<nic::CmAgent> cm_;
  uint32_t comm_cq_ = 0, comm_qpn_ = 0, comm_conn_ = 0;
  std::vector<uint8_t> comm_tx_ = std::vector<uint8_t>(kCommBufBytes),
                       comm_rx_ = std::vector<uint8_t>(kCommBufBytes);
  nic::MrInfo comm_tx_mr_{}, comm_rx_mr_{};
  bool comm_sent_ = true, cm_closing_ = false;  // comm_sent_: no SEND outstanding
  int64_t comm_rx_len_ = -1;                    // the received message's length, -1 while none
  std::vector<uint32_t> data_conns_;
  std::deque<nic::cm::CmEvent> cm_events_;  // the agent's, until a wait takes them

  int wait_ms() const {
    return client_ ? kSetupTimeoutMs * 2 + static_cast<int>(o_.duration_s) * 2000
                   : static_cast<int>(o_.server_wait_s) * 1000;
  }
  void send(const void* p, size_t n);
  void recv(void* p, size_t n, int timeout_ms);
  /// Lock-step: the client sends first, the server reads first.
  void exchange(const void* mine, void* theirs, size_t n, int timeout_ms = kSetupTimeoutMs) {
    if (client_) send(mine, n);
    recv(theirs, n, timeout_ms);
    if (!client_) send(mine, n);
  }
  /// perftest's xchg_bw_reports: five 8-byte fields, each one lock-step on its own (a real
  /// perftest client waits for the server's field before it sends the next).
  void exchange_report(const uint8_t* mine, uint8_t* theirs, int timeout_ms) {
    for (size_t f = 0; f < kBwReportFields; ++f)
      exchange(mine + f * kBwReportFieldBytes, theirs + f * kBwReportFieldBytes,
               kBwReportFieldBytes, timeout_ms);
  }
  /// Our key message of QP q: the 108-byte text over TCP, perftest's struct with -R.
  std::string key_message(uint32_t q) const {
    if (!cm_) return interop::format_perftest_key(st_->key(q));
    const auto m = cm_key_message(address_fields(st_->key(q)), std::max(o_.gid_index, 0));
    return std::string(m.begin(), m.end());
  }
  size_t key_bytes() const { return cm_ ? kCmKeyMsgBytes : interop::kPerftestKeyBytes; }
  interop::PerftestKey parse_key_message(const char* buf) const {
    if (!cm_) return parse_key(buf);
    AddressFields a;
    if (!parse_cm_key_message(reinterpret_cast<const uint8_t*>(buf), kCmKeyMsgBytes, a))
      throw std::runtime_error("rdma_cm: malformed key message from the peer");
    return key_of(a);
  }
  /// perftest's ctx_hand_shake: key messages each way (ours of QP q).
  void hand_shake(uint32_t q, int timeout_ms) { hand_shake_message(key_message(q), timeout_ms); }
  void hand_shake_message(const std::string& mine, int timeout_ms) {
    std::string theirs(mine.size(), '\0');
    exchange(mine.data(), theirs.data(), theirs.size(), timeout_ms);
    parse_key_message(theirs.data());
  }
  // -R (network_mode_cm.cc)
  void cm_send(const void* p, size_t n);
  void cm_recv(void* p, size_t n, int timeout_ms);
  void cm_step(TimeNs now);
  void post_comm_recv();
  uint32_t create_comm_qp();
  /// Services the port until the agent reports an event of connection `conn` (0: a new
  /// kConnectRequest), which it returns; throws after timeout_ms, saying `what`.
  nic::cm::CmEvent wait_cm_event(uint32_t conn, int timeout_ms, const char* what);
  void cm_connect_comm();
  void cm_connect_data();
  void cm_teardown();
  int run_test();
  TimeNs service();
  /// Changes whenever a request of the peer reaches one of our responders: the sum of the
  /// data QPs' expected PSNs and the host's duplicate and out-of-sequence drops.
  uint64_t requests_taken() const noexcept;
  /// A failed test's diagnosis on stderr: the endpoint's counters and, on a side whose
  /// responders serve the peer, stall_report.
  void report_failure();
  void setup();
  void run_size(uint32_t size, BwRow& last_row);
  void run_bw_requester();
  void run_send_receiver();
  void report_bw(uint32_t size, const BwRow& row);
  bool check_data(uint32_t size);
  void close();
  /// Latency server of WRITE or SEND: the table row of size srv_size_ from its own samples
  /// (perftest's server measures and prints them too; READ and atomic servers print none).
  void report_server_lat();
};

}  // namespace rocemu::perftest::net
