// policy.h — choosing one ECN action per agent from features (torch-free, used when acting).
//
// Policies: StaticPolicy (one fixed action everywhere, the operator's default), GraphCcPolicy
// (greedy over the shared MPNN's Q-values, GraphCC Sec. 4) and AccPolicy (greedy over one
// independent network per port, ACC, Yan et al. SIGCOMM 2021). EcnAgent is what a
// controller runs each interval: snapshots -> features -> actions -> per-switch settings.
// act()/decide() are noexcept and allocation-free after construction.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "agent/environment.h"
#include "agent/fast_mpnn.h"
#include "agent/model_weights.h"
#include "agent/port_features.h"

namespace rocemu::agent {

class EcnPolicy {
 public:
  virtual ~EcnPolicy() = default;
  /// Writes one action id per agent (actions.size() == tracker.num_agents()).
  virtual void act(const FeatureTracker& tracker, std::span<uint16_t> actions) noexcept = 0;
  virtual std::string name() const = 0;
};

class StaticPolicy final : public EcnPolicy {
 public:
  explicit StaticPolicy(int action) : action_(static_cast<uint16_t>(action)) {}
  void act(const FeatureTracker&, std::span<uint16_t> actions) noexcept override;
  std::string name() const override { return "static"; }

 private:
  uint16_t action_;
};

class GraphCcPolicy final : public EcnPolicy {
 public:
  /// skip_dead_units: see FastMpnn (false only to measure what skipping saves).
  GraphCcPolicy(const MpnnWeights& weights, const PortGraph& graph, bool skip_dead_units = true)
      : net_(weights, graph, best_simd_build(), skip_dead_units) {}
  void act(const FeatureTracker& tracker, std::span<uint16_t> actions) noexcept override;
  std::string name() const override { return "graphcc"; }

 private:
  FastMpnn net_;
};

class AccPolicy final : public EcnPolicy {
 public:
  /// Throws std::invalid_argument if nets.size() != graph.num_agents().
  AccPolicy(const std::vector<AccNetWeights>& nets, const PortGraph& graph);
  void act(const FeatureTracker& tracker, std::span<uint16_t> actions) noexcept override;
  std::string name() const override { return "acc"; }

 private:
  FastAccNets nets_;
};

/// The greedy policy of a loaded model (throws std::invalid_argument on a graph mismatch).
std::unique_ptr<EcnPolicy> make_policy(const Model& model, const PortGraph& graph);

/// Snapshots in, settings out, once per control interval.
class EcnAgent {
 public:
  /// `policy` is built for a PortGraph of the same topology.
  EcnAgent(const Topology& topo, FeatureConfig features, std::unique_ptr<EcnPolicy> policy);

  /// Consumes the interval's snapshots and returns every switch's new settings (valid until
  /// the next call). Ports that are not agents keep their setting from the snapshot.
  const std::vector<SwitchEcn>& decide(std::span<const SwitchSnapshot> snapshots) noexcept;

  const PortGraph& graph() const noexcept { return graph_; }
  const FeatureTracker& tracker() const noexcept { return tracker_; }
  std::span<const uint16_t> actions() const noexcept { return actions_; }

 private:
  PortGraph graph_;
  FeatureTracker tracker_;
  std::unique_ptr<EcnPolicy> policy_;
  std::vector<uint16_t> actions_;
  std::vector<SwitchEcn> settings_;
};

}  // namespace rocemu::agent
