#include "engine/forces/tet_fem.h"

#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

static TetEval<double> random_tet(std::mt19937& rng, std::vector<double>& in) {
  in.assign(27, 0);
  vec3<double> rest[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (int a = 0; a < 4; ++a) put3(in, 3 * a, rest[a] + rand3(rng, -0.2, 0.2));
  for (int a = 0; a < 4; ++a) put3(in, 12 + 3 * a, rand3(rng, -1, 1));
  std::uniform_real_distribution<double> u(0.5, 1.5);
  in[24] = 100 * u(rng);
  in[25] = 200 * u(rng);
  in[26] = 0.2 * (u(rng) - 1);
  return {mat33<double>::identity(), 1.0 / 6.0, 0.5};
}

TEST_CASE("tet Neo-Hookean adjoint matches central differences", "[forces][tet]") {
  std::mt19937 rng(6);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> in;
    TetEval<double> e = random_tet(rng, in);
    FdReport r = check_vjp(e, [&](const double* i, const double* o, double* a) { tet_adjoint(e, i, o, a); }, in, rng);
    INFO(r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("tet at rest has no force, elastic force is minus the energy gradient", "[forces][tet]") {
  vec3<double> x[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, v[4], f[4];
  tet_force<double, double>(x, v, mat33<double>::identity(), 1.0 / 6.0, 100.0, 200.0, 0.0, 0.0, f);
  for (auto& fi : f) CHECK(length(fi) < 1e-12);
  // energy psi = mu/2 (|F|^2 - 3) + lambda/2 (J - alpha)^2 times volume
  std::mt19937 rng(7);
  std::vector<double> in;
  random_tet(rng, in);
  double mu = in[24], lambda = in[25];
  auto energy = [&](const std::vector<double>& q) {
    mat33<double> F = mat33<double>::from_cols(load3(q.data() + 3) - load3(q.data()), load3(q.data() + 6) - load3(q.data()),
                                               load3(q.data() + 9) - load3(q.data()));
    double ic = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) ic += F.m[i][j] * F.m[i][j];
    double J = determinant(F), alpha = 1 + mu / lambda;
    return (0.5 * mu * (ic - 3) + 0.5 * lambda * (J - alpha) * (J - alpha)) / 6.0;
  };
  std::vector<double> q(in.begin(), in.begin() + 12);
  for (int a = 0; a < 4; ++a) x[a] = load3(q.data() + 3 * a);
  tet_force<double, double>(x, v, mat33<double>::identity(), 1.0 / 6.0, mu, lambda, 0.0, 0.0, f);
  std::vector<double> g = central_difference(energy, q, 1e-6);
  for (int a = 0; a < 4; ++a)
    for (int k = 0; k < 3; ++k) CHECK(f[a][k] == Approx(-g[3 * a + k]).margin(1e-6));
}
