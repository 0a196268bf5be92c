#include "engine/optim/mlp.h"

#include <cmath>
#include <random>

namespace adj::optim {

namespace {

template <class S>
S hidden_act(MlpActivation a, S x) {
  return a == MlpActivation::tanh ? std::tanh(x) : x > S(0) ? x : std::expm1(x);
}

// the activation's derivative from its value y
template <class S>
S hidden_slope(MlpActivation a, S y) {
  return a == MlpActivation::tanh ? S(1) - y * y : y > S(0) ? S(1) : y + S(1);
}

}  // namespace

template <class S>
MlpT<S>::MlpT(std::vector<int> sizes, S output_scale, bool linear_output, MlpActivation hidden)
    : sizes_(std::move(sizes)), output_scale_(output_scale), linear_(linear_output), act_(hidden) {
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
    w_offset_.push_back(weight_count_);
    weight_count_ += (sizes_[l] + 1) * sizes_[l + 1];
  }
}

template <class S>
std::string MlpT<S>::weight_name(int k) const {
  int l = int(w_offset_.size()) - 1;
  while (l > 0 && k < w_offset_[l]) --l;
  int in = sizes_[l], n = sizes_[l + 1], j = k - w_offset_[l];
  // appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "x" + std::string chains
  std::string s = j < in * n ? "W" : "b";
  s += std::to_string(l);
  s += '[';
  s += std::to_string(j < in * n ? j / in : j - in * n);
  s += ']';
  if (j < in * n) {
    s += '[';
    s += std::to_string(j % in);
    s += ']';
  }
  return s;
}

template <class S>
void MlpT<S>::init_weights(S* w, std::uint64_t seed) const {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int L = int(sizes_.size()) - 1;
  for (int l = 0; l < L; ++l) {
    int in = sizes_[l], out = sizes_[l + 1];
    double a = std::sqrt(6.0 / (in + out)) * (l == L - 1 ? 0.1 : 1.0);
    S* W = w + w_offset_[l];
    for (int k = 0; k < in * out; ++k) W[k] = S(a * u(rng));
    for (int k = 0; k < out; ++k) W[in * out + k] = S(0);
  }
}

template <class S>
void MlpT<S>::forward(const S* w, const std::vector<S>& in, std::vector<S>& out) const {
  std::vector<S> a = in, z;
  const int L = int(sizes_.size()) - 1;
  for (int l = 0; l < L; ++l) {
    int ni = sizes_[l], n = sizes_[l + 1];
    const S* W = w + w_offset_[l];
    z.assign(n, S(0));
    for (int r = 0; r < n; ++r) {
      S sum = W[ni * n + r];
      for (int c = 0; c < ni; ++c) sum += W[r * ni + c] * a[c];
      z[r] = l < L - 1 ? hidden_act(act_, sum) : linear_ ? sum : std::tanh(sum) * output_scale_;
    }
    a.swap(z);
  }
  out = a;
}

template <class S>
void MlpT<S>::backward(const S* w, const std::vector<S>& in, const std::vector<S>& d_out, S* d_w,
                       std::vector<S>& d_in) const {
  const int L = int(sizes_.size()) - 1;
  // forward again, keeping every layer's tanh values (unscaled, also for the output layer;
  // z itself for a linear output)
  std::vector<std::vector<S>> act(L + 1);
  act[0] = in;
  for (int l = 0; l < L; ++l) {
    int ni = sizes_[l], n = sizes_[l + 1];
    const S* W = w + w_offset_[l];
    act[l + 1].assign(n, S(0));
    for (int r = 0; r < n; ++r) {
      S sum = W[ni * n + r];
      for (int c = 0; c < ni; ++c) sum += W[r * ni + c] * act[l][c];
      act[l + 1][r] = l < L - 1 ? hidden_act(act_, sum) : linear_ ? sum : std::tanh(sum);
    }
  }
  // backward, last layer first
  std::vector<S> da = d_out, dz;
  for (int l = L - 1; l >= 0; --l) {
    int ni = sizes_[l], n = sizes_[l + 1];
    const S* W = w + w_offset_[l];
    S* dW = d_w + w_offset_[l];
    S scale = l == L - 1 ? output_scale_ : S(1);
    dz.assign(n, S(0));
    for (int r = 0; r < n; ++r) {
      const S y = act[l + 1][r];
      dz[r] = l < L - 1 ? da[r] * hidden_slope(act_, y) : linear_ ? da[r] : da[r] * scale * (S(1) - y * y);
    }
    std::vector<S> prev(ni, S(0));
    for (int r = 0; r < n; ++r) {
      dW[ni * n + r] += dz[r];
      for (int c = 0; c < ni; ++c) {
        dW[r * ni + c] += dz[r] * act[l][c];
        prev[c] += W[r * ni + c] * dz[r];
      }
    }
    da.swap(prev);
  }
  d_in = da;
}

template class MlpT<float>;
template class MlpT<double>;

}  // namespace adj::optim
