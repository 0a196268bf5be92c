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

TEST_CASE("aero drag opposes the motion of a falling sheet", "[forces][aero]") {
  vec3<double> f0, f1, f2, v(0, 0, -1);
  aero_force<double, double>({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, v, v, v, 0.0, 5.0, f0, f1, f2);
  CHECK(f0.z > 0);
  CHECK(f0.z == Approx(5.0 * 0.5));
}
