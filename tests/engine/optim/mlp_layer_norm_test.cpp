// MlpT's LayerNorm and orthogonal init (engine/optim/mlp.h, MlpForm): the gradients of a network
// with LayerNorm after each hidden layer (weights, gains and biases, inputs) against central
// differences in double; the batch's passes in float the same bits in pieces, by rows and one
// sample at a time; the orthogonal matrices orthonormal, the same from the same seed
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/optim/mlp.h"
#include "tests/engine/optim/mlp_check.h"

using namespace adj::optim;

namespace {

template <class S>
std::vector<S> draws(int n, std::uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<S> v(static_cast<std::size_t>(n));
  for (S& x : v) x = S(u(rng));
  return v;
}

template <class S>
bool same_bits(const std::vector<S>& a, const std::vector<S>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(S)) == 0;
}

// the network's weights from `seed`, then its biases, LayerNorm gains and biases moved off
// their start (1 and 0) so that each enters the gradient
template <class S>
std::vector<S> spread_weights(const MlpT<S>& m, std::uint64_t seed) {
  std::vector<S> w(static_cast<std::size_t>(m.weight_count()));
  m.init_weights(w.data(), seed);
  const std::vector<S> shift = draws<S>(m.weight_count(), seed + 1, -0.3, 0.3);
  for (int k = 0; k < m.weight_count(); ++k) {
    const char c = m.weight_name(k)[0];
    if (c != 'W') w[std::size_t(k)] += shift[std::size_t(k)];
  }
  return w;
}

struct Net {
  std::vector<int> sizes;
  bool linear;
  MlpActivation act;
};

}  // namespace

TEST_CASE("mlp layer norm: weight, gain, bias and input gradients match central differences", "[optim][mlp][fd]") {
  const Net net = GENERATE(Net{{5, 7, 6, 3}, false, MlpActivation::tanh}, Net{{5, 9, 4, 1}, true, MlpActivation::elu},
                           Net{{3, 8, 2}, false, MlpActivation::elu}, Net{{4, 6, 5, 2}, true, MlpActivation::tanh});
  MlpT<double> m(net.sizes, 1.7, net.linear, MlpForm{.activation = net.act, .layer_norm = true});
  // a LayerNorm per hidden layer: its gains and biases after each layer's biases
  int expected = 0;
  for (std::size_t l = 0; l + 1 < net.sizes.size(); ++l)
    expected += (net.sizes[l] + 1 + (l + 2 < net.sizes.size() ? 2 : 0)) * net.sizes[l + 1];
  REQUIRE(m.weight_count() == expected);
  CHECK(m.weight_name(net.sizes[0] * net.sizes[1] + net.sizes[1]) == "g0[0]");
  CHECK(m.weight_name((net.sizes[0] + 3) * net.sizes[1] - 1) == "beta0[" + std::to_string(net.sizes[1] - 1) + "]");
  const int count = 5, ni = m.input_size(), no = m.output_size();
  const std::vector<double> w = spread_weights(m, 3);
  const std::vector<double> x = draws<double>(count * ni, 5, -1.5, 1.5), c = draws<double>(count * no, 6, -1, 1);
  adj::test::check_batch_gradient(m, w, x, c, count);
}

TEST_CASE("mlp layer norm: the batch's passes give the same bits in pieces, by rows and one sample at a time",
          "[optim][mlp]") {
  const Net net =
      GENERATE(Net{{37, 128, 64, 8}, false, MlpActivation::elu}, Net{{37, 64, 64, 1}, true, MlpActivation::elu},
               Net{{5, 7, 6, 3}, false, MlpActivation::tanh});
  MlpT<float> m(net.sizes, 0.9f, net.linear,
                MlpForm{.activation = net.act, .layer_norm = true, .init = MlpInit::orthogonal});
  const int count = 11, ni = m.input_size(), no = m.output_size();
  const std::vector<float> w = spread_weights(m, 7);
  const std::vector<float> x = draws<float>(count * ni, 9, -2, 2), d_out = draws<float>(count * no, 10, -1, 1);
  std::vector<float> packed;
  m.pack(w.data(), packed);
  typename MlpT<float>::Batch b;
  m.resize(b, count);
  std::copy(x.begin(), x.end(), b.input(0));
  m.forward(packed.data(), b, 0, count);
  std::vector<float> out;
  for (int q = 0; q < count; ++q)
    for (int k = 0; k < no; ++k) out.push_back(m.output(b, q, k));
  // the reference: the whole batch at once
  std::vector<float> dw(w.size(), 0.f), din(x.size());
  m.backward(w.data(), b, d_out.data(), 0, count, dw.data(), din.data());

  SECTION("forward in pieces of 1, 2 and 8 samples, in a batch of another size") {
    typename MlpT<float>::Batch p;
    m.resize(p, count + 3);
    std::copy(x.begin(), x.end(), p.input(0));
    m.forward(packed.data(), p, 0, 1);
    m.forward(packed.data(), p, 1, 3);
    m.forward(packed.data(), p, 3, count);
    std::vector<float> o;
    for (int q = 0; q < count; ++q)
      for (int k = 0; k < no; ++k) o.push_back(m.output(p, q, k));
    CHECK(same_bits(o, out));
  }
  SECTION("sample by sample, the rows in uneven pieces (as threads split them)") {
    std::vector<float> dw2(w.size(), 0.f), din2(x.size());
    for (int q = 0; q < count; ++q) m.backward_samples(w.data(), b, &d_out[q * no], q, q + 1, &din2[q * ni]);
    const int rows = m.row_count();
    for (int r = 0; r < rows; r += 5) m.accumulate(b, 0, count, r, std::min(r + 5, rows), dw2.data());
    CHECK(same_bits(dw2, dw));
    CHECK(same_bits(din2, din));
  }
  SECTION("the single-sample calls") {
    std::vector<float> dw2(w.size(), 0.f), din2, o;
    for (int q = 0; q < count; ++q) {
      const std::vector<float> xq(x.begin() + q * ni, x.begin() + (q + 1) * ni);
      m.forward(w.data(), xq, o);
      CHECK(same_bits(o, std::vector<float>(out.begin() + q * no, out.begin() + (q + 1) * no)));
      m.backward(w.data(), xq, std::vector<float>(d_out.begin() + q * no, d_out.begin() + (q + 1) * no), dw2.data(),
                 din2);
      CHECK(same_bits(din2, std::vector<float>(din.begin() + q * ni, din.begin() + (q + 1) * ni)));
    }
    CHECK(same_bits(dw2, dw));
  }
}

TEST_CASE("mlp orthogonal init: each matrix's rows or columns orthonormal, from the seed alone", "[optim][mlp]") {
  // wide, square and tall layers; a hidden LayerNorm starts at gain 1 and bias 0
  MlpT<double> m({5, 9, 9, 3}, 1.0, false,
                 MlpForm{.activation = MlpActivation::elu, .layer_norm = true, .init = MlpInit::orthogonal});
  std::vector<double> w(std::size_t(m.weight_count())), w2 = w, w3 = w;
  m.init_weights(w.data(), 11);
  m.init_weights(w2.data(), 11);
  m.init_weights(w3.data(), 12);
  CHECK(same_bits(w, w2));
  CHECK(!same_bits(w, w3));
  const std::vector<int>& n = m.layer_sizes();
  int off = 0;
  for (std::size_t l = 0; l + 1 < n.size(); ++l) {
    const int cols = n[l], rows = n[l + 1];
    const bool wide = rows <= cols;  // then W W^T = I, else W^T W = I
    const int k = wide ? rows : cols, len = wide ? cols : rows;
    auto at = [&](int j, int i) {
      return wide ? w[std::size_t(off + j * cols + i)] : w[std::size_t(off + i * cols + j)];
    };
    double worst = 0;
    for (int a = 0; a < k; ++a)
      for (int c = 0; c < k; ++c) {
        double d = 0;
        for (int i = 0; i < len; ++i) d += at(a, i) * at(c, i);
        worst = std::max(worst, std::abs(d - (a == c ? 1.0 : 0.0)));
      }
    INFO("layer " << l << " (" << rows << " x " << cols << ")");
    CHECK(worst < 1e-12);
    for (int r = 0; r < rows; ++r) CHECK(w[std::size_t(off + rows * cols + r)] == 0.0);
    const bool normed = l + 2 < n.size();
    if (normed)
      for (int r = 0; r < rows; ++r) {
        CHECK(w[std::size_t(off + (cols + 1) * rows + r)] == 1.0);
        CHECK(w[std::size_t(off + (cols + 2) * rows + r)] == 0.0);
      }
    off += (cols + 1 + (normed ? 2 : 0)) * rows;
  }
  CHECK(off == m.weight_count());
}
