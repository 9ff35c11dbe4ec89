// data_check.h — `--check_data` (a rocemu extension; perftest has none): the bytes a
// bandwidth test moves are a known pattern, and the side they land on checks them.
//
// QP q's pattern over a buffer: byte i is byte (i % 8) (little-endian) of word i / 8 of
// rocemu-interop's rdma-check pattern with seed q + 1 (splitmix64(seed ^ word index),
// apps/interop/rdma_check_proto.h), so a misplaced, repeated or missing packet shows at its
// offset. Who fills, who checks (docs/perftest.md "Data check"): WRITE and SEND, the client
// fills its send buffers and the server checks its receive buffers [0, size) at the end;
// READ, the server fills the buffers its keys advertise and the client checks what it read.
// Pure: no clock, no port.
#pragma once

#include <cstdint>
#include <cstring>

#include "apps/interop/rdma_check_proto.h"

namespace rocemu::perftest {

/// Byte `i` of QP q's pattern.
inline uint8_t check_pattern_byte(uint32_t q, uint64_t i) noexcept {
  return static_cast<uint8_t>(rc_pattern_word(uint64_t{q} + 1, i / 8) >> (8 * (i % 8)));
}

/// Writes QP q's pattern into p[0, len).
inline void fill_check_pattern(uint8_t* p, uint64_t len, uint32_t q) noexcept {
  uint64_t i = 0;
  for (; i + 8 <= len; i += 8) {
    const uint64_t w = rc_pattern_word(uint64_t{q} + 1, i / 8);
    std::memcpy(p + i, &w, 8);
  }
  for (; i < len; ++i) p[i] = check_pattern_byte(q, i);
}

/// The offset of the first byte of p[0, len) that differs from QP q's pattern; -1 if none.
inline int64_t first_pattern_mismatch(const uint8_t* p, uint64_t len, uint32_t q) noexcept {
  uint64_t i = 0;
  for (; i + 8 <= len; i += 8) {
    const uint64_t w = rc_pattern_word(uint64_t{q} + 1, i / 8);
    if (std::memcmp(p + i, &w, 8) != 0) break;
  }
  for (; i < len; ++i)
    if (p[i] != check_pattern_byte(q, i)) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace rocemu::perftest
