// perftest_exchange.cc — perftest's fixed-size side-channel messages (see the header).
#include "apps/perftest/perftest_exchange.h"

#include <cstring>

namespace rocemu::perftest {

namespace {
constexpr double kMiB = 1048576.0;
constexpr double kGbitBytes = 125e6;  // bytes per second in 1 Gb/s

void put_be64(uint64_t v, uint8_t* out) noexcept {
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<uint8_t>(v & 0xff);
}
uint64_t get_be64(const uint8_t* in) noexcept {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | in[i];
  return v;
}
void put_be32(uint32_t v, uint8_t* out) noexcept {
  for (int i = 3; i >= 0; --i, v >>= 8) out[i] = static_cast<uint8_t>(v & 0xff);
}
uint32_t get_be32(const uint8_t* in) noexcept {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | in[i];
  return v;
}
uint64_t double_bits(double d) noexcept {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}
double bits_double(uint64_t u) noexcept {
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}
}  // namespace

std::array<char, kVersionMsgBytes> version_message() noexcept {
  std::array<char, kVersionMsgBytes> m{};
  std::memcpy(m.data(), "6.06", 4);
  return m;
}

std::array<uint8_t, kSysDataMsgBytes> be32_message(uint32_t v) noexcept {
  return {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
          static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
}

std::array<char, kMtuMsgBytes> mtu_message(uint32_t mtu_bytes) noexcept {
  int n = 1;  // IBV_MTU_256
  while (n < 5 && (256u << (n - 1)) < mtu_bytes) ++n;
  return {static_cast<char>('0' + n), '\0'};
}

uint32_t mtu_from_message(const char* msg) noexcept {
  if (msg[0] < '1' || msg[0] > '5' || msg[1] != '\0') return 0;
  return 256u << (msg[0] - '1');
}

std::array<uint8_t, kBwReportFields * kBwReportFieldBytes> bw_report_message(const BwRow& row,
                                                                             bool gbits) noexcept {
  const double unit = gbits ? kGbitBytes : kMiB;
  std::array<uint8_t, kBwReportFields * kBwReportFieldBytes> m{};
  put_be64(row.size_bytes, &m[0]);
  put_be64(row.iters, &m[8]);
  put_be64(double_bits(row.peak_bytes_per_s / unit), &m[16]);
  put_be64(double_bits(row.avg_bytes_per_s / unit), &m[24]);
  put_be64(double_bits(row.msg_rate_pps / 1e6), &m[32]);
  return m;
}

BwRow bw_row_from_report(const uint8_t* msg, bool gbits) noexcept {
  const double unit = gbits ? kGbitBytes : kMiB;
  BwRow r;
  r.size_bytes = get_be64(&msg[0]);
  r.iters = get_be64(&msg[8]);
  r.peak_bytes_per_s = bits_double(get_be64(&msg[16])) * unit;
  r.avg_bytes_per_s = bits_double(get_be64(&msg[24])) * unit;
  r.msg_rate_pps = bits_double(get_be64(&msg[32])) * 1e6;
  return r;
}

BwRow sum_rows(const BwRow& mine, const BwRow& theirs) noexcept {
  BwRow r = mine;
  r.peak_bytes_per_s += theirs.peak_bytes_per_s;
  r.avg_bytes_per_s += theirs.avg_bytes_per_s;
  r.msg_rate_pps += theirs.msg_rate_pps;
  return r;
}

std::array<uint8_t, kCmKeyMsgBytes> cm_key_message(const AddressFields& k,
                                                   int32_t gid_index) noexcept {
  std::array<uint8_t, kCmKeyMsgBytes> m{};
  put_be32(k.lid, &m[0]);
  put_be32(k.out_reads, &m[4]);
  put_be32(k.qpn, &m[8]);
  put_be32(k.psn, &m[12]);
  put_be32(k.rkey, &m[16]);
  put_be64(k.vaddr, &m[24]);
  std::memcpy(&m[32], k.gid, sizeof k.gid);
  put_be32(0, &m[48]);  // srqn: no SRQ
  put_be32(static_cast<uint32_t>(gid_index), &m[52]);
  return m;
}

bool parse_cm_key_message(const uint8_t* msg, size_t len, AddressFields& out) noexcept {
  if (len != kCmKeyMsgBytes) return false;
  out.lid = get_be32(&msg[0]);
  out.out_reads = get_be32(&msg[4]);
  out.qpn = get_be32(&msg[8]);
  out.psn = get_be32(&msg[12]);
  out.rkey = get_be32(&msg[16]);
  out.vaddr = get_be64(&msg[24]);
  std::memcpy(out.gid, &msg[32], sizeof out.gid);
  return true;
}

}  // namespace rocemu::perftest
