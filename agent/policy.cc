// policy.cc — static, GraphCC and ACC greedy policies and the per-interval EcnAgent.
#include "agent/policy.h"

#include <algorithm>
#include <stdexcept>

#include "agent/action_table.h"

namespace rocemu::agent {

std::vector<SwitchEcn> make_switch_settings(const PortGraph& graph, const EcnSetting& initial) {
  std::vector<SwitchEcn> r;
  for (uint32_t n : graph.switches())
    r.push_back(SwitchEcn{n, std::vector<EcnSetting>(graph.ports_of(n), initial)});
  return r;
}

void apply_actions(const PortGraph& graph, std::span<const uint16_t> actions,
                   std::vector<SwitchEcn>& settings) noexcept {
  const size_t n = std::min<size_t>(actions.size(), graph.agents().size());
  for (size_t v = 0; v < n; ++v) {
    const AgentPort& a = graph.agents()[v];
    const size_t s = a.switch_index;
    if (s >= settings.size() || a.port >= settings[s].ecn.size() || actions[v] >= kNumActions)
        [[unlikely]]
      continue;
    settings[s].ecn[a.port] = action_setting(actions[v]);
  }
}

void StaticPolicy::act(const FeatureTracker&, std::span<uint16_t> actions) noexcept {
  std::fill(actions.begin(), actions.end(), action_);
}

void GraphCcPolicy::act(const FeatureTracker& tracker, std::span<uint16_t> actions) noexcept {
  if (static_cast<int>(actions.size()) != net_.num_agents()) [[unlikely]]
    return;
  net_.greedy(tracker.features().data(), actions.data());
}

AccPolicy::AccPolicy(const std::vector<AccNetWeights>& nets, const PortGraph& graph) : nets_(nets) {
  if (static_cast<int>(nets.size()) != graph.num_agents())
    throw std::invalid_argument("ACC model has " + std::to_string(nets.size()) +
                                " per-port networks, the topology has " +
                                std::to_string(graph.num_agents()) + " agent ports");
}

void AccPolicy::act(const FeatureTracker& tracker, std::span<uint16_t> actions) noexcept {
  if (static_cast<int>(actions.size()) != nets_.num_agents()) [[unlikely]]
    return;
  nets_.greedy(tracker.features().data(), tracker.settings().data(), actions.data());
}

std::unique_ptr<EcnPolicy> make_policy(const Model& model, const PortGraph& graph) {
  if (model.kind == ModelKind::kGraphCc) return std::make_unique<GraphCcPolicy>(model.mpnn, graph);
  return std::make_unique<AccPolicy>(model.acc, graph);
}

EcnAgent::EcnAgent(const Topology& topo, FeatureConfig features, std::unique_ptr<EcnPolicy> policy)
    : graph_(topo),
      tracker_(graph_, features),
      policy_(std::move(policy)),
      actions_(graph_.num_agents(), 0),
      settings_(make_switch_settings(graph_)) {}

const std::vector<SwitchEcn>& EcnAgent::decide(std::span<const SwitchSnapshot> snapshots) noexcept {
  tracker_.update(snapshots);
  // Non-agent ports keep what the switch reports.
  const auto& sw = graph_.switches();
  for (const auto& snap : snapshots) {
    const auto it = std::lower_bound(sw.begin(), sw.end(), snap.node);
    if (it == sw.end() || *it != snap.node) continue;
    auto& dst = settings_[static_cast<size_t>(it - sw.begin())].ecn;
    const size_t n = std::min(dst.size(), snap.ecn.size());
    std::copy_n(snap.ecn.begin(), n, dst.begin());
  }
  policy_->act(tracker_, actions_);
  apply_actions(graph_, actions_, settings_);
  return settings_;
}

}  // namespace rocemu::agent
