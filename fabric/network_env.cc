// network_env.cc — see network_env.h.
#include "fabric/network_env.h"

#include <chrono>
#include <stdexcept>

#include "fabric/realtime_engine.h"
#include "fabric/virtual_engine.h"
#include "fabric/workload_fabric.h"
#include "fabric/workload_job.h"
#include "nic/nic_params.h"
#include "switchsw/soft_switch.h"

namespace rocemu::fabric {

namespace {
int64_t wall_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
      .count();
}
}  // namespace

NetworkEnv::NetworkEnv(RunConfig cfg, TimeNs interval_ns)
    : cfg_(std::move(cfg)), interval_ns_(interval_ns > 0 ? interval_ns : cfg_.agent.interval_ns) {
  if (!cfg_.workload)
    throw std::invalid_argument("the network environment needs a run file with [workload]");
  if (interval_ns_ <= 0)
    throw std::invalid_argument("the network environment needs an interval > 0");
}

NetworkEnv::~NetworkEnv() {
  teardown();
  pool_.reset();
}

void NetworkEnv::teardown() {
  // The engine frees the frames on its wires and refers to the nodes: it goes first; the
  // nodes free what they queue, so every mbuf is back in the pool for the next episode.
  if (engine_) stats_.events += engine_->stats().events;
  engine_.reset();
  fabric_.reset();
  wcfg_.reset();
}

rte_mempool* NetworkEnv::pool() const noexcept { return pool_ ? pool_->get() : nullptr; }

TimeNs NetworkEnv::now() const noexcept { return engine_ ? engine_->now() : 0; }

uint64_t NetworkEnv::flows_finished() const { return fabric_ ? fabric_->flows_finished() : 0; }

std::vector<SwitchSnapshot> NetworkEnv::snapshots(TimeNs now) const {
  std::vector<SwitchSnapshot> v;
  for (sw::SoftSwitch* s : fabric_->switch_ptrs())
    if (s) v.push_back(s->snapshot(now));
  return v;
}

std::vector<SwitchSnapshot> NetworkEnv::reset(uint64_t seed) {
  const auto w0 = std::chrono::steady_clock::now();
  teardown();
  cfg_.seed = seed;
  // WorkloadFabric keeps references to both configurations: they live as long as it does.
  wcfg_ = std::make_unique<workload::WorkloadConfig>(make_workload_config_of(cfg_));
  if (!pool_)
    pool_ =
        std::make_unique<RunPool>(virtual_pool_mbufs(cfg_), nic::kElidedFrameRoomBytes,
                                  RunPool::Fault::kLazy);
  // No capture taps here: nobody reads the frames' payload bytes (NicParams::elide_payload),
  // and the mbufs hold headers only.
  WorkloadFabricOptions fo;
  fo.elide_payload = true;
  fabric_ =
      std::make_unique<WorkloadFabric>(cfg_, *wcfg_, pool_->get(), cfg_.workload_qps_per_pair, fo);
  engine_ = std::make_unique<VirtualEngine>(cfg_.topology.topology, cfg_.topology.links, seed);
  for (uint32_t i = 0; i < fabric_->num_nodes(); ++i) engine_->attach(i, fabric_->node(i));
  // The same flow feeding as run_workload_virtual: flows pulled one lookahead ahead.
  const TimeNs sample_ns = WorkloadRunOptions{}.queue_sample_ns;
  engine_->every(sample_ns, [this, sample_ns](TimeNs now) {
    fabric_->pull(now, 2 * sample_ns);
    fabric_->sample_queues(now);
  });
  engine_->run_until(0);
  done_ = false;
  ++stats_.episodes;
  stats_.reset_wall_ns += wall_since(w0);
  return snapshots(engine_->now());
}

agent::StepResult NetworkEnv::step(const std::vector<agent::SwitchEcn>& settings) {
  if (!engine_ || done_) throw std::logic_error("NetworkEnv::step: call reset() first");
  const auto w0 = std::chrono::steady_clock::now();
  const std::vector<sw::SoftSwitch*> sws = fabric_->switch_ptrs();
  for (const agent::SwitchEcn& s : settings) {
    if (s.node >= sws.size() || !sws[s.node]) continue;
    sw::SoftSwitch& sw = *sws[s.node];
    for (uint16_t p = 0; p < s.ecn.size() && p < sw.num_ports(); ++p)
      if (!(sw.ecn(p) == s.ecn[p])) (void)sw.set_ecn(p, s.ecn[p]);
  }
  const TimeNs until = engine_->now() + interval_ns_;
  engine_->run_until(until);
  agent::StepResult r;
  r.snapshots = snapshots(engine_->now());
  done_ = fabric_->done() || engine_->now() >= cfg_.sim.until_ns;
  r.done = done_;
  ++stats_.steps;
  stats_.step_wall_ns += wall_since(w0);
  return r;
}

}  // namespace rocemu::fabric
