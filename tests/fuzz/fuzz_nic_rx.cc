// fuzz_nic_rx.cc — libFuzzer target for the RoCE receive path (see rx_fuzz_harness.h).
// Input byte 0 picks how the rest is used: 0 = a raw frame; 1 = a frame whose addresses,
// QPN and ICRC are fixed up so it passes the early checks and reaches the QP roles; 2 = a
// seed for the harness's structured mutator. Aborts when memory outside the registered
// region changes or the QP stops answering an in-sequence WRITE.
#include <cstdio>
#include <cstdlib>

#include "tests/nic/rx_fuzz_harness.h"

namespace {

rocemu::test::RxFuzzHarness& harness() {
  static auto* h = new rocemu::test::RxFuzzHarness();
  return *h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rocemu;
  if (size < 1 || size > 9000) return 0;
  auto& h = harness();
  static TimeNs now = 0;
  static uint64_t runs = 0;
  now += 1000;
  std::vector<uint8_t> f(data + 1, data + size);
  switch (data[0] % 3) {
    case 1:
      test::readdress(f, h.request(wire::kRcSendOnly, 0, 0, 0, 0, 0), h.qpn());
      break;
    case 2: {
      uint64_t seed = 0;
      if (!f.empty()) std::memcpy(&seed, f.data(), f.size() < 8 ? f.size() : 8);
      Rng r(seed);
      f = h.mutated_frame(r);
      break;
    }
    default:
      break;
  }
  h.deliver(f.data(), static_cast<uint32_t>(f.size()), now);
  h.drain(now);
  if (const std::string d = h.damage(); !d.empty()) {
    std::fprintf(stderr, "fuzz_nic_rx: %s\n", d.c_str());
    std::abort();
  }
  if (++runs % 64 == 0 && !h.answers_in_sequence_write(now)) {
    std::fprintf(stderr, "fuzz_nic_rx: QP stopped answering\n");
    std::abort();
  }
  return 0;
}
