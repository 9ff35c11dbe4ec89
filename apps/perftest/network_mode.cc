// network_mode.cc — perftest server/client over a DPDK af_packet port, speaking perftest
// 4.5's side channel message for message (see network_mode.h).
#include "apps/perftest/network_mode.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <stdexcept>
#include <thread>

#include "apps/perftest/data_check.h"
#include "apps/perftest/net_station.h"
#include "apps/perftest/perftest_exchange.h"
#include "nic/cm_agent.h"

namespace rocemu::perftest {

namespace {
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

constexpr int kSetupTimeoutMs = 30000;
constexpr char kDone[] = "done";  // sent with its NUL: 5 bytes

AddressFields address_fields(const interop::PerftestKey& k) {
  AddressFields a;
  a.lid = k.lid;
  a.qpn = k.qpn;
  a.psn = k.psn;
  a.out_reads = k.out_reads;
  a.rkey = k.rkey;
  a.vaddr = k.vaddr;
  std::memcpy(a.gid, k.gid, sizeof a.gid);
  return a;
}

interop::PerftestKey key_of(const AddressFields& a) {
  interop::PerftestKey k;
  k.lid = a.lid;
  k.qpn = a.qpn;
  k.psn = a.psn;
  k.out_reads = a.out_reads;
  k.rkey = a.rkey;
  k.vaddr = a.vaddr;
  std::memcpy(k.gid, a.gid, sizeof k.gid);
  return k;
}

/// -R: perftest's comm QP moves one message at a time (tx and rx depth 1, create_comm_struct);
/// its largest is the 56-byte key.
constexpr size_t kCommBufBytes = 64;

std::string ip_text(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 255) + "." +
         std::to_string((ip >> 8) & 255) + "." + std::to_string(ip & 255);
}

interop::PerftestKey parse_key(const char* buf) {
  interop::PerftestKey k;
  if (!interop::parse_perftest_key(buf, interop::kPerftestKeyBytes, k))
    throw std::runtime_error("side channel: malformed key message from the peer");
  return k;
}

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
  // -R
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

void Session::send(const void* p, size_t n) {
  if (!cm_) return ch_->send_all(p, n, kSetupTimeoutMs);
  if (n > comm_tx_.size()) throw std::logic_error("rdma_cm: message larger than the comm buffer");
  // The previous SEND must be complete (the QP holds one, as perftest's); this one is not
  // waited for, as a TCP write is not: a SEND server told the client to go must be counting
  // receives before the client's data can arrive, which may be before the ACK of this.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kSetupTimeoutMs);
  while (!comm_sent_) {
    service();
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("rdma_cm: the peer did not acknowledge a key exchange SEND within " +
                               std::to_string(kSetupTimeoutMs / 1000) + " s");
  }
  std::memcpy(comm_tx_.data(), p, n);
  ibv_sge sge{reinterpret_cast<uint64_t>(comm_tx_.data()), static_cast<uint32_t>(n),
              comm_tx_mr_.lkey};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  const ibv_send_wr* bad = nullptr;
  comm_sent_ = false;
  if (st_->host->post_send(comm_qpn_, &wr, &bad) != 0)
    throw std::runtime_error("rdma_cm: cannot post the key exchange's SEND");
}

void Session::recv(void* p, size_t n, int timeout_ms) {
  if (cm_) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (comm_rx_len_ < 0) {
      service();
      for (const auto& e : cm_events_)
        if (e.conn == comm_conn_ && e.kind == nic::cm::CmEventKind::kDisconnected)
          throw std::runtime_error("rdma_cm: the peer disconnected");
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("rdma_cm: no message from the peer within " +
                                 std::to_string(timeout_ms / 1000) + " s");
    }
    if (static_cast<size_t>(comm_rx_len_) != n)
      throw std::runtime_error("rdma_cm: the peer sent a " + std::to_string(comm_rx_len_) +
                               "-byte message where perftest sends " + std::to_string(n) +
                               " (is it running the same test?)");
    std::memcpy(p, comm_rx_.data(), n);
    comm_rx_len_ = -1;
    post_comm_recv();  // as rdma_read_keys: one receive, reposted once read
    return;
  }
  if (!st_) return ch_->recv_exact(p, n, timeout_ms);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  size_t have = 0;
  uint32_t spins = 0;
  while (have < n) {
    service();
    if ((++spins & 63) != 0) continue;  // a syscall every 64 polls keeps the port served
    have = ch_->recv_some(p, n, have);
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("side channel: the peer sent " + std::to_string(have) + " of " +
                               std::to_string(n) + " bytes within " +
                               std::to_string(timeout_ms / 1000) + " s");
  }
}

/// One poll of the port plus what this side owes its peer meanwhile: reposting receives
/// (SEND), answering pings (latency server). Returns the poll's `now`.
TimeNs Session::service() {
  const TimeNs now = st_->ep->poll();
  if (cm_) cm_step(now);
  if (cm_closing_) return now;
  if (lat_serving_) {
    if (!t_.failed) lat_server_step(st_->side, t_, o_, now);
  } else if (o_.verb == Verb::kSend && o_.metric == Metric::kBandwidth) {
    int got = 0;
    repost_receives(st_->side, t_, got);
    if (count_rx_ && got > 0) {
      // The first message arrived after the previous poll: start there, so a size whose
      // messages all land in one poll (a few small ones) still gets a duration, as
      // perftest's cycle-counter timestamps always do (else its row read 0.00 / 0.000000).
      if (t_.first_post_ns == kNever) t_.first_post_ns = prev_poll_ns_ > 0 ? prev_poll_ns_ : now;
      t_.messages += static_cast<uint64_t>(got);
      for (int i = 0; i < got && t_.completion_ns.size() < t_.completion_ns.capacity(); ++i)
        t_.completion_ns.push_back(now);
      t_.last_completion_ns = t_.last_progress_ns = now;
    }
    prev_poll_ns_ = now;
  }
  return now;
}

void Session::setup() {
  // The interface first: a server on one that does not exist must say so now, not after a
  // client connected (or the --server_wait hour passed).
  me_ = setup_step([&] { return local_address(o_); });
  // perftest on a device it does not know (rxe, rocemu) disables inline data for READ and
  // atomics with a rule on stdout (and "Device not recognized to implement inline feature"
  // on stderr): the first line of its output.
  if (reads_back(o_.verb)) std::printf("%s", kResultLine);
  if (o_.rdma_cm) {
    cm_connect_comm();
  } else if (client_) {
    const auto ip = parse_ipv4(o_.server_name);
    if (!ip) throw std::invalid_argument("server '" + o_.server_name + "' must be an IPv4 address");
    peer_.ipv4 = *ip;
    try {
      ch_ = std::make_unique<TcpChannel>(TcpChannel::connect_to(
          o_.server_name, o_.tcp_port, static_cast<int>(o_.connect_timeout_s) * 1000));
    } catch (const std::exception& e) {
      throw std::runtime_error("cannot reach server " + o_.server_name + ":" +
                               std::to_string(o_.tcp_port) + " within " +
                               std::to_string(o_.connect_timeout_s) + " s (" + e.what() + ")");
    }
  } else {
    std::printf("%s", waiting_banner().c_str());
    std::fflush(stdout);
    ch_ = std::make_unique<TcpChannel>(TcpChannel::accept_one(
        "0.0.0.0", o_.tcp_port, static_cast<int>(o_.server_wait_s) * 1000));
  }
  // exchange_versions, check_sys_data (page size, cache line), check_mtu.
  const auto version = version_message();
  char their_version[kVersionMsgBytes];
  exchange(version.data(), their_version, sizeof their_version);
  uint8_t sys[kSysDataMsgBytes];
  exchange(be32_message(kPageSizeBytes).data(), sys, sizeof sys);
  exchange(be32_message(kCacheLineBytes).data(), sys, sizeof sys);
  char their_mtu[kMtuMsgBytes];
  exchange(mtu_message(o_.mtu_bytes).data(), their_mtu, sizeof their_mtu);
  const uint32_t peer_mtu = mtu_from_message(their_mtu);
  if (peer_mtu == 0) throw std::runtime_error("side channel: malformed MTU message");
  if (peer_mtu < o_.mtu_bytes) {
    std::fprintf(stderr, "%s: the peer's MTU is %u: using it\n", o_.tool.c_str(), peer_mtu);
    o_.mtu_bytes = peer_mtu;
  }
  // perftest prints its preamble once the MTU is agreed (ctx_print_test_info); with -R, once
  // the data QPs are connected (create_rdma_cm_connection comes first).
  if (o_.rdma_cm) cm_connect_data();
  std::printf("%s", test_info(o_, TestInfo{!client_, o_.iface}).c_str());
  // One key per QP each way; the server learns the client's address from the first.
  const uint32_t half = std::max<uint32_t>(sizes_.back(), 4096);
  std::vector<interop::PerftestKey> theirs;
  char buf[interop::kPerftestKeyBytes];
  for (uint32_t q = 0; q < o_.num_qps && o_.rdma_cm; ++q) {
    const std::string mine = key_message(q);
    std::string got(mine.size(), '\0');
    exchange(mine.data(), got.data(), got.size());
    theirs.push_back(parse_key_message(got.data()));
  }
  for (uint32_t q = 0; q < o_.num_qps && !o_.rdma_cm; ++q) {
    if (client_ && !st_) {
      peer_.mac = neighbour_mac(peer_.ipv4, o_.iface);
      st_ = setup_step([&] { return std::make_unique<Station>(o_, me_, peer_, half); });
    }
    if (client_) send(interop::format_perftest_key(st_->key(q)).data(), sizeof buf);
    recv(buf, sizeof buf, kSetupTimeoutMs);
    theirs.push_back(parse_key(buf));
    if (!client_ && !st_) {
      const auto ip = interop::ipv4_of_mapped_gid(theirs[0].gid);
      if (o_.gid_index == 0) {
        // -x 0: the client's link-local GID names its MAC (modified EUI-64).
        Ipv6Addr g{};
        std::memcpy(g.data(), theirs[0].gid, 16);
        const auto mac = mac_of_link_local(g);
        if (ip || !mac)
          throw std::runtime_error("client's GID " + ipv6_to_string(g) +
                                   " is not an IPv6 link-local GID (perftest: use -x 0 on both)");
        peer_.mac = *mac;
      } else {
        if (!ip) throw std::runtime_error("client's GID is not IPv4-mapped (perftest: use -x 1)");
        peer_.ipv4 = *ip;
        peer_.mac = neighbour_mac(peer_.ipv4, o_.iface);
      }
      st_ = setup_step([&] { return std::make_unique<Station>(o_, me_, peer_, half); });
    }
    if (!client_) send(interop::format_perftest_key(st_->key(q)).data(), sizeof buf);
  }
  // --check_data: the source of the transfer holds the pattern before any byte moves (READ:
  // the server's advertised buffers; WRITE/SEND: the client's send buffers).
  if (o_.check_data && (o_.verb == Verb::kRead) != client_) {
    for (uint32_t q = 0; q < o_.num_qps; ++q)
      fill_check_pattern(o_.verb == Verb::kRead ? st_->side.recv_buf(q) : st_->side.send_buf(q),
                         st_->side.half, q);
  }
  if (o_.rdma_cm)
    st_->learn_buffers(theirs, o_.num_qps);  // rdma_cm connected the QPs
  else
    st_->connect_all(theirs, o_);
  hand_shake(0, kSetupTimeoutMs);  // after RTR
  for (uint32_t q = 0; q < o_.num_qps; ++q) hand_shake(q, kSetupTimeoutMs);
  // perftest's ctx_print_pingpong_data: every local QP, then every remote one, then a rule.
  // With -R perftest 4.5 prints no address lines, just the rule (the guest's ib_*_bw -R,
  // server and client).
  for (uint32_t q = 0; q < o_.num_qps && !o_.rdma_cm; ++q)
    std::printf("%s", address_lines(o_, false, address_fields(st_->key(q))).c_str());
  for (uint32_t q = 0; q < o_.num_qps && !o_.rdma_cm; ++q)
    std::printf("%s", address_lines(o_, true, address_fields(theirs[q])).c_str());
  std::printf("%s", kResultLine);
  std::fflush(stdout);
}

void Session::run_bw_requester() {
  while (!t_.done) {
    const TimeNs now = service();
    if (bw_requester_step(st_->side, 0, t_, o_, now)) t_.done = true;
    check_progress(t_, now);
  }
}

void Session::run_send_receiver() {
  const uint64_t want = o_.iters * o_.num_qps;
  count_rx_ = true;
  while (!t_.failed) {
    const TimeNs now = service();
    if (t_.start_ns < 0) t_.start_ns = t_.last_progress_ns = now;
    if (t_.duration_ns == 0 ? t_.messages >= want
                            : t_.first_post_ns != kNever && now >= t_.first_post_ns + t_.duration_ns)
      break;
    check_progress(t_, now);
  }
  count_rx_ = false;
  t_.done = true;
}

void Session::report_bw(uint32_t size, const BwRow& row) {
  BwResult r;
  r.ok = !t_.failed;
  r.error = t_.error;
  r.messages = t_.messages;
  r.row = row;
  on_result_(size, &r, nullptr);
}

void Session::run_size(uint32_t size, BwRow& last_row) {
  const TimeNs duration_ns = static_cast<TimeNs>(o_.duration_s) * kNsPerSec;
  if (o_.metric == Metric::kLatency && !client_) {
    // The client's sync for this size arrives once it is done with the previous one: keep
    // answering its pings until then, and reset only before answering the sync.
    std::string theirs(key_bytes(), '\0');
    recv(theirs.data(), theirs.size(), wait_ms());
    parse_key_message(theirs.data());
    lat_serving_ = false;
    report_server_lat();  // the previous size is over
    t_.reset(o_, size, duration_ns);
    srv_size_ = size;
    std::memset(st_->side.recv_buf(0), 0, st_->side.half);
    send(key_message(0).data(), theirs.size());
    if (o_.verb != Verb::kWrite || duration_ns != 0) {
      lat_serving_ = true;  // answer while waiting for the next message
      return;
    }
    // WRITE -n: perftest's ping-pong has no message after the last size; play it out here.
    while (!t_.srv_done && !t_.failed) {
      const TimeNs now = st_->ep->poll();
      lat_server_step(st_->side, t_, o_, now);
      check_progress(t_, now);
    }
    report_server_lat();
    return;
  }
  t_.reset(o_, size, duration_ns);
  std::memset(st_->side.recv_buf(0), 0, st_->side.half);
  if (o_.metric == Metric::kLatency) {
    hand_shake(0, wait_ms());
    while (!t_.done) {
      const TimeNs now = st_->ep->poll();
      lat_client_step(st_->side, t_, o_, now);
      check_progress(t_, now);
    }
    LatResult r;
    r.ok = !t_.failed;
    r.error = t_.error;
    r.iters = t_.exchanges;
    r.stats = latency_stats(t_.samples_us);
    on_result_(size, nullptr, &r);
    return;
  }
  // Bandwidth. perftest syncs before each size with -b and for SEND (the receiver's queue
  // is full); half-duplex WRITE/READ clients run all sizes back to back. After a size with
  // -a, ib_write_bw/ib_read_bw -b sync and then exchange reports (perftest >= 4.6; our
  // version is 6.06), while ib_send_bw exchanges reports (-b) and then syncs, with or without
  // -b (send_bw.c, RUN_ALL): each side must follow the peer's tool exactly, or they drift a
  // handshake apart and the next size hangs.
  const bool send = o_.verb == Verb::kSend;
  if (o_.bidirectional || send) hand_shake(0, wait_ms());
  if (o_.bidirectional) {
    run_bw_requester();
    if (t_.failed) return report_bw(size, {});
    if (o_.all_sizes && !send) hand_shake(0, wait_ms());
    const BwRow mine = bw_summary(t_, o_);
    const auto msg = bw_report_message(mine, o_.report_gbits);
    uint8_t theirs[kBwReportFields * kBwReportFieldBytes];
    exchange_report(msg.data(), theirs, wait_ms());
    last_row = sum_rows(mine, bw_row_from_report(theirs, o_.report_gbits));
    report_bw(size, last_row);
    if (o_.all_sizes && send) hand_shake(0, wait_ms());
    return;
  }
  if (client_) {
    run_bw_requester();
  } else {
    run_send_receiver();  // only SEND servers get here
  }
  last_row = t_.failed ? BwRow{} : bw_summary(t_, o_);
  report_bw(size, last_row);
  if (o_.all_sizes && send && !t_.failed) hand_shake(0, wait_ms());
}

/// --check_data on the side the bytes landed on: [0, size) of every QP's receive buffer holds
/// the peer's pattern (the last, largest size overwrote the smaller ones). Prints the outcome.
bool Session::check_data(uint32_t size) {
  for (uint32_t q = 0; q < o_.num_qps; ++q) {
    const uint8_t* got = st_->side.recv_buf(q);
    const int64_t at = first_pattern_mismatch(got, size, q);
    if (at < 0) continue;
    std::fprintf(stderr,
                 "%s: data check failed: QP %u byte %lld of %u is 0x%02x, the pattern has 0x%02x"
                 " (does the peer run with --check_data too?)\n",
                 o_.tool.c_str(), q, static_cast<long long>(at), size, got[at],
                 check_pattern_byte(q, static_cast<uint64_t>(at)));
    return false;
  }
  std::printf(" Data check: %u QP(s) x %u bytes, every byte as the peer sent it\n", o_.num_qps,
              size);
  return true;
}

void Session::report_server_lat() {
  if (client_ || srv_size_ == 0 || o_.metric != Metric::kLatency || reads_back(o_.verb)) return;
  LatResult r;
  r.ok = !t_.failed;
  r.error = t_.error;
  // perftest prints -n as #iterations, or with -D the exchanges it counted.
  r.iters = o_.duration_s > 0 ? t_.srv_samples_us.size() + 1 : o_.iters;
  r.stats = latency_stats(t_.srv_samples_us);
  on_result_(srv_size_, nullptr, &r);
  srv_size_ = 0;
}

void Session::close() {
  hand_shake(0, wait_ms());
  if (cm_) return;  // ctx_close_connection: "done" is the TCP channel's alone
  send(kDone, sizeof kDone);
  // perftest writes its "done" and closes; read it if it comes, but the test is over.
  try {
    char buf[sizeof kDone];
    recv(buf, sizeof buf, 2000);
  } catch (const std::exception&) {
  }
}

int Session::run() {
  int rc;
  try {
    rc = run_test();
  } catch (const std::runtime_error&) {
    if (st_) std::fprintf(stderr, "%s", st_->ep->counters_report().c_str());  // what moved
    throw;
  }
  cm_teardown();
  return rc;
}

int Session::run_test() {
  setup();
  BwRow last_row;
  const bool half_duplex_rdma =
      o_.metric == Metric::kBandwidth && !o_.bidirectional && o_.verb != Verb::kSend;
  if (half_duplex_rdma && !client_) {
    // perftest's WRITE/READ server does nothing but wait for the client's report of its last
    // size, and prints that as its table.
    hand_shake(0, wait_ms());
    uint8_t theirs[kBwReportFields * kBwReportFieldBytes];
    exchange_report(bw_report_message(BwRow{}, o_.report_gbits).data(), theirs, kSetupTimeoutMs);
    last_row = bw_row_from_report(theirs, o_.report_gbits);
    t_.reset(o_, static_cast<uint32_t>(last_row.size_bytes), 0);
    t_.messages = last_row.iters;
    report_bw(static_cast<uint32_t>(last_row.size_bytes), last_row);
    const bool data_ok = !o_.check_data || o_.verb != Verb::kWrite ||
                         check_data(static_cast<uint32_t>(last_row.size_bytes));
    close();
    return data_ok ? 0 : 1;
  }
  for (uint32_t size : sizes_) {
    run_size(size, last_row);
    if (t_.failed) {  // perftest exits without closing; the peer sees EOF
      if (!client_) std::fprintf(stderr, "%s: %s\n", o_.tool.c_str(), t_.error.c_str());
      std::fprintf(stderr, "%s", st_->ep->counters_report().c_str());
      return 1;
    }
  }
  // The READ client and the SEND server hold what moved (the WRITE server checked above).
  const bool data_ok =
      !o_.check_data ||
      !((client_ && o_.verb == Verb::kRead) || (!client_ && o_.verb == Verb::kSend)) ||
      check_data(sizes_.back());
  if (half_duplex_rdma) {
    hand_shake(0, wait_ms());
    uint8_t theirs[kBwReportFields * kBwReportFieldBytes];
    exchange_report(bw_report_message(last_row, o_.report_gbits).data(), theirs, wait_ms());
  }
  // perftest's ib_write_lat ends without a closing handshake or "done": both just exit. With
  // -D rocemu keeps the close, so neither side leaves while the other still writes.
  if (!(o_.metric == Metric::kLatency && o_.verb == Verb::kWrite && o_.duration_s == 0)) close();
  lat_serving_ = false;
  report_server_lat();
  if (t_.failed) std::fprintf(stderr, "%s: %s\n", o_.tool.c_str(), t_.error.c_str());
  return t_.failed || !data_ok ? 1 : 0;
}

void Session::cm_step(TimeNs now) {
  cm_->poll(now);
  nic::cm::CmEvent e;
  while (cm_->pop_event(e)) cm_events_.push_back(std::move(e));
  ibv_wc wc[4];
  const int n = st_->host->poll_cq(comm_cq_, 4, wc);
  for (int i = 0; i < n; ++i) {
    if (wc[i].status != IBV_WC_SUCCESS) {
      if (cm_closing_) continue;  // flushed by the disconnect
      throw std::runtime_error(std::string("rdma_cm: key exchange completion failed: ") +
                               interop::wc_status_name(wc[i].status));
    }
    if (wc[i].opcode == IBV_WC_RECV)
      comm_rx_len_ = wc[i].byte_len;
    else
      comm_sent_ = true;
  }
}

void Session::post_comm_recv() {
  ibv_sge sge{reinterpret_cast<uint64_t>(comm_rx_.data()), static_cast<uint32_t>(comm_rx_.size()),
              comm_rx_mr_.lkey};
  ibv_recv_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  const ibv_recv_wr* bad = nullptr;
  if (st_->host->post_recv(comm_qpn_, &wr, &bad) != 0)
    throw std::runtime_error("rdma_cm: cannot post the key exchange's receive");
}

uint32_t Session::create_comm_qp() {
  nic::QpInitAttr a;
  a.pd = st_->side.pd;
  a.send_cq = a.recv_cq = comm_cq_;
  a.max_send_wr = 1;  // create_comm_struct: tx and rx depth 1
  a.max_recv_wr = 1;
  const uint32_t qpn = st_->host->create_qp(a);
  if (qpn == 0) throw std::runtime_error("rdma_cm: cannot create the key exchange's QP");
  return qpn;
}

nic::cm::CmEvent Session::wait_cm_event(uint32_t conn, int timeout_ms, const char* what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    for (auto it = cm_events_.begin(); it != cm_events_.end(); ++it) {
      const bool req = it->kind == nic::cm::CmEventKind::kConnectRequest;
      if (conn == 0 ? req : (it->conn == conn && !req)) {
        nic::cm::CmEvent e = std::move(*it);
        cm_events_.erase(it);
        return e;
      }
    }
    service();
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error(std::string("rdma_cm: timed out ") + what + " (" +
                               std::to_string(timeout_ms / 1000) + " s)");
  }
}

void Session::cm_connect_comm() {
  const uint32_t half = std::max<uint32_t>(sizes_.back(), 4096);
  if (client_) {
    const auto ip = parse_ipv4(o_.server_name);
    if (!ip) throw std::invalid_argument("server '" + o_.server_name + "' must be an IPv4 address");
    peer_.ipv4 = *ip;
    const int wait = static_cast<int>(o_.connect_timeout_s) * 1000;
    peer_.mac = setup_step([&] { return resolve_neighbour_mac(peer_.ipv4, o_.iface, wait); });
  } else {
    std::printf("%s", waiting_banner().c_str());
    std::fflush(stdout);
  }
  // A server's peer is unknown until the first REQ: its host learns the MAC then.
  st_ = setup_step([&] { return std::make_unique<Station>(o_, me_, peer_, half); });
  nic::cm::CmConfig cfg;
  cfg.ipv4 = me_.ipv4;
  // A communication ID a restarted tool does not repeat (a peer in time-wait would take a
  // repeated one for a stale connection), as rocemu-interop's rping.
  const auto t = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  cfg.first_comm_id = static_cast<uint32_t>(t ^ (t >> 32)) | 1;
  cfg.ca_guid = 0x0200000000000000ull | me_.ipv4;
  // A REQ the server missed (its port not up yet) is resent after 2^16 x 4.096 us plus twice
  // the packet lifetime (0.8 s), not cma.c's 6.4 s.
  cfg.cm_response_timeout = 16;
  cfg.packet_life_time = 16;
  cm_ = std::make_unique<nic::CmAgent>(*st_->host, st_->side.pd, cfg);
  comm_cq_ = st_->host->create_cq(4);
  comm_tx_mr_ = st_->host->reg_mr(st_->side.pd, comm_tx_.data(), comm_tx_.size(), 0);
  comm_rx_mr_ =
      st_->host->reg_mr(st_->side.pd, comm_rx_.data(), comm_rx_.size(), IBV_ACCESS_LOCAL_WRITE);
  if (comm_cq_ == 0 || comm_rx_mr_.lkey == 0 || comm_tx_mr_.lkey == 0)
    throw std::runtime_error("rdma_cm: cannot create the key exchange's CQ or buffers");
  comm_qpn_ = create_comm_qp();
  const nic::RdmaConnParams p;  // rdma_client_connect: SEND only, retry and RNR retry 7
  if (client_) {
    // perftest's client retries a refused connection (the server may not listen yet).
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(o_.connect_timeout_s);
    for (;;) {
      comm_conn_ = cm_->connect(comm_qpn_, peer_.ipv4, o_.tcp_port, p, st_->ep->now_ns());
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      nic::cm::CmEvent e;
      try {
        e = wait_cm_event(comm_conn_, static_cast<int>(std::max<int64_t>(left.count(), 1)),
                          "connecting");
      } catch (const std::runtime_error&) {
        throw std::runtime_error("cannot reach server " + o_.server_name + ":" +
                                 std::to_string(o_.tcp_port) + " through rdma_cm within " +
                                 std::to_string(o_.connect_timeout_s) + " s (no REP)");
      }
      if (e.kind == nic::cm::CmEventKind::kEstablished) break;
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error(
            "cannot reach server " + o_.server_name + ":" + std::to_string(o_.tcp_port) +
            " through rdma_cm within " + std::to_string(o_.connect_timeout_s) + " s (" +
            nic::cm::cm_event_name(e.kind) + ", reason " + std::to_string(e.reject_reason) + ")");
      // Refused or unanswered: a fresh QP (this one is in ERR) and a new REQ 100 ms later,
      // as retry_rdma_connect.
      st_->host->destroy_qp(comm_qpn_);
      comm_qpn_ = create_comm_qp();
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
      while (std::chrono::steady_clock::now() < until) service();
    }
    post_comm_recv();
    return;
  }
  cm_->listen(o_.tcp_port);
  nic::cm::CmEvent req = wait_cm_event(0, wait_ms(), "waiting for a client");
  peer_.ipv4 = req.peer_ipv4;
  peer_.mac = setup_step([&] { return resolve_neighbour_mac(peer_.ipv4, o_.iface, 5000); });
  st_->host->set_peer_mac(peer_.mac);
  comm_conn_ = req.conn;
  if (!cm_->accept(req, comm_qpn_, p, st_->ep->now_ns()))
    throw std::runtime_error("rdma_cm: cannot accept the client's connection");
  post_comm_recv();  // the QP is in RTS now; the client's first SEND follows its RTU
  const auto e = wait_cm_event(comm_conn_, kSetupTimeoutMs, "waiting for the client's RTU");
  if (e.kind != nic::cm::CmEventKind::kEstablished)
    throw std::runtime_error(std::string("rdma_cm: the client's connection ended: ") +
                             nic::cm::cm_event_name(e.kind));
}

void Session::cm_connect_data() {
  // create_rdma_cm_connection: a handshake of empty keys before and after (perftest's
  // my_dest is still zero then), the data QPs' REQ/REP/RTU between.
  const std::string zero(kCmKeyMsgBytes, '\0');
  hand_shake_message(zero, kSetupTimeoutMs);
  nic::RdmaConnParams p;
  const uint8_t reads =
      reads_back(o_.verb) ? static_cast<uint8_t>(std::min<uint32_t>(o_.out_reads, 255)) : 0;
  p.responder_resources = p.initiator_depth = reads;  // rdma_cm_route_handler: out_reads
  p.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
             IBV_ACCESS_REMOTE_ATOMIC;
  const auto& qpns = st_->side.qpns;
  if (client_) {
    for (uint32_t q = 0; q < o_.num_qps; ++q)
      data_conns_.push_back(cm_->connect(qpns[q], peer_.ipv4, o_.tcp_port, p, st_->ep->now_ns()));
    // perftest's server starts listening for the data QPs only after the first handshake,
    // so a REQ may be refused: as rdma_cm_client_connection, again 100 ms later on a fresh
    // QP, up to 10 times.
    std::vector<nic::cm::CmEvent> got(o_.num_qps);
    for (uint32_t q = 0; q < o_.num_qps; ++q) {
      for (int attempt = 1;; ++attempt) {
        got[q] = wait_cm_event(data_conns_[q], kSetupTimeoutMs, "connecting the data QPs");
        if (got[q].kind != nic::cm::CmEventKind::kRejected || attempt == 10) break;
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
        while (std::chrono::steady_clock::now() < until) service();
        st_->side.renew_qp(q, o_);
        data_conns_[q] = cm_->connect(qpns[q], peer_.ipv4, o_.tcp_port, p, st_->ep->now_ns());
      }
    }
    for (auto& e : got) cm_events_.push_front(std::move(e));  // checked below
  } else {
    for (uint32_t q = 0; q < o_.num_qps; ++q) {
      const auto req = wait_cm_event(0, kSetupTimeoutMs, "waiting for the data QPs' REQ");
      if (req.peer_ipv4 != peer_.ipv4 || !cm_->accept(req, qpns[q], p, st_->ep->now_ns()))
        throw std::runtime_error("rdma_cm: cannot accept data QP " + std::to_string(q) + " from " +
                                 ip_text(req.peer_ipv4));
      data_conns_.push_back(req.conn);
    }
  }
  for (uint32_t q = 0; q < o_.num_qps; ++q) {
    const auto e = wait_cm_event(data_conns_[q], kSetupTimeoutMs, "connecting the data QPs");
    if (e.kind != nic::cm::CmEventKind::kEstablished)
      throw std::runtime_error("rdma_cm: data QP " + std::to_string(q) + ": " +
                               nic::cm::cm_event_name(e.kind) + " (reason " +
                               std::to_string(e.reject_reason) + ")");
    st_->side.fill_receives(q, o_);
    if (o_.qp_timeout >= 0) {  // -u: the ACK timeout, over the REQ's
      ibv_qp_attr a{};
      a.timeout = static_cast<uint8_t>(o_.qp_timeout);
      if (st_->host->modify_qp(qpns[q], a, IBV_QP_TIMEOUT) != 0)
        throw std::runtime_error("rdma_cm: cannot set the ACK timeout (-u) of data QP " +
                                 std::to_string(q));
    }
  }
  hand_shake_message(zero, kSetupTimeoutMs);
}

void Session::cm_teardown() {
  if (!cm_ || !st_) return;
  cm_closing_ = true;
  // The client disconnects its data QPs, then the comm QP (golden capture 13: both DREQs
  // are the client's); the server answers them. Either gives up after 3 s.
  std::vector<uint32_t> open = data_conns_;
  if (comm_conn_ != 0) open.push_back(comm_conn_);
  if (client_)
    for (uint32_t c : open) cm_->disconnect(c, st_->ep->now_ns());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!open.empty() && std::chrono::steady_clock::now() < deadline) {
    service();
    for (auto it = cm_events_.begin(); it != cm_events_.end();) {
      const bool end = it->kind == nic::cm::CmEventKind::kDisconnected ||
                       it->kind == nic::cm::CmEventKind::kTimedOut;
      if (end) std::erase(open, it->conn);
      it = end ? cm_events_.erase(it) : it + 1;
    }
  }
  // The DREPs of the last DREQs leave on later polls: keep the port served a little before
  // the process (and its queued frames) goes.
  const auto linger = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  while (std::chrono::steady_clock::now() < linger) service();
}
}  // namespace

int run_network(const PerftestOptions& opt, const ResultFn& on_result) {
  try {
    Session s(opt, on_result);
    return s.run();
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s: %s\n", opt.tool.c_str(), e.what());
    return 2;
  } catch (const SetupError& e) {
    std::fprintf(stderr, "%s: setup failed: %s\n", opt.tool.c_str(), e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", opt.tool.c_str(), e.what());
    return 1;
  }
}

}  // namespace rocemu::perftest
