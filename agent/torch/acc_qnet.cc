// acc_qnet.cc — the ACC baseline (Yan et al., SIGCOMM 2021) as a LibTorch Q-network.
//
// One 2-layer MLP per port on its kAccInputs = 9 features + the 3-float setting in force:
// Q_v = W2_v relu(W1_v x_v + b1_v) + b2_v, no parameter sharing, no messages. The N nets
// run as one batched matrix product (baddbmm over the port dimension); parameters
// w1 [N, kAccHidden, kAccInputs], b1 [N, kAccHidden], w2 [N, kNumActions, kAccHidden],
// b2 [N, kNumActions], each net's slice in torch::nn::Linear's layout.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/replay_buffer.h"
#include "agent/torch/q_network.h"

namespace rocemu::agent {

namespace {

static_assert(kAccInputs == kObsDim, "a port's net reads its whole observation");

class AccQNetwork final : public QNetwork {
 public:
  explicit AccQNetwork(int n) : n_(n) {
    // Same initialisation as torch::nn::Linear: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    auto u = [](std::vector<int64_t> shape, int fan_in) {
      const double b = 1.0 / std::sqrt(static_cast<double>(fan_in));
      return torch::empty(shape).uniform_(-b, b);
    };
    w1_ = register_parameter("w1", u({n, kAccHidden, kAccInputs}, kAccInputs));
    b1_ = register_parameter("b1", u({n, kAccHidden}, kAccInputs));
    w2_ = register_parameter("w2", u({n, kNumActions, kAccHidden}, kAccHidden));
    b2_ = register_parameter("b2", u({n, kNumActions}, kAccHidden));
  }

  torch::Tensor q_values(const torch::Tensor& obs, int batch) override {
    return forward(obs.view({batch, n_, kAccInputs})).reshape({batch * n_, kNumActions});
  }

  Model export_model() const override {
    Model m;
    m.kind = ModelKind::kAccPerPort;
    m.acc.resize(static_cast<size_t>(n_));
    for (int v = 0; v < n_; ++v) {
      copy_weights_out(w1_[v], m.acc[v].l1.w.data(), m.acc[v].l1.w.size());
      copy_weights_out(b1_[v], m.acc[v].l1.b.data(), m.acc[v].l1.b.size());
      copy_weights_out(w2_[v], m.acc[v].l2.w.data(), m.acc[v].l2.w.size());
      copy_weights_out(b2_[v], m.acc[v].l2.b.data(), m.acc[v].l2.b.size());
    }
    return m;
  }

  void import_model(const Model& m) override {
    if (static_cast<int>(m.acc.size()) != n_)
      throw std::invalid_argument("ACC model has " + std::to_string(m.acc.size()) +
                                  " networks, the graph has " + std::to_string(n_) + " agents");
    for (int v = 0; v < n_; ++v) {
      auto w1 = w1_[v], b1 = b1_[v];
      auto w2 = w2_[v], b2 = b2_[v];
      copy_weights_in(w1, m.acc[v].l1.w.data(), m.acc[v].l1.w.size());
      copy_weights_in(b1, m.acc[v].l1.b.data(), m.acc[v].l1.b.size());
      copy_weights_in(w2, m.acc[v].l2.w.data(), m.acc[v].l2.w.size());
      copy_weights_in(b2, m.acc[v].l2.b.data(), m.acc[v].l2.b.size());
    }
  }

 private:
  /// x: [B, N, kAccInputs] -> [B, N, kNumActions].
  torch::Tensor forward(const torch::Tensor& x) {
    const auto xt = x.transpose(0, 1);  // [N, B, in]
    const auto h = torch::relu(torch::baddbmm(b1_.unsqueeze(1), xt, w1_.transpose(1, 2)));
    return torch::baddbmm(b2_.unsqueeze(1), h, w2_.transpose(1, 2)).transpose(0, 1);
  }

  int n_;
  torch::Tensor w1_, b1_, w2_, b2_;
};

}  // namespace

std::shared_ptr<QNetwork> make_acc_q_network(int num_agents) {
  return std::make_shared<AccQNetwork>(num_agents);
}

}  // namespace rocemu::agent
