// The multilayer perceptron behind the policies (particle and articulated robots: policy.h)
// and of the critics (SHAC's value function, PPO's value network): tanh (or
// ELU, as SHAC's networks) on every hidden layer; the output layer is output_scale * tanh(z),
// or linear (critics);
// forward and a hand-written backward. Weights live in one flat array the optimizer owns; layer l holds its
// (out x in) matrix row-major, then its out biases.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace adj::optim {

// hidden-layer activation: tanh, or ELU (x > 0 ? x : exp(x) - 1)
enum class MlpActivation { tanh, elu };

template <class S>
class MlpT {
 public:
  MlpT() = default;
  // sizes: input, hidden..., output (each >= 1); linear_output: out = z (no tanh, no scale)
  MlpT(std::vector<int> sizes, S output_scale, bool linear_output = false, MlpActivation hidden = MlpActivation::tanh);

  int input_size() const { return sizes_.front(); }
  int output_size() const { return sizes_.back(); }
  int weight_count() const { return weight_count_; }
  const std::vector<int>& layer_sizes() const { return sizes_; }
  MlpActivation activation() const { return act_; }
  // the outputs lie in (-output_scale, output_scale) unless linear
  S output_scale() const { return output_scale_; }
  bool linear_output() const { return linear_; }

  // "W1[r][c]" (layer 1, output r, input c) or "b1[r]"
  std::string weight_name(int k) const;
  // uniform Glorot per layer (the output layer scaled by 0.1), biases 0
  void init_weights(S* w, std::uint64_t seed) const;
  // out = output_scale * tanh(...tanh(W0 in + b0)...), (output_size); z when linear
  void forward(const S* w, const std::vector<S>& in, std::vector<S>& out) const;
  // given d_out = dL/d out: d_w += dL/d w, d_in = dL/d in (recomputes the forward pass)
  void backward(const S* w, const std::vector<S>& in, const std::vector<S>& d_out, S* d_w, std::vector<S>& d_in) const;

 private:
  std::vector<int> sizes_;     // input, hidden..., output
  std::vector<int> w_offset_;  // start of each layer's weights
  int weight_count_ = 0;
  S output_scale_ = S(1);
  bool linear_ = false;
  MlpActivation act_ = MlpActivation::tanh;
};

}  // namespace adj::optim
