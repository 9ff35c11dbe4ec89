// opcode_table.h — table-driven RoCEv2 opcode knowledge (as Linux rxe's rxe_opcode.c).
//
// For every BTH opcode (IBTA Vol. 1 table 38: RC 0x00-0x1f, UC 0x20-0x2b, UD 0x64-0x65; the
// RoCEv2 CNP 0x81 of annex A17.9.3; RD 0x40-0x5f and XRC 0xa0-0xbf are not implemented and
// only named, transport_name()): whether it is valid, which extended headers follow the BTH
// (RETH 9.3.3, AETH 9.3.5, ImmDt 9.3.4, IETH 9.3.6, AtomicETH 9.3.7, AtomicAckETH 9.3.7), whether
// it carries payload, and its place in a message (first/middle/last/only). Also the legality rules
// the receive checks apply: opcode vs QP state (10.3.1) and the request sequence (9.7.5.1.2).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace rocemu::nic {

enum OpFlags : uint32_t {
  kOpValid = 1u << 0,
  kOpRequest = 1u << 1,   // requester -> responder
  kOpResponse = 1u << 2,  // responder -> requester (ACK, atomic ACK, read response)
  kOpFirst = 1u << 3,
  kOpMiddle = 1u << 4,
  kOpLast = 1u << 5,
  kOpSend = 1u << 6,
  kOpWrite = 1u << 7,
  kOpRead = 1u << 8,  // read request
  kOpReadResp = 1u << 9,
  kOpAck = 1u << 10,     // ACK / NAK / atomic ACK
  kOpAtomic = 1u << 11,  // compare-swap / fetch-add request
  kOpCnp = 1u << 12,
  kOpReth = 1u << 13,
  kOpAeth = 1u << 14,
  kOpImm = 1u << 15,
  kOpIeth = 1u << 16,
  kOpAtomicEth = 1u << 17,
  kOpAtomicAckEth = 1u << 18,
  kOpPayload = 1u << 19,  // may carry payload
  kOpCnpPad = 1u << 20,   // 16 reserved bytes after the BTH (CNP)
  kOpDeth = 1u << 21,     // datagram ETH (9.3.2), UD
  kOpUc = 1u << 22,       // UC transport (IBTA 9.8: no ACKs)
  kOpUd = 1u << 23,       // UD transport (IBTA 9.8: datagrams, DETH)
  kOpOnly = kOpFirst | kOpLast,
};

struct OpInfo {
  const char* name;
  uint32_t flags;
  uint8_t ext_bytes;  // bytes of extended headers between the BTH and the payload
};

/// The table entry of `opcode` (flags == 0 for an opcode rocemu does not know).
const OpInfo& op_info(uint8_t opcode) noexcept;

/// The transport of `opcode` by its top three bits (IBTA table 38): "RC", "UC", "RD", "UD",
/// "CNP" (0x80, RoCEv2), "XRC", or "manufacturer-specific" (0xc0-0xff).
const char* transport_name(uint8_t opcode) noexcept;

/// Whether `opcode` belongs to a transport rocemu implements (RC, UC, UD, the CNP); an
/// opcode that does not is counted as RxDrop::kUnsupportedTransport and logged.
bool transport_implemented(uint8_t opcode) noexcept;

/// Whether a packet with `opcode` may be processed by a QP in `state` (IBTA 10.3.1: requests
/// in RTR/RTS/SQD/SQE, responses in RTS/SQD/SQE; nothing in RESET, INIT or ERR).
bool opcode_legal_in_state(uint8_t opcode, ibv_qp_state state) noexcept;

/// UC's SEND/WRITE opcodes are RC's (0x00-0x0b) with the transport bits 001 (table 38).
constexpr uint8_t kUcTransport = 0x20;
constexpr uint8_t uc_opcode(uint8_t rc_opcode) noexcept {
  return static_cast<uint8_t>(rc_opcode | kUcTransport);
}
/// UD's SEND ONLY and SEND ONLY with immediate (DETH, table 38).
constexpr uint8_t kUdSendOnly = 0x64, kUdSendOnlyImm = 0x65;

/// Responder sequence rule (RC and UC alike): after `prev` (the last accepted request opcode of the
/// QP, or 0xff for none) may `next` follow? A SEND/WRITE FIRST or MIDDLE must be followed by a
/// MIDDLE or LAST of the same kind; otherwise no MIDDLE or LAST may come.
bool op_sequence_ok(uint8_t prev, uint8_t next) noexcept;

/// Requester rule for READ responses: may a response whose opcode has position flags
/// `op_flags` be response `k` (0-based) of a READ of `npkts` response packets? Response 0 is
/// FIRST (ONLY when npkts == 1). A later one continues the original request (MIDDLE, LAST)
/// or begins the answer to a re-request from PSN first + k: Linux rxe replays such a
/// duplicate READ as MIDDLE ... LAST (rxe_resp.c, replay state), rocemu's responder as a
/// new request FIRST ... LAST (or ONLY), so both are accepted (IBTA 9.7.5.1.4 leaves the
/// responder's choice to the implementation; the offset follows from the PSN either way).
constexpr bool read_response_position_ok(uint32_t op_flags, uint32_t k, uint32_t npkts) noexcept {
  if (!(op_flags & kOpReadResp)) return false;
  const uint32_t pos = op_flags & (kOpFirst | kOpMiddle | kOpLast);
  const bool last = k + 1 == npkts;
  if (k == 0) return pos == (last ? kOpOnly : kOpFirst);
  if (last) return pos == kOpLast || pos == kOpOnly;
  return pos == kOpMiddle || pos == kOpFirst;
}

}  // namespace rocemu::nic
