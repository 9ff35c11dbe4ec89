// bench_roles.h — the client and server roles of perftest's six tests on one rocemu endpoint,
// shared by the loopback pair (both roles in one process) and the network mode (one role).
//
// A Side is one host's resources: a region of num_qps x (send half | receive half) of
// `half` bytes each, its MR, a send and a receive CQ, num_qps RC QPs, receive queues kept
// full (rx_depth per QP, each receive the whole receive half). The peer's layout is the same,
// so remote addresses follow from the peer's MR base (perftest's key message vaddr/rkey).
// The step functions are called once per poll iteration with the poll loop's `now` (ns) and
// never block. Bandwidth (requester): up to tx_depth signaled WRs in flight per QP, each
// completion time recorded. Latency ping-pong: WRITE as perftest's run_iter_lat_write (the
// k-th WRITE of either side carries (uint8_t)k in the last byte; the server writes 1 at
// once, then each side writes k after it saw the peer's k; a sample is the time from our
// k to the peer's k+1, so -n n gives n-1 samples), SEND waits for the receive completion
// (the client sends first, as perftest), READ times one READ, an atomic one atomic (full
// round trip; WRITE/SEND samples are half the round trip). Atomics (8 bytes, perftest's
// values and targets, see post_one in bench_roles.cc) follow READ's flow throughout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/perftest/perftest_options.h"
#include "apps/perftest/perftest_report.h"
#include "common/time_ns.h"
#include "nic/roce_host.h"

namespace rocemu::perftest {

struct Side {
  nic::RoceHost* host = nullptr;
  std::vector<uint8_t> region;
  uint32_t half = 0;
  nic::MrInfo mr, peer_mr;
  uint32_t pd = 0, send_cq = 0, recv_cq = 0;
  std::vector<uint32_t> qpns;
  // The peer's buffer of QP q as its key message gave it (network mode: a real perftest
  // peer's layout is its own). Empty: the peer's layout is ours (loopback) and WRITE/SEND
  // go to its receive half, READ from its send half.
  std::vector<uint64_t> peer_addr;

  /// Registers the region and creates the CQs and num_qps QPs (in RESET) on `h` (not owned).
  /// Throws std::runtime_error on failure.
  void create(nic::RoceHost& h, const PerftestOptions& o, uint32_t half_bytes);
  /// Connects QP q to the peer's `peer` and fills its receive queue (rx_depth receives).
  /// Throws std::runtime_error on failure.
  void connect(uint32_t q, const nic::QpInfo& peer, const PerftestOptions& o);
  /// Creates QP q (in RESET) into qpns[q].
  void create_qp(uint32_t q, const PerftestOptions& o);
  /// Destroys QP q and creates a fresh one in its place (-R: a refused rdma_cm connection
  /// leaves its QP in ERR; perftest's client retries with new resources).
  void renew_qp(uint32_t q, const PerftestOptions& o);
  /// Fills QP q's receive queue (rx_depth receives): connect() does it; a QP that rdma_cm
  /// connected (-R) gets it once established. Throws std::runtime_error on failure.
  void fill_receives(uint32_t q, const PerftestOptions& o);

  uint8_t* send_buf(uint32_t q) noexcept { return region.data() + uint64_t{2} * q * half; }
  uint8_t* recv_buf(uint32_t q) noexcept { return send_buf(q) + half; }
  uint64_t peer_send_addr(uint32_t q) const noexcept {
    return peer_addr.empty() ? peer_mr.addr + uint64_t{2} * q * half : peer_addr[q];
  }
  uint64_t peer_recv_addr(uint32_t q) const noexcept {
    return peer_addr.empty() ? peer_send_addr(q) + half : peer_addr[q];
  }
};

/// The state of one test of one message size.
struct TestState {
  uint32_t size = 0;
  TimeNs duration_ns = 0;  // 0: opt.iters
  TimeNs start_ns = -1, last_progress_ns = 0;
  bool done = false, failed = false;
  std::string error;
  // bandwidth, per requester side (0 client, 1 server with -b) and QP
  std::vector<uint64_t> posted[2], completed[2];
  std::vector<TimeNs> completion_ns;  // reserved up front; later completions only counted
  std::vector<TimeNs> post_ns;        // the same for posts (perftest's tposted)
  uint64_t messages = 0;
  TimeNs first_post_ns = kNever, last_completion_ns = 0;
  // latency client
  uint64_t exchanges = 0;
  bool in_flight = false;
  uint8_t mark = 0;
  TimeNs sent_ns = 0;
  std::vector<double> samples_us;  // reserved up front
  // latency server: its own samples, as perftest's server measures them (WRITE: from its
  // mark k to the client's k+1; SEND: between successive replies, halved)
  uint8_t echoed_mark = 0;
  TimeNs srv_sent_ns = kNever;
  std::vector<double> srv_samples_us;  // reserved up front
  // WRITE latency, both sides (perftest's run_iter_lat_write): marks posted and received;
  // the k-th WRITE carries (uint8_t)k in its last byte
  uint64_t marks_posted = 0, marks_seen = 0, marks_completed = 0;  // the client's
  uint64_t srv_marks_posted = 0, srv_marks_seen = 0, srv_marks_completed = 0;  // the server's
  bool srv_done = false;  // the server posted and saw every mark (loopback: same state)

  /// Resets for a test of `size_bytes` (num_qps QPs) and reserves the sample vectors.
  void reset(const PerftestOptions& o, uint32_t size_bytes, TimeNs duration);
  void fail(std::string why) {
    failed = done = true;
    error = std::move(why);
  }
};

/// Requester side `r` of a bandwidth test: polls completions, posts up to tx_depth per QP.
/// Returns true when every QP of this side finished (iterations, or duration and all
/// completed); the caller sets t.done when every requester has.
bool bw_requester_step(Side& s, int r, TestState& t, const PerftestOptions& o, TimeNs now) noexcept;
/// Reposts a receive for every SEND that arrived; `got` receives the count. Fails t on error.
void repost_receives(Side& s, TestState& t, int& got) noexcept;
/// Drains the send CQ (errors fail t); returns the number of successful completions.
int drain_send_cq(Side& s, TestState& t) noexcept;
/// Latency client: sends the next ping when none is in flight, records the sample when the
/// pong arrives; t.done after opt.iters exchanges (or the duration).
void lat_client_step(Side& s, TestState& t, const PerftestOptions& o, TimeNs now) noexcept;
/// Latency server: WRITE: perftest's ping-pong (writes mark 1 at once, then k+1 after the
/// client's k; t.srv_done once all -n marks went both ways and ours completed); SEND: sends
/// back each ping; READ, atomic: nothing, the responder answers.
void lat_server_step(Side& s, TestState& t, const PerftestOptions& o, TimeNs now) noexcept;
/// check_progress's limit: a test that completes nothing for this long fails.
inline constexpr TimeNs kNoProgressNs = 10 * kNsPerSec;
/// Fails t if nothing completed for kNoProgressNs.
void check_progress(TestState& t, TimeNs now) noexcept;
/// Marks the line stall_report prints when the peer stopped on its own (the interop tests'
/// check_perftest_output.py looks for it).
inline constexpr const char* kPeerStoppedVerdict = "its requester stopped of its own accord";
/// The silence after which stall_report calls a peer whose every request was answered
/// stopped (longer than any retransmission timeout perftest's -u sets by default).
inline constexpr TimeNs kPeerSilenceNs = 5 * kNsPerSec;
/// What this side's responders saw of a test that failed: one line per QP of s (the PSN it
/// expects next, the last one it answered, whether an answer is still to go), when the
/// peer's last request arrived (`silence_ns` ago) and, when that is kPeerSilenceNs or more
/// while every QP's responder had answered every PSN it took
/// (nic::ResponderView::caught_up), a line saying the peer stopped sending on its own:
/// nothing of it waits for an answer, so its retransmission timer has nothing to resend,
/// unless a packet was lost on the way and that timeout is longer (Linux 6.1 rxe's requester
/// can miss its wake-up so; docs/interop.md). Each line starts with `tool`.
std::string stall_report(const Side& s, const std::string& tool, TimeNs silence_ns);

/// The bandwidth row of a finished test: average = bytes / (last completion - first post);
/// peak = perftest's (apps/perftest/bw_peak.h: the best rate over any run of consecutive
/// messages, posted to completed), 0 in duration mode (-D) and 0 for a side that posted
/// nothing (the SEND server without -b), as perftest prints them (its noPeak).
BwRow bw_summary(const TestState& t, const PerftestOptions& o);

}  // namespace rocemu::perftest
