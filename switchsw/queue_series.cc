// queue_series.cc — CSV rows of queue length and utilisation (see queue_series.h).
#include "switchsw/queue_series.h"

#include <cerrno>
#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <stdexcept>

#include "switchsw/soft_switch.h"

namespace rocemu::sw {

QueueSeriesWriter::QueueSeriesWriter(const std::string& path, std::string node_name,
                                     std::vector<uint16_t> ports, TimeNs interval_ns)
    : node_name_(std::move(node_name)),
      ports_(std::move(ports)),
      interval_ns_(interval_ns),
      last_tx_bytes_(ports_.size(), 0) {
  if (interval_ns_ <= 0) throw std::runtime_error("QueueSeriesWriter: interval_ns must be > 0");
  f_ = std::fopen(path.c_str(), "w");
  if (!f_) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
  std::fputs(
      "time_ns,node,port,queue_bytes,peak_queue_bytes,tx_bytes,utilisation,ecn_marked_packets,"
      "pfc_pauses_sent,paused_ns\n",
      f_);
}

QueueSeriesWriter::~QueueSeriesWriter() {
  if (f_) std::fclose(f_);
}

void QueueSeriesWriter::write(const SwitchSnapshot& snap) {
  const TimeNs dt = last_ns_ < 0 ? 0 : snap.at_ns - last_ns_;
  for (size_t i = 0; i < ports_.size(); ++i) {
    const uint16_t port = ports_[i];
    if (port >= snap.ports.size()) continue;
    const PortCounters& c = snap.ports[port];
    uint64_t peak = 0, sent = 0, paused = 0;
    for (int q = 0; q < kNumPriorities; ++q) {
      peak = std::max<uint64_t>(peak, c.peak_queue_bytes[q]);
      sent += c.pfc_pauses_sent[q];
      paused += c.paused_ns[q];
    }
    const double util =
        dt > 0 ? static_cast<double>(c.tx_bytes - last_tx_bytes_[i]) * 8.0 * 1e9 /
                     (static_cast<double>(snap.port_rate_bps[port]) * static_cast<double>(dt))
               : 0.0;
    last_tx_bytes_[i] = c.tx_bytes;
    std::fprintf(f_,
                 "%" PRId64 ",%s,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%" PRIu64 ",%" PRIu64
                 ",%" PRIu64 "\n",
                 snap.at_ns, node_name_.c_str(), port, c.total_queue_bytes(), peak, c.tx_bytes,
                 util, c.ecn_marked_packets, sent, paused);
    ++rows_;
  }
  last_ns_ = snap.at_ns;
  next_ns_ = snap.at_ns + interval_ns_;
}

bool QueueSeriesWriter::sample(const SoftSwitch& sw, TimeNs now) {
  if (!due(now)) return false;
  write(sw.snapshot(now));
  return true;
}

void QueueSeriesWriter::flush() { std::fflush(f_); }

}  // namespace rocemu::sw
