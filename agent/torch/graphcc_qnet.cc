// graphcc_qnet.cc — the GraphCC MPNN (Bernardez et al., Sec. 4) as a LibTorch Q-network.
//
// Over a batch of B copies of the port graph (node ids offset by b * N), h0 = features
// zero-padded to kHidden; for k < kMpSteps:
//   m_uv = msg2(relu(msg1([h_v, h_u])))  for every edge u -> v,
//   a_v  = [min_u m_uv, max_u m_uv]       (index_reduce amin/amax, include_self=false over
//                                          zeros, so a port without ingress edges gets 0),
//   h_v  = upd2(relu(upd1([h_v, a_v]))),
// then Q_v = ro2(relu(ro1(h_v))). One set of weights serves every agent; the setting in
// force (the observation's last kNumSettingFeatures) is not an input.
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/padding.h>  // F::pad (functional/padding.h is not self-contained)

#include <utility>
#include <vector>

#include "agent/torch/q_network.h"

namespace rocemu::agent {

namespace {

namespace F = torch::nn::functional;

class GraphCcQNetwork final : public QNetwork {
 public:
  explicit GraphCcQNetwork(const PortGraph& graph)
      : msg1_(register_module("msg1", torch::nn::Linear(2 * kHidden, kMsgHidden))),
        msg2_(register_module("msg2", torch::nn::Linear(kMsgHidden, kHidden))),
        upd1_(register_module("upd1", torch::nn::Linear(3 * kHidden, kUpdHidden))),
        upd2_(register_module("upd2", torch::nn::Linear(kUpdHidden, kHidden))),
        ro1_(register_module("ro1", torch::nn::Linear(kHidden, kReadoutHidden))),
        ro2_(register_module("ro2", torch::nn::Linear(kReadoutHidden, kNumActions))),
        n_(graph.num_agents()),
        src1_(torch::tensor(std::vector<int64_t>(graph.edge_src().begin(), graph.edge_src().end()),
                            torch::kInt64)),
        dst1_(torch::tensor(std::vector<int64_t>(graph.edge_dst().begin(), graph.edge_dst().end()),
                            torch::kInt64)) {}

  torch::Tensor q_values(const torch::Tensor& obs, int batch) override {
    const auto& [src, dst] = batched_edges(batch);
    return forward(obs.narrow(1, 0, kNumFeatures), src, dst);
  }

  Model export_model() const override {
    Model m;
    m.kind = ModelKind::kGraphCc;
    auto layers = this->layers();
    size_t i = 0;
    m.mpnn.for_each_layer([&](float* w, size_t nw, float* b, size_t nb) {
      copy_weights_out(layers[i]->weight, w, nw);
      copy_weights_out(layers[i]->bias, b, nb);
      ++i;
    });
    return m;
  }

  void import_model(const Model& m) override {
    auto layers = this->layers();
    size_t i = 0;
    m.mpnn.for_each_layer([&](const float* w, size_t nw, const float* b, size_t nb) {
      copy_weights_in(layers[i]->weight, w, nw);
      copy_weights_in(layers[i]->bias, b, nb);
      ++i;
    });
  }

 private:
  /// x: [M, kNumFeatures]; src, dst: [E] int64 node ids in [0, M). Returns [M, kNumActions].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& src,
                        const torch::Tensor& dst) {
    const int64_t m = x.size(0);
    torch::Tensor h = F::pad(x, F::PadFuncOptions({0, kHidden - kNumFeatures}));
    for (int k = 0; k < kMpSteps; ++k) {
      const auto msg = msg2_(
          torch::relu(msg1_(torch::cat({h.index_select(0, dst), h.index_select(0, src)}, 1))));
      const auto zeros = torch::zeros({m, kHidden}, msg.options());
      const auto mn = zeros.index_reduce(0, dst, msg, "amin", /*include_self=*/false);
      const auto mx = zeros.index_reduce(0, dst, msg, "amax", /*include_self=*/false);
      h = upd2_(torch::relu(upd1_(torch::cat({h, mn, mx}, 1))));
    }
    return ro2_(torch::relu(ro1_(h)));
  }

  // The edges of `batch` copies of the graph, graph b's node ids offset by b * N; kept for
  // the last batch size asked for.
  const std::pair<torch::Tensor, torch::Tensor>& batched_edges(int batch) {
    if (edges_batch_ != batch) {
      std::vector<torch::Tensor> s, d;
      for (int b = 0; b < batch; ++b) {
        s.push_back(src1_ + static_cast<int64_t>(b) * n_);
        d.push_back(dst1_ + static_cast<int64_t>(b) * n_);
      }
      edges_ = {torch::cat(s), torch::cat(d)};
      edges_batch_ = batch;
    }
    return edges_;
  }

  // In MpnnWeights::for_each_layer's order (the model file's).
  std::vector<torch::nn::Linear> layers() const { return {msg1_, msg2_, upd1_, upd2_, ro1_, ro2_}; }

  // Declared in the order they draw their initial weights.
  torch::nn::Linear msg1_, msg2_, upd1_, upd2_, ro1_, ro2_;
  int n_;
  torch::Tensor src1_, dst1_;  // one graph's edges u -> v
  std::pair<torch::Tensor, torch::Tensor> edges_;
  int edges_batch_ = -1;
};

}  // namespace

std::shared_ptr<QNetwork> make_graphcc_q_network(const PortGraph& graph) {
  return std::make_shared<GraphCcQNetwork>(graph);
}

}  // namespace rocemu::agent
