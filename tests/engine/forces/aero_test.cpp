#include "engine/forces/aero.h"

#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

TEST_CASE("aero adjoint matches central differences", "[forces][aero]") {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> in(18);
    put3(in, 0, rand3(rng, -0.2, 0.2));
    put3(in, 3, vec3<double>(1, 0, 0) + rand3(rng, -0.2, 0.2));
    put3(in, 6, vec3<double>(0, 1, 0) + rand3(rng, -0.2, 0.2));
    for (int k = 9; k < 18; k += 3) put3(in, k, rand3(rng, -3, 3));
    FdReport r = check_vjp(AeroEval<double>{10.0, 5.0}, [](const double* i, const double* o, double* a) { aero_adjoint(AeroEval<double>{10.0, 5.0}, i, o, a); }, in, rng);
    INFO(r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("aero adjoint: dL/d(lift, drag) match central differences, also at zero", "[forces][aero][fields]") {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> in(18);
    put3(in, 0, rand3(rng, -0.2, 0.2));
    put3(in, 3, vec3<double>(1, 0, 0) + rand3(rng, -0.2, 0.2));
    put3(in, 6, vec3<double>(0, 1, 0) + rand3(rng, -0.2, 0.2));
    for (int k = 9; k < 18; k += 3) put3(in, k, rand3(rng, -3, 3));
    std::vector<double> ao = random_seed_vector(rng, 9), ai(18);
    // at nonzero coefficients (the full adjoint) and at zero (the coefficients' part alone)
    for (AeroEval<double> e : {AeroEval<double>{10.0, 5.0}, AeroEval<double>{0.0, 0.0}}) {
      double coef[2], alone[2];
      aero_adjoint(e, in.data(), ao.data(), ai.data(), coef);
      aero_coef_adjoint(in.data(), ao.data(), alone);
      FdReport lift = check_coefficient(
          e, [](AeroEval<double>& x, double v) { x.lift = v; }, e.lift, coef[0], in, ao);
      FdReport drag = check_coefficient(
          e, [](AeroEval<double>& x, double v) { x.drag = v; }, e.drag, coef[1], in, ao);
      INFO("lift " << e.lift << ": " << lift.message << "\ndrag: " << drag.message);
      CHECK(lift.ok);
      CHECK(drag.ok);
      CHECK(alone[0] == Approx(coef[0]).epsilon(1e-12));
      CHECK(alone[1] == Approx(coef[1]).epsilon(1e-12));
      CHECK(coef[1] != 0.0);
    }
  }
}

TEST_CASE("aero drag opposes the motion of a falling sheet", "[forces][aero]") {
  vec3<double> f0, f1, f2, v(0, 0, -1);
  aero_force<double, double>({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, v, v, v, 0.0, 5.0, f0, f1, f2);
  CHECK(f0.z > 0);
  CHECK(f0.z == Approx(5.0 * 0.5));
}
