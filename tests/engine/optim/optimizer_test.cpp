#include "engine/optim/optimizer.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace adj;
using namespace adj::optim;

namespace {

// f = 1/2 sum a_i (x_i - c_i)^2, badly scaled (a from 0.1 to 10)
struct Quadratic {
  std::vector<double> a{0.1, 1.0, 10.0, 3.0}, c{1.0, -2.0, 0.5, 3.0};
  double value(const std::vector<double>& x) const {
    double f = 0;
    for (std::size_t i = 0; i < x.size(); ++i) f += 0.5 * a[i] * (x[i] - c[i]) * (x[i] - c[i]);
    return f;
  }
  std::vector<double> grad(const std::vector<double>& x) const {
    std::vector<double> g(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) g[i] = a[i] * (x[i] - c[i]);
    return g;
  }
};

double run(scene::OptimizerSpec spec, int iterations, std::vector<double>* out = nullptr) {
  Quadratic q;
  std::vector<double> x(4, 0.0);
  OptimizerT<double> opt(spec, 4);
  for (int k = 0; k < iterations; ++k) opt.step(x, q.grad(x));
  if (out) *out = x;
  return q.value(x);
}

}  // namespace

TEST_CASE("optimizer: SGD converges on a quadratic", "[optim][optimizer]") {
  Quadratic q;
  double f0 = q.value(std::vector<double>(4, 0.0));
  double f = run({scene::OptimizerKind::sgd, 0.15, 0.0, 0}, 400);
  CHECK(f < 1e-6 * f0);
}

TEST_CASE("optimizer: Adam converges on a quadratic", "[optim][optimizer]") {
  Quadratic q;
  double f0 = q.value(std::vector<double>(4, 0.0));
  std::vector<double> x;
  double f = run({scene::OptimizerKind::adam, 0.1, 0.0, 0}, 500, &x);
  CHECK(f < 1e-4 * f0);
  for (int i = 0; i < 4; ++i) CHECK(x[i] == Approx(q.c[i]).margin(0.02));
}

TEST_CASE("optimizer: Adam's first step moves every entry by lr (bias correction)", "[optim][optimizer]") {
  OptimizerT<double> opt({scene::OptimizerKind::adam, 0.01, 0.0, 0}, 3);
  std::vector<double> x{0, 0, 0};
  double norm = opt.step(x, {1e-3, -5.0, 200.0});
  CHECK(norm == Approx(std::sqrt(1e-6 + 25.0 + 40000.0)));
  CHECK(x[0] == Approx(-0.01).epsilon(1e-4));
  CHECK(x[1] == Approx(0.01).epsilon(1e-4));
  CHECK(x[2] == Approx(-0.01).epsilon(1e-4));
  CHECK(opt.iteration() == 1);
}

TEST_CASE("optimizer: global-norm clipping keeps the direction", "[optim][optimizer]") {
  OptimizerT<double> opt({scene::OptimizerKind::sgd, 0.5, 1.0, 0}, 2);
  std::vector<double> x{0, 0};
  double norm = opt.step(x, {3.0, 4.0});
  CHECK(norm == Approx(5.0));  // reported before clipping
  CHECK(x[0] == Approx(-0.5 * 0.6));
  CHECK(x[1] == Approx(-0.5 * 0.8));
  // below the clip: untouched
  opt.step(x, {0.3, 0.4});
  CHECK(x[0] == Approx(-0.3 - 0.15));
}

TEST_CASE("optimizer: deterministic, float and double", "[optim][optimizer]") {
  for (auto kind : {scene::OptimizerKind::sgd, scene::OptimizerKind::adam}) {
    std::vector<double> a, b;
    run({kind, 0.05, 2.0, 0}, 50, &a);
    run({kind, 0.05, 2.0, 0}, 50, &b);
    CHECK(a == b);
  }
  OptimizerT<float> opt({scene::OptimizerKind::adam, 0.1, 0.0, 0}, 2);
  std::vector<float> x{1.0f, -1.0f};
  for (int k = 0; k < 200; ++k) opt.step(x, {2 * x[0], 2 * x[1]});
  CHECK(std::fabs(x[0]) < 0.05f);
  opt.reset();
  CHECK(opt.iteration() == 0);
}
