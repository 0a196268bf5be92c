// The MLP tests' shared check: the batch path's gradients against central differences in double
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "engine/optim/mlp.h"

namespace adj::test {

// L = sum_q <c_q, out_q> over `count` samples x (input_size() each) at weights w: MlpT's batch
// backward (weights and inputs) against central differences of its batch forward
inline void check_batch_gradient(const optim::MlpT<double>& m, const std::vector<double>& w,
                                 const std::vector<double>& x, const std::vector<double>& c, int count) {
  const int no = m.output_size();
  typename optim::MlpT<double>::Batch b;
  m.resize(b, count);
  std::vector<double> packed;
  auto loss = [&](const std::vector<double>& wv, const std::vector<double>& xv) {
    m.pack(wv.data(), packed);
    std::copy(xv.begin(), xv.end(), b.input(0));
    m.forward(packed.data(), b, 0, count);
    double s = 0;
    for (int q = 0; q < count; ++q)
      for (int k = 0; k < no; ++k) s += c[std::size_t(q * no + k)] * m.output(b, q, k);
    return s;
  };
  loss(w, x);
  std::vector<double> d_w(w.size(), 0.0), d_in(x.size());
  m.backward(w.data(), b, c.data(), 0, count, d_w.data(), d_in.data());
  const double h = 1e-6;
  for (std::size_t k = 0; k < w.size(); ++k) {
    std::vector<double> wp = w, wm = w;
    wp[k] += h, wm[k] -= h;
    const double fd = (loss(wp, x) - loss(wm, x)) / (2 * h);
    INFO(m.weight_name(int(k)));
    CHECK(d_w[k] == Approx(fd).margin(1e-8).epsilon(1e-6));
  }
  for (std::size_t k = 0; k < x.size(); ++k) {
    std::vector<double> xp = x, xm = x;
    xp[k] += h, xm[k] -= h;
    const double fd = (loss(w, xp) - loss(w, xm)) / (2 * h);
    INFO("input " << k);
    CHECK(d_in[k] == Approx(fd).margin(1e-8).epsilon(1e-6));
  }
}

}  // namespace adj::test
