// bottleneck_sim.h — a packet-level, virtual-time model of N DCQCN senders sharing one
// bottleneck queue, to check the DCQCN fluid model's fixed point (Zhu et al., SIGCOMM
// 2015, section 4: at the fixed point every flow gets C/N and the queue sits where the RED
// marking probability balances rate increase and decrease).
//
// Each sender has its own NIC (line rate cfg.line_rate_bps) and paces its frames as the
// RoCE host does, with the host's limiter (nic/paced_release.h) at the rate DcqcnHooks
// hands it: a frame leaves at max(now, previous release) + its serialisation at R_C (no
// limit at line rate, no banked credit) and once the NIC's wire is free. Frames reach the
// bottleneck FIFO after prop_ns; the FIFO drains at bottleneck_bps; at dequeue, RED-ECN
// marks with p(q) = 0 (q <= Kmin), Pmax (q - Kmin)/(Kmax - Kmin) (Kmin < q <= Kmax),
// 1 (q > Kmax) on the instantaneous queue q including the frame.
// A marked frame reaches the receiver's NP feedback_ns/2 later; a CNP it sends reaches the
// RP another feedback_ns/2 later. Times in ns, sizes in bytes, rates in bit/s.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "common/telemetry.h"
#include "common/time_ns.h"
#include "nic/dcqcn/dcqcn_params.h"

namespace rocemu::dcqcn::test {

struct BottleneckScenario {
  uint32_t flows = 2;
  uint64_t bottleneck_bps = 25 * kBpsPerGbps;
  uint32_t frame_bytes = 1082;  // 1024-byte MTU RoCEv2 frame
  TimeNs prop_ns = 1'000;
  TimeNs feedback_ns = 4'000;
  EcnSetting ecn;
  DcqcnConfig cfg;  // line_rate_bps is each sender NIC's rate
  TimeNs duration_ns = 250 * kNsPerMs;
  TimeNs warmup_ns = 50 * kNsPerMs;  // measurements cover [warmup, duration)
  uint64_t seed = 1;
  // Optional traces (not owned): per-flow RP samples and queue samples every sample_ns.
  std::ostream* rate_csv = nullptr;
  std::ostream* queue_csv = nullptr;
  TimeNs sample_ns = 20'000;
};

struct BottleneckResult {
  std::vector<double> flow_bps;  // delivered through the bottleneck in the window
  double utilisation = 0;        // sum(flow_bps) / bottleneck_bps
  double jain = 0;               // Jain's fairness index of flow_bps
  double mean_queue_bytes = 0;   // time-weighted over the window
  uint64_t max_queue_bytes = 0;  // over the window
  double frac_time_above_kmax = 0;
  double frac_time_empty = 0;
  uint64_t marked = 0;  // frames CE-marked (whole run)
  uint64_t cnps = 0;    // CNPs sent by the NP (whole run)
};

BottleneckResult run_bottleneck(const BottleneckScenario& s);

}  // namespace rocemu::dcqcn::test
