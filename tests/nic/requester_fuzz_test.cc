// requester_fuzz_test.cc — a seeded corpus of hostile responses against an RC requester
// with work outstanding (see requester_fuzz_harness.h): ACKs and NAKs of every syndrome,
// READ responses and atomic ACKs of any PSN, length and MSN, garbled, truncated, mixed with
// correct answers and time passing. Memory outside each work request's own buffers is never
// written, the QP's liveness invariants hold after every frame, and every work request
// completes exactly once, in order, when the peer falls silent.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "tests/nic/requester_fuzz_harness.h"

namespace rocemu::test {
namespace {

TEST(RequesterFuzz, ACorrectPeerCompletesEveryWorkRequestAndItsReadsLand) {
  RequesterFuzzHarness h;
  TimeNs now = 0;
  for (uint32_t start : {0x100u, 0xFFFFFCu})  // and across the PSN wrap
  for (uint8_t variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE("first PSN " + std::to_string(start) + ", variant " + std::to_string(variant));
    ASSERT_EQ(h.start(start, now, variant), "");
    // Each answer lets out the requests max_rd_atomic (or the window) held back, which are
    // answered next; a paced QP sends as time passes (in steps well inside the 8 us local
    // ACK timeout).
    size_t answered = 0;
    const auto fill = [](size_t message) { return 0x1122334455667788ull * (message + 1); };
    for (int waits = 0; answered < 9 && waits < 1000;) {
      const auto frames = h.correct_answer(answered, fill(answered));
      if (frames.empty()) {
        ASSERT_EQ(h.tick(now, 500), "");
        ++waits;
        continue;
      }
      for (const auto& f : frames) ASSERT_EQ(h.deliver(f.data(), static_cast<uint32_t>(f.size()), now), "");
    }
    ASSERT_EQ(h.work().size(), 9u) << "every work request posted";
    EXPECT_EQ(answered, 9u) << "every message answered";
    ASSERT_EQ(h.finish(now), "");
    ASSERT_EQ(h.completions().size(), h.work().size());
    for (const ibv_wc& wc : h.completions())
      EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << "wr " << wc.wr_id << ": " << nic::wc_status_name(wc.status);
    // Each READ's bytes, scattered over its SGEs, are its responses' payloads in order; an
    // atomic's result is the AtomicAckETH's value, stored in host order.
    for (size_t i = 0; i < h.work().size(); ++i) {
      const auto got = h.written(i);
      const auto op = h.work()[i].opcode;
      if (op == IBV_WR_RDMA_READ) {
        for (size_t j = 0; j < got.size(); ++j)
          ASSERT_EQ(got[j], static_cast<uint8_t>((fill(i) + j / RequesterFuzzHarness::kMtu) >>
                                                 (j % RequesterFuzzHarness::kMtu % 8 * 8)))
              << "wr " << i << " byte " << j;
      } else if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
        uint64_t v;
        ASSERT_EQ(got.size(), 8u);
        std::memcpy(&v, got.data(), 8);
        EXPECT_EQ(v, fill(i)) << "wr " << i;
      }
    }
    EXPECT_EQ(h.host().counters().drops[static_cast<int>(nic::RxDrop::kStaleResponse)], 0u);
  }
}

// Answers the first `n` messages of the batch correctly; returns the PSN of the next one.
uint32_t answer_first(RequesterFuzzHarness& h, size_t n, TimeNs now) {
  size_t answered = 0;
  while (answered < n)
    for (const auto& f : h.correct_answer(answered, 7))
      EXPECT_EQ(h.deliver(f.data(), static_cast<uint32_t>(f.size()), now), "");
  return h.requests().at(n).psn;
}

TEST(RequesterFuzz, AnAckOfTheMessagesBeforeAReadLetsANakAtTheReadRewindAtOnce) {
  // The batch's third message is a READ; its request is lost, and the responder, receiving
  // the FETCH_ADD after it, NAKs with the READ's PSN (PSN sequence error). The ACK of the
  // WRITE before it must leave una_psn at the READ, so the NAK is not mistaken for one behind
  // an incomplete READ: the READ goes out again at once, not after the local ACK timeout.
  for (uint32_t start : {0x100u, 0xFFFFFEu}) {
    RequesterFuzzHarness h;
    TimeNs now = 1000;
    ASSERT_EQ(h.start(start, now), "");
    const uint32_t read_psn = answer_first(h, 2, now);
    ASSERT_EQ(h.work()[2].opcode, IBV_WR_RDMA_READ);
    const uint64_t sent = h.request_packets();
    const auto nak = h.frame(wire::kRcAcknowledge, read_psn, 0x60, 2, 0, 0);
    ASSERT_EQ(h.deliver(nak.data(), static_cast<uint32_t>(nak.size()), now), "");
    EXPECT_GT(h.request_packets(), sent) << "the READ is resent on the NAK";
    EXPECT_EQ(h.host().counters().rewinds, 1u);
  }
}

TEST(RequesterFuzz, AfterATimeoutAResponsePastAReadWithLostResponsesResendsTheReadAtOnce) {
  // The local ACK timer rewinds to the batch's first message and everything is resent.
  // Then a response past the READ (the FETCH_ADD's ATOMIC_ACKNOWLEDGE, or a sequence NAK
  // naming it) acknowledges the SEND and the WRITE and shows the READ's responses lost:
  // una moves to the READ, and the READ goes out again at once. (The timeout's rewind, done
  // at the older una, used to stop this one, leaving the READ to the next timeout.)
  for (int nak = 0; nak < 2; ++nak) {
    RequesterFuzzHarness h;
    TimeNs now = 1000;
    ASSERT_EQ(h.start(0xFFFFF0 + 7 * nak, now), "");
    ASSERT_EQ(h.work()[2].opcode, IBV_WR_RDMA_READ);
    ASSERT_EQ(h.work()[3].opcode, IBV_WR_ATOMIC_FETCH_AND_ADD);
    ASSERT_EQ(h.requests().size(), 4u);
    const uint32_t fadd_psn = h.requests()[3].psn;
    ASSERT_EQ(h.tick(now, 20 * kNsPerUs), "");
    ASSERT_EQ(h.host().counters().timeouts, 1u);
    const uint64_t rewinds = h.host().counters().rewinds;
    const uint64_t sent = h.request_packets();
    const auto f = nak ? h.frame(wire::kRcAcknowledge, fadd_psn, 0x60, 3, 0, 0)
                       : h.frame(wire::kRcAtomicAcknowledge, fadd_psn, 0x1f, 3, 0, 42);
    ASSERT_EQ(h.deliver(f.data(), static_cast<uint32_t>(f.size()), now), "");
    EXPECT_EQ(h.host().counters().rewinds, rewinds + 1) << (nak ? "NAK" : "atomic ACK");
    EXPECT_GT(h.request_packets(), sent) << "the READ is resent";
  }
}

TEST(RequesterFuzz, AnRnrNakAtAnOutstandingReadLeavesATimerArmed) {
  // An RNR NAK naming a READ's PSN (no correct responder sends one: a READ takes no receive
  // WQE) after an ACK of every message before it: the QP must not end up with the READ
  // outstanding, nothing to send and no timer (it hung there).
  RequesterFuzzHarness h;
  TimeNs now = 1000;
  ASSERT_EQ(h.start(0x200, now), "");
  const uint32_t read_psn = answer_first(h, 8, now);
  ASSERT_EQ(h.work()[8].opcode, IBV_WR_RDMA_READ);
  const auto rnr = h.frame(wire::kRcAcknowledge, read_psn, 0x21, 9, 0, 0);
  ASSERT_EQ(h.deliver(rnr.data(), static_cast<uint32_t>(rnr.size()), now), "");
  EXPECT_NE(h.host().next_deadline(), kNever);
  ASSERT_EQ(h.finish(now), "");
  EXPECT_NE(h.completions().back().status, IBV_WC_SUCCESS);
}

TEST(RequesterFuzz, HostileResponsesNeverCorruptMemoryLoseACompletionOrHang) {
  RequesterFuzzHarness h;
  Rng r(2026, "requester-corpus");
  TimeNs now = 0;
  std::map<int, int> statuses;  // ibv_wc_status -> completions
  int all_succeeded = 0;
  for (int input = 0; input < 1000; ++input) {
    const uint32_t start = r.below(8) == 0 ? 0xFFFFFF - static_cast<uint32_t>(r.below(6))
                                           : static_cast<uint32_t>(r.next()) & 0xFFFFFF;
    const auto variant = static_cast<uint8_t>(r.below(4));
    ASSERT_EQ(h.start(start, now, variant), "") << "input " << input;
    size_t answered = 0;
    const int steps = 1 + static_cast<int>(r.below(40));
    for (int step = 0; step < steps; ++step) {
      std::string e;
      switch (r.below(6)) {
        case 0:
        case 1:
          for (const auto& f : h.correct_answer(answered, r.next()))
            if (e.empty()) e = h.deliver(f.data(), static_cast<uint32_t>(f.size()), now);
          break;
        case 2:
          e = h.tick(now, static_cast<TimeNs>(r.below(20000)));
          break;
        default: {
          const auto f = h.response(r);
          e = h.deliver(f.data(), static_cast<uint32_t>(f.size()), now);
          break;
        }
      }
      ASSERT_EQ(e, "") << "input " << input << ", step " << step;
      now += 100;
    }
    ASSERT_EQ(h.finish(now), "") << "input " << input;
    bool ok = true;
    for (const ibv_wc& wc : h.completions()) {
      statuses[wc.status]++;
      ok = ok && wc.status == IBV_WC_SUCCESS;
    }
    all_succeeded += ok;
  }
  // The corpus reached every ending: whole batches done, the peer's errors, and silence.
  EXPECT_GT(all_succeeded, 0);
  for (ibv_wc_status s : {IBV_WC_SUCCESS, IBV_WC_RETRY_EXC_ERR, IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_INV_REQ_ERR,
                          IBV_WC_REM_OP_ERR, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_WR_FLUSH_ERR})
    EXPECT_GT(statuses[s], 0) << nic::wc_status_name(s);
  const auto& c = h.host().counters();
  for (nic::RxDrop d : {nic::RxDrop::kTruncated, nic::RxDrop::kIcrc, nic::RxDrop::kStaleResponse})
    EXPECT_GT(c.drops[static_cast<int>(d)], 0u) << nic::rx_drop_name(d);
}

}  // namespace
}  // namespace rocemu::test
