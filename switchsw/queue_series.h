// queue_series.h — CSV time series of queue length and link utilisation for chosen ports.
//
// Takes a SwitchSnapshot every `interval_ns` (the caller offers `now` often; sample() keeps
// only the due instants) and writes one row per chosen port (node: the switch's name):
//   time_ns,node,port,queue_bytes,peak_queue_bytes,tx_bytes,utilisation,ecn_marked_packets,
//   pfc_pauses_sent,paused_ns
// utilisation = 8 x (tx bytes since the previous row) / (rate_bps x elapsed seconds), in
// [0, 1] up to framing overheads the engine does not count. Control-plane code: it
// allocates and does I/O, so call it between bursts, never per packet. Units: ns, bytes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/telemetry.h"

namespace rocemu::sw {

class SoftSwitch;

class QueueSeriesWriter {
 public:
  /// Opens `path` and writes the header; `node_name` is the switch's topology name, written
  /// in the node column. Throws std::runtime_error if it cannot.
  QueueSeriesWriter(const std::string& path, std::string node_name, std::vector<uint16_t> ports,
                    TimeNs interval_ns);
  ~QueueSeriesWriter();
  QueueSeriesWriter(const QueueSeriesWriter&) = delete;
  QueueSeriesWriter& operator=(const QueueSeriesWriter&) = delete;

  /// True when a sample is due at `now`.
  bool due(TimeNs now) const noexcept { return now >= next_ns_; }
  /// Writes the rows of `snap` (whatever its time) and schedules the next sample.
  void write(const SwitchSnapshot& snap);
  /// Snapshots `sw` and writes it if a sample is due at `now`; returns whether it did.
  bool sample(const SoftSwitch& sw, TimeNs now);
  void flush();
  uint64_t rows() const noexcept { return rows_; }

 private:
  std::FILE* f_ = nullptr;
  std::string node_name_;
  std::vector<uint16_t> ports_;
  TimeNs interval_ns_;
  TimeNs next_ns_ = 0;
  TimeNs last_ns_ = -1;
  std::vector<uint64_t> last_tx_bytes_;
  uint64_t rows_ = 0;
};

}  // namespace rocemu::sw
