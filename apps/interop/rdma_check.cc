// rdma_check.cc — rocemu's side of the WRITE/READ/SEND data check (rdma_check_proto.h).
//
// rocemu listens on the side channel; the guest (guest_rdma_check.c) connects. Both sides
// WRITE their pattern into the other's [0,B) and READ the other's [B,2B) into their own
// [2B,3B), then SEND [B,2B) into the other's RECV at [3B,4B), concurrently on one RC QP each. While
// it waits for side-channel messages the tool keeps polling its port: the guest's requests must be
// served meanwhile.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "apps/interop/rdma_check_proto.h"
#include "apps/interop/scenarios.h"
#include "apps/interop/side_channel.h"

namespace rocemu::interop {

namespace {
/// Polls the endpoint until a fixed-size control message arrives; returns its value.
long await_ctl(Endpoint& ep, TcpChannel& ch, const char* word, int timeout_ms) {
  char msg[RC_CTL_BYTES + 1] = {};
  ep.recv_polling(ch, msg, RC_CTL_BYTES, timeout_ms);
  const size_t n = std::strlen(word);
  if (std::strncmp(msg, word, n) != 0 || msg[n] != ' ')
    throw std::runtime_error(std::string("rdma check: expected ") + word + ", got '" + msg + "'");
  return std::strtol(msg + n + 1, nullptr, 10);
}

void send_ctl(TcpChannel& ch, const char* word, long value) {
  char msg[RC_CTL_BYTES] = {};
  std::snprintf(msg, sizeof msg, "%s %ld", word, value);
  ch.send_all(msg, sizeof msg);
}
}  // namespace

int run_rdma_check(Endpoint& ep, nic::RoceHost& host, const ScenarioOptions& opt) {
  const uint32_t b = opt.bytes;
  if (b == 0 || b % 8 != 0) throw std::runtime_error("rdma check: bytes must be a multiple of 8");
  std::vector<uint8_t> buf(RC_REGIONS * static_cast<size_t>(b), 0);
  rc_pattern_fill(buf.data() + b, b, opt.seed);
  const uint32_t pd = host.alloc_pd();
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  const nic::MrInfo mr = host.reg_mr(pd, buf.data(), buf.size(), access);
  const uint32_t cq = host.create_cq(64);
  nic::QpInitAttr qa;
  qa.pd = pd;
  qa.send_cq = qa.recv_cq = cq;
  qa.max_send_wr = 16;
  qa.max_recv_wr = 16;
  const uint32_t qpn = host.create_qp(qa);
  if (mr.lkey == 0 || qpn == 0) throw std::runtime_error("rdma check: cannot create MR/QP");
  ibv_qp_attr init{};
  init.qp_state = IBV_QPS_INIT;
  init.qp_access_flags = static_cast<unsigned>(access);
  if (host.modify_qp(qpn, init, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS) != 0)
    throw std::runtime_error("rdma check: modify_qp INIT failed");
  ibv_sge vsge{mr.addr + 3ull * b, b, mr.lkey};
  ibv_recv_wr rwr{};
  rwr.wr_id = 3;
  rwr.sg_list = &vsge;
  rwr.num_sge = 1;
  const ibv_recv_wr* rbad = nullptr;
  if (host.post_recv(qpn, &rwr, &rbad) != 0)
    throw std::runtime_error("rdma check: post_recv failed");

  TcpChannel ch = TcpChannel::accept_one(opt.side_ip, RC_CHECK_PORT, opt.timeout_ms);
  char msg[RC_INFO_BYTES];
  ep.recv_polling(ch, msg, sizeof msg, opt.timeout_ms);
  rc_info peer{};
  if (rc_info_parse(msg, &peer) != 0 || peer.bytes != b)
    throw std::runtime_error("rdma check: bad INFO from the guest");
  nic::ConnectOptions co;
  co.access = access;
  co.timeout = opt.ack_timeout;
  if (int rc = nic::connect_rc(host, qpn, nic::QpInfo{peer.qpn, peer.psn, opt.peer_roce_ipv4}, co))
    throw std::runtime_error("rdma check: connect_rc failed: " + std::to_string(rc));
  if (opt.rate_bps) host.set_qp_rate_bps(qpn, opt.rate_bps);
  const rc_info mine{qpn, host.local_info(qpn).psn, mr.rkey, b, mr.addr, opt.seed};
  rc_info_format(&mine, msg);
  ch.send_all(msg, sizeof msg);
  std::printf("rdma check: rocemu QPN 0x%06x PSN 0x%06x, guest QPN 0x%06x PSN 0x%06x, %u bytes\n",
              mine.qpn, mine.psn, peer.qpn, peer.psn, b);
  await_ctl(ep, ch, "GO", opt.timeout_ms);

  const auto t0 = std::chrono::steady_clock::now();
  ibv_sge wsge{mr.addr + b, b, mr.lkey};
  ibv_sge rsge{mr.addr + 2ull * b, b, mr.lkey};
  ibv_send_wr rd{};
  rd.wr_id = 2;
  rd.sg_list = &rsge;
  rd.num_sge = 1;
  rd.opcode = IBV_WR_RDMA_READ;
  rd.send_flags = IBV_SEND_SIGNALED;
  rd.wr.rdma.remote_addr = peer.addr + b;
  rd.wr.rdma.rkey = peer.rkey;
  ibv_send_wr wr = rd;
  wr.wr_id = 1;
  wr.next = &rd;
  wr.sg_list = &wsge;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.wr.rdma.remote_addr = peer.addr;
  const ibv_send_wr* bad = nullptr;
  if (host.post_send(qpn, &wr, &bad) != 0) throw std::runtime_error("rdma check: post_send failed");

  // wr_id 1 WRITE, 2 READ, 3 RECV, 4 SEND (posted once WRITE and READ completed).
  static const char* const kNames[5] = {"?", "WRITE", "READ", "RECV", "SEND"};
  bool seen[5] = {};
  bool sent = false;
  while (!(seen[1] && seen[2] && seen[3] && seen[4])) {
    ep.poll();
    ibv_wc wc[4];
    const int n = host.poll_cq(cq, 4, wc);
    for (int i = 0; i < n; ++i) {
      const uint64_t id = wc[i].wr_id < 5 ? wc[i].wr_id : 0;
      if (wc[i].status != IBV_WC_SUCCESS) {
        std::fprintf(stderr, "rdma check: rocemu %s failed: %s\n%s", kNames[id],
                     wc_status_name(wc[i].status), ep.counters_report().c_str());
        return 1;
      }
      if (id == 3 && wc[i].byte_len != b) {
        std::fprintf(stderr, "rdma check: RECV of %u bytes, expected %u\n", wc[i].byte_len, b);
        return 1;
      }
      seen[id] = true;
    }
    if (seen[1] && seen[2] && !sent) {
      ibv_send_wr snd{};
      snd.wr_id = 4;
      snd.sg_list = &wsge;
      snd.num_sge = 1;
      snd.opcode = IBV_WR_SEND;
      snd.send_flags = IBV_SEND_SIGNALED;
      if (host.post_send(qpn, &snd, &bad) != 0)
        throw std::runtime_error("rdma check: post_send SEND failed");
      sent = true;
    }
    if (std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(opt.timeout_ms)) {
      // How far the guest's requests got: PSNs rocemu's responder has taken from the guest,
      // of the guest's WRITE, READ and SEND (one PSN per packet; the guest's path MTU is 1024).
      const uint32_t taken = (host.expected_psn(qpn) - peer.psn) & 0xFFFFFFu;
      const uint32_t per_op = (b + 1023) / 1024;
      std::fprintf(
          stderr,
          "rdma check: rocemu's work did not complete (WRITE %d READ %d RECV %d SEND %d); "
          "rocemu's responder has taken %u of the guest's %u PSNs (WRITE, READ, SEND: %u each)\n%s",
          seen[1], seen[2], seen[3], seen[4], taken, 3 * per_op, per_op,
          ep.counters_report().c_str());
      return 1;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t read_bad = rc_pattern_mismatches(buf.data() + 2ull * b, b, peer.seed);
  const size_t recv_bad = rc_pattern_mismatches(buf.data() + 3ull * b, b, peer.seed);
  std::printf(
      "rdma check: rocemu WRITE+READ+SEND of %u bytes each completed in %.3f s; "
      "mismatches: READ %zu, RECV %zu words\n",
      b, secs, read_bad, recv_bad);
  send_ctl(ch, "DONE", static_cast<long>(read_bad + recv_bad));
  const long guest_bad = await_ctl(ep, ch, "DONE", opt.timeout_ms);
  const size_t write_bad = rc_pattern_mismatches(buf.data(), b, peer.seed);
  send_ctl(ch, "VERIFIED", static_cast<long>(write_bad));
  const long guest_write_bad = await_ctl(ep, ch, "VERIFIED", opt.timeout_ms);
  std::printf(
      "rdma check: guest READ+RECV mismatches %ld; guest WRITE into rocemu mismatches %zu; "
      "rocemu WRITE into guest mismatches %ld (words of 8 bytes)\n",
      guest_bad, write_bad, guest_write_bad);
  bool ok =
      read_bad == 0 && recv_bad == 0 && guest_bad == 0 && write_bad == 0 && guest_write_bad == 0;
  if (opt.read_response_loss > 0 && ep.read_responses_dropped() == 0) {
    std::printf("rdma check: no READ response was dropped: the loss case was not exercised\n");
    ok = false;
  }
  const auto t1 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t1 < std::chrono::milliseconds(200)) ep.poll();
  std::printf("rdma check: %s (%u bytes WRITE, READ and SEND each way, data verified)\n%s",
              ok ? "PASS" : "FAIL", b, ep.counters_report().c_str());
  return ok ? 0 : 1;
}

}  // namespace rocemu::interop
