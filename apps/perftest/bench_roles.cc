// bench_roles.cc — client and server roles of perftest's tests (see bench_roles.h).
#include "apps/perftest/bench_roles.h"

#include "apps/perftest/bw_peak.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "apps/interop/endpoint.h"

namespace rocemu::perftest {

namespace {
constexpr int kPollBurst = 32;
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
// perftest's cycle buffer (a page) and cache line: its atomic bandwidth test moves the target
// one cache line on per post, wrapping within the buffer (increase_rem_addr).
constexpr uint32_t kAtomicCycleBytes = 4096, kAtomicStrideBytes = 64;

/// MR and QP access of a tool: the atomic tests add remote atomic access, as perftest.
int access_of(const PerftestOptions& o) noexcept {
  return o.verb == Verb::kAtomic ? kAccess | IBV_ACCESS_REMOTE_ATOMIC : kAccess;
}

ibv_wr_opcode wr_opcode(Verb v, AtomicOp a) noexcept {
  switch (v) {
    case Verb::kWrite:
      return IBV_WR_RDMA_WRITE;
    case Verb::kRead:
      return IBV_WR_RDMA_READ;
    case Verb::kAtomic:
      return a == AtomicOp::kCmpSwap ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
    default:
      return IBV_WR_SEND;
  }
}

/// Posts one signaled WR of `size` bytes on QP q of side s (towards its peer). An atomic's
/// original value lands in the receive buffer; its target is the peer's buffer, `seq` cache
/// lines on (perftest's values: FETCH_AND_ADD adds 1, CMP_AND_SWAP compares 0, swaps 0).
int post_one(Side& s, uint32_t q, Verb verb, uint32_t size, uint64_t wr_id,
             AtomicOp atomic = AtomicOp::kFetchAdd, uint64_t seq = 0) noexcept {
  const bool read = reads_back(verb);
  ibv_sge sge{reinterpret_cast<uint64_t>(read ? s.recv_buf(q) : s.send_buf(q)), size, s.mr.lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = wr_opcode(verb, atomic);
  wr.send_flags = IBV_SEND_SIGNALED;
  if (verb == Verb::kAtomic) {
    const uint64_t lines = kAtomicCycleBytes / kAtomicStrideBytes;
    wr.wr.atomic.remote_addr = s.peer_send_addr(q) + (seq % lines) * kAtomicStrideBytes;
    wr.wr.atomic.rkey = s.peer_mr.rkey;
    wr.wr.atomic.compare_add = atomic == AtomicOp::kFetchAdd ? 1 : 0;
    wr.wr.atomic.swap = 0;
  } else {
    wr.wr.rdma.remote_addr = read ? s.peer_send_addr(q) : s.peer_recv_addr(q);
    wr.wr.rdma.rkey = s.peer_mr.rkey;
  }
  const ibv_send_wr* bad = nullptr;
  return s.host->post_send(s.qpns[q], &wr, &bad);
}

int post_receive(Side& s, uint32_t q) noexcept {
  ibv_sge sge{reinterpret_cast<uint64_t>(s.recv_buf(q)), s.half, s.mr.lkey};
  ibv_recv_wr wr{};
  wr.wr_id = q;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  const ibv_recv_wr* bad = nullptr;
  return s.host->post_recv(s.qpns[q], &wr, &bad);
}
}  // namespace

void Side::create(nic::RoceHost& h, const PerftestOptions& o, uint32_t half_bytes) {
  host = &h;
  half = half_bytes;
  region.assign(uint64_t{2} * o.num_qps * half, 0);
  pd = h.alloc_pd();
  if (o.verb == Verb::kAtomic && half_bytes < kAtomicCycleBytes)
    throw std::runtime_error("atomic tests need buffers of at least 4096 bytes");
  mr = h.reg_mr(pd, region.data(), region.size(), access_of(o));
  if (mr.lkey == 0) throw std::runtime_error("cannot register a memory region");
  const uint32_t sq = std::max<uint32_t>(o.tx_depth, 16) * 2;
  send_cq = h.create_cq(o.num_qps * sq + 64);
  recv_cq = h.create_cq(o.num_qps * o.rx_depth + 64);
  qpns.assign(o.num_qps, 0);
  for (uint32_t q = 0; q < o.num_qps; ++q) create_qp(q, o);
}

void Side::create_qp(uint32_t q, const PerftestOptions& o) {
  nic::QpInitAttr qa;
  qa.pd = pd;
  qa.send_cq = send_cq;
  qa.recv_cq = recv_cq;
  qa.max_send_wr = std::max<uint32_t>(o.tx_depth, 16) * 2;
  qa.max_recv_wr = o.rx_depth;
  const uint32_t qpn = host->create_qp(qa);
  if (qpn == 0) throw std::runtime_error("cannot create QP " + std::to_string(q));
  qpns.at(q) = qpn;
}

void Side::renew_qp(uint32_t q, const PerftestOptions& o) {
  host->destroy_qp(qpns.at(q));
  create_qp(q, o);
}

void Side::connect(uint32_t q, const nic::QpInfo& peer, const PerftestOptions& o) {
  nic::ConnectOptions co;
  co.access = access_of(o);
  co.path_mtu = nic::mtu_enum(o.mtu_bytes);
  co.timeout = o.qp_timeout;  // -1: the host's default
  // READ/atomic: the outstanding requests advertised (perftest's out_reads, 128).
  if (reads_back(o.verb))
    co.max_rd_atomic = static_cast<uint8_t>(std::min<uint32_t>(o.out_reads, 255));
  co.sgid_index = o.gid_index == 0 ? 0 : 1;
  if (int rc = nic::connect_rc(*host, qpns[q], peer, co))
    throw std::runtime_error("connect_rc of QP " + std::to_string(q) + ": errno " +
                             std::to_string(rc));
  fill_receives(q, o);
}

void Side::fill_receives(uint32_t q, const PerftestOptions& o) {
  for (uint32_t r = 0; r < o.rx_depth; ++r)
    if (post_receive(*this, q) != 0)
      throw std::runtime_error("post_recv failed while filling the receive queue");
}

void TestState::reset(const PerftestOptions& o, uint32_t size_bytes, TimeNs duration) {
  *this = TestState{};
  size = size_bytes;
  duration_ns = duration;
  for (auto& v : posted) v.assign(o.num_qps, 0);
  for (auto& v : completed) v.assign(o.num_qps, 0);
  const uint64_t n = duration != 0 ? (1u << 22) : o.iters * o.num_qps * (o.bidirectional ? 2 : 1);
  if (o.metric == Metric::kBandwidth) {
    completion_ns.reserve(n);
    post_ns.reserve(n);
  } else {
    samples_us.reserve(duration != 0 ? (1u << 22) : o.iters);
    srv_samples_us.reserve(duration != 0 ? (1u << 22) : o.iters);
  }
}

int drain_send_cq(Side& s, TestState& t) noexcept {
  ibv_wc wc[kPollBurst];
  const int n = s.host->poll_cq(s.send_cq, kPollBurst, wc);
  for (int k = 0; k < n; ++k) {
    if (wc[k].status != IBV_WC_SUCCESS) {
      t.fail(std::string("send completion: ") + interop::wc_status_name(wc[k].status));
      return 0;
    }
  }
  return n;
}

void repost_receives(Side& s, TestState& t, int& got) noexcept {
  ibv_wc wc[kPollBurst];
  got = s.host->poll_cq(s.recv_cq, kPollBurst, wc);
  for (int k = 0; k < got; ++k) {
    if (wc[k].status != IBV_WC_SUCCESS)
      return t.fail(std::string("receive completion: ") + interop::wc_status_name(wc[k].status));
    if (post_receive(s, static_cast<uint32_t>(wc[k].wr_id)) != 0) return t.fail("post_recv failed");
  }
}

bool bw_requester_step(Side& s, int r, TestState& t, const PerftestOptions& o,
                       TimeNs now) noexcept {
  if (t.start_ns < 0) t.start_ns = t.last_progress_ns = now;
  const bool posting = t.duration_ns == 0 || now < t.start_ns + t.duration_ns;
  ibv_wc wc[kPollBurst];
  const int n = s.host->poll_cq(s.send_cq, kPollBurst, wc);
  for (int k = 0; k < n; ++k) {
    if (wc[k].status != IBV_WC_SUCCESS) {
      t.fail(std::string("send completion: ") + interop::wc_status_name(wc[k].status));
      return false;
    }
    ++t.completed[r][wc[k].wr_id];
    ++t.messages;
    if (t.completion_ns.size() < t.completion_ns.capacity()) t.completion_ns.push_back(now);
    t.last_completion_ns = now;
    t.last_progress_ns = now;
  }
  bool all_done = true;
  for (uint32_t q = 0; q < o.num_qps; ++q) {
    uint64_t& posted = t.posted[r][q];
    while (posting && posted - t.completed[r][q] < o.tx_depth &&
           (t.duration_ns != 0 || posted < o.iters)) {
      const int rc = post_one(s, q, o.verb, t.size, q, o.atomic_op, posted);
      if (rc == ENOMEM) break;
      if (rc != 0) {
        t.fail("post_send: errno " + std::to_string(rc));
        return false;
      }
      if (t.first_post_ns == kNever) t.first_post_ns = now;
      if (t.post_ns.size() < t.post_ns.capacity()) t.post_ns.push_back(now);
      ++posted;
    }
    const bool target = t.duration_ns != 0 ? !posting : posted == o.iters;
    all_done = all_done && target && t.completed[r][q] == posted;
  }
  return all_done;
}

namespace {
/// perftest's WRITE ping-pong, either side: post mark k+1 once the peer's mark k+1 arrived
/// (the server's first without waiting). Records the round trip of the client's marks.
void lat_write_step(Side& s, TestState& t, const PerftestOptions& o, TimeNs now,
                    bool client) noexcept {
  uint64_t& posted = client ? t.marks_posted : t.srv_marks_posted;
  uint64_t& seen = client ? t.marks_seen : t.srv_marks_seen;
  uint64_t& completed = client ? t.marks_completed : t.srv_marks_completed;
  completed += static_cast<uint64_t>(drain_send_cq(s, t));
  if (t.failed) return;
  const uint32_t last = t.size - 1;
  const bool counted = t.duration_ns == 0;
  const bool peer_more = !counted || seen < o.iters;
  if (peer_more && s.recv_buf(0)[last] == static_cast<uint8_t>(seen + 1)) {
    ++seen;
    t.last_progress_ns = now;
    std::vector<double>& samples = client ? t.samples_us : t.srv_samples_us;
    if (posted > 0 && samples.size() < samples.capacity())
      samples.push_back(static_cast<double>(now - (client ? t.sent_ns : t.srv_sent_ns)) * 0.5 /
                        1e3);
  }
  const bool more = counted ? posted < o.iters : now < t.start_ns + t.duration_ns;
  const bool may_post = client ? seen > posted : seen >= posted;
  if (more && may_post) {
    s.send_buf(0)[last] = static_cast<uint8_t>(posted + 1);
    if (int rc = post_one(s, 0, Verb::kWrite, t.size, 0))
      return t.fail("post_send: errno " + std::to_string(rc));
    ++posted;
    (client ? t.sent_ns : t.srv_sent_ns) = now;
  }
  // Done once our last mark is acknowledged (a process may exit right after).
  const bool finished = !more && completed == posted && (!counted || client || seen == o.iters);
  if (client) {
    t.exchanges = posted;
    if (finished) t.done = true;
  } else if (finished) {
    t.srv_done = true;
  }
}
}  // namespace

void lat_client_step(Side& s, TestState& t, const PerftestOptions& o, TimeNs now) noexcept {
  if (t.start_ns < 0) t.start_ns = t.last_progress_ns = now;
  if (o.verb == Verb::kWrite) return lat_write_step(s, t, o, now, true);
  const uint32_t last = t.size - 1;
  if (!t.in_flight) {
    const bool more = t.duration_ns != 0 ? now < t.start_ns + t.duration_ns : t.exchanges < o.iters;
    if (!more) {
      t.done = true;
      return;
    }
    t.mark = static_cast<uint8_t>(t.mark % 255 + 1);  // 1..255: never the cleared 0
    s.send_buf(0)[last] = t.mark;
    t.sent_ns = now;
    if (int rc = post_one(s, 0, o.verb, t.size, 0, o.atomic_op))
      return t.fail("post_send: errno " + std::to_string(rc));
    t.in_flight = true;
  }
  bool arrived = false;
  double factor = 0.5;  // SEND: half the round trip
  const int n = drain_send_cq(s, t);
  if (t.failed) return;
  if (reads_back(o.verb) && n > 0) {  // READ, atomic: the full round trip, as perftest
    arrived = true;
    factor = 1.0;
  } else if (o.verb == Verb::kSend) {
    int got = 0;
    repost_receives(s, t, got);
    arrived = got > 0;
  }
  if (arrived) {
    if (t.samples_us.size() < t.samples_us.capacity())
      t.samples_us.push_back(static_cast<double>(now - t.sent_ns) * factor / 1e3);
    ++t.exchanges;
    t.in_flight = false;
    t.last_progress_ns = now;
  }
}

void lat_server_step(Side& s, TestState& t, const PerftestOptions& o, TimeNs now) noexcept {
  if (t.start_ns < 0) t.start_ns = t.last_progress_ns = now;
  if (o.verb == Verb::kWrite) return lat_write_step(s, t, o, now, false);
  drain_send_cq(s, t);
  if (t.failed) return;
  if (o.verb == Verb::kSend) {
    int got = 0;
    repost_receives(s, t, got);
    for (int i = 0; i < got && !t.failed; ++i) {
      if (int rc = post_one(s, 0, o.verb, t.size, 0))
        t.fail("post_send: errno " + std::to_string(rc));
      if (t.srv_sent_ns != kNever && t.srv_samples_us.size() < t.srv_samples_us.capacity())
        t.srv_samples_us.push_back(static_cast<double>(now - t.srv_sent_ns) * 0.5 / 1e3);
      t.srv_sent_ns = now;
    }
  }
}

void check_progress(TestState& t, TimeNs now) noexcept {
  if (!t.done && t.start_ns >= 0 && now - t.last_progress_ns > kNoProgressNs)
    t.fail("no completion for " + std::to_string(kNoProgressNs / kNsPerSec) + " s");
}

std::string stall_report(const Side& s, const std::string& tool, TimeNs silence_ns) {
  std::string out;
  char line[320];
  bool all_caught_up = !s.qpns.empty();
  for (uint32_t qpn : s.qpns) {
    const nic::ResponderView v = s.host->responder_view(qpn);
    all_caught_up = all_caught_up && v.caught_up();
    char answered[48] = "answered nothing";
    if (v.answered_any)
      std::snprintf(answered, sizeof answered, "last answered 0x%06x", v.answered_psn);
    std::snprintf(line, sizeof line, "%s: QP 0x%06x responder: expects PSN 0x%06x, %s%s\n",
                  tool.c_str(), qpn, v.expected_psn, answered,
                  v.answer_pending ? ", an answer still to send" : "");
    out += line;
  }
  const double silence_s = static_cast<double>(silence_ns) / 1e9;
  std::snprintf(line, sizeof line, "%s: the peer's last request arrived %.1f s ago\n",
                tool.c_str(), silence_s);
  out += line;
  if (all_caught_up && silence_ns >= kPeerSilenceNs) {
    std::snprintf(line, sizeof line,
                  "%s: the peer sent nothing for %.1f s and every packet of it that arrived was "
                  "answered: %s (or a packet was lost and its retransmission timeout is over "
                  "%.0f s)\n",
                  tool.c_str(), silence_s, kPeerStoppedVerdict,
                  static_cast<double>(kPeerSilenceNs) / 1e9);
    out += line;
  }
  return out;
}

BwRow bw_summary(const TestState& t, const PerftestOptions& o) {
  BwRow row;
  row.size_bytes = t.size;
  row.iters = t.duration_ns != 0 ? t.messages : o.iters * o.num_qps;  // perftest: n x q
  const double secs = static_cast<double>(t.last_completion_ns - t.first_post_ns) / 1e9;
  if (t.messages > 0 && secs > 0) {
    row.avg_bytes_per_s = static_cast<double>(t.messages) * t.size / secs;
    row.msg_rate_pps = static_cast<double>(t.messages) / secs;
  }
  row.peak_bytes_per_s =
      t.duration_ns != 0 ? 0 : perftest_peak_bytes_per_s(t.post_ns, t.completion_ns, t.size);
  // The whole run is one of the runs the peak is taken over, so peak >= average; when it is
  // the best one the two differ only by rounding (a different order of the same operations).
  if (row.peak_bytes_per_s > 0) row.peak_bytes_per_s = std::max(row.peak_bytes_per_s, row.avg_bytes_per_s);
  return row;
}

}  // namespace rocemu::perftest
