/* rdma_check_proto.h — the RDMA WRITE/READ data check shared by rocemu's interop tool (C++)
 * and the guest-side tool guest_rdma_check.c (C, runs in the rxe guest): the data pattern and
 * the TCP side-channel messages. Plain C so both compile it.
 *
 * Each side registers one region of 4*B bytes: [0,B) is the target of the peer's RDMA WRITE
 * (zeroed), [B,2B) holds this side's pattern (source of our WRITE and SEND, target of the
 * peer's READ), [2B,3B) receives our READ of the peer's [B,2B), [3B,4B) receives the peer's
 * SEND (one RECV posted before the QP connects). Each side first WRITEs and READs, then SENDs.
 * The pattern is splitmix64(seed ^ word index) per 8-byte word, so a misplaced, repeated or
 * dropped packet shows up at its offset.
 *
 * Side channel (TCP, fixed-size NUL-padded messages, rocemu listens, the guest connects):
 *   guest -> rocemu  INFO  (kRcInfoBytes)   its QPN, PSN, region address, rkey, B, seed
 *   rocemu -> guest  INFO                   rocemu's (its QP is already RTS)
 *   guest -> rocemu  "GO"  (kRcCtlBytes)    the guest QP is RTS too: both may start
 *   each side        "DONE <n>"             its WRITE, READ, SEND and RECV completed;
 *                                           n = mismatches in what it READ plus what it RECEIVED
 *   each side        "VERIFIED <n>"         after the peer's DONE: n = mismatches in [0,B)
 */
#ifndef ROCEMU_APPS_INTEROP_RDMA_CHECK_PROTO_H_
#define ROCEMU_APPS_INTEROP_RDMA_CHECK_PROTO_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define RC_CHECK_PORT 18516
#define RC_INFO_BYTES 96
#define RC_CTL_BYTES 32
#define RC_REGIONS 4
#define RC_INFO_FMT "RDMACHECK %06x %06x %016llx %08x %08x %016llx"

static inline uint64_t rc_pattern_word(uint64_t seed, uint64_t index) {
  uint64_t z = (seed ^ index) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Fills len bytes (a multiple of 8) with the pattern of seed. */
static inline void rc_pattern_fill(uint8_t* p, size_t len, uint64_t seed) {
  for (size_t i = 0; i < len / 8; ++i) {
    const uint64_t w = rc_pattern_word(seed, i);
    memcpy(p + 8 * i, &w, 8);
  }
}

/* Number of 8-byte words of p[0,len) that differ from the pattern of seed. */
static inline size_t rc_pattern_mismatches(const uint8_t* p, size_t len, uint64_t seed) {
  size_t bad = 0;
  for (size_t i = 0; i < len / 8; ++i) {
    const uint64_t w = rc_pattern_word(seed, i);
    if (memcmp(p + 8 * i, &w, 8) != 0) ++bad;
  }
  return bad;
}

struct rc_info {
  uint32_t qpn, psn, rkey, bytes;
  uint64_t addr, seed;
};

/* Writes the INFO message into out[RC_INFO_BYTES] (NUL padded). */
static inline void rc_info_format(const struct rc_info* in, char* out) {
  memset(out, 0, RC_INFO_BYTES);
  snprintf(out, RC_INFO_BYTES, RC_INFO_FMT, in->qpn, in->psn, (unsigned long long)in->addr,
           in->rkey, in->bytes, (unsigned long long)in->seed);
}

/* Parses an INFO message; returns 0 on success, -1 if malformed. */
static inline int rc_info_parse(const char* msg, struct rc_info* out) {
  unsigned qpn, psn, rkey, bytes;
  unsigned long long addr, seed;
  char buf[RC_INFO_BYTES + 1];
  memcpy(buf, msg, RC_INFO_BYTES);
  buf[RC_INFO_BYTES] = 0;
  /* Only the format's own characters: sscanf's %x would take "-8" as 0xfffffff8 and "+1"
   * or "0x1" as 1, so a malformed peer could pass a negative length for a valid one. */
  if (strncmp(buf, "RDMACHECK ", 10) != 0) return -1;
  for (const char* c = buf + 10; *c; ++c) {
    const int hex =
        (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') || (*c >= 'A' && *c <= 'F');
    if (!hex && *c != ' ') return -1;
  }
  if (sscanf(buf, "RDMACHECK %x %x %llx %x %x %llx", &qpn, &psn, &addr, &rkey, &bytes, &seed) != 6)
    return -1;
  if (qpn > 0xffffff || psn > 0xffffff || bytes == 0 || bytes % 8 != 0) return -1;
  out->qpn = qpn;
  out->psn = psn;
  out->addr = addr;
  out->rkey = rkey;
  out->bytes = bytes;
  out->seed = seed;
  return 0;
}

#endif /* ROCEMU_APPS_INTEROP_RDMA_CHECK_PROTO_H_ */
