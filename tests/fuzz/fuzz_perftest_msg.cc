// fuzz_perftest_msg.cc — libFuzzer target for the messages a perftest peer sends over its TCP
// side channel, as rocemu's perftest tools and rocemu-interop read them: the 108-byte QP key
// (apps/interop/side_channel.h parse_perftest_key, then the GID's IPv4 address), the MTU
// message and the 40-byte bandwidth report (apps/perftest/perftest_exchange.h), and the table
// row printed from a peer's report.
// Input byte 0 picks the message (0 key, 1 MTU, 2 report in MiB/s, 3 report in Gb/s); the rest
// is the message, exactly its size (ASan sees a read past it).
// Aborts when: a key that parses has a field wider than perftest sends (LID and outstanding
// reads 16 bits, QPN and PSN 24 bits) or does not format back to a message that parses to the
// same key; an MTU message gives an MTU other than 0 (malformed) or 256..4096 or not the one
// whose message it is; a report does not give back its integer fields, or its MiB/s rates do
// not survive the unit conversion exactly; a table row is not one line.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "apps/interop/side_channel.h"
#include "apps/perftest/perftest_exchange.h"
#include "apps/perftest/perftest_report.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_perftest_msg: %s\n", what);
  std::abort();
}

bool same_key(const rocemu::interop::PerftestKey& a, const rocemu::interop::PerftestKey& b) {
  return a.lid == b.lid && a.out_reads == b.out_reads && a.qpn == b.qpn && a.psn == b.psn &&
         a.rkey == b.rkey && a.srqn == b.srqn && a.vaddr == b.vaddr &&
         std::memcmp(a.gid, b.gid, 16) == 0;
}

void key(const char* msg, size_t len) {
  using namespace rocemu::interop;
  PerftestKey k;
  if (!parse_perftest_key(msg, len, k)) return;
  if (k.lid > 0xffff || k.out_reads > 0xffff || k.qpn > 0xffffff || k.psn > 0xffffff)
    fail("key field wider than perftest's message has room for");
  const std::string again = format_perftest_key(k);
  if (again.size() != kPerftestKeyBytes) fail("formatted key is not 108 bytes");
  PerftestKey k2;
  if (!parse_perftest_key(again.data(), again.size(), k2) || !same_key(k, k2))
    fail("key does not survive format and parse");
  (void)ipv4_of_mapped_gid(k.gid);
}

void mtu(const char* msg, size_t len) {
  using namespace rocemu::perftest;
  if (len < kMtuMsgBytes) return;
  const uint32_t m = mtu_from_message(msg);
  if (m == 0) return;
  if (m != 256 && m != 512 && m != 1024 && m != 2048 && m != 4096) fail("MTU not an IB MTU");
  if (std::memcmp(mtu_message(m).data(), msg, kMtuMsgBytes) != 0)
    fail("MTU message is not the one for the MTU it gave");
}

void report(const uint8_t* msg, size_t len, bool gbits) {
  using namespace rocemu::perftest;
  if (len < kBwReportFields * kBwReportFieldBytes) return;
  const BwRow r = bw_row_from_report(msg, gbits);
  const auto back = bw_report_message(r, gbits);
  if (std::memcmp(back.data(), msg, 16) != 0) fail("report's size or iterations changed");
  if (!gbits) {
    // MiB/s: scaling by 2^20 is exact while the number stays normal and finite.
    for (size_t at : {size_t{16}, size_t{24}}) {
      double in = 0;
      uint64_t u = 0;
      for (int i = 0; i < 8; ++i) u = u << 8 | msg[at + static_cast<size_t>(i)];
      std::memcpy(&in, &u, 8);
      if (std::isnormal(in) && std::isnormal(in * 1048576.0) &&
          std::memcmp(back.data() + at, msg + at, 8) != 0)
        fail("report's MiB/s rate changed in the unit conversion");
    }
  }
  const std::string row = bw_row(r, gbits);
  if (row.empty() || row.back() != '\n' || row.find('\n') != row.size() - 1)
    fail("table row is not one line");
  (void)sum_rows(r, r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t len = size - 1;
  std::unique_ptr<uint8_t[]> msg(new uint8_t[len ? len : 1]);
  std::memcpy(msg.get(), data + 1, len);
  switch (data[0] % 4) {
    case 0:
      key(reinterpret_cast<const char*>(msg.get()), len);
      break;
    case 1:
      mtu(reinterpret_cast<const char*>(msg.get()), len);
      break;
    case 2:
      report(msg.get(), len, false);
      break;
    default:
      report(msg.get(), len, true);
      break;
  }
  return 0;
}
