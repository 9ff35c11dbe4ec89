// q_network.cc — the one place that picks a Q-network implementation from the model kind,
// and the weight copies both implementations share.
#include "agent/torch/q_network.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace rocemu::agent {

std::shared_ptr<QNetwork> make_q_network(ModelKind kind, const PortGraph& graph) {
  switch (kind) {
    case ModelKind::kGraphCc:
      return make_graphcc_q_network(graph);
    case ModelKind::kAccPerPort:
      return make_acc_q_network(graph.num_agents());
  }
  throw std::invalid_argument("no Q-network for model kind " +
                              std::to_string(static_cast<uint32_t>(kind)));
}

void copy_weights_out(const torch::Tensor& t, float* dst, size_t n) {
  const auto c = t.detach().contiguous();
  if (static_cast<size_t>(c.numel()) != n) throw std::logic_error("layer size mismatch on export");
  std::memcpy(dst, c.data_ptr<float>(), n * sizeof(float));
}

void copy_weights_in(torch::Tensor& t, const float* src, size_t n) {
  if (static_cast<size_t>(t.numel()) != n) throw std::logic_error("layer size mismatch on import");
  torch::NoGradGuard ng;
  t.copy_(torch::from_blob(const_cast<float*>(src), t.sizes(), torch::kFloat32));
}

}  // namespace rocemu::agent
