// lazy_pool.cc — the virtual-time mbuf pool, laid out as it is used (lazy_pool.h).
//
// Why anonymous memory rather than DPDK's heap (rte_pktmbuf_pool_create): DPDK zeroes heap
// memory when it is freed, so destroying a 9 KB x 32 K pool faulted in and cleared every page
// of it (12% of the 24-host Clos episode's CPU was the pool's set-up and that clearing). Here
// the memory is unmapped on free. Why grown as used: populating a pool writes every object's
// header (DPDK links them in a list) and initialising an mbuf writes its fields, so a pool
// made whole touched every page of it: at K=16 (1.8 M header-only mbufs) the kernel zeroing
// those pages was ~2 s of a ~3.8 s run, and 576 MiB of its 750 MiB of RSS.
//
// How: an ops driver of our own (a stack: last freed, first reused) over a region reserved
// whole (MAP_NORESERVE). When a dequeue finds too few objects, it populates the next 2 MiB of
// the region (rte_mempool_populate_iova: DPDK lays out the chunk's objects and enqueues them,
// into this same stack) and initialises those mbufs, until the pool holds its `n` objects.
// get_count counts the objects not yet laid out as available, so rte_mempool_avail_count and
// the pool's running dry are those of a pool made whole.
//
// Transparent huge pages: with 9 KB data rooms they only cost RSS (every 2 MB page holds mbuf
// headers); header-only pools are touched whole chunk by chunk, and 2 MiB pages make that one
// fault per chunk. So huge pages are advised for pools of small data rooms only.
//
// Header-only mbufs (data rooms of kHeaderOnlyRoomBytes past the headroom at most) are
// compact: their headroom is the mbuf header's own two lines (buf_addr points 128 bytes
// before the header's end), so the frame starts on the line after the header, an object is
// 320 bytes, not 448, and a frame's three lines (header, frame) are adjacent. Safe because
// nothing in rocemu prepends into the headroom (rte_pktmbuf_prepend, headroom writes): a
// frame is built from its data start.
#include "fabric/lazy_pool.h"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <mutex>
#include <vector>

#include "fabric/realtime_engine.h"

namespace rocemu::fabric {

namespace {

constexpr char kOpsName[] = "rocemu_lazy";
constexpr size_t kChunkBytes = size_t{2} << 20;  // one transparent huge page

struct LazyPool {
  char* base = nullptr;     // the reserved region, 2 MiB aligned
  size_t reserved = 0;      // its length
  size_t next = 0;          // offset of its first chunk not populated
  bool compact = false;     // header-only mbufs (see above)
  bool closing = false;     // being freed: never lay out more
  std::vector<void*> objs;  // the objects in the pool, the last freed on top
  // The ops are called with the lock held when a dequeue populates a chunk (DPDK enqueues
  // its objects): recursive.
  std::recursive_mutex mu;
};

LazyPool* state(const rte_mempool* mp) noexcept {
  // Before the first populate, DPDK has not called ops alloc: the state is the ops config.
  return static_cast<LazyPool*>(mp->pool_data != nullptr ? mp->pool_data : mp->pool_config);
}

// Lays out the next chunk's objects and initialises their mbufs. False if the pool holds
// all its objects (or is being freed).
bool grow(rte_mempool* mp, LazyPool& st) noexcept {
  if (st.closing || mp->populated_size >= mp->size || st.next + kChunkBytes > st.reserved)
    return false;
  const size_t before = st.objs.size();
  const int added =
      rte_mempool_populate_iova(mp, st.base + st.next, RTE_BAD_IOVA, kChunkBytes, nullptr, nullptr);
  st.next += kChunkBytes;
  if (added <= 0) return false;
  for (size_t i = before; i < st.objs.size(); ++i) {
    rte_pktmbuf_init(mp, nullptr, st.objs[i], static_cast<unsigned>(i));
    if (st.compact) {
      auto* m = static_cast<rte_mbuf*>(st.objs[i]);
      m->buf_addr = static_cast<char*>(m->buf_addr) - RTE_PKTMBUF_HEADROOM;
    }
  }
  // The lowest addresses on top: a run's first mbufs are adjacent.
  std::reverse(st.objs.begin() + static_cast<std::ptrdiff_t>(before), st.objs.end());
  return true;
}

int ops_alloc(rte_mempool* mp) {
  mp->pool_data = mp->pool_config;
  return 0;
}

void ops_free(rte_mempool* mp) {
  LazyPool* st = state(mp);
  if (st == nullptr) return;
  if (st->base != nullptr) ::munmap(st->base, st->reserved);
  delete st;
  mp->pool_data = nullptr;
  mp->pool_config = nullptr;
}

int ops_enqueue(rte_mempool* mp, void* const* obj_table, unsigned n) {
  LazyPool& st = *state(mp);
  const std::lock_guard lock(st.mu);
  st.objs.insert(st.objs.end(), obj_table, obj_table + n);
  return 0;
}

int ops_dequeue(rte_mempool* mp, void** obj_table, unsigned n) {
  LazyPool& st = *state(mp);
  const std::lock_guard lock(st.mu);
  while (st.objs.size() < n && grow(mp, st)) {
  }
  if (st.objs.size() < n) return -ENOBUFS;
  for (unsigned i = 0; i < n; ++i) {
    obj_table[i] = st.objs.back();
    st.objs.pop_back();
  }
  return 0;
}

unsigned ops_get_count(const rte_mempool* mp) {
  LazyPool& st = *state(mp);
  const std::lock_guard lock(st.mu);
  return static_cast<unsigned>(st.objs.size()) + (mp->size - mp->populated_size);
}

}  // namespace

// The ops, registered once per process (DPDK keeps a table of them; a pool names its ops).
bool lazy_pool_ops_registered() noexcept {
  static const bool ok = [] {
    rte_mempool_ops ops{};
    std::copy_n(kOpsName, sizeof(kOpsName), ops.name);
    ops.alloc = ops_alloc;
    ops.free = ops_free;
    ops.enqueue = ops_enqueue;
    ops.dequeue = ops_dequeue;
    ops.get_count = ops_get_count;
    return rte_mempool_register_ops(&ops) >= 0;
  }();
  return ok;
}

rte_mempool* create_lazy_pool(const std::string& name, uint32_t n, uint16_t data_room) {
  if (!lazy_pool_ops_registered()) {
    rte_errno = ENOSPC;  // DPDK's table of mempool ops is full
    return nullptr;
  }
  const bool compact = data_room <= RTE_PKTMBUF_HEADROOM + kHeaderOnlyRoomBytes;
  const unsigned elt_bytes =
      static_cast<unsigned>(sizeof(rte_mbuf)) + data_room - (compact ? RTE_PKTMBUF_HEADROOM : 0u);
  rte_mempool* mp =
      rte_mempool_create_empty(name.c_str(), n, elt_bytes, 256, sizeof(rte_pktmbuf_pool_private),
                               static_cast<int>(rte_socket_id()), 0);
  if (!mp) return nullptr;
  auto* st = new LazyPool;
  st->compact = compact;
  if (const int rc = rte_mempool_set_ops_byname(mp, kOpsName, st); rc != 0) {
    delete st;
    rte_mempool_free(mp);
    rte_errno = -rc;
    return nullptr;
  }
  const auto give_up = [mp](int err) -> rte_mempool* {
    free_lazy_pool(mp);  // frees st too (ops free)
    rte_errno = err;
    return nullptr;
  };
  rte_pktmbuf_pool_private priv{};
  priv.mbuf_data_room_size = data_room;
  priv.mbuf_priv_size = 0;
  rte_pktmbuf_pool_init(mp, &priv);
  // The region: what rte_mempool_populate_default would take for n objects (populate skips
  // objects that would cross a page of rte_mempool_get_page_size, so small objects need more
  // than n times their size), plus what each chunk may leave unused at its end (objects
  // larger than a page are not kept off page boundaries, but never span two chunks).
  size_t pg_sz = 0, min_chunk = 0, align = 0;
  if (const int rc = rte_mempool_get_page_size(mp, &pg_sz); rc != 0) return give_up(-rc);
  const ssize_t need = rte_mempool_op_calc_mem_size_default(
      mp, n, pg_sz == 0 ? 0 : static_cast<uint32_t>(std::countr_zero(pg_sz)), &min_chunk, &align);
  if (need < 0) return give_up(static_cast<int>(-need));
  const size_t obj_bytes = mp->header_size + mp->elt_size + mp->trailer_size;
  if (obj_bytes > kChunkBytes) return give_up(EINVAL);
  const size_t chunks = (static_cast<size_t>(need) + kChunkBytes - 1) / kChunkBytes;
  const size_t len =
      (chunks + (chunks * obj_bytes + kChunkBytes - 1) / kChunkBytes + 1) * kChunkBytes;
  void* raw = ::mmap(nullptr, len + kChunkBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return give_up(ENOMEM);
  const uintptr_t at = (reinterpret_cast<uintptr_t>(raw) + kChunkBytes - 1) & ~(kChunkBytes - 1);
  const size_t head = at - reinterpret_cast<uintptr_t>(raw);
  if (head != 0) ::munmap(raw, head);
  ::munmap(reinterpret_cast<char*>(at) + len, kChunkBytes - head);
  st->base = reinterpret_cast<char*>(at);
  st->reserved = len;
  if (compact) ::madvise(st->base, len, MADV_HUGEPAGE);  // advice only: 4 KiB pages if refused
  // Room for every object's pointer, reserved (not touched) once: no reallocation later.
  try {
    st->objs.reserve(n);
  } catch (const std::bad_alloc&) {
    return give_up(ENOMEM);
  }
  // The first chunk now: DPDK creates the pool's ops state at its first populate, and an
  // error shows here rather than at the first allocation.
  {
    const std::lock_guard lock(st->mu);
    if (!grow(mp, *st)) return give_up(ENOMEM);
  }
  return mp;
}

void free_lazy_pool(rte_mempool* mp) noexcept {
  if (mp == nullptr) return;
  // Freeing takes one object back per object laid out; with some never returned, the stack
  // runs short: it must not lay out more then.
  state(mp)->closing = true;
  rte_mempool_free(mp);
}

uint32_t lazy_pool_made(const rte_mempool* mp) noexcept { return mp->populated_size; }

}  // namespace rocemu::fabric
