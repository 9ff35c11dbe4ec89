// network_mode_cm.cc — perftest -R: the side channel over rdma_cm (a comm QP of its own,
// connected first, carrying the 56-byte keys as SENDs) and the data QPs connected by the same
// CM agent, as perftest's create_comm_struct, establish_connection and
// create_rdma_cm_connection (see network_session.h).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "apps/perftest/network_session.h"

namespace rocemu::perftest::net {

void Session::cm_send(const void* p, size_t n) {
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

void Session::cm_recv(void* p, size_t n, int timeout_ms) {
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
  nic::RdmaConnParams p;  // rdma_client_connect: SEND only, retry and RNR retry 7
  // -T: perftest sets RDMA_OPTION_ID_TOS on every cm_id, the comm QP's and the data QPs';
  // the REQ's path carries it and the passive side takes the REQ's.
  if (o_.tos > 0) p.traffic_class = static_cast<uint8_t>(o_.tos);
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
  if (o_.tos > 0) p.traffic_class = static_cast<uint8_t>(o_.tos);  // -T, as the comm QP's
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
                                 ipv4_to_string(req.peer_ipv4));
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
}  // namespace rocemu::perftest::net
