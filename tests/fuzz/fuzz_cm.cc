// fuzz_cm.cc — libFuzzer target for the rdma_cm connection state machine (nic/cm_conn.h)
// and its MAD codec (nic/cm_mad.h), on cm_fuzz_harness.h: two machines, each listening and
// each connecting to the other, over a network the input controls. The input is records,
// each an op byte (bit 7: the side it is about; low 3 bits the step, as CmFuzzHarness::step
// reads it) and its operand:
//   0, 1  deliver the oldest MAD in flight          2  drop it
//   3     deliver it, then again garbled: 2 bytes (offset, bits)
//   4     a raw MAD (bit 6: from a stranger): 2 bytes of length, then the bytes
//   5     a CM message aimed at a live connection: up to 256 bytes (header fixed up)
//   6     time passes: 2 bytes x 64 us             7  the application: 1 byte
// Then the network falls silent. Aborts when a MAD sent does not decode or re-encode to its
// bytes, a decoded MAD does not round-trip, events break the state machine, a deadline is
// left in the past, or the timers do not stop.
#include <cstdio>
#include <cstdlib>

#include "tests/nic/cm_fuzz_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rocemu;
  if (size > 65536) return 0;
  static auto* h = new test::CmFuzzHarness();
  h->start();
  size_t at = 0;
  while (at < size) {
    const uint8_t op = data[at++];
    size_t n;
    switch (op & 7) {
      case 3:
      case 6: n = 2; break;
      case 7: n = 1; break;
      case 4:
        n = at + 2 <= size ? (size_t{data[at]} << 8 | data[at + 1]) : 0;
        at += 2;
        break;
      case 5: n = nic::cm::kMadBytes; break;
      default: n = 0; break;
    }
    if (at > size) at = size;
    if (n > size - at) n = size - at;
    const std::string e = h->step(op, data + at, n);
    at += n;
    if (!e.empty()) {
      std::fprintf(stderr, "fuzz_cm: %s\n", e.c_str());
      std::abort();
    }
  }
  if (const std::string e = h->finish(); !e.empty()) {
    std::fprintf(stderr, "fuzz_cm: %s\n", e.c_str());
    std::abort();
  }
  return 0;
}
