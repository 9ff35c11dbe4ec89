// network_mode.cc — perftest server/client over a DPDK af_packet port, speaking perftest
// 4.5's side channel message for message (see network_mode.h).
#include "apps/perftest/network_mode.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "apps/perftest/data_check.h"
#include "apps/perftest/network_session.h"

namespace rocemu::perftest {

namespace net {

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

interop::PerftestKey parse_key(const char* buf) {
  interop::PerftestKey k;
  if (!interop::parse_perftest_key(buf, interop::kPerftestKeyBytes, k))
    throw std::runtime_error("side channel: malformed key message from the peer");
  return k;
}

void Session::send(const void* p, size_t n) {
  if (cm_) return cm_send(p, n);
  ch_->send_all(p, n, kSetupTimeoutMs);
}

void Session::recv(void* p, size_t n, int timeout_ms) {
  if (cm_) return cm_recv(p, n, timeout_ms);
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

uint64_t Session::requests_taken() const noexcept {
  const nic::NicCounters& c = st_->host->counters();
  uint64_t sum = c.drops[static_cast<int>(nic::RxDrop::kDuplicate)] +
                 c.drops[static_cast<int>(nic::RxDrop::kPsnOutOfSeq)];
  for (uint32_t qpn : st_->side.qpns) sum += st_->host->expected_psn(qpn);
  return sum;
}

/// One poll of the port plus what this side owes its peer meanwhile: reposting receives
/// (SEND), answering pings (latency server), noting when a request of the peer last arrived
/// (once a millisecond). Returns the poll's `now`.
TimeNs Session::service() {
  const TimeNs now = st_->ep->poll();
  if (now - requests_checked_ns_ >= kNsPerMs) {
    requests_checked_ns_ = now;
    if (const uint64_t seen = requests_taken(); seen != requests_seen_ || requests_seen_ns_ == 0) {
      requests_seen_ = seen;
      requests_seen_ns_ = now;
    }
  }
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

void Session::report_failure() {
  std::fprintf(stderr, "%s", st_->ep->counters_report().c_str());
  // What our responders took of the peer's requests (a server's, or either side's with -b),
  // once the test's polling began.
  if ((!client_ || o_.bidirectional) && requests_seen_ns_ > 0) {
    const TimeNs silence_ns = st_->ep->now_ns() - requests_seen_ns_;
    std::fprintf(stderr, "%s", stall_report(st_->side, o_.tool, silence_ns).c_str());
  }
}

int Session::run() {
  int rc;
  try {
    rc = run_test();
  } catch (const std::runtime_error&) {
    if (st_) report_failure();  // what moved (e.g. a WRITE server whose client's report never came)
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
      report_failure();
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

}  // namespace net

int run_network(const PerftestOptions& opt, const ResultFn& on_result) {
  try {
    net::Session s(opt, on_result);
    return s.run();
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s: %s\n", opt.tool.c_str(), e.what());
    return 2;
  } catch (const net::SetupError& e) {
    std::fprintf(stderr, "%s: setup failed: %s\n", opt.tool.c_str(), e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", opt.tool.c_str(), e.what());
    return 1;
  }
}

}  // namespace rocemu::perftest
