// snapshot_board_test.cc — the seqlock that carries a switch's counters to the agent thread
// (switchsw/snapshot_board.h): a reader never sees a torn snapshot while a writer publishes
// every microsecond or so (a hundred times more often than the agent's 100 us interval, so
// that writes overlap reads all the time: every field of a published snapshot carries the
// same stamp, checked on every read, and the overlaps are counted), reads before the first
// publish fail, and a read after the writer stopped returns the last snapshot. A writer
// publishing back to back with no pause starves the reader, who then gives up and says so
// (read() false) rather than return a torn copy. Bounded in count and time.
#include "switchsw/snapshot_board.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace rocemu::sw {
namespace {

void fill_stamp(uint64_t k, uint32_t ports, uint64_t* rate, EcnSetting* ecn, PortCounters* ctr) {
  for (uint32_t p = 0; p < ports; ++p) {
    rate[p] = k;
    ecn[p].kmin_bytes = static_cast<uint32_t>(k);
    ecn[p].kmax_bytes = static_cast<uint32_t>(k);
    ecn[p].pmax = static_cast<double>(k);
    PortCounters& c = ctr[p];
    c.tx_bytes = c.tx_packets = c.rx_bytes = c.rx_packets = k;
    c.ecn_marked_packets = c.ecn_marked_bytes = k;
    for (auto& d : c.drops) d = k;
    for (auto& q : c.queue_bytes) q = static_cast<uint32_t>(k);
    for (auto& q : c.peak_queue_bytes) q = static_cast<uint32_t>(k);
    for (auto& q : c.pfc_pauses_sent) q = k;
    for (auto& q : c.pfc_pauses_received) q = k;
    for (auto& q : c.paused_ns) q = k;
  }
}

bool consistent(const SwitchSnapshot& s, uint64_t& stamp) {
  stamp = static_cast<uint64_t>(s.at_ns);
  for (size_t p = 0; p < s.ports.size(); ++p) {
    const PortCounters& c = s.ports[p];
    if (s.port_rate_bps[p] != stamp || s.ecn[p].kmin_bytes != static_cast<uint32_t>(stamp) ||
        s.ecn[p].pmax != static_cast<double>(stamp) || c.tx_bytes != stamp ||
        c.rx_packets != stamp || c.ecn_marked_bytes != stamp || c.paused_ns[7] != stamp ||
        c.drops[0] != stamp || c.queue_bytes[3] != static_cast<uint32_t>(stamp))
      return false;
  }
  return true;
}

TEST(SnapshotBoard, ReadsAreNeverTornUnderAConcurrentWriter) {
  constexpr uint32_t kPorts = 48;
  SnapshotBoard board;
  board.init(7, kPorts);
  SwitchSnapshot out;
  EXPECT_FALSE(board.read(out)) << "nothing published yet";
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> written{0};
  std::thread writer([&] {
    for (uint64_t k = 1; !stop.load(std::memory_order_relaxed); ++k) {
      board.publish(static_cast<TimeNs>(k), [&](uint64_t* r, EcnSetting* e, PortCounters* c) {
        fill_stamp(k, kPorts, r, e, c);
      });
      written.store(k, std::memory_order_relaxed);
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(1);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
  });
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  uint64_t reads = 0, torn = 0, failed = 0, last = 0, went_back = 0;
  while (reads < 200000 && std::chrono::steady_clock::now() < until) {
    if (!board.read(out)) {
      ++failed;
      continue;
    }
    ++reads;
    uint64_t stamp = 0;
    if (!consistent(out, stamp)) ++torn;
    if (stamp < last) ++went_back;
    last = stamp;
    EXPECT_EQ(out.node, 7u);
  }
  stop.store(true);
  writer.join();
  std::printf("%llu reads (%llu gave up) against %llu publishes: %llu torn\n",
              static_cast<unsigned long long>(reads), static_cast<unsigned long long>(failed),
              static_cast<unsigned long long>(written.load()),
              static_cast<unsigned long long>(torn));
  std::printf("%llu copies discarded because a write overlapped them\n",
              static_cast<unsigned long long>(board.read_retries()));
  EXPECT_EQ(torn, 0u);
  EXPECT_GT(board.read_retries(), 0u) << "writes did overlap reads";
  EXPECT_EQ(went_back, 0u) << "snapshots never go back in time";
  EXPECT_GT(reads, 1000u);
  // Flat out, back to back: the reader may starve, but never returns a torn snapshot.
  std::atomic<bool> stop2{false};
  std::thread flat([&] {
    for (uint64_t k = written.load() + 1; !stop2.load(std::memory_order_relaxed); ++k)
      board.publish(static_cast<TimeNs>(k), [&](uint64_t* r, EcnSetting* e, PortCounters* c) {
        fill_stamp(k, kPorts, r, e, c);
      });
  });
  for (int i = 0; i < 20000; ++i) {
    uint64_t stamp = 0;
    if (board.read(out) && !consistent(out, stamp)) ++torn;
  }
  stop2.store(true);
  flat.join();
  EXPECT_EQ(torn, 0u);
  EXPECT_GT(written.load(), 1000u) << "the writer really ran concurrently";
  // After the writer stopped, the last snapshot is what a read returns.
  ASSERT_TRUE(board.read(out));
  uint64_t stamp = 0;
  EXPECT_TRUE(consistent(out, stamp));
  EXPECT_EQ(stamp, board.published()) << "the last snapshot published";
}

}  // namespace
}  // namespace rocemu::sw
