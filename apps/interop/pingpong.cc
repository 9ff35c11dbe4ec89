// pingpong.cc — rocemu as either side of ibv_rc_pingpong, ibv_uc_pingpong or ibv_ud_pingpong
// (rdma-core 44, libibverbs/examples/{rc,uc,ud}_pingpong.c).
//
// The loop of all three: post rx_depth receives; the client sends first; each side posts its
// next SEND only when its previous SEND completed and a RECV completed ("pending" =
// RECV|SEND), until iters sends and iters receives completed. UC connects as RC does (no
// ACKs on the wire, so a lost packet hangs both sides as it hangs the real tools); UD moves
// to RTR and RTS with no peer named, sends to an address handle with ud_pingpong's Q_Key
// 0x11111111 from buf + 40 and receives size + 40 bytes (the GRH first). Sizes in bytes.
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/interop/scenarios.h"
#include "apps/interop/side_channel.h"

namespace rocemu::interop {

namespace {
constexpr uint64_t kRecvWrid = 1, kSendWrid = 2;
constexpr uint32_t kUdQkey = 0x11111111;  // ud_pingpong.c's Q_Key
constexpr uint32_t kGrhBytes = 40;

/// Where a UD SEND goes (unused for RC/UC).
struct UdDest {
  ibv_ah* ah = nullptr;
  uint32_t qpn = 0;
};

const char* transport_text(ibv_qp_type t) {
  return t == IBV_QPT_UD ? "ud" : t == IBV_QPT_UC ? "uc" : "rc";
}

void post_recvs(nic::RoceHost& host, uint32_t qpn, const nic::MrInfo& mr, uint32_t size,
                uint32_t n) {
  ibv_sge sge{mr.addr, size, mr.lkey};
  ibv_recv_wr wr{};
  wr.wr_id = kRecvWrid;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  for (uint32_t i = 0; i < n; ++i) {
    const ibv_recv_wr* bad = nullptr;
    if (host.post_recv(qpn, &wr, &bad) != 0) throw std::runtime_error("pingpong: post_recv failed");
  }
}

void post_send(nic::RoceHost& host, uint32_t qpn, const nic::MrInfo& mr, uint32_t size,
               const UdDest& ud) {
  // UD sends from buf + 40, past the receive buffer's GRH space (ud_pingpong.c).
  ibv_sge sge{mr.addr + (ud.ah ? kGrhBytes : 0), size, mr.lkey};
  ibv_send_wr wr{};
  wr.wr_id = kSendWrid;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = ud.ah;
  wr.wr.ud.remote_qpn = ud.qpn;
  wr.wr.ud.remote_qkey = kUdQkey;
  const ibv_send_wr* bad = nullptr;
  if (host.post_send(qpn, &wr, &bad) != 0) throw std::runtime_error("pingpong: post_send failed");
}
/// A line naming the peer's transport when packets of another one arrived (else "").
std::string transport_hint(const nic::RoceHost& host, ibv_qp_type mine) {
  const auto& d = host.counters().drops;
  const uint64_t wrong = d[static_cast<int>(nic::RxDrop::kWrongTransport)];
  const uint64_t unsupported = d[static_cast<int>(nic::RxDrop::kUnsupportedTransport)];
  if (wrong == 0 && unsupported == 0) return {};
  const std::string peer = host.last_foreign_transport();  // "UD", "RD", ...
  std::string option = peer;
  for (char& c : option) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string mine_upper = transport_text(mine);
  for (char& c : mine_upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "pingpong: the peer sent " + std::to_string(wrong + unsupported) + " packet(s) of the " +
         peer + " transport, this QP is " + mine_upper +
         (unsupported ? " (rocemu implements RC, UC and UD only)"
                      : ": run the peer's matching tool or pass --transport " + option) +
         "\n";
}
}  // namespace

int run_pingpong(Endpoint& ep, nic::RoceHost& host, const ScenarioOptions& opt) {
  const bool ud = opt.transport == IBV_QPT_UD;
  if (ud && opt.size_bytes > host.params().mtu_bytes)
    throw std::runtime_error("pingpong: a UD message is one packet: --size must be at most " +
                             std::to_string(host.params().mtu_bytes) + " (the MTU)");
  const uint32_t pd = host.alloc_pd();
  const uint32_t recv_bytes = opt.size_bytes + (ud ? kGrhBytes : 0);
  std::vector<uint8_t> buf(recv_bytes, 0x7b);  // rc_pingpong's buffer fill
  const nic::MrInfo mr = host.reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
  const uint32_t cq = host.create_cq(opt.rx_depth + 16);
  nic::QpInitAttr qa;
  qa.qp_type = opt.transport;
  qa.pd = pd;
  qa.send_cq = qa.recv_cq = cq;
  qa.max_send_wr = 16;
  qa.max_recv_wr = opt.rx_depth;
  const uint32_t qpn = host.create_qp(qa);
  if (mr.lkey == 0 || qpn == 0) throw std::runtime_error("pingpong: cannot create MR/QP");
  ibv_qp_attr init{};
  init.qp_state = IBV_QPS_INIT;
  init.qp_access_flags = 0;
  init.qkey = kUdQkey;
  if (host.modify_qp(qpn, init, IBV_QP_STATE | (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS)) != 0)
    throw std::runtime_error("pingpong: modify_qp INIT failed");
  post_recvs(host, qpn, mr, recv_bytes, opt.rx_depth);
  UdDest ud_dest;

  PingpongDest mine;
  mine.qpn = qpn;
  mine.psn = host.local_info(qpn).psn;
  const bool ipv6 = opt.gid_index != 1;
  if (ipv6 && ud)
    throw std::runtime_error("pingpong: UD over IPv6 GIDs is not implemented (use -g 1)");
  ibv_gid my_gid{};
  if (!host.gid(static_cast<uint32_t>(opt.gid_index), my_gid))
    throw std::runtime_error("pingpong: no GID index " + std::to_string(opt.gid_index));
  std::memcpy(mine.gid, my_gid.raw, 16);
  const std::string my_msg = format_pingpong_dest(mine);
  char theirs_raw[kPingpongMsgBytes];
  auto connect_peer = [&](const PingpongDest& d) {
    const auto ip = ipv4_of_mapped_gid(d.gid);
    if (!ipv6 && !ip)
      throw std::runtime_error(
          "pingpong: the peer's GID is IPv6, ours IPv4-mapped: run both with -g 1, or this side "
          "with --gid-index 0 (-g 0)");
    if (ipv6 && ip)
      throw std::runtime_error(
          "pingpong: the peer's GID is IPv4-mapped, ours IPv6: run both with -g 0, or this side "
          "with --gid-index 1");
    if (ud) {
      ibv_qp_attr a{};
      a.qp_state = IBV_QPS_RTR;
      if (host.modify_qp(qpn, a, IBV_QP_STATE) != 0)
        throw std::runtime_error("pingpong: modify_qp RTR failed");
      a.qp_state = IBV_QPS_RTS;
      a.sq_psn = mine.psn;
      if (host.modify_qp(qpn, a, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0)
        throw std::runtime_error("pingpong: modify_qp RTS failed");
      ibv_ah_attr ah{};
      ah.is_global = 1;
      ah.grh.dgid = nic::ipv4_mapped_gid(ip.value_or(0));
      ah.grh.hop_limit = 1;
      ud_dest.ah = host.create_ah(pd, ah);
      ud_dest.qpn = d.qpn;
      if (!ud_dest.ah) throw std::runtime_error("pingpong: create_ah failed");
      std::printf("pingpong (ud): local QPN 0x%06x PSN 0x%06x, remote QPN 0x%06x\n", qpn, mine.psn,
                  d.qpn);
      return;
    }
    // connect_rc walks RESET->INIT->RTR->RTS; the QP is already in INIT with receives posted,
    // so walk the last two steps the same way through it.
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = d.qpn;
    a.rq_psn = d.psn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.is_global = 1;
    if (ipv6) {
      std::memcpy(a.ah_attr.grh.dgid.raw, d.gid, 16);
      a.ah_attr.grh.sgid_index = static_cast<uint8_t>(opt.gid_index);
    } else {
      a.ah_attr.grh.dgid = nic::ipv4_mapped_gid(*ip);
    }
    a.ah_attr.grh.hop_limit = 64;
    if (host.modify_qp(qpn, a,
                       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                           IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
      throw std::runtime_error("pingpong: modify_qp RTR failed");
    a = {};
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = mine.psn;
    a.timeout = static_cast<uint8_t>(opt.ack_timeout);
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = 1;
    if (host.modify_qp(qpn, a,
                       IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                           IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
      throw std::runtime_error("pingpong: modify_qp RTS failed");
    if (opt.rate_bps) host.set_qp_rate_bps(qpn, opt.rate_bps);
    std::printf("pingpong (%s): local QPN 0x%06x PSN 0x%06x, remote QPN 0x%06x PSN 0x%06x\n",
                transport_text(opt.transport), qpn, mine.psn, d.qpn, d.psn);
  };

  if (opt.server) {
    TcpChannel ch = TcpChannel::accept_one(opt.side_ip, kPingpongPort, opt.timeout_ms);
    ep.recv_polling(ch, theirs_raw, sizeof theirs_raw, opt.timeout_ms);
    const auto d = parse_pingpong_dest(theirs_raw, sizeof theirs_raw);
    if (!d) throw std::runtime_error("pingpong: malformed address message from the client");
    connect_peer(*d);
    ch.send_all(my_msg.data(), my_msg.size());
    char done[5];
    ep.recv_polling(ch, done, sizeof done, opt.timeout_ms);
  } else {
    TcpChannel ch = TcpChannel::connect_to(opt.peer_side_ip, kPingpongPort, opt.timeout_ms);
    ch.send_all(my_msg.data(), my_msg.size());
    ep.recv_polling(ch, theirs_raw, sizeof theirs_raw, opt.timeout_ms);
    const auto d = parse_pingpong_dest(theirs_raw, sizeof theirs_raw);
    if (!d) throw std::runtime_error("pingpong: malformed address message from the server");
    connect_peer(*d);
    ch.send_all("done", 5);
  }

  uint64_t pending = kRecvWrid;
  uint32_t scnt = 0, rcnt = 0, posted_recvs = opt.rx_depth;
  const auto t0 = std::chrono::steady_clock::now();
  if (!opt.server) {
    post_send(host, qpn, mr, opt.size_bytes, ud_dest);
    pending |= kSendWrid;
  }
  while (scnt < opt.iters || rcnt < opt.iters) {
    const TimeNs now = ep.poll();
    (void)now;
    ibv_wc wc[16];
    const int n = host.poll_cq(cq, 16, wc);
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) {
        std::fprintf(stderr, "pingpong: %s completion failed: %s (after %u sends, %u recvs)\n%s",
                     wc[i].wr_id == kSendWrid ? "send" : "recv", wc_status_name(wc[i].status), scnt,
                     rcnt, ep.counters_report().c_str());
        return 1;
      }
      if (wc[i].wr_id == kSendWrid) {
        ++scnt;
      } else {
        ++rcnt;
        if (--posted_recvs <= 1) {
          post_recvs(host, qpn, mr, recv_bytes, opt.rx_depth - posted_recvs);
          posted_recvs = opt.rx_depth;
        }
      }
      pending &= ~wc[i].wr_id;
      if (scnt < opt.iters && pending == 0) {
        post_send(host, qpn, mr, opt.size_bytes, ud_dest);
        pending = kRecvWrid | kSendWrid;
      }
    }
    if (std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(opt.timeout_ms)) {
      std::fprintf(stderr, "pingpong: timed out after %u sends, %u recvs\n%s%s", scnt, rcnt,
                   ep.counters_report().c_str(), transport_hint(host, opt.transport).c_str());
      return 1;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Let the last ACKs leave before the port closes.
  const auto t1 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t1 < std::chrono::milliseconds(200)) ep.poll();
  std::printf(
      "pingpong: PASS %u iters of %u bytes each way in %.3f s = %.1f usec/iter (rocemu %s)\n",
      opt.iters, opt.size_bytes, secs, secs * 1e6 / opt.iters, opt.server ? "server" : "client");
  std::printf("%s", ep.counters_report().c_str());
  return 0;
}

}  // namespace rocemu::interop
