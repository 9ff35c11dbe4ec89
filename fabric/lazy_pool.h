// lazy_pool.h — the virtual-time jobs' mbuf pool (RunPool::Fault::kLazy), grown as it is used.
// Internal to the fabric engine library: RunPool (fabric/realtime_engine.h) is the interface.
#pragma once

#include <rte_mempool.h>

#include <cstdint>
#include <string>

namespace rocemu::fabric {

/// A pktmbuf pool of `n` mbufs of `data_room` bytes (headroom included) in anonymous memory
/// of this process, without an IOVA (nothing DMAs in virtual time), whose mbufs are laid out
/// and initialised only when the pool first hands them out: its memory is reserved whole
/// and populated 2 MiB at a time, when the mbufs already made are all in use. So a run
/// touches the pages of the most mbufs it held at once, not of the pool's size (a K=16 fat
/// tree's pool is sized for every switch buffer full: 1.8 M mbufs, 576 MiB, of which a
/// permutation holds under 90,000). The same mbufs as rte_pktmbuf_pool_create's otherwise,
/// and it runs dry at `n` as any pool. Header-only pools (data rooms of
/// kHeaderOnlyRoomBytes past the headroom at most) are compact: see fabric/realtime_engine.cc.
/// For one thread at a time (the virtual-time engine's); never hand it to an ethdev.
/// Returns null with rte_errno set on failure.
rte_mempool* create_lazy_pool(const std::string& name, uint32_t n, uint16_t data_room);

/// Registers the pool's mempool driver (once per process): false if DPDK's table of them
/// (RTE_MEMPOOL_MAX_OPS_IDX, 16) is full. Debian 12's DPDK loads 14 drivers into it.
bool lazy_pool_ops_registered() noexcept;

/// Frees a pool of create_lazy_pool (with every mbuf returned, or not: none is made then).
void free_lazy_pool(rte_mempool* mp) noexcept;

/// Mbufs a lazy pool has laid out so far (test and report use).
uint32_t lazy_pool_made(const rte_mempool* mp) noexcept;

}  // namespace rocemu::fabric
