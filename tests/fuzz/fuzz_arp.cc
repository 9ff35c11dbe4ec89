// fuzz_arp.cc — libFuzzer target for the DPDK endpoint's ARP responder
// (apps/interop/arp_reply.h, RFC 826): is_arp_request_for() on any frame, and
// make_arp_reply_in_place() on what it accepts.
// Input: bytes 0-3 = our IPv4 address (big-endian), the rest = the frame (exactly its size,
// so ASan sees any read past it).
// Aborts when: a frame is accepted that is not an Ethernet/IPv4 ARP request for our address
// (or one is refused that is), the reply is not the RFC 826 answer to the request (addresses
// swapped, op 2, our MAC as sender), a byte past the 42 ARP bytes changes, or the reply is
// itself taken for a request.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "apps/interop/arp_reply.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_arp: %s\n", what);
  std::abort();
}

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

constexpr rocemu::MacAddr kMyMac = {0x02, 0x00, 0x5e, 0x10, 0x20, 0x30};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rocemu::interop;
  if (size < 4) return 0;
  const uint32_t my_ip = be32(data);
  const uint32_t len = static_cast<uint32_t>(size - 4);
  std::unique_ptr<uint8_t[]> frame(new uint8_t[len ? len : 1]);
  std::memcpy(frame.get(), data + 4, len);

  const bool accepted = is_arp_request_for(frame.get(), len, my_ip);
  // RFC 826 over Ethernet: htype 1, ptype 0x0800, hlen 6, plen 4, op 1 (request), tpa ours.
  const uint8_t* a = data + 4 + 14;
  const bool request_for_us = len >= kArpFrameBytes && be16(data + 4 + 12) == 0x0806 &&
                              be16(a) == 1 && be16(a + 2) == 0x0800 && a[4] == 6 && a[5] == 4 &&
                              be16(a + 6) == 1 && be32(a + 24) == my_ip;
  if (accepted != request_for_us)
    fail("accepted a frame that is not an ARP request for us, or refused one that is");
  if (!accepted) return 0;

  make_arp_reply_in_place(frame.get(), kMyMac);
  const uint8_t* in = data + 4;
  const uint8_t* out = frame.get();
  const uint8_t* r = out + 14;
  if (std::memcmp(out, in + 14 + 8, 6) != 0) fail("reply not sent to the asker's MAC");
  if (std::memcmp(out + 6, kMyMac.data(), 6) != 0) fail("reply not from our MAC");
  if (be16(out + 12) != 0x0806 || be16(r) != 1 || be16(r + 2) != 0x0800 || r[4] != 6 || r[5] != 4)
    fail("reply's Ethernet type or ARP header changed");
  if (be16(r + 6) != 2) fail("reply's op is not 2");
  if (std::memcmp(r + 8, kMyMac.data(), 6) != 0 || be32(r + 14) != my_ip)
    fail("reply's sender is not us");
  if (std::memcmp(r + 18, in + 14 + 8, 6) != 0 || std::memcmp(r + 24, in + 14 + 14, 4) != 0)
    fail("reply's target is not the asker");
  if (std::memcmp(out + kArpFrameBytes, in + kArpFrameBytes, len - kArpFrameBytes) != 0)
    fail("bytes past the ARP packet changed");
  if (is_arp_request_for(out, len, my_ip)) fail("our reply is taken for a request");
  return 0;
}
