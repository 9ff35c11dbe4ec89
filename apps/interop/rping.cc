// rping.cc — rocemu as either side of librdmacm's rping (rdma-core 44 librdmacm/examples/
// rping.c), connected through rdma_cm (nic/cm_agent.h) instead of a side channel.
//
// The loop, per ping: the client SENDs an rping_rdma_info {be64 buf, be32 rkey, be32 size}
// naming its source buffer ("rdma-ping-<n>: " then letters A..z cycling from a start that
// moves one letter per ping, NUL-terminated); the server RDMA READs it, SENDs a 16-byte "go
// ahead", gets a second rping_rdma_info naming the client's sink buffer, RDMA WRITEs the
// data back (strlen + 1 bytes) and SENDs "go ahead" again; the client compares sink and
// source. After `count` pings the client disconnects (DREQ); the server ends on the DREQ.
// rping's connection parameters: responder resources 1, initiator depth 1, retry count 7.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/interop/scenarios.h"
#include "common/wire.h"
#include "nic/cm_agent.h"

namespace rocemu::interop {

namespace {

constexpr uint32_t kInfoBytes = 16;  // struct rping_rdma_info
constexpr uint64_t kRecvWrid = 1, kSendWrid = 2, kRdmaWrid = 3;

/// rping_test_client's buffer for ping `ping` of `size` bytes.
std::vector<uint8_t> rping_pattern(uint32_t ping, uint32_t size) {
  std::vector<uint8_t> b(size, 0);
  const int cc = std::snprintf(reinterpret_cast<char*>(b.data()), size, "rdma-ping-%u: ", ping);
  int c = 65 + static_cast<int>(ping % 58);  // start: 65 + ping, wrapping after 122 ('z')
  for (uint32_t i = static_cast<uint32_t>(cc); i < size; ++i) {
    b[i] = static_cast<uint8_t>(c);
    if (++c > 122) c = 65;
  }
  b[size - 1] = 0;
  return b;
}

std::string ip_text(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 255) + "." +
         std::to_string((ip >> 8) & 255) + "." + std::to_string(ip & 255);
}

struct Rping {
  Endpoint& ep;
  nic::RoceHost& host;
  const ScenarioOptions& opt;
  nic::CmAgent cm;
  uint32_t pd, cq, qpn = 0, conn = 0;
  std::vector<uint8_t> recv_buf = std::vector<uint8_t>(kInfoBytes), send_buf;
  std::vector<uint8_t> rdma_buf, start_buf;
  nic::MrInfo recv_mr{}, send_mr{}, rdma_mr{}, start_mr{};
  std::chrono::steady_clock::time_point deadline;
  bool disconnected = false;
  uint32_t recvs = 0;  // RECV completions not yet consumed by the loop
  int rdma_done = 0, sends_done = 0;

  static nic::cm::CmConfig cm_config(const nic::RoceHost& h) {
    nic::cm::CmConfig c;
    c.ipv4 = h.ipv4();
    // A communication ID a restarted tool does not repeat (a peer in time-wait would take a
    // repeated one for a stale connection).
    const auto t =
        static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    c.first_comm_id = static_cast<uint32_t>(t ^ (t >> 32)) | 1;
    c.ca_guid = 0x0200000000000000ull | h.ipv4();
    return c;
  }

  Rping(Endpoint& e, nic::RoceHost& h, const ScenarioOptions& o, uint32_t pd_)
      : ep(e), host(h), opt(o), cm(h, pd_, cm_config(h)), pd(pd_) {
    cq = host.create_cq(64);
    send_buf.resize(kInfoBytes);
    rdma_buf.resize(opt.size_bytes);
    recv_mr = host.reg_mr(pd, recv_buf.data(), recv_buf.size(), IBV_ACCESS_LOCAL_WRITE);
    send_mr = host.reg_mr(pd, send_buf.data(), send_buf.size(), 0);
    const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
    rdma_mr = host.reg_mr(pd, rdma_buf.data(), rdma_buf.size(), rw);
    if (!opt.server) {
      start_buf.resize(opt.size_bytes);
      start_mr = host.reg_mr(pd, start_buf.data(), start_buf.size(), rw);
    }
    nic::QpInitAttr a;
    a.pd = pd;
    a.send_cq = a.recv_cq = cq;
    a.max_send_wr = 16;  // RPING_SQ_DEPTH
    a.max_recv_wr = 2;
    qpn = host.create_qp(a);
    if (qpn == 0 || recv_mr.lkey == 0 || rdma_mr.lkey == 0)
      throw std::runtime_error("rping: cannot create the QP or register the buffers");
    deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(opt.timeout_ms);
  }

  static nic::RdmaConnParams conn_params() {
    nic::RdmaConnParams p;  // rping_connect_client: responder resources 1, initiator depth 1
    p.responder_resources = 1;
    p.initiator_depth = 1;
    p.retry_count = 7;
    return p;
  }

  void check_time(const char* what) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error(std::string("rping: timed out ") + what + "\n" +
                               ep.counters_report());
  }

  /// One turn of the loop: the port, the CM, our completions.
  void step() {
    const TimeNs now = ep.poll();
    cm.poll(now);
    nic::cm::CmEvent e;
    while (cm.pop_event(e)) handle(e);
    ibv_wc wc[8];
    const int n = host.poll_cq(cq, 8, wc);
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) {
        if (wc[i].status == IBV_WC_WR_FLUSH_ERR && disconnected) continue;
        throw std::runtime_error(std::string("rping: completion failed: ") +
                                 wc_status_name(wc[i].status) + "\n" + ep.counters_report());
      }
      if (wc[i].opcode == IBV_WC_RECV) {
        if (wc[i].byte_len != kInfoBytes)
          throw std::runtime_error("rping: received bogus data, size " +
                                   std::to_string(wc[i].byte_len));
        ++recvs;
      } else if (wc[i].opcode == IBV_WC_SEND) {
        ++sends_done;
      } else {
        ++rdma_done;
      }
    }
  }

  nic::cm::CmEvent pending_request;
  bool have_request = false, established = false;
  uint32_t remote_qpn = 0;
  void handle(const nic::cm::CmEvent& e) {
    using nic::cm::CmEventKind;
    switch (e.kind) {
      case CmEventKind::kConnectRequest:
        if (have_request || established) {
          cm.reject(e.conn, ep.now_ns());  // one connection at a time, as rping -s without -P
        } else {
          pending_request = e;
          have_request = true;
        }
        break;
      case CmEventKind::kEstablished:
        if (e.conn == conn && !established) {
          established = true;
          remote_qpn = e.remote_qpn != 0 ? e.remote_qpn : pending_request.remote_qpn;
        }
        break;
      case CmEventKind::kRejected:
        throw std::runtime_error("rping: connection refused by " + ip_text(e.peer_ipv4) +
                                 ": REJ reason " + std::to_string(e.reject_reason) + " (" +
                                 nic::cm::rej_reason_name(e.reject_reason) + ")");
      case CmEventKind::kTimedOut:
        throw std::runtime_error("rping: no answer from " + ip_text(e.peer_ipv4) +
                                 " to the CM's resends (is rdma_cm loaded there?)");
      case CmEventKind::kDisconnected:
        if (e.conn == conn) disconnected = true;
        break;
    }
  }

  void post_recv() {
    ibv_sge sge{recv_mr.addr, kInfoBytes, recv_mr.lkey};
    ibv_recv_wr wr{};
    wr.wr_id = kRecvWrid;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if (host.post_recv(qpn, &wr, nullptr) != 0) throw std::runtime_error("rping: post_recv failed");
  }
  /// SENDs rping_rdma_info for `mr` (client) or the go-ahead (server: its send buffer as is).
  void send_info(const nic::MrInfo* mr) {
    if (mr) {
      wire::detail::put64(send_buf.data(), mr->addr);
      wire::detail::put32(send_buf.data() + 8, mr->rkey);
      wire::detail::put32(send_buf.data() + 12, opt.size_bytes);
    }
    ibv_sge sge{send_mr.addr, kInfoBytes, send_mr.lkey};
    ibv_send_wr wr{};
    wr.wr_id = kSendWrid;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (host.post_send(qpn, &wr, nullptr) != 0) throw std::runtime_error("rping: post_send failed");
  }
  void rdma(ibv_wr_opcode op, uint64_t remote, uint32_t rkey, uint32_t len) {
    ibv_sge sge{rdma_mr.addr, len, rdma_mr.lkey};
    ibv_send_wr wr{};
    wr.wr_id = kRdmaWrid;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = op;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = remote;
    wr.wr.rdma.rkey = rkey;
    if (host.post_send(qpn, &wr, nullptr) != 0) throw std::runtime_error("rping: post_send failed");
  }
  /// Steps until a RECV arrived (consumed, its buffer reposted); false on disconnect.
  bool wait_recv(const char* what) {
    while (recvs == 0) {
      if (disconnected) return false;
      step();
      check_time(what);
    }
    --recvs;
    return true;
  }
  void wait_rdma(const char* what) {
    while (rdma_done == 0) {
      if (disconnected) throw std::runtime_error(std::string("rping: disconnected ") + what);
      step();
      check_time(what);
    }
    --rdma_done;
  }
  void linger(int ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) step();
  }

  int client() {
    conn = cm.connect(qpn, opt.peer_roce_ipv4, opt.port, conn_params(), ep.now_ns());
    while (!established) {
      step();
      check_time("waiting for the REP");
    }
    post_recv();
    std::printf("rping-client: connected to %s:%u (QP 0x%x -> 0x%x)\n",
                ip_text(opt.peer_roce_ipv4).c_str(), opt.port, qpn, remote_qpn);
    for (uint32_t ping = 0; ping < opt.count; ++ping) {
      const auto pattern = rping_pattern(ping, opt.size_bytes);  // into the registered buffer
      std::copy(pattern.begin(), pattern.end(), start_buf.begin());
      send_info(&start_mr);
      if (!wait_recv("waiting for the server's READ"))
        throw std::runtime_error("rping: peer disconnected");
      post_recv();
      std::fill(rdma_buf.begin(), rdma_buf.end(), 0);
      send_info(&rdma_mr);
      if (!wait_recv("waiting for the server's WRITE"))
        throw std::runtime_error("rping: peer disconnected");
      post_recv();
      if (rdma_buf != start_buf)
        throw std::runtime_error("rping: data mismatch at ping " + std::to_string(ping));
      if (opt.verbose) std::printf("ping data: %s\n", reinterpret_cast<char*>(rdma_buf.data()));
    }
    cm.disconnect(conn, ep.now_ns());
    disconnected = true;  // flushed completions from here on are expected
    bool drep = false;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!drep && std::chrono::steady_clock::now() < end) {
      const TimeNs now = ep.poll();
      cm.poll(now);
      nic::cm::CmEvent e;
      while (cm.pop_event(e))
        drep |= e.kind == nic::cm::CmEventKind::kDisconnected && e.conn == conn;
    }
    std::printf("rping-client: %u pings of %u bytes, data verified, disconnected (%s)\n", opt.count,
                opt.size_bytes, drep ? "DREP received" : "no DREP within 5 s");
    return 0;
  }

  int server() {
    cm.listen(opt.port);
    std::printf("rping-server: listening on %s:%u\n", ip_text(host.ipv4()).c_str(), opt.port);
    std::fflush(stdout);
    while (!have_request) {
      step();
      check_time("waiting for a connect request");
    }
    conn = pending_request.conn;
    if (!cm.accept(pending_request, qpn, conn_params(), ep.now_ns()))
      throw std::runtime_error("rping: cannot accept the connection");
    post_recv();
    uint32_t pings = 0;
    for (;;) {
      if (!wait_recv("waiting for the client's source buffer")) break;  // DREQ: the end
      post_recv();
      const uint64_t src = wire::detail::get64(recv_buf.data());
      const uint32_t rkey = wire::detail::get32(recv_buf.data() + 8);
      const uint32_t len = wire::detail::get32(recv_buf.data() + 12);
      if (len > rdma_buf.size())
        throw std::runtime_error("rping: the client's buffer (" + std::to_string(len) +
                                 " bytes) is larger than ours: run both with the same --size/-S");
      rdma(IBV_WR_RDMA_READ, src, rkey, len);
      wait_rdma("waiting for the RDMA READ");
      if (opt.verbose)
        std::printf("server ping data: %s\n", reinterpret_cast<char*>(rdma_buf.data()));
      const auto expected = rping_pattern(pings, len);
      if (std::memcmp(rdma_buf.data(), expected.data(), len) != 0)
        throw std::runtime_error("rping: ping " + std::to_string(pings) +
                                 " is not rping's pattern (data corrupted?)");
      send_info(nullptr);
      if (!wait_recv("waiting for the client's sink buffer")) break;
      post_recv();
      const uint64_t sink = wire::detail::get64(recv_buf.data());
      const uint32_t sink_rkey = wire::detail::get32(recv_buf.data() + 8);
      rdma(IBV_WR_RDMA_WRITE, sink, sink_rkey,
           static_cast<uint32_t>(strnlen(reinterpret_cast<char*>(rdma_buf.data()), len) + 1));
      wait_rdma("waiting for the RDMA WRITE");
      send_info(nullptr);
      ++pings;
    }
    linger(100);  // the DREP leaves
    if (opt.count > 0 && pings != opt.count)
      throw std::runtime_error("rping: served " + std::to_string(pings) + " pings, expected " +
                               std::to_string(opt.count));
    std::printf("rping-server: %u pings of %u bytes served and verified, client disconnected\n",
                pings, opt.size_bytes);
    return 0;
  }
};

}  // namespace

int run_rping(Endpoint& ep, nic::RoceHost& host, const ScenarioOptions& opt) {
  if (opt.size_bytes < 24 || opt.size_bytes > 65535)
    throw std::runtime_error("rping: --size must be 24..65535 (rping's -S range)");
  const uint32_t pd = host.alloc_pd();
  Rping r(ep, host, opt, pd);
  const int rc = opt.server ? r.server() : r.client();
  std::fflush(stdout);
  return rc;
}

}  // namespace rocemu::interop
