// The multilayer perceptron behind the policies (particle and articulated robots: policy.h)
// and of the critics (SHAC's value function, PPO's value network): tanh (or
// ELU, as SHAC's networks) on every hidden layer, optionally followed by a LayerNorm (as SHAC's
// published networks: y = g (a - mean a) / sqrt(var a + 1e-5) + beta over the layer's units, the
// biased variance, a gain and a bias per unit); the output layer is output_scale * tanh(z),
// or linear (critics); forward and a hand-written backward. Weights live in one flat array the
// optimizer owns; layer l holds its (out x in) matrix row-major, then its out biases, then (a
// hidden layer with LayerNorm) its out gains and its out LayerNorm biases.
//
// A batch (MlpT::Batch) runs many samples through the same weights and keeps every layer's
// values for the backward pass, so nothing is recomputed and nothing is allocated per sample.
// The forward pass reads the weights packed (pack(): each matrix transposed) and runs several
// outputs per SIMD lane; the backward pass runs several inputs per lane. Each output, input
// gradient and weight gradient is summed in the order of the plain loops (a layer's inputs in
// order, its outputs in order, the samples in order), so the lanes, the batch size and the
// split of a batch over threads change no bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace adj::optim {

// hidden-layer activation: tanh, or ELU (x > 0 ? x : exp(x) - 1)
enum class MlpActivation { tanh, elu };
// the weights' start: uniform Glorot (the output layer scaled by 0.1), or orthogonal (each
// matrix's rows or columns, whichever are fewer, orthonormal; gain 1, the output layer too)
enum class MlpInit { glorot, orthogonal };

// how the network is built besides its sizes
struct MlpForm {
  MlpActivation activation = MlpActivation::tanh;  // the hidden layers'
  bool layer_norm = false;                         // a LayerNorm after each hidden layer's activation
  MlpInit init = MlpInit::glorot;

  bool operator==(const MlpForm&) const = default;
};

template <class S>
class MlpT {
 public:
  MlpT() = default;
  // sizes: input, hidden..., output (each >= 1); linear_output: out = z (no tanh, no scale)
  MlpT(std::vector<int> sizes, S output_scale, bool linear_output = false, MlpActivation hidden = MlpActivation::tanh)
      : MlpT(std::move(sizes), output_scale, linear_output, MlpForm{.activation = hidden}) {}
  MlpT(std::vector<int> sizes, S output_scale, bool linear_output, MlpForm form);

  int input_size() const { return sizes_.front(); }
  int output_size() const { return sizes_.back(); }
  int weight_count() const { return weight_count_; }
  const std::vector<int>& layer_sizes() const { return sizes_; }
  MlpActivation activation() const { return form_.activation; }
  const MlpForm& form() const { return form_; }
  // the outputs lie in (-output_scale, output_scale) unless linear
  S output_scale() const { return output_scale_; }
  bool linear_output() const { return linear_; }

  // "W1[r][c]" (layer 1, output r, input c), "b1[r]", or the LayerNorm's "g1[r]" and "beta1[r]"
  std::string weight_name(int k) const;
  // the form's init (MlpInit), from a Gaussian or uniform matrix drawn in double from `seed`;
  // biases 0, LayerNorm gains 1 and biases 0
  void init_weights(S* w, std::uint64_t seed) const;
  // out = output_scale * tanh(...tanh(W0 in + b0)...), (output_size); z when linear
  void forward(const S* w, const std::vector<S>& in, std::vector<S>& out) const;
  // given d_out = dL/d out: d_w += dL/d w, d_in = dL/d in (recomputes the forward pass)
  void backward(const S* w, const std::vector<S>& in, const std::vector<S>& d_out, S* d_w, std::vector<S>& d_in) const;

  // samples through the network, each layer's values kept for the backward pass
  struct Batch {
    int count = 0, inputs = 0;
    // layer l = 0..L: (count x size_l), sample after sample; act[0] holds the inputs (the caller
    // writes them: input(q)), act[L] the output layer's tanh before the scale (z when linear)
    std::vector<std::vector<S>> act;
    std::vector<std::vector<S>> dz;  // backward: dL/dz of layers 1..L (dz[l - 1]), as act
    // hidden layers with LayerNorm (l = 1..L-1 at [l - 1], others empty): the activation's values,
    // the normalized values (act = gain norm + bias), 1 / sqrt(var + eps) per sample, and
    // (backward) dL/d act
    std::vector<std::vector<S>> ln_a, ln_x, ln_rstd, ln_dy;
    S* input(int q) { return act[0].data() + std::size_t(q) * std::size_t(inputs); }
  };
  // a batch of `count` samples (its memory kept when it shrinks)
  void resize(Batch& b, int count) const;
  // the weights as the forward pass reads them: each layer's matrix transposed (in x out), its
  // biases after it (weight_count() entries)
  void pack(const S* w, std::vector<S>& packed) const;
  // samples [begin, end) of the batch through the network at the packed weights
  void forward(const S* packed, Batch& b, int begin, int end) const;
  // output k of sample q after forward
  S output(const Batch& b, int q, int k) const;
  // given d_out (output_size() per sample, from sample `begin` on) for samples [begin, end): each
  // layer's dL/dz (b.dz) and, when d_in is not null, dL/d in (input_size() per sample, from
  // `begin` on); w: the weights as stored (not packed)
  void backward_samples(const S* w, Batch& b, const S* d_out, int begin, int end, S* d_in) const;
  // d_w += the weight gradients of samples [begin, end) in sample order (after backward_samples),
  // for the weight rows [row_begin, row_end) of all layers counted together (row_count():
  // each row is one output of a layer: its weights and bias, and its LayerNorm gain and bias)
  void accumulate(const Batch& b, int begin, int end, int row_begin, int row_end, S* d_w) const;
  int row_count() const;
  // backward_samples and accumulate of every row: d_w += dL/dw, d_in (optional) = dL/d in
  void backward(const S* w, Batch& b, const S* d_out, int begin, int end, S* d_w, S* d_in) const;

 private:
  Batch forward_one(const S* w, const std::vector<S>& in) const;  // one sample's batch, forward run
  // layer l (0..L-1) has a LayerNorm
  bool normed(int l) const { return form_.layer_norm && l + 2 < int(sizes_.size()); }
  void init_orthogonal(S* w, std::uint64_t seed) const;

  std::vector<int> sizes_;     // input, hidden..., output
  std::vector<int> w_offset_;  // start of each layer's weights
  int weight_count_ = 0;
  S output_scale_ = S(1);
  bool linear_ = false;
  MlpForm form_;
};

}  // namespace adj::optim
