// fuzz_pingpong_msg.cc — libFuzzer target for the side-channel messages rocemu-interop reads
// from Linux's tools: ibv_rc_pingpong's 52-byte address message (apps/interop/side_channel.h
// parse_pingpong_dest, then the GID's IPv4 address) and the RDMA check's INFO message
// (apps/interop/rdma_check_proto.h rc_info_parse, shared with the guest's tool).
// Input byte 0 picks the message (even: rc_pingpong, odd: RDMA-check INFO); the rest is the
// message, exactly its size (ASan sees a read past it; rc_info_parse reads a fixed 96 bytes,
// so shorter INFO inputs are not given to it, as its callers never do).
// Aborts when: an address message that parses is not, but for the case of its hex digits,
// the message rc_pingpong would send for what it parsed to (so nothing malformed is taken),
// or it does not format back to itself; an INFO message that parses has a QPN or PSN wider
// than 24 bits or a region size that is 0 or not a multiple of 8, or does not survive format
// and parse.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "apps/interop/rdma_check_proto.h"
#include "apps/interop/side_channel.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_pingpong_msg: %s\n", what);
  std::abort();
}

void pingpong(const char* msg, size_t len) {
  using namespace rocemu::interop;
  const auto d = parse_pingpong_dest(msg, len);
  if (!d) return;
  const std::string again = format_pingpong_dest(*d);
  if (again.size() != kPingpongMsgBytes || again.back() != '\0')
    fail("formatted message is not 52 bytes");
  for (size_t i = 0; i + 1 < kPingpongMsgBytes; ++i)
    if (std::tolower(static_cast<unsigned char>(msg[i])) != again[i])
      fail("accepted a message rc_pingpong would not send");
  const auto d2 = parse_pingpong_dest(again.data(), again.size());
  if (!d2 || d2->lid != d->lid || d2->qpn != d->qpn || d2->psn != d->psn ||
      std::memcmp(d2->gid, d->gid, 16) != 0)
    fail("address does not survive format and parse");
  (void)ipv4_of_mapped_gid(d->gid);
}

void info(const char* msg, size_t len) {
  if (len < RC_INFO_BYTES) return;
  rc_info in{};
  if (rc_info_parse(msg, &in) != 0) return;
  if (in.qpn > 0xffffff || in.psn > 0xffffff || in.bytes == 0 || in.bytes % 8 != 0)
    fail("INFO accepted with a field out of range");
  char again[RC_INFO_BYTES];
  rc_info_format(&in, again);
  rc_info out{};
  if (rc_info_parse(again, &out) != 0 || out.qpn != in.qpn || out.psn != in.psn ||
      out.addr != in.addr || out.rkey != in.rkey || out.bytes != in.bytes || out.seed != in.seed)
    fail("INFO does not survive format and parse");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t len = size - 1;
  std::unique_ptr<char[]> msg(new char[len ? len : 1]);
  std::memcpy(msg.get(), data + 1, len);
  if (data[0] % 2 == 0)
    pingpong(msg.get(), len);
  else
    info(msg.get(), len);
  return 0;
}
