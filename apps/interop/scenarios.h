// scenarios.h — what the interop tool does with the rxe guest once its port is up.
//
// pingpong: ibv_rc_pingpong's protocol (rdma-core 44 libibverbs/examples/rc_pingpong.c) with
//   rocemu as server or client: SEND/RECV of `size` bytes, `iters` each way, strictly
//   alternating (a side sends when its previous send completed and a message arrived). With
//   `transport` UC or UD, ibv_uc_pingpong's / ibv_ud_pingpong's (same side channel; UD: Q_Key
//   0x11111111, receives of size + 40 for the GRH, one packet per message).
// rdma_check: rdma_check_proto.h — 1 MB (or `bytes`) RDMA WRITE and READ in both directions
//   at once, every byte verified on both sides.
// rping: librdmacm's rping over rdma_cm (rping.cc).
// Both return 0 on success and print one result line; errors throw std::runtime_error.
#pragma once

#include <cstdint>
#include <string>

#include "apps/interop/endpoint.h"

namespace rocemu::interop {

struct ScenarioOptions {
  std::string side_ip;          // our side-channel address (server: listen; client: unused)
  std::string peer_side_ip;     // the guest's side-channel address (client: connect)
  uint32_t peer_roce_ipv4 = 0;  // host order
  bool server = true;
  ibv_qp_type transport = IBV_QPT_RC;  // pingpong: IBV_QPT_RC, IBV_QPT_UC or IBV_QPT_UD
  uint32_t iters = 1000, size_bytes = 4096, rx_depth = 500;
  uint32_t bytes = 1u << 20;
  uint64_t seed = 1;
  uint64_t rate_bps = 0;  // pacing of our QP (0 = unlimited)
  int ack_timeout = 14;   // local ACK timeout exponent: 4.096 us x 2^n (14: 67 ms)
  int timeout_ms = 60000;
  double read_response_loss = 0;  // fraction of received READ responses dropped (loss tests)
  uint16_t port = 7174;           // rping: the rdma_cm port (rping's default)
  uint32_t count = 10;            // rping: pings (-C)
  bool verbose = false;           // rping: print each ping's data (-v)
  int gid_index = 1;  // pingpong: our GID (RoceHost::gid; 0 = IPv6 link-local, RC and UC)
};

int run_pingpong(Endpoint& ep, nic::RoceHost& host, const ScenarioOptions& opt);
int run_rdma_check(Endpoint& ep, nic::RoceHost& host, const ScenarioOptions& opt);
/// perftest (ib_write_bw / ib_read_bw) client in the guest, rocemu the passive server, for
/// `iters` consecutive client runs.
int run_perftest_server(Endpoint& ep, nic::RoceHost& host, const ScenarioOptions& opt);
/// rping (librdmacm examples/rping.c) over an rdma_cm connection (nic/cm_agent.h): server
/// (`opt.server`, listening on opt.port) or client of `opt.count` pings of size_bytes.
int run_rping(Endpoint& ep, nic::RoceHost& host, const ScenarioOptions& opt);

}  // namespace rocemu::interop
