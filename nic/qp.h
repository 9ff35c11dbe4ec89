// qp.h — the verbs objects of one RoceHost: memory regions, completion queues, work queue
// entries and the RC queue pair with its requester, completer and responder state.
//
// Follows IBTA Vol. 1 ch. 10 (verbs objects) and ch. 9.7 (RC transport). Work requests and
// completions are rdma-core's own ibv_send_wr / ibv_recv_wr / ibv_wc. All rings are sized at
// creation, so the data path never allocates. A QP is RC, UC or UD (IBV_QPT_*, ch. 9.8); UC
// and UD share the RC structures and ignore the acknowledgement state. PSNs are 24-bit (psn.h);
// sizes in bytes.
#pragma once

#include <infiniband/verbs.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "common/icrc.h"
#include "common/time_ns.h"
#include "nic/packet.h"

namespace rocemu::nic {

inline constexpr int kMaxSge = 4;

/// A registered region: `length` bytes at host address `addr`, named in work requests and on
/// the wire by I/O virtual addresses from `iova` on (ibv_reg_mr: iova = addr;
/// ibv_reg_mr_iova: the caller's choice).
struct MemoryRegion {
  uint8_t* addr = nullptr;
  uint64_t iova = 0;
  uint64_t length = 0;
  int access = 0;  // IBV_ACCESS_* flags
  uint32_t pd = 0;
  uint32_t lkey = 0, rkey = 0;
  bool valid = false;
  /// [va, va+len) of I/O virtual addresses inside the region (overflow-safe).
  bool contains(uint64_t va, uint64_t len) const noexcept {
    return va >= iova && len <= length && va - iova <= length - len;
  }
  /// The host address of I/O virtual address `va` (one the region contains).
  uint8_t* at(uint64_t va) const noexcept { return addr + (va - iova); }
};

/// A ring of completions; poll_cq() takes from the head. The entries are left uninitialised
/// (a fabric of 1,024 hosts has 2,048 CQs of 8,192 entries: 805 MB if zeroed) and the ring
/// restarts at entry 0 whenever it is empty, so the pages it touches are those of the most
/// completions ever waiting at once, not of its whole capacity.
struct CompletionQueue {
  explicit CompletionQueue(uint32_t entries)
      : ring(new ibv_wc[entries == 0 ? 1 : entries]), size(entries == 0 ? 1 : entries) {}
  std::unique_ptr<ibv_wc[]> ring;
  uint32_t size;
  uint32_t head = 0, count = 0;
  uint64_t overflows = 0;
  bool push(const ibv_wc& wc) noexcept {
    if (count == size) [[unlikely]] {
      ++overflows;
      return false;
    }
    const uint32_t at = head + count;  // < 2 size: one subtraction, no division
    ring[at >= size ? at - size : at] = wc;
    ++count;
    return true;
  }
  /// Takes the oldest completion (count > 0).
  ibv_wc pop() noexcept {
    const ibv_wc wc = ring[head];
    head = --count == 0 ? 0 : head + 1 == size ? 0 : head + 1;
    return wc;
  }
};

struct SendWqe {
  uint64_t wr_id = 0;
  ibv_wr_opcode opcode = IBV_WR_RDMA_WRITE;
  unsigned send_flags = 0;
  uint32_t imm_be = 0;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint64_t compare_add = 0, swap = 0;  // atomics: ibv_send_wr wr.atomic (host order)
  std::array<ibv_sge, kMaxSge> sge{};
  int num_sge = 0;
  uint32_t length = 0;
  // Transport state, set when the WQE is first sent.
  bool started = false;
  uint32_t first_psn = 0, last_psn = 0;
  uint32_t npkts = 0;           // PSNs the message occupies (READ: response packets)
  uint32_t read_pkts_done = 0;  // READ/atomic: response packets received in order
  uint64_t first_byte = 0;      // payload bytes of the QP's stream before this WQE (window)
  // UD: the destination, from the address handle and ibv_send_wr.wr.ud at post time.
  uint32_t ud_dest_ip = 0, ud_dest_qpn = 0, ud_qkey = 0;
  uint8_t ud_tos = 0;
};

struct RecvWqe {
  uint64_t wr_id = 0;
  std::array<ibv_sge, kMaxSge> sge{};
  int num_sge = 0;
  uint32_t length = 0;
};

/// READ and the atomics: the operations that take a responder resource (max_dest_rd_atomic,
/// IBTA 9.4.4-9.4.5), count against the requester's max_rd_atomic and are completed by
/// their responses, never by a plain ACK.
constexpr bool is_rd_atomic(ibv_wr_opcode op) noexcept {
  return op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
         op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}
constexpr bool is_atomic(ibv_wr_opcode op) noexcept {
  return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/// The new value of an 8-byte atomic target holding `orig` (IBTA 9.4.5): compare & swap
/// stores `swap` if `orig` equals `compare`, fetch & add stores `orig + add` (mod 2^64).
/// The original value is what the ATOMIC_ACKNOWLEDGE returns either way.
constexpr uint64_t atomic_result(bool compare_swap, uint64_t orig, uint64_t swap_add,
                                 uint64_t compare) noexcept {
  return compare_swap ? (orig == compare ? swap_add : orig) : orig + swap_add;
}

/// A response job of the responder: the packets of an RDMA READ, or the ATOMIC_ACKNOWLEDGE
/// of an executed (or replayed) atomic (one per READ or atomic request accepted).
struct ReadJob {
  const uint8_t* addr = nullptr;
  uint32_t len = 0;
  uint32_t psn = 0;        // PSN of the READ's first response (response k has psn + k)
  uint32_t pkts_sent = 0;  // next response to send; a re-request from inside the READ starts
                           // here past 0, and its first answer is then MIDDLE (or LAST)
  uint32_t npkts = 0;
  uint32_t msn = 0;
  bool atomic = false;       // an ATOMIC_ACKNOWLEDGE (npkts 1) carrying atomic_orig
  uint64_t atomic_orig = 0;  // the target's value before the atomic
};

/// An RDMA READ or atomic request the responder accepted, kept so that a duplicate can be
/// told from a new one (as rxe's responder resources, rxe_resp.c): a duplicate READ is
/// answered again from memory, a duplicate atomic from the result saved here, never by
/// executing it again (IBTA 9.7.5.1, duplicate requests).
struct ReadRecord {
  uint32_t psn = 0, npkts = 0;  // PSNs [psn, psn + npkts) of its responses
  uint64_t va = 0;
  uint32_t len = 0, rkey = 0;
  bool valid = false;
  uint8_t opcode = 0;        // BTH opcode of the request
  uint64_t atomic_orig = 0;  // atomics: the original value returned
};
inline constexpr uint32_t kReadHistory = 16;

/// Work requests a QP's send or receive queue may hold (rxe's RXE_MAX_QP_WR).
inline constexpr uint32_t kMaxQpWr = uint32_t{1} << 20;

/// Fixed-capacity FIFO; indices grow monotonically and wrap at 2^32. Its slots are the
/// capacity rounded up to a power of two, so an index finds its slot by a mask: an index
/// taken modulo any other count jumps when it wraps (with 3 slots, 2^32 - 1 and 0 are both
/// slot 0: the 4,294,967,296th work request of a QP overwrote one still queued), and the
/// division was half of requester_has_work's time in the RC WRITE benchmark. How many
/// entries it holds is still the capacity asked for.
template <typename T>
struct Ring {
  std::vector<T> slots;
  uint32_t head = 0, tail = 0;
  uint32_t capacity = 0;  // entries it may hold (<= kMaxQpWr)
  uint32_t mask = 0;      // slots.size() - 1

  /// Empty, with room for `entries` (at most kMaxQpWr; 0 holds nothing).
  void reset(uint32_t entries) {
    capacity = entries;
    slots.assign(std::bit_ceil(std::max<uint32_t>(entries, 1)), T{});
    mask = static_cast<uint32_t>(slots.size()) - 1;
    head = tail = 0;
  }
  /// An empty ring of this one's capacity, with its storage (no allocation).
  Ring emptied() noexcept {
    Ring r;
    r.slots = std::move(slots);
    r.capacity = capacity;
    r.mask = mask;
    return r;
  }
  uint32_t size() const noexcept { return tail - head; }
  bool empty() const noexcept { return head == tail; }
  bool full() const noexcept { return size() >= capacity; }
  T& at(uint32_t index) noexcept { return slots[index & mask]; }
  const T& at(uint32_t index) const noexcept { return slots[index & mask]; }
};

/// Asks the cache for the first kPayloadPrefetchBytes of the `n` bytes at `p` (kWrite: to be
/// written): the next packet's payload, while this one's is copied. Going through a message
/// 1 KB per packet, the first lines of each packet's source (and of its destination on
/// receipt) missed the cache: the hardware's stream prefetcher starts again at every 4 KiB
/// page and loses the stream between packets (docs/nic.md, "Figures").
inline constexpr uint32_t kPayloadPrefetchBytes = 1024;
template <int kWrite>
inline void prefetch_payload(const uint8_t* p, uint64_t n) noexcept {
  const auto m = static_cast<uint32_t>(n < kPayloadPrefetchBytes ? n : kPayloadPrefetchBytes);
  for (uint32_t k = 0; k < m; k += 64) __builtin_prefetch(p + k, kWrite);
}

/// Copies `len` bytes starting `off` bytes into the SGE list to `dst` (gather) and returns
/// the CRC of `head` and them (crc32_copy_after: one pass over the payload). The SGEs were
/// validated against their regions when posted.
inline uint32_t sge_gather(const ibv_sge* sge, int num_sge, uint32_t off, uint8_t* dst,
                           uint32_t len, const IcrcHead& head) noexcept {
  uint32_t crc = 0;
  bool started = false;
  for (int i = 0; i < num_sge && len > 0; ++i) {
    if (off >= sge[i].length) {
      off -= sge[i].length;
      continue;
    }
    const uint32_t take = sge[i].length - off < len ? sge[i].length - off : len;
    const auto* src = reinterpret_cast<const uint8_t*>(sge[i].addr) + off;
    prefetch_payload<0>(src + take, sge[i].length - off - take);  // the next packet's
    crc = started ? crc32_copy(crc, dst, src, take)
                  : head.crc_with(dst, src, take);
    started = true;
    dst += take;
    len -= take;
    off = 0;
  }
  return started ? crc : head.crc_with(nullptr, nullptr, 0);
}

/// Copies `len` bytes from `src` to `off` bytes into the SGE list (scatter).
inline void sge_scatter(const ibv_sge* sge, int num_sge, uint32_t off, const uint8_t* src,
                        uint32_t len) noexcept {
  for (int i = 0; i < num_sge && len > 0; ++i) {
    if (off >= sge[i].length) {
      off -= sge[i].length;
      continue;
    }
    const uint32_t take = sge[i].length - off < len ? sge[i].length - off : len;
    std::memcpy(reinterpret_cast<uint8_t*>(sge[i].addr) + off, src, take);
    src += take;
    len -= take;
    off = 0;
  }
}

enum class CtlKind : uint8_t { kNone, kAck, kNak };

struct Qp {
  // ---- hot: requester ----
  uint32_t qpn = 0;
  ibv_qp_state state = IBV_QPS_RESET;
  ibv_qp_type qp_type = IBV_QPT_RC;  // RC, UC or UD
  uint32_t mtu_bytes = 1024;
  Ring<SendWqe> sq;           // [head, send): in flight; [send, tail): not yet sent
  uint32_t sq_send = 0;       // index of the WQE being sent
  uint32_t send_offset = 0;   // bytes of sq[sq_send] already sent
  uint32_t sq_psn = 0;        // next PSN to send
  uint32_t max_sent_psn = 0;  // highest PSN ever sent (retransmission counting)
  bool sent_any = false;
  uint32_t pkts_since_ack_req = 0;
  uint32_t reads_in_flight = 0;  // READs and atomics sent and not completed (max_rd_atomic)
  uint32_t una_psn = 0;  // oldest PSN not acknowledged
  TimeNs retrans_deadline = kNever;
  TimeNs rnr_hold_until = 0;
  uint8_t retries_left = 7, rnr_left = 7;
  bool rewound_at_una = false;   // a go-back-N to una_psn already happened
  bool rearm_on_send = false;    // restart the ACK timer with the next packet sent
  uint32_t recovery_window = 0;  // after a timeout: PSN window, doubled per progress; 0 = off
  uint64_t rate_bps = 0;         // data rate limit (paced_release.h); 0 = unlimited
  uint64_t window_bytes = 0;     // in-flight payload bytes allowed (DCQCN window; 0 = none)
  uint64_t next_wqe_byte = 0;    // payload bytes of every WQE started so far
  TimeNs next_tx_ns = 0;         // earliest release of the next data frame (paced_release.h)
  FrameTemplate data_tmpl, ctl_tmpl;
  uint8_t data_priority = 3, ctl_priority = 6;

  // ---- responder ----
  uint32_t epsn = 0;
  uint32_t msn = 0;
  uint8_t prev_opcode = 0xff;
  bool nak_sent = false;
  bool uc_drop_msg = false;  // UC: dropping the rest of a message broken by a PSN gap
  uint32_t qkey = 0;         // UD: the Q_Key received datagrams must carry (IBV_QP_QKEY)
  const MemoryRegion* write_mr = nullptr;
  uint64_t write_va = 0;  // host address of the WRITE's next byte (the region's at(), not an IOVA)
  uint32_t write_remaining = 0, write_len = 0;
  Ring<RecvWqe> rq;
  uint32_t recv_offset = 0;
  Ring<ReadJob> reads;
  std::array<ReadRecord, kReadHistory> read_history{};  // the last kReadHistory READs/atomics
  uint32_t read_history_next = 0;
  CtlKind ctl = CtlKind::kNone;
  uint8_t ctl_syndrome = 0;
  uint32_t ctl_psn = 0, ctl_msn = 0;
  bool cnp_pending = false;
  // The PSN the last ACK, last READ response or ATOMIC_ACKNOWLEDGE sent covered (a stalled
  // peer's diagnosis: RoceHost::responder_view).
  bool answered_any = false;
  uint32_t answered_psn = 0;

  // ---- cold: attributes ----
  bool destroyed = false;  // destroy_qp(): RESET, its number free for the next create_qp
  uint32_t pd = 0, send_cq = 0, recv_cq = 0;
  uint32_t dest_qpn = 0, dest_ip = 0;
  bool ipv6 = false;        // the path is IPv6 (IBV_QP_AV with a dgid that is not IPv4-mapped)
  Ipv6Addr dest_ip6{};      // IPv6 path: the peer's address (dgid)
  uint8_t sgid_index = 1;   // IPv6 path: the source GID's index (1 = IPv4 for IPv4 paths)
  uint32_t flow_label = 0;  // IPv6 path: grh.flow_label
  uint32_t initial_psn = 0;
  uint8_t timeout = 14, retry_cnt = 7, rnr_retry = 7, min_rnr_timer = 1;
  uint8_t max_rd_atomic = 1, max_dest_rd_atomic = 1;
  int access = 0;
  uint8_t tos = 0;
  int max_send_sge = kMaxSge, max_recv_sge = kMaxSge;
};

}  // namespace rocemu::nic
