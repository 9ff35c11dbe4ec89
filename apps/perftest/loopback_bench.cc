// loopback_bench.cc — perftest's tests between two RoceHosts over one net_ring wire (see the
// header for the method and units).
#include "apps/perftest/loopback_bench.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "fabric/eal.h"
#include "fabric/realtime_engine.h"

namespace rocemu::perftest {

namespace {
constexpr TimeNs kNoProgressNs = 10 * kNsPerSec;
constexpr int kPollBurst = 32;
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

ibv_wr_opcode wr_opcode(Verb v) noexcept {
  return v == Verb::kWrite ? IBV_WR_RDMA_WRITE : v == Verb::kRead ? IBV_WR_RDMA_READ : IBV_WR_SEND;
}

/// A work completion status in words (ibv_wc_status_str without linking libibverbs).
const char* status_text(int status) noexcept {
  switch (status) {
    case IBV_WC_LOC_LEN_ERR: return "local length error";
    case IBV_WC_LOC_PROT_ERR: return "local protection error";
    case IBV_WC_WR_FLUSH_ERR: return "work request flushed";
    case IBV_WC_REM_INV_REQ_ERR: return "remote invalid request";
    case IBV_WC_REM_ACCESS_ERR: return "remote access error";
    case IBV_WC_REM_OP_ERR: return "remote operation error";
    case IBV_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
    case IBV_WC_RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
    default: return "error status (see ibv_wc_status)";
  }
}
}  // namespace

// One host's resources: a region of num_qps x (send half | receive half), its MR, CQs, QPs.
struct LoopbackBench::Side {
  std::vector<uint8_t> region;
  uint32_t half = 0;
  nic::MrInfo mr, peer_mr;
  uint32_t pd = 0, send_cq = 0, recv_cq = 0;
  std::vector<uint32_t> qpns;
  uint8_t* send_buf(uint32_t q) noexcept { return region.data() + uint64_t{2} * q * half; }
  uint8_t* recv_buf(uint32_t q) noexcept { return send_buf(q) + half; }
  uint64_t peer_send_addr(uint32_t q) const noexcept { return peer_mr.addr + uint64_t{2} * q * half; }
  uint64_t peer_recv_addr(uint32_t q) const noexcept { return peer_send_addr(q) + half; }
};

// The state of the running test (bandwidth or latency).
struct LoopbackBench::Test {
  bool bw = true;
  uint32_t size = 0;
  TimeNs duration_ns = 0;
  TimeNs start_ns = -1, last_progress_ns = 0;
  bool done = false, failed = false;
  std::string error;
  // bandwidth: per requester side and QP
  std::vector<uint64_t> posted[2], completed[2];
  std::vector<TimeNs> completion_ns;
  uint64_t messages = 0;
  TimeNs first_post_ns = kNever, last_completion_ns = 0;
  // latency: one exchange in flight
  uint64_t exchanges = 0;
  bool in_flight = false, server_replied = false;
  uint8_t mark = 0;
  TimeNs sent_ns = 0;
  std::vector<double> samples_us;
};

// A RoceHost as the engine sees it, letting the bench act after every rx burst and once per
// poll iteration before tx.
class LoopbackBench::DrivenNode final : public Node {
 public:
  DrivenNode(LoopbackBench& bench, nic::RoceHost& host) noexcept : bench_(bench), host_(host) {}
  uint16_t num_ports() const noexcept override { return host_.num_ports(); }
  void rx(uint16_t port, rte_mbuf* const* pkts, uint16_t n, TimeNs now) noexcept override {
    host_.rx(port, pkts, n, now);
    bench_.drive(now);
  }
  rte_mbuf* tx(uint16_t port, TimeNs now) noexcept override {
    if (now != last_drive_ns_) {
      last_drive_ns_ = now;
      bench_.drive(now);
    }
    return host_.tx(port, now);
  }
  TimeNs next_deadline() const noexcept override { return host_.next_deadline(); }
  void on_timer(TimeNs now) noexcept override { host_.on_timer(now); }

 private:
  LoopbackBench& bench_;
  nic::RoceHost& host_;
  TimeNs last_drive_ns_ = -1;
};

LoopbackBench::LoopbackBench(const PerftestOptions& opt, uint32_t max_size_bytes) : opt_(opt) {
  fabric::EalOptions eo;
  eo.program = opt.tool;
  eo.user_args = opt.eal_args;
  if (eo.user_args.empty()) eo.user_args = {"--log-level", "lib.eal:error"};
  fabric::eal_start(eo);

  Topology topo;
  const uint32_t a = topo.add_node("client", NodeKind::kHost);
  const uint32_t b = topo.add_node("server", NodeKind::kHost);
  topo.add_link(a, b, static_cast<uint64_t>(opt.link_gbps * 1e9), 0);
  fabric::RealtimeOptions ro;
  ro.pool_mbufs = 8191;
  ro.mbuf_data_bytes = opt.mtu_bytes + 512;
  engine_ = std::make_unique<fabric::RealtimeEngine>(topo, std::vector<fabric::LinkOptions>{}, ro);

  nic::NicParams np;
  np.mtu_bytes = opt.mtu_bytes;
  np.max_qps = opt.num_qps + 1;
  region_half_bytes_ = std::max<uint32_t>(max_size_bytes, 4096);
  for (int i = 0; i < 2; ++i) {
    hosts_[i] = std::make_unique<nic::RoceHost>(np, topo, static_cast<uint32_t>(i),
                                                engine_->pool(), 0x5eed + static_cast<uint64_t>(i));
    nodes_[i] = std::make_unique<DrivenNode>(*this, *hosts_[i]);
    engine_->attach(static_cast<uint32_t>(i), nodes_[i].get());
    auto s = std::make_unique<Side>();
    s->half = region_half_bytes_;
    s->region.assign(uint64_t{2} * opt.num_qps * s->half, 0);
    nic::RoceHost& h = *hosts_[i];
    s->pd = h.alloc_pd();
    s->mr = h.reg_mr(s->pd, s->region.data(), s->region.size(), kAccess);
    if (s->mr.lkey == 0) throw std::runtime_error("cannot register a memory region");
    s->send_cq = h.create_cq(opt.num_qps * std::max<uint32_t>(opt.tx_depth, 16) * 2 + 64);
    s->recv_cq = h.create_cq(opt.num_qps * opt.rx_depth + 64);
    for (uint32_t q = 0; q < opt.num_qps; ++q) {
      nic::QpInitAttr qa;
      qa.pd = s->pd;
      qa.send_cq = s->send_cq;
      qa.recv_cq = s->recv_cq;
      qa.max_send_wr = std::max<uint32_t>(opt.tx_depth, 16) * 2;
      qa.max_recv_wr = opt.rx_depth;
      const uint32_t qpn = h.create_qp(qa);
      if (qpn == 0) throw std::runtime_error("cannot create QP " + std::to_string(q));
      s->qpns.push_back(qpn);
    }
    sides_[i] = std::move(s);
  }
  for (int i = 0; i < 2; ++i) {
    Side& s = *sides_[i];
    Side& p = *sides_[1 - i];
    s.peer_mr = p.mr;
    nic::ConnectOptions co;
    co.access = kAccess;
    co.path_mtu = nic::mtu_enum(opt.mtu_bytes);
    for (uint32_t q = 0; q < opt.num_qps; ++q) {
      const nic::QpInfo peer = hosts_[1 - i]->local_info(p.qpns[q]);
      if (int rc = nic::connect_rc(*hosts_[i], s.qpns[q], peer, co))
        throw std::runtime_error("connect_rc of QP " + std::to_string(q) + ": errno " +
                                 std::to_string(rc));
      // Receive buffers for SEND: the whole receive half, so any message size fits.
      for (uint32_t r = 0; r < opt.rx_depth; ++r) {
        ibv_sge sge{reinterpret_cast<uint64_t>(s.recv_buf(q)), s.half, s.mr.lkey};
        ibv_recv_wr wr{};
        wr.wr_id = q;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        const ibv_recv_wr* bad = nullptr;
        if (hosts_[i]->post_recv(s.qpns[q], &wr, &bad) != 0)
          throw std::runtime_error("post_recv failed while filling the receive queue");
      }
    }
  }
}

LoopbackBench::~LoopbackBench() {
  for (auto& h : hosts_) h.reset();  // nodes hold mbufs of the engine's pool
  engine_.reset();
}

namespace {
/// Posts one signaled WR of `size` bytes on QP q of side s (towards its peer).
int post_one(nic::RoceHost& h, LoopbackBench::Side& s, uint32_t q, Verb verb, uint32_t size,
             uint64_t wr_id) noexcept {
  const bool read = verb == Verb::kRead;
  ibv_sge sge{reinterpret_cast<uint64_t>(read ? s.recv_buf(q) : s.send_buf(q)), size, s.mr.lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = wr_opcode(verb);
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = read ? s.peer_send_addr(q) : s.peer_recv_addr(q);
  wr.wr.rdma.rkey = s.peer_mr.rkey;
  const ibv_send_wr* bad = nullptr;
  return h.post_send(s.qpns[q], &wr, &bad);
}

/// Reposts the receive of every SEND that arrived on side s; false (with `error`) on a failed
/// completion. Sets `got` to the number of receive completions.
bool repost_receives(nic::RoceHost& h, LoopbackBench::Side& s, int& got,
                     std::string& error) noexcept {
  ibv_wc wc[kPollBurst];
  got = h.poll_cq(s.recv_cq, kPollBurst, wc);
  for (int k = 0; k < got; ++k) {
    if (wc[k].status != IBV_WC_SUCCESS) {
      error = std::string("receive completion: ") + status_text(wc[k].status);
      return false;
    }
    const auto q = static_cast<uint32_t>(wc[k].wr_id);
    ibv_sge sge{reinterpret_cast<uint64_t>(s.recv_buf(q)), s.half, s.mr.lkey};
    ibv_recv_wr wr{};
    wr.wr_id = q;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    const ibv_recv_wr* bad = nullptr;
    if (h.post_recv(s.qpns[q], &wr, &bad) != 0) {
      error = "post_recv failed";
      return false;
    }
  }
  return true;
}
}  // namespace

void LoopbackBench::drive(TimeNs now) noexcept {
  if (test_ == nullptr || test_->done) return;
  Test& t = *test_;
  if (t.start_ns < 0) t.start_ns = t.last_progress_ns = now;
  const Verb verb = opt_.verb;
  const bool posting = t.duration_ns == 0 || now < t.start_ns + t.duration_ns;
  auto fail = [&](std::string why) {
    t.failed = t.done = true;
    t.error = std::move(why);
    engine_->stop();
  };
  if (t.bw) {
    const int requesters = opt_.bidirectional ? 2 : 1;
    bool all_done = true;
    for (int r = 0; r < requesters; ++r) {
      nic::RoceHost& h = *hosts_[r];
      Side& s = *sides_[r];
      ibv_wc wc[kPollBurst];
      const int n = h.poll_cq(s.send_cq, kPollBurst, wc);
      for (int k = 0; k < n; ++k) {
        if (wc[k].status != IBV_WC_SUCCESS)
          return fail(std::string("send completion: ") + status_text(wc[k].status));
        ++t.completed[r][wc[k].wr_id];
        ++t.messages;
        if (t.completion_ns.size() < t.completion_ns.capacity()) t.completion_ns.push_back(now);
        t.last_completion_ns = now;
        t.last_progress_ns = now;
      }
      for (uint32_t q = 0; q < opt_.num_qps; ++q) {
        uint64_t& posted = t.posted[r][q];
        while (posting && posted - t.completed[r][q] < opt_.tx_depth &&
               (t.duration_ns != 0 || posted < opt_.iters)) {
          const int rc = post_one(h, s, q, verb, t.size, q);
          if (rc == ENOMEM) break;
          if (rc != 0) return fail("post_send: errno " + std::to_string(rc));
          if (t.first_post_ns == kNever) t.first_post_ns = now;
          ++posted;
        }
        const bool target = t.duration_ns != 0 ? !posting : posted == opt_.iters;
        all_done = all_done && target && t.completed[r][q] == posted;
      }
    }
    if (verb == Verb::kSend) {
      for (int r = 0; r < 2; ++r) {
        int got = 0;
        std::string err;
        if (!repost_receives(*hosts_[r], *sides_[r], got, err)) return fail(err);
      }
    }
    if (all_done) {
      t.done = true;
      engine_->stop();
      return;
    }
  } else {
    Side& c = *sides_[0];
    Side& sv = *sides_[1];
    nic::RoceHost& hc = *hosts_[0];
    nic::RoceHost& hs = *hosts_[1];
    const bool more = t.duration_ns != 0 ? posting : t.exchanges < opt_.iters;
    const uint32_t last = t.size - 1;
    if (!t.in_flight) {
      if (!more) {
        t.done = true;
        engine_->stop();
        return;
      }
      t.mark = static_cast<uint8_t>(t.mark % 255 + 1);
      c.send_buf(0)[last] = t.mark;
      t.server_replied = false;
      t.sent_ns = now;
      if (int rc = post_one(hc, c, 0, verb, t.size, 0))
        return fail("post_send: errno " + std::to_string(rc));
      t.in_flight = true;
    }
    bool arrived = false;
    double factor = 0.5;
    ibv_wc wc[kPollBurst];
    for (int i = 0; i < 2; ++i) {
      const int n = hosts_[i]->poll_cq(sides_[i]->send_cq, kPollBurst, wc);
      for (int k = 0; k < n; ++k) {
        if (wc[k].status != IBV_WC_SUCCESS)
          return fail(std::string("send completion: ") + status_text(wc[k].status));
        if (verb == Verb::kRead && i == 0) {
          arrived = true;
          factor = 1.0;
        }
      }
    }
    if (verb == Verb::kWrite) {
      if (!t.server_replied && sv.recv_buf(0)[last] == t.mark) {
        sv.send_buf(0)[last] = t.mark;
        if (int rc = post_one(hs, sv, 0, verb, t.size, 0))
          return fail("post_send: errno " + std::to_string(rc));
        t.server_replied = true;
      }
      arrived = c.recv_buf(0)[last] == t.mark;
    } else if (verb == Verb::kSend) {
      int got = 0;
      std::string err;
      if (!repost_receives(hs, sv, got, err)) return fail(err);
      if (got > 0) {
        if (int rc = post_one(hs, sv, 0, verb, t.size, 0))
          return fail("post_send: errno " + std::to_string(rc));
      }
      if (!repost_receives(hc, c, got, err)) return fail(err);
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
  if (now - t.last_progress_ns > kNoProgressNs)
    fail("no completion for " + std::to_string(kNoProgressNs / kNsPerSec) + " s");
}

BwResult LoopbackBench::run_bw(uint32_t size_bytes, TimeNs duration_ns) {
  Test t;
  t.bw = true;
  t.size = size_bytes;
  t.duration_ns = duration_ns;
  for (auto& v : t.posted) v.assign(opt_.num_qps, 0);
  for (auto& v : t.completed) v.assign(opt_.num_qps, 0);
  const uint64_t expect = duration_ns != 0 ? (1u << 22)
                                           : opt_.iters * opt_.num_qps *
                                                 (opt_.bidirectional ? 2u : 1u);
  t.completion_ns.reserve(expect);
  test_ = &t;
  engine_->run_for(duration_ns + 3600 * kNsPerSec);
  test_ = nullptr;
  BwResult r;
  r.ok = !t.failed && t.done;
  r.error = t.failed ? t.error : (t.done ? "" : "stopped before the end");
  r.messages = t.messages;
  r.row.size_bytes = size_bytes;
  r.row.iters = duration_ns != 0 ? t.messages : opt_.iters;
  const double secs = static_cast<double>(t.last_completion_ns - t.first_post_ns) / 1e9;
  if (t.messages > 0 && secs > 0) {
    r.row.avg_bytes_per_s = static_cast<double>(t.messages) * size_bytes / secs;
    r.row.msg_rate_pps = static_cast<double>(t.messages) / secs;
  }
  // Peak: the best window of W consecutive completions, W = tx_depth (at least 2).
  const auto& c = t.completion_ns;
  const size_t w = std::max<size_t>(2, std::min<size_t>(opt_.tx_depth, c.size()));
  double peak = r.row.avg_bytes_per_s;
  for (size_t i = 0; i + w <= c.size(); ++i) {
    const TimeNs dt = c[i + w - 1] - c[i];
    if (dt > 0) peak = std::max(peak, static_cast<double>(w - 1) * size_bytes * 1e9 / static_cast<double>(dt));
  }
  r.row.peak_bytes_per_s = peak;
  return r;
}

LatResult LoopbackBench::run_lat(uint32_t size_bytes, TimeNs duration_ns) {
  Test t;
  t.bw = false;
  t.size = size_bytes;
  t.duration_ns = duration_ns;
  t.samples_us.reserve(duration_ns != 0 ? (1u << 20) : opt_.iters);
  for (auto& s : sides_) std::memset(s->recv_buf(0), 0, s->half);
  test_ = &t;
  engine_->run_for(duration_ns + 3600 * kNsPerSec);
  test_ = nullptr;
  LatResult r;
  r.ok = !t.failed && t.done;
  r.error = t.failed ? t.error : (t.done ? "" : "stopped before the end");
  r.iters = t.exchanges;
  r.stats = latency_stats(t.samples_us);
  return r;
}

}  // namespace rocemu::perftest
