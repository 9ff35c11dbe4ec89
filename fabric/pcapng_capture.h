// pcapng_capture.h — in-process packet capture to a pcapng file with DPDK's rte_pcapng.
//
// dpdk-dumpcap captures nothing with this DPDK build (DPDK-NOTES.md), so nodes and engines
// capture in-process. rte_pcapng (DPDK 22.11) writes the section header and one interface
// block per ethdev port; we append one Interface Description Block per named capture
// interface (pcapng spec, draft-tuexen-opsawg-pcapng section 4.2, if_tsresol = 9: ns), copy
// packets with rte_pcapng_copy(), and stamp each Enhanced Packet Block (section 4.3) with
// `epoch_ns + now` and our interface id, so virtual-time captures carry simulated time.
// The blocks are written with writev(2), not rte_pcapng_write_packets() (see flush()).
// Readable by tshark. Copies are batched (32) and written by write(2) when a batch fills or
// on flush(): keep captures for debugging and tests, not for line-rate runs.
// In fabric/ (not switchsw/): it asks ethdev how many ports rte_pcapng describes. Threads:
// one owner thread. Units: ns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/time_ns.h"

struct rte_mbuf;
struct rte_mempool;
struct rte_pcapng;

namespace rocemu::fabric {

class PcapngCapture {
 public:
  enum class Direction : uint8_t { kUnknown = 0, kIn = 1, kOut = 2 };

  /// Creates `path` with one capture interface per name in `interfaces` (index = the `iface`
  /// argument of capture()). `snaplen_bytes` bounds the bytes kept per packet; timestamps
  /// are `epoch_ns + now`. Creates its own copy pool. Throws std::runtime_error with the
  /// reason (errno / rte_strerror) on failure.
  PcapngCapture(const std::string& path, const std::vector<std::string>& interfaces,
                uint32_t snaplen_bytes = 9216, TimeNs epoch_ns = 0);
  ~PcapngCapture();
  PcapngCapture(const PcapngCapture&) = delete;
  PcapngCapture& operator=(const PcapngCapture&) = delete;

  /// Records a copy of `m` (not consumed) seen on `iface` in `dir` at `now`. Counts, never
  /// fails loudly: a copy that cannot be made is counted in dropped().
  void capture(const rte_mbuf* m, uint16_t iface, Direction dir, TimeNs now) noexcept;
  /// Packets captured from now on are stamped `epoch_ns + now` (the engine attaching the
  /// capture sets it: the wall clock at engine time 0 in real time, a fixed instant in
  /// virtual time).
  void set_epoch_ns(TimeNs epoch_ns) noexcept { epoch_ns_ = epoch_ns; }
  /// Writes the batched copies to the file.
  void flush() noexcept;

  uint64_t captured() const noexcept { return captured_; }
  uint64_t dropped() const noexcept { return dropped_; }

 private:
  rte_pcapng* pcapng_ = nullptr;
  rte_mempool* pool_ = nullptr;
  int fd_ = -1;
  uint32_t iface_base_ = 0;
  uint16_t num_ifaces_ = 0;
  uint32_t snaplen_;
  TimeNs epoch_ns_;
  uint64_t captured_ = 0;
  uint64_t dropped_ = 0;
  uint16_t pending_n_ = 0;
  rte_mbuf* pending_[32] = {};
};

}  // namespace rocemu::fabric
