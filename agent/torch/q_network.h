// q_network.h — the Q-network the DQN loop trains: GraphCC's shared MPNN or ACC's per-port nets.
//
// A QNetwork is one LibTorch module (the trainer holds two: online and target) that maps a
// batch of whole-graph observations to one Q-value per agent and action, and converts its
// weights to and from the torch-free Model (model files, the fast acting path). Everything
// that differs between GraphCC (graphcc_qnet.cc) and ACC (acc_qnet.cc) is behind it; the
// loop itself (dqn_trainer.cc) reaches the parameters through torch::nn::Module for the
// optimiser, gradient clipping, target copies and checkpoints. Internal to agent/torch.
// Not thread-safe: one thread at a time (the caller's or the learner's).
#pragma once

#include <torch/nn/module.h>

#include <cstddef>
#include <memory>

#include "agent/model_weights.h"
#include "agent/port_graph.h"

namespace rocemu::agent {

class QNetwork : public torch::nn::Module {
 public:
  /// Q-values [B*N, kNumActions] of B whole graphs, obs [B*N, kObsDim] (row b*N + v is agent v
  /// of graph b: its kNumFeatures features, then its kNumSettingFeatures setting in force).
  virtual torch::Tensor q_values(const torch::Tensor& obs, int batch) = 0;
  /// The weights as a Model of this network's kind (Linear layout, see model_weights.h).
  virtual Model export_model() const = 0;
  /// Copies a model of this network's kind in (the caller checks the kind); throws
  /// std::invalid_argument if its sizes do not fit this network.
  virtual void import_model(const Model& model) = 0;
};

/// A freshly initialised network of `kind` for `graph` (weights drawn from torch's global
/// generator: call in a fixed order after torch::manual_seed). Throws std::invalid_argument
/// for a kind that is none of ModelKind's.
std::shared_ptr<QNetwork> make_q_network(ModelKind kind, const PortGraph& graph);

/// The implementations make_q_network picks from.
std::shared_ptr<QNetwork> make_graphcc_q_network(const PortGraph& graph);
std::shared_ptr<QNetwork> make_acc_q_network(int num_agents);

/// Copies a parameter (any view) into n floats at dst; throws std::logic_error on a size
/// mismatch.
void copy_weights_out(const torch::Tensor& t, float* dst, size_t n);
/// Copies n floats from src into a parameter (or a view of one), without autograd; throws
/// std::logic_error on a size mismatch.
void copy_weights_in(torch::Tensor& t, const float* src, size_t n);

}  // namespace rocemu::agent
