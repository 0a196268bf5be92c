// MlpT (engine/optim/mlp.h): the batch's weight and input gradients against central
// differences in double, for tanh and ELU hidden layers, scaled-tanh and linear outputs; and the
// packed, lane-wise passes against the plain loops in float bit for bit (each sum in the plain
// loops' order), for any batch size and any split of the gradient's rows
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "engine/optim/mlp.h"
#include "tests/engine/optim/mlp_check.h"

using namespace adj::optim;

namespace {

template <class S>
std::vector<S> draws(int n, std::uint64_t seed, double scale) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<S> v(static_cast<std::size_t>(n));
  for (S& x : v) x = S(u(rng));
  return v;
}

// the network's plain loops, one sample: each output's sum from its bias over the inputs in
// order; the backward pass's input gradient from 0 over the outputs in order
template <class S>
std::vector<std::vector<S>> plain_forward(const MlpT<S>& m, const S* w, const S* in) {
  const std::vector<int>& n = m.layer_sizes();
  const int L = int(n.size()) - 1;
  std::vector<std::vector<S>> act(1, std::vector<S>(in, in + n[0]));
  for (int l = 0, off = 0; l < L; off += (n[l] + 1) * n[l + 1], ++l) {
    std::vector<S> z(static_cast<std::size_t>(n[l + 1]));
    for (int r = 0; r < n[l + 1]; ++r) {
      S s = w[off + n[l] * n[l + 1] + r];
      for (int c = 0; c < n[l]; ++c) s += w[off + r * n[l] + c] * act[l][c];
      z[r] = l < L - 1           ? (m.activation() == MlpActivation::tanh ? std::tanh(s)
                                    : s > 0                               ? s
                                                                          : std::expm1(s))
             : m.linear_output() ? s
                                 : std::tanh(s);
    }
    act.push_back(z);
  }
  return act;
}

template <class S>
void plain_backward(const MlpT<S>& m, const S* w, const S* in, const S* d_out, S* d_w, S* d_in) {
  const std::vector<int>& n = m.layer_sizes();
  const int L = int(n.size()) - 1;
  const std::vector<std::vector<S>> act = plain_forward(m, w, in);
  std::vector<int> off(1, 0);
  for (int l = 0; l < L; ++l) off.push_back(off.back() + (n[l] + 1) * n[l + 1]);
  std::vector<S> da(d_out, d_out + n[L]);
  for (int l = L - 1; l >= 0; --l) {
    std::vector<S> dz(static_cast<std::size_t>(n[l + 1])), prev(static_cast<std::size_t>(n[l]), S(0));
    for (int r = 0; r < n[l + 1]; ++r) {
      const S y = act[l + 1][r];
      dz[r] = l < L - 1           ? da[r] * (m.activation() == MlpActivation::tanh ? S(1) - y * y
                                             : y > 0                               ? S(1)
                                                                                   : y + S(1))
              : m.linear_output() ? da[r]
                                  : da[r] * m.output_scale() * (S(1) - y * y);
    }
    for (int r = 0; r < n[l + 1]; ++r) {
      d_w[off[l] + n[l] * n[l + 1] + r] += dz[r];
      for (int c = 0; c < n[l]; ++c) {
        d_w[off[l] + r * n[l] + c] += dz[r] * act[l][c];
        prev[c] += w[off[l] + r * n[l] + c] * dz[r];
      }
    }
    da = prev;
  }
  std::copy(da.begin(), da.end(), d_in);
}

template <class S>
bool same_bits(const std::vector<S>& a, const std::vector<S>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(S)) == 0;
}

struct Net {
  std::vector<int> sizes;
  bool linear;
  MlpActivation act;
};

}  // namespace

TEST_CASE("mlp: a batch's weight and input gradients match central differences", "[optim][mlp][fd]") {
  const Net net = GENERATE(Net{{5, 7, 6, 3}, false, MlpActivation::tanh}, Net{{5, 9, 4, 1}, true, MlpActivation::elu},
                           Net{{3, 17, 2}, false, MlpActivation::elu});
  MlpT<double> m(net.sizes, 1.7, net.linear, net.act);
  const int count = 6, ni = m.input_size(), no = m.output_size();
  std::vector<double> w(static_cast<std::size_t>(m.weight_count()));
  m.init_weights(w.data(), 3);
  const std::vector<double> biases = draws<double>(m.weight_count(), 4, 0.3);
  for (std::size_t k = 0; k < w.size(); ++k)  // biases away from 0: the ELU's kink is not at a sample
    if (w[k] == 0) w[k] = biases[k];
  const std::vector<double> x = draws<double>(count * ni, 5, 1.5), c = draws<double>(count * no, 6, 1.0);
  adj::test::check_batch_gradient(m, w, x, c, count);
}

TEST_CASE("mlp: the batch's passes equal the plain loops bit for bit, any batch size and row split", "[optim][mlp]") {
  const Net net =
      GENERATE(Net{{37, 128, 64, 32, 8}, false, MlpActivation::elu}, Net{{37, 64, 64, 1}, true, MlpActivation::elu},
               Net{{5, 7, 6, 3}, false, MlpActivation::tanh});
  MlpT<float> m(net.sizes, 0.9f, net.linear, net.act);
  const int count = 11, ni = m.input_size(), no = m.output_size();
  std::vector<float> w(static_cast<std::size_t>(m.weight_count()));
  m.init_weights(w.data(), 7);
  const std::vector<float> biases = draws<float>(m.weight_count(), 8, 0.2);
  for (std::size_t k = 0; k < w.size(); ++k)
    if (w[k] == 0) w[k] = biases[k];
  const std::vector<float> x = draws<float>(count * ni, 9, 2.0), d_out = draws<float>(count * no, 10, 1.0);
  // the plain loops, one sample after another into one gradient
  std::vector<float> out_plain, dw_plain(w.size(), 0.f), din_plain(x.size());
  for (int q = 0; q < count; ++q) {
    const std::vector<float> y = plain_forward(m, w.data(), &x[q * ni]).back();
    for (float v : y) out_plain.push_back(net.linear ? v : v * m.output_scale());
    plain_backward(m, w.data(), &x[q * ni], &d_out[q * no], dw_plain.data(), &din_plain[q * ni]);
  }
  std::vector<float> packed;
  m.pack(w.data(), packed);
  typename MlpT<float>::Batch b;
  m.resize(b, count);
  std::copy(x.begin(), x.end(), b.input(0));
  // forward in pieces of 1, 2 and 8 samples
  m.forward(packed.data(), b, 0, 1);
  m.forward(packed.data(), b, 1, 3);
  m.forward(packed.data(), b, 3, count);
  std::vector<float> out;
  for (int q = 0; q < count; ++q)
    for (int k = 0; k < no; ++k) out.push_back(m.output(b, q, k));
  CHECK(same_bits(out, out_plain));
  SECTION("the whole batch at once") {
    std::vector<float> dw(w.size(), 0.f), din(x.size());
    m.backward(w.data(), b, d_out.data(), 0, count, dw.data(), din.data());
    CHECK(same_bits(dw, dw_plain));
    CHECK(same_bits(din, din_plain));
  }
  SECTION("sample by sample, the rows in uneven pieces") {
    std::vector<float> dw(w.size(), 0.f), din(x.size());
    for (int q = 0; q < count; ++q) m.backward_samples(w.data(), b, &d_out[q * no], q, q + 1, &din[q * ni]);
    const int rows = m.row_count();
    for (int r = 0; r < rows; r += 5) m.accumulate(b, 0, count, r, std::min(r + 5, rows), dw.data());
    CHECK(same_bits(dw, dw_plain));
    CHECK(same_bits(din, din_plain));
  }
  SECTION("the single-sample calls") {
    std::vector<float> dw(w.size(), 0.f), din, o;
    for (int q = 0; q < count; ++q) {
      const std::vector<float> xq(x.begin() + q * ni, x.begin() + (q + 1) * ni);
      m.forward(w.data(), xq, o);
      CHECK(same_bits(o, std::vector<float>(out_plain.begin() + q * no, out_plain.begin() + (q + 1) * no)));
      m.backward(w.data(), xq, std::vector<float>(d_out.begin() + q * no, d_out.begin() + (q + 1) * no), dw.data(),
                 din);
      CHECK(same_bits(din, std::vector<float>(din_plain.begin() + q * ni, din_plain.begin() + (q + 1) * ni)));
    }
    CHECK(same_bits(dw, dw_plain));
  }
}
