// flow.h — one flow of a workload: who sends how many bytes to whom, starting when.
//
// The generators (flow_generator.h) produce FlowSpecs in start-time order; the engine turns
// each into one RDMA WRITE (or SEND) on a QP from `src` to `dst` and, when the requester
// completes it, hands the FCT module (fct.h) a FlowRecord. Hosts are the values of the
// host list the generator was built with (normally topology node indices). Units: bytes, ns.
#pragma once

#include <cstdint>
#include <string>

#include "common/time_ns.h"

namespace rocemu::workload {

/// The verb that carries a flow: one RDMA WRITE (RETH on the first packet) or one SEND.
enum class FlowOp : uint8_t { kWrite = 0, kSend = 1 };

inline constexpr const char* flow_op_name(FlowOp op) noexcept {
  return op == FlowOp::kWrite ? "write" : "send";
}

/// Flows that are not part of an incast event carry this incast id.
inline constexpr uint32_t kNotIncast = UINT32_MAX;

struct FlowSpec {
  uint64_t id = 0;          // 0, 1, 2, ... in start-time order across the whole workload
  uint32_t src = 0;         // sending host
  uint32_t dst = 0;         // receiving host (never == src)
  uint64_t size_bytes = 0;  // message (payload) bytes, >= 1
  TimeNs start_ns = 0;      // when the sender posts the work request
  FlowOp op = FlowOp::kWrite;
  uint32_t incast = kNotIncast;  // incast event number, or kNotIncast for background flows
  bool operator==(const FlowSpec&) const = default;
};

/// One failed flow: a requester completion with an error status, or a post the NIC refused.
/// Kept by the lane scheduler (lane_scheduler.h) and reported in failures.csv.
struct FlowFailure {
  FlowSpec flow;         // id, src, dst and size_bytes are set
  std::string src, dst;  // host names (filled in by whoever knows them: the run's result)
  int status = 0;        // ibv_wc_status of the completion; -1: the NIC refused the post
};

}  // namespace rocemu::workload
