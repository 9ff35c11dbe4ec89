/* guest_rdma_check.c — the guest side of the RDMA WRITE/READ data check (rdma_check_proto.h).
 *
 * Built on the host against rdma-core 44's libibverbs (Debian 12, the same as the guest) and
 * handed to the rxe guest by fw_cfg. Opens rxe0, GID index 1 (IPv4-mapped, RoCEv2), one RC QP
 * (IBTA Vol. 1 ch. 9.7, 10), connects to rocemu's interop tool over TCP, then RDMA WRITEs its
 * pattern into rocemu's memory, RDMA READs rocemu's pattern, then SENDs its pattern, B bytes in
 * one work request each; it verifies what it read, received, and what rocemu wrote into it.
 *
 * rxe's requester can stall for good: it stops sending while more than 64 of the QP's packets
 * are still queued for transmission (its responder's READ replays count), and is woken by the
 * destructor of one of them only if its flag was set before that packet was freed (set after
 * the last one is freed, nothing wakes it: rxe_req.c checks, then sets; rxe_net.c decrements,
 * then checks). A post_send wakes it. CI saw it once (2026-12-07, READ responses dropped):
 * the guest's WRITE and READ completed, rocemu received none of its SEND's packets, and
 * nothing moved for the rest of the 60 s. So if the SEND has been posted and nothing completes
 * for 5 s, the guest posts a 0-byte RDMA WRITE (at most 5) and says so; a SEND that rocemu
 * lost or refused would not complete after it either.
 *
 * usage: guest_rdma_check SERVER_IP BYTES SEED [PORT [ROCE_IP [ACK_TIMEOUT]]]
 *   ROCE_IP: rocemu's RoCE address (10.77.0.2); ACK_TIMEOUT: local ACK timeout exponent (14,
 *   4.096 us x 2^14 = 67 ms). Exit 0 only if every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rdma_check_proto.h"

#define FAIL(...) do { fprintf(stderr, "guest_rdma_check: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static int io_all(int fd, void* buf, size_t n, int writing) {
  size_t done = 0;
  while (done < n) {
    struct pollfd p = {fd, writing ? POLLOUT : POLLIN, 0};
    if (poll(&p, 1, 60000) != 1) return -1;
    ssize_t r = writing ? write(fd, (char*)buf + done, n - done) : read(fd, (char*)buf + done, n - done);
    if (r <= 0) return -1;
    done += (size_t)r;
  }
  return 0;
}

static void send_ctl(int fd, const char* word, long value) {
  char m[RC_CTL_BYTES] = {0};
  snprintf(m, sizeof m, "%s %ld", word, value);
  if (io_all(fd, m, sizeof m, 1)) FAIL("side channel: cannot send %s", word);
}

static long recv_ctl(int fd, const char* word) {
  char m[RC_CTL_BYTES + 1] = {0};
  if (io_all(fd, m, RC_CTL_BYTES, 0)) FAIL("side channel: no %s from rocemu", word);
  size_t n = strlen(word);
  if (strncmp(m, word, n) != 0 || m[n] != ' ') FAIL("side channel: expected %s, got '%s'", word, m);
  return strtol(m + n + 1, NULL, 10);
}

int main(int argc, char** argv) {
  if (argc < 4) FAIL("usage: guest_rdma_check SERVER_IP BYTES SEED [PORT [ROCE_IP [ACK_TIMEOUT]]]");
  const uint32_t bytes = (uint32_t)strtoul(argv[2], NULL, 0);
  const uint64_t seed = strtoull(argv[3], NULL, 0);
  const int port = argc > 4 ? atoi(argv[4]) : RC_CHECK_PORT;
  if (bytes == 0 || bytes % 8) FAIL("BYTES must be a positive multiple of 8");

  int ndev = 0;
  struct ibv_device** devs = ibv_get_device_list(&ndev);
  if (!devs || ndev == 0) FAIL("no RDMA device");
  struct ibv_context* ctx = ibv_open_device(devs[0]);
  if (!ctx) FAIL("ibv_open_device failed");
  struct ibv_pd* pd = ibv_alloc_pd(ctx);
  uint8_t* buf = aligned_alloc(4096, RC_REGIONS * (size_t)bytes);
  if (!pd || !buf) FAIL("pd/buffer allocation failed");
  memset(buf, 0, RC_REGIONS * (size_t)bytes);
  rc_pattern_fill(buf + bytes, bytes, seed);
  struct ibv_mr* mr = ibv_reg_mr(pd, buf, RC_REGIONS * (size_t)bytes,
                                 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  struct ibv_cq* cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
  if (!mr || !cq) FAIL("mr/cq creation failed");
  struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
                                .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};
  struct ibv_qp* qp = ibv_create_qp(pd, &ia);
  if (!qp) FAIL("ibv_create_qp failed");
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .pkey_index = 0,
                          .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE};
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    FAIL("modify_qp INIT failed");
  struct ibv_sge vsge = {.addr = (uintptr_t)(buf + 3 * (size_t)bytes), .length = bytes, .lkey = mr->lkey};
  struct ibv_recv_wr rwr = {.wr_id = 3, .sg_list = &vsge, .num_sge = 1};
  struct ibv_recv_wr* rbad = NULL;
  if (ibv_post_recv(qp, &rwr, &rbad)) FAIL("ibv_post_recv failed");

  srand48(time(NULL));
  struct rc_info mine = {.qpn = qp->qp_num, .psn = (uint32_t)lrand48() & 0xffffff, .rkey = mr->rkey,
                         .bytes = bytes, .addr = (uint64_t)(uintptr_t)buf, .seed = seed};
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) FAIL("bad SERVER_IP");
  int tries = 0;
  while (connect(fd, (struct sockaddr*)&sa, sizeof sa) != 0) {
    if (++tries > 300) FAIL("cannot connect to %s:%d: %s", argv[1], port, strerror(errno));
    close(fd);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    usleep(100000);
  }
  char msg[RC_INFO_BYTES];
  rc_info_format(&mine, msg);
  struct rc_info peer;
  if (io_all(fd, msg, sizeof msg, 1) || io_all(fd, msg, sizeof msg, 0)) FAIL("INFO exchange failed");
  if (rc_info_parse(msg, &peer) || peer.bytes != bytes) FAIL("bad INFO from rocemu: '%.96s'", msg);
  printf("guest qpn 0x%06x psn 0x%06x; rocemu qpn 0x%06x psn 0x%06x, %u bytes each way\n",
         mine.qpn, mine.psn, peer.qpn, peer.psn, bytes);

  struct ibv_qp_attr r = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = peer.qpn,
                          .rq_psn = peer.psn, .max_dest_rd_atomic = 16, .min_rnr_timer = 12};
  r.ah_attr.is_global = 1;
  r.ah_attr.port_num = 1;
  r.ah_attr.grh.sgid_index = 1;
  r.ah_attr.grh.hop_limit = 64;
  /* rocemu's RoCE address is the IPv4-mapped GID of its own IP (not the side-channel IP):
   * it arrives as argv[5] if given, else 10.77.0.2 (run_guest.sh's ROCEMU_PEER_IP). */
  const char* roce_ip = argc > 5 ? argv[5] : "10.77.0.2";
  uint8_t v4[4];
  if (inet_pton(AF_INET, roce_ip, v4) != 1) FAIL("bad rocemu RoCE IP");
  memset(r.ah_attr.grh.dgid.raw, 0, 16);
  r.ah_attr.grh.dgid.raw[10] = r.ah_attr.grh.dgid.raw[11] = 0xff;
  memcpy(&r.ah_attr.grh.dgid.raw[12], v4, 4);
  if (ibv_modify_qp(qp, &r, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    FAIL("modify_qp RTR failed");
  const int ack_timeout = argc > 6 ? atoi(argv[6]) : 14;
  struct ibv_qp_attr s = {.qp_state = IBV_QPS_RTS, .sq_psn = mine.psn, .timeout = (uint8_t)ack_timeout, .retry_cnt = 7,
                          .rnr_retry = 7, .max_rd_atomic = 16};
  if (ibv_modify_qp(qp, &s, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
    FAIL("modify_qp RTS failed");
  send_ctl(fd, "GO", 0);

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  struct ibv_sge wsge = {.addr = (uintptr_t)(buf + bytes), .length = bytes, .lkey = mr->lkey};
  struct ibv_sge rsge = {.addr = (uintptr_t)(buf + 2 * (size_t)bytes), .length = bytes, .lkey = mr->lkey};
  struct ibv_send_wr rd = {.wr_id = 2, .sg_list = &rsge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
                           .send_flags = IBV_SEND_SIGNALED,
                           .wr.rdma = {.remote_addr = peer.addr + bytes, .rkey = peer.rkey}};
  struct ibv_send_wr wr = {.wr_id = 1, .next = &rd, .sg_list = &wsge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                           .send_flags = IBV_SEND_SIGNALED,
                           .wr.rdma = {.remote_addr = peer.addr, .rkey = peer.rkey}};
  struct ibv_send_wr* bad = NULL;
  if (ibv_post_send(qp, &wr, &bad)) FAIL("ibv_post_send failed");
  /* wr_id 1 WRITE, 2 READ, 3 RECV, 4 SEND (posted once WRITE and READ completed), 5 a 0-byte
   * WRITE that wakes a stalled requester (above). */
  int seen[6] = {0, 0, 0, 0, 0, 0};
  int sent = 0, kicks = 0;
  struct timespec last = t0; /* the last completion, or the SEND's post */
  while (!(seen[1] && seen[2] && seen[3] && seen[4])) {
    struct ibv_wc wc;
    int n = ibv_poll_cq(cq, 1, &wc);
    if (n < 0) FAIL("ibv_poll_cq failed");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (n == 0) {
      if (t1.tv_sec - t0.tv_sec > 60)
        FAIL("completions after 60 s: WRITE %d READ %d RECV %d SEND %d (0-byte WRITEs posted: %d)",
             seen[1], seen[2], seen[3], seen[4], kicks);
      if (sent && !seen[4] && kicks < 5 && t1.tv_sec - last.tv_sec >= 5) {
        struct ibv_send_wr kick = {.wr_id = 5, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
                                   .wr.rdma = {.remote_addr = peer.addr, .rkey = peer.rkey}};
        if (ibv_post_send(qp, &kick, &bad)) FAIL("ibv_post_send of a 0-byte WRITE failed");
        ++kicks;
        last = t1;
        printf("guest: nothing completed for 5 s after the SEND was posted: posted a 0-byte RDMA WRITE "
               "to wake rxe's requester (%d)\n", kicks);
        fflush(stdout);
      }
      continue;
    }
    last = t1;
    static const char* names[6] = {"?", "WRITE", "READ", "RECV", "SEND", "0-byte WRITE"};
    if (wc.status != IBV_WC_SUCCESS)
      FAIL("%s completion failed: %s", names[wc.wr_id < 6 ? wc.wr_id : 0], ibv_wc_status_str(wc.status));
    if (wc.wr_id == 3 && wc.byte_len != bytes) FAIL("RECV of %u bytes, expected %u", wc.byte_len, bytes);
    if (wc.wr_id >= 1 && wc.wr_id <= 5) seen[wc.wr_id] = 1;
    if (seen[1] && seen[2] && !sent) {
      struct ibv_send_wr snd = {.wr_id = 4, .sg_list = &wsge, .num_sge = 1, .opcode = IBV_WR_SEND,
                                .send_flags = IBV_SEND_SIGNALED};
      if (ibv_post_send(qp, &snd, &bad)) FAIL("ibv_post_send SEND failed");
      sent = 1;
    }
  }
  if (kicks) printf("guest: the SEND completed after %d 0-byte WRITE(s) woke rxe's requester\n", kicks);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  const size_t read_bad = rc_pattern_mismatches(buf + 2 * (size_t)bytes, bytes, peer.seed);
  const size_t recv_bad = rc_pattern_mismatches(buf + 3 * (size_t)bytes, bytes, peer.seed);
  printf("guest WRITE+READ+SEND of %u bytes each completed in %.3f s; mismatches: READ %zu, "
         "RECV %zu words\n", bytes, secs, read_bad, recv_bad);
  send_ctl(fd, "DONE", (long)(read_bad + recv_bad));
  const long peer_read_bad = recv_ctl(fd, "DONE");
  const size_t write_bad = rc_pattern_mismatches(buf, bytes, peer.seed);
  printf("rocemu's READ+RECV mismatches: %ld; rocemu's WRITE into guest memory mismatches: %zu words\n",
         peer_read_bad, write_bad);
  send_ctl(fd, "VERIFIED", (long)write_bad);
  const long peer_write_bad = recv_ctl(fd, "VERIFIED");
  printf("guest's WRITE into rocemu memory mismatches (checked by rocemu): %ld words\n", peer_write_bad);
  const int ok = read_bad == 0 && recv_bad == 0 && peer_read_bad == 0 && write_bad == 0 && peer_write_bad == 0;
  printf("RDMA-CHECK %s\n", ok ? "PASS" : "FAIL");
  close(fd);
  ibv_destroy_qp(qp);
  ibv_destroy_cq(cq);
  ibv_dereg_mr(mr);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(devs);
  return ok ? 0 : 1;
}
