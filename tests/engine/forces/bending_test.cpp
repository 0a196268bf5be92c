#include "engine/forces/bending.h"

#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

static void random_hinge(std::mt19937& rng, std::vector<double>& in) {
  in.assign(24, 0);
  put3(in, 0, vec3<double>(0.5, 1, 0.3) + rand3(rng, -0.2, 0.2));
  put3(in, 3, vec3<double>(0.5, -1, 0.3) + rand3(rng, -0.2, 0.2));
  put3(in, 6, vec3<double>(0, 0, 0) + rand3(rng, -0.1, 0.1));
  put3(in, 9, vec3<double>(1, 0, 0) + rand3(rng, -0.1, 0.1));
  for (int k = 12; k < 24; k += 3) put3(in, k, rand3(rng, -1, 1));
}

TEST_CASE("bending adjoint matches central differences", "[forces][bending]") {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> in;
    random_hinge(rng, in);
    BendingEval<double> e{2.0, 0.1, 0.3};
    FdReport r = check_vjp(e, [&](const double* i, const double* o, double* a) { bending_adjoint(e, i, o, a); }, in, rng);
    INFO(r.message);
    CHECK(r.ok);
  }
  // flat hinge (rest state of a cloth): the atan2 angle keeps the adjoint finite
  std::vector<double> flat = {0.5, 1, 0, 0.5, -1, 0, 0, 0, 0, 1, 0, 0};
  flat.resize(24, 0.0);
  BendingEval<double> e{2.0, 0.1, 0.0};
  FdReport r = check_vjp(e, [&](const double* i, const double* o, double* a) { bending_adjoint(e, i, o, a); }, flat, rng);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("bending adjoint: dL/d(ke, kd) match central differences", "[forces][bending][fields]") {
  std::mt19937 rng(14);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> in;
    random_hinge(rng, in);
    BendingEval<double> e{2.0, 0.1, 0.3};
    std::vector<double> ao = random_seed_vector(rng, 12), ai(24);
    double coef[2];
    bending_adjoint(e, in.data(), ao.data(), ai.data(), coef);
    FdReport ke = check_coefficient(
        e, [](BendingEval<double>& x, double v) { x.ke = v; }, e.ke, coef[0], in, ao);
    FdReport kd = check_coefficient(
        e, [](BendingEval<double>& x, double v) { x.kd = v; }, e.kd, coef[1], in, ao);
    INFO("ke: " << ke.message << "\nkd: " << kd.message);
    CHECK(ke.ok);
    CHECK(kd.ok);
    CHECK(coef[0] != 0.0);
  }
}

TEST_CASE("bending force restores the rest angle (force = -ke |e| (theta - rest) dtheta/dx)", "[forces][bending]") {
  std::mt19937 rng(5);
  std::vector<double> in;
  random_hinge(rng, in);
  for (int k = 12; k < 24; ++k) in[k] = 0;
  double ke = 2, rest = 0.1;
  double out[12];
  BendingEval<double>{ke, 0.0, rest}.eval(in.data(), out);
  auto angle = [&](const std::vector<double>& x) {
    return dihedral_angle(load3(x.data()), load3(x.data() + 3), load3(x.data() + 6), load3(x.data() + 9));
  };
  std::vector<double> x(in.begin(), in.begin() + 12);
  std::vector<double> g = central_difference(angle, x, 1e-6);
  double e_len = length(load3(x.data() + 9) - load3(x.data() + 6));
  for (int k = 0; k < 12; ++k) CHECK(out[k] == Approx(-ke * e_len * (angle(x) - rest) * g[k]).margin(1e-6));
}
