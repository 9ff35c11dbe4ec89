// side_channel.h — the TCP side channels the rxe tools use to exchange QP addresses.
//
// ibv_rc_pingpong (rdma-core 44, libibverbs/examples/rc_pingpong.c): TCP port 18515; each side
// sends "%04x:%06x:%06x:%s" (LID, QPN, PSN, GID as 32 hex digits: the GID's 16 bytes in wire
// order) NUL-terminated, 52 bytes in all. The server reads the client's message, connects its
// QP, replies with its own, then reads the client's "done" (5 bytes with the NUL), which the
// client sends as soon as it has the server's message. Our RDMA check uses
// rdma_check_proto.h on TCP port 18516. Blocking kernel sockets with timeouts: these run
// before and after the data path, never per packet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace rocemu::interop {

inline constexpr uint16_t kPingpongPort = 18515;
inline constexpr size_t kPingpongMsgBytes = 52;  // sizeof "0000:000000:000000:" + 32 + NUL

struct PingpongDest {
  uint16_t lid = 0;
  uint32_t qpn = 0, psn = 0;
  uint8_t gid[16] = {};
};

/// The 52-byte message (NUL terminated and padded) rc_pingpong sends for `d`.
std::string format_pingpong_dest(const PingpongDest& d);
/// Parses rc_pingpong's message; nullopt if malformed (wrong fields or lengths).
std::optional<PingpongDest> parse_pingpong_dest(const char* msg, size_t len);
/// perftest's per-QP key message (perftest_communication.c, Ethernet exchange with a GID):
/// "%04x:%04x:%06x:%06x:%08x:%016llx:" lid:out_reads:qpn:psn:rkey:vaddr, the GID as 16
/// "%02x:", then "%08x:" srqn, NUL padded to 108 bytes.
inline constexpr size_t kPerftestKeyBytes = 108;
struct PerftestKey {
  uint32_t lid = 0, out_reads = 0, qpn = 0, psn = 0, rkey = 0, srqn = 0;
  uint64_t vaddr = 0;
  uint8_t gid[16] = {};
};
/// The 108-byte message for `k`.
std::string format_perftest_key(const PerftestKey& k);
/// Parses a key message; nullopt-like false if malformed.
bool parse_perftest_key(const char* msg, size_t len, PerftestKey& out);

/// The IPv4-mapped GID ::ffff:a.b.c.d of a host-order address, as bytes.
void ipv4_mapped_gid_bytes(uint32_t ipv4, uint8_t out[16]) noexcept;
/// The host-order IPv4 address of an IPv4-mapped GID, or nullopt for any other GID.
std::optional<uint32_t> ipv4_of_mapped_gid(const uint8_t gid[16]) noexcept;

/// A connected TCP socket (closed on destruction). Throws std::runtime_error on failure.
class TcpChannel {
 public:
  /// Listens on ip:port and accepts one connection within timeout_ms.
  static TcpChannel accept_one(const std::string& ip, uint16_t port, int timeout_ms);
  /// Connects to ip:port, retrying (the peer may still be booting) for up to timeout_ms.
  static TcpChannel connect_to(const std::string& ip, uint16_t port, int timeout_ms);
  TcpChannel(TcpChannel&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  TcpChannel(const TcpChannel&) = delete;
  TcpChannel& operator=(const TcpChannel&) = delete;
  ~TcpChannel();

  /// Sends all of buf; throws on error or after timeout_ms.
  void send_all(const void* buf, size_t n, int timeout_ms = 30000);
  /// Receives exactly n bytes; throws on error, EOF or after timeout_ms.
  void recv_exact(void* buf, size_t n, int timeout_ms = 30000);
  /// Non-blocking: receives what is available into buf[have..n); returns the new `have`.
  /// Throws on error or EOF. Lets a poll loop keep serving packets while it waits.
  size_t recv_some(void* buf, size_t n, size_t have);

 private:
  explicit TcpChannel(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace rocemu::interop
