// side_channel.cc — rc_pingpong's address message and blocking TCP helpers (see the header).
#include "apps/interop/side_channel.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace rocemu::interop {

namespace {
// `digits` hex digits (either case) at `s`, nothing else: no sign, no space, no "0x".
bool hex_field(const char* s, size_t digits, uint64_t& out) noexcept {
  out = 0;
  for (size_t i = 0; i < digits; ++i) {
    const char c = s[i];
    const int v = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (v < 0) return false;
    out = out << 4 | static_cast<uint64_t>(v);
  }
  return true;
}
}  // namespace

std::string format_pingpong_dest(const PingpongDest& d) {
  char gid[33];
  for (int i = 0; i < 16; ++i) std::snprintf(gid + 2 * i, 3, "%02x", d.gid[i]);
  char msg[kPingpongMsgBytes] = {};
  std::snprintf(msg, sizeof msg, "%04x:%06x:%06x:%s", d.lid, d.qpn & 0xffffff, d.psn & 0xffffff,
                gid);
  return std::string(msg, sizeof msg);
}

std::optional<PingpongDest> parse_pingpong_dest(const char* msg, size_t len) {
  if (len < kPingpongMsgBytes - 1) return std::nullopt;
  if (msg[4] != ':' || msg[11] != ':' || msg[18] != ':') return std::nullopt;
  PingpongDest d;
  uint64_t lid = 0, qpn = 0, psn = 0;
  if (!hex_field(msg, 4, lid) || !hex_field(msg + 5, 6, qpn) || !hex_field(msg + 12, 6, psn))
    return std::nullopt;
  d.lid = static_cast<uint16_t>(lid);
  d.qpn = static_cast<uint32_t>(qpn);
  d.psn = static_cast<uint32_t>(psn);
  for (size_t i = 0; i < 16; ++i) {
    uint64_t b = 0;
    if (!hex_field(msg + 19 + 2 * i, 2, b)) return std::nullopt;
    d.gid[i] = static_cast<uint8_t>(b);
  }
  return d;
}

std::string format_perftest_key(const PerftestKey& k) {
  char m[kPerftestKeyBytes] = {};
  int at = std::snprintf(m, sizeof m, "%04x:%04x:%06x:%06x:%08x:%016llx:", k.lid, k.out_reads,
                         k.qpn, k.psn, k.rkey, static_cast<unsigned long long>(k.vaddr));
  for (int i = 0; i < 16; ++i)
    at += std::snprintf(m + at, sizeof m - static_cast<size_t>(at), "%02x:", k.gid[i]);
  std::snprintf(m + at, sizeof m - static_cast<size_t>(at), "%08x:", k.srqn);
  return std::string(m, sizeof m);
}

bool parse_perftest_key(const char* msg, size_t len, PerftestKey& k) {
  if (len < kPerftestKeyBytes) return false;
  // perftest prints every field at its full width ("%04x:%04x:%06x:%06x:%08x:%016llx:", the
  // GID as 16 "%02x:", "%08x:"): read exactly that. sscanf's %6x took "-00017" as the QPN
  // 0xffffffef, a 24-bit field 32 bits wide.
  const char* p = msg;
  auto field = [&p](size_t digits, uint64_t& out) {
    if (!hex_field(p, digits, out) || p[digits] != ':') return false;
    p += digits + 1;
    return true;
  };
  uint64_t lid, out_reads, qpn, psn, rkey, vaddr, srqn, g[16];
  if (!field(4, lid) || !field(4, out_reads) || !field(6, qpn) || !field(6, psn) ||
      !field(8, rkey) || !field(16, vaddr))
    return false;
  for (uint64_t& b : g)
    if (!field(2, b)) return false;
  if (!field(8, srqn)) return false;
  k.lid = static_cast<uint32_t>(lid);
  k.out_reads = static_cast<uint32_t>(out_reads);
  k.qpn = static_cast<uint32_t>(qpn);
  k.psn = static_cast<uint32_t>(psn);
  k.rkey = static_cast<uint32_t>(rkey);
  k.srqn = static_cast<uint32_t>(srqn);
  k.vaddr = vaddr;
  for (int i = 0; i < 16; ++i) k.gid[i] = static_cast<uint8_t>(g[i]);
  return true;
}

void ipv4_mapped_gid_bytes(uint32_t ipv4, uint8_t out[16]) noexcept {
  std::memset(out, 0, 16);
  out[10] = out[11] = 0xff;
  out[12] = static_cast<uint8_t>(ipv4 >> 24);
  out[13] = static_cast<uint8_t>(ipv4 >> 16);
  out[14] = static_cast<uint8_t>(ipv4 >> 8);
  out[15] = static_cast<uint8_t>(ipv4);
}

std::optional<uint32_t> ipv4_of_mapped_gid(const uint8_t gid[16]) noexcept {
  for (int i = 0; i < 10; ++i)
    if (gid[i] != 0) return std::nullopt;
  if (gid[10] != 0xff || gid[11] != 0xff) return std::nullopt;
  return uint32_t{gid[12]} << 24 | uint32_t{gid[13]} << 16 | uint32_t{gid[14]} << 8 | gid[15];
}

namespace {
sockaddr_in make_addr(const std::string& ip, uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  if (inet_pton(AF_INET, ip.c_str(), &sa.sin_addr) != 1)
    throw std::runtime_error("side channel: bad IPv4 address '" + ip + "'");
  return sa;
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("side channel: " + what + ": " + std::strerror(errno));
}

bool wait_fd(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  const int r = ::poll(&p, 1, timeout_ms);
  return r == 1;
}
}  // namespace

TcpChannel TcpChannel::accept_one(const std::string& ip, uint16_t port, int timeout_ms) {
  const sockaddr_in sa = make_addr(ip, port);
  const int ls = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (ls < 0) fail("socket");
  const int one = 1;
  ::setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(ls, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 || ::listen(ls, 1) != 0) {
    const int e = errno;
    ::close(ls);
    errno = e;
    fail("listen on " + ip + ":" + std::to_string(port));
  }
  if (!wait_fd(ls, POLLIN, timeout_ms)) {
    ::close(ls);
    throw std::runtime_error("side channel: nobody connected to " + ip + ":" +
                             std::to_string(port) + " within " + std::to_string(timeout_ms) +
                             " ms");
  }
  const int fd = ::accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
  ::close(ls);
  if (fd < 0) fail("accept");
  return TcpChannel(fd);
}

TcpChannel TcpChannel::connect_to(const std::string& ip, uint16_t port, int timeout_ms) {
  const sockaddr_in sa = make_addr(ip, port);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("socket");
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0)
      return TcpChannel(fd);
    const int e = errno;
    ::close(fd);
    if (std::chrono::steady_clock::now() > deadline) {
      errno = e;
      fail("connect to " + ip + ":" + std::to_string(port));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

TcpChannel::~TcpChannel() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpChannel::send_all(const void* buf, size_t n, int timeout_ms) {
  size_t done = 0;
  while (done < n) {
    if (!wait_fd(fd_, POLLOUT, timeout_ms))
      throw std::runtime_error("side channel: send timed out");
    const ssize_t r = ::send(fd_, static_cast<const char*>(buf) + done, n - done, MSG_NOSIGNAL);
    if (r <= 0) fail("send");
    done += static_cast<size_t>(r);
  }
}

void TcpChannel::recv_exact(void* buf, size_t n, int timeout_ms) {
  size_t have = 0;
  while (have < n) {
    if (!wait_fd(fd_, POLLIN, timeout_ms))
      throw std::runtime_error("side channel: peer sent " + std::to_string(have) + " of " +
                               std::to_string(n) + " bytes within " + std::to_string(timeout_ms) +
                               " ms");
    have = recv_some(buf, n, have);
  }
}

size_t TcpChannel::recv_some(void* buf, size_t n, size_t have) {
  if (have >= n) return have;
  const ssize_t r = ::recv(fd_, static_cast<char*>(buf) + have, n - have, MSG_DONTWAIT);
  if (r == 0) throw std::runtime_error("side channel: peer closed the connection");
  if (r < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return have;
    fail("recv");
  }
  return have + static_cast<size_t>(r);
}

}  // namespace rocemu::interop
