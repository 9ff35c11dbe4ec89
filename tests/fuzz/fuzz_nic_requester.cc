// fuzz_nic_requester.cc — libFuzzer target for the RC requester's response path (see
// requester_fuzz_harness.h): each input starts a fresh QP with a batch of SENDs, WRITEs,
// READs and atomics outstanding and plays its peer. Bytes 0-2 give the first PSN, byte 3
// the variant (bit 0: DCQCN's byte window, one packet in flight; bit 1: a paced QP); then
// records, each a kind byte and its operands:
//   kind % 4 == 0  the correct answer to the next message (ACK, READ responses, atomic ACK)
//   kind % 4 == 1  time passes: 2 bytes, x 16 ns (timers fire, the victim resends)
//   kind % 4 == 2  a response from the harness's mutator, seeded by 8 bytes
//   kind % 4 == 3  a raw BTH and what follows it: 2 bytes of length, then the bytes, put
//                  behind the peer's Ethernet/IP/UDP headers with the victim's QPN, lengths
//                  and ICRC fixed up so that they reach the completer
// Then the peer falls silent. Aborts when a byte outside a work request's buffers changes,
// the QP's liveness invariants break, or a work request does not complete exactly once, in
// order.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/nic/requester_fuzz_harness.h"

namespace {

rocemu::test::RequesterFuzzHarness& harness() {
  static auto* h = new rocemu::test::RequesterFuzzHarness();
  return *h;
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_nic_requester: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rocemu;
  if (size < 4 || size > 16384) return 0;
  auto& h = harness();
  static TimeNs now = 0;
  now += 1000 * kNsPerUs;  // whatever the last input left armed is long past
  const uint32_t psn = uint32_t{data[0]} << 16 | uint32_t{data[1]} << 8 | data[2];
  if (std::string e = h.start(psn, now, data[3] & 3); !e.empty()) fail(e);
  size_t answered = 0;
  size_t at = 4;
  const auto take = [&](size_t n, uint64_t& v) {
    v = 0;
    for (size_t i = 0; i < n; ++i) v = v << 8 | (at < size ? data[at++] : 0);
  };
  while (at < size) {
    const uint8_t kind = data[at++];
    std::string e;
    uint64_t v = 0;
    switch (kind % 4) {
      case 0:
        for (const auto& f : h.correct_answer(answered, kind))
          if (e.empty()) e = h.deliver(f.data(), static_cast<uint32_t>(f.size()), now);
        break;
      case 1:
        take(2, v);
        e = h.tick(now, static_cast<TimeNs>(v) * 16);
        break;
      case 2: {
        take(8, v);
        Rng r(v);
        const auto f = h.response(r);
        e = h.deliver(f.data(), static_cast<uint32_t>(f.size()), now);
        break;
      }
      default: {
        take(2, v);
        const size_t n = static_cast<size_t>(v) < size - at ? static_cast<size_t>(v) : size - at;
        const auto peer = h.frame(wire::kRcAcknowledge, 0, 0, 0, 0, 0);
        std::vector<uint8_t> f(peer.begin(), peer.begin() + wire::kBthOff);
        f.insert(f.end(), data + at, data + at + n);
        at += n;
        test::readdress(f, peer, h.qpn());
        e = h.deliver(f.data(), static_cast<uint32_t>(f.size()), now);
        break;
      }
    }
    if (!e.empty()) fail(e);
  }
  if (std::string e = h.finish(now); !e.empty()) fail(e);
  return 0;
}
