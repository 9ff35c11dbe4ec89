// queue_meta.h — per-packet metadata of the soft switch while an mbuf waits in an egress
// FIFO, kept in a registered mbuf dynamic field (rte_mbuf_dyn.h): the FIFOs are intrusive
// singly linked lists, so no queue has a capacity to size; the MMU alone bounds them.
// Private to switchsw/.
#pragma once

#include <cstdint>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

namespace rocemu::sw::detail {

struct QueueMeta {
  rte_mbuf* next;
  uint16_t in_port;  // ingress port (for ingress release and PFC resume)
  uint8_t prio;
};

inline QueueMeta* meta(rte_mbuf* m, int off) noexcept { return RTE_MBUF_DYNFIELD(m, off, QueueMeta*); }

}  // namespace rocemu::sw::detail
