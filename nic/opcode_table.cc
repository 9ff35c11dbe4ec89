// opcode_table.cc — the opcode table (IBTA Vol. 1 table 38, annex A17.9.3 for the CNP).
#include "nic/opcode_table.h"

#include <array>

#include "common/wire.h"

namespace rocemu::nic {

namespace {

constexpr uint8_t kReth = 16, kAeth = 4, kImm = 4, kIeth = 4, kAtomicEth = 28, kAtomicAck = 8;

constexpr std::array<OpInfo, 256> make_table() {
  std::array<OpInfo, 256> t{};
  for (auto& e : t) e = {"unknown", 0, 0};
  using namespace wire;
  constexpr uint32_t V = kOpValid, RQ = kOpRequest | V, RS = kOpResponse | V;
  t[kRcSendFirst] = {"SEND_FIRST", RQ | kOpSend | kOpFirst | kOpPayload, 0};
  t[kRcSendMiddle] = {"SEND_MIDDLE", RQ | kOpSend | kOpMiddle | kOpPayload, 0};
  t[kRcSendLast] = {"SEND_LAST", RQ | kOpSend | kOpLast | kOpPayload, 0};
  t[kRcSendLastImm] = {"SEND_LAST_IMM", RQ | kOpSend | kOpLast | kOpPayload | kOpImm, kImm};
  t[kRcSendOnly] = {"SEND_ONLY", RQ | kOpSend | kOpOnly | kOpPayload, 0};
  t[kRcSendOnlyImm] = {"SEND_ONLY_IMM", RQ | kOpSend | kOpOnly | kOpPayload | kOpImm, kImm};
  t[kRcWriteFirst] = {"WRITE_FIRST", RQ | kOpWrite | kOpFirst | kOpPayload | kOpReth, kReth};
  t[kRcWriteMiddle] = {"WRITE_MIDDLE", RQ | kOpWrite | kOpMiddle | kOpPayload, 0};
  t[kRcWriteLast] = {"WRITE_LAST", RQ | kOpWrite | kOpLast | kOpPayload, 0};
  t[kRcWriteLastImm] = {"WRITE_LAST_IMM", RQ | kOpWrite | kOpLast | kOpPayload | kOpImm, kImm};
  t[kRcWriteOnly] = {"WRITE_ONLY", RQ | kOpWrite | kOpOnly | kOpPayload | kOpReth, kReth};
  t[kRcWriteOnlyImm] = {"WRITE_ONLY_IMM",
                        RQ | kOpWrite | kOpOnly | kOpPayload | kOpReth | kOpImm, kReth + kImm};
  t[kRcReadRequest] = {"READ_REQUEST", RQ | kOpRead | kOpOnly | kOpReth, kReth};
  t[kRcReadResponseFirst] = {"READ_RESPONSE_FIRST",
                             RS | kOpReadResp | kOpFirst | kOpPayload | kOpAeth, kAeth};
  t[kRcReadResponseMiddle] = {"READ_RESPONSE_MIDDLE", RS | kOpReadResp | kOpMiddle | kOpPayload,
                              0};
  t[kRcReadResponseLast] = {"READ_RESPONSE_LAST",
                            RS | kOpReadResp | kOpLast | kOpPayload | kOpAeth, kAeth};
  t[kRcReadResponseOnly] = {"READ_RESPONSE_ONLY",
                            RS | kOpReadResp | kOpOnly | kOpPayload | kOpAeth, kAeth};
  t[kRcAcknowledge] = {"ACKNOWLEDGE", RS | kOpAck | kOpOnly | kOpAeth, kAeth};
  t[kRcAtomicAcknowledge] = {"ATOMIC_ACKNOWLEDGE",
                             RS | kOpAck | kOpOnly | kOpAeth | kOpAtomicAckEth,
                             kAeth + kAtomicAck};
  t[kRcCompareSwap] = {"COMPARE_SWAP", RQ | kOpAtomic | kOpOnly | kOpAtomicEth, kAtomicEth};
  t[kRcFetchAdd] = {"FETCH_ADD", RQ | kOpAtomic | kOpOnly | kOpAtomicEth, kAtomicEth};
  t[kRcSendLastInv] = {"SEND_LAST_INV", RQ | kOpSend | kOpLast | kOpPayload | kOpIeth, kIeth};
  t[kRcSendOnlyInv] = {"SEND_ONLY_INV", RQ | kOpSend | kOpOnly | kOpPayload | kOpIeth, kIeth};
  t[kCnp] = {"CNP", V | kOpCnp | kOpCnpPad, 16};
  return t;
}

constexpr std::array<OpInfo, 256> kTable = make_table();

}  // namespace

const OpInfo& op_info(uint8_t opcode) noexcept { return kTable[opcode]; }

bool opcode_legal_in_state(uint8_t opcode, ibv_qp_state state) noexcept {
  const uint32_t f = kTable[opcode].flags;
  if (!(f & kOpValid)) return false;
  switch (state) {
    case IBV_QPS_RTR:
      return (f & kOpRequest) || (f & kOpCnp);
    case IBV_QPS_RTS:
    case IBV_QPS_SQD:
    case IBV_QPS_SQE:
      return true;
    default:
      return false;
  }
}

bool op_sequence_ok(uint8_t prev, uint8_t next) noexcept {
  using namespace wire;
  const uint32_t nf = kTable[next].flags;
  switch (prev) {
    case kRcSendFirst:
    case kRcSendMiddle:
      return (nf & kOpSend) && (nf & (kOpMiddle | kOpLast)) && !(nf & kOpFirst);
    case kRcWriteFirst:
    case kRcWriteMiddle:
      return (nf & kOpWrite) && (nf & (kOpMiddle | kOpLast)) && !(nf & kOpFirst);
    default:
      // Not inside a multi-packet message: only a new message (FIRST or ONLY) may start.
      return !(nf & (kOpSend | kOpWrite)) || (nf & kOpFirst);
  }
}

}  // namespace rocemu::nic
