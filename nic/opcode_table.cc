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
  // UC (table 38, 0x20-0x2b): same layouts as RC SEND/WRITE, no ACKs.
  constexpr uint32_t UC = RQ | kOpUc;
  t[0x20] = {"UC_SEND_FIRST", UC | kOpSend | kOpFirst | kOpPayload, 0};
  t[0x21] = {"UC_SEND_MIDDLE", UC | kOpSend | kOpMiddle | kOpPayload, 0};
  t[0x22] = {"UC_SEND_LAST", UC | kOpSend | kOpLast | kOpPayload, 0};
  t[0x23] = {"UC_SEND_LAST_IMM", UC | kOpSend | kOpLast | kOpPayload | kOpImm, kImm};
  t[0x24] = {"UC_SEND_ONLY", UC | kOpSend | kOpOnly | kOpPayload, 0};
  t[0x25] = {"UC_SEND_ONLY_IMM", UC | kOpSend | kOpOnly | kOpPayload | kOpImm, kImm};
  t[0x26] = {"UC_WRITE_FIRST", UC | kOpWrite | kOpFirst | kOpPayload | kOpReth, kReth};
  t[0x27] = {"UC_WRITE_MIDDLE", UC | kOpWrite | kOpMiddle | kOpPayload, 0};
  t[0x28] = {"UC_WRITE_LAST", UC | kOpWrite | kOpLast | kOpPayload, 0};
  t[0x29] = {"UC_WRITE_LAST_IMM", UC | kOpWrite | kOpLast | kOpPayload | kOpImm, kImm};
  t[0x2a] = {"UC_WRITE_ONLY", UC | kOpWrite | kOpOnly | kOpPayload | kOpReth, kReth};
  t[0x2b] = {"UC_WRITE_ONLY_IMM", UC | kOpWrite | kOpOnly | kOpPayload | kOpReth | kOpImm,
             kReth + kImm};
  // UD (0x64-0x65): DETH (Q_Key, source QP) before the payload.
  t[kUdSendOnly] = {"UD_SEND_ONLY", RQ | kOpUd | kOpSend | kOpOnly | kOpPayload | kOpDeth, 8};
  t[kUdSendOnlyImm] = {"UD_SEND_ONLY_IMM",
                       RQ | kOpUd | kOpSend | kOpOnly | kOpPayload | kOpDeth | kOpImm, 8 + kImm};
  return t;
}

constexpr std::array<OpInfo, 256> kTable = make_table();

}  // namespace

const OpInfo& op_info(uint8_t opcode) noexcept { return kTable[opcode]; }

const char* transport_name(uint8_t opcode) noexcept {
  static constexpr const char* kNames[8] = {
      "RC", "UC", "RD", "UD", "CNP", "XRC", "manufacturer-specific", "manufacturer-specific"};
  return kNames[opcode >> 5];
}

bool transport_implemented(uint8_t opcode) noexcept {
  switch (opcode >> 5) {
    case 0:  // RC
    case 1:  // UC
    case 3:  // UD
      return true;
    case 4:  // 0x80-0x9f: only the RoCEv2 CNP
      return opcode == wire::kCnp;
    default:
      return false;
  }
}

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
    case uc_opcode(kRcSendFirst):
    case uc_opcode(kRcSendMiddle):
      return (nf & kOpSend) && (nf & (kOpMiddle | kOpLast)) && !(nf & kOpFirst);
    case kRcWriteFirst:
    case kRcWriteMiddle:
    case uc_opcode(kRcWriteFirst):
    case uc_opcode(kRcWriteMiddle):
      return (nf & kOpWrite) && (nf & (kOpMiddle | kOpLast)) && !(nf & kOpFirst);
    default:
      // Not inside a multi-packet message: only a new message (FIRST or ONLY) may start.
      return !(nf & (kOpSend | kOpWrite)) || (nf & kOpFirst);
  }
}

}  // namespace rocemu::nic
