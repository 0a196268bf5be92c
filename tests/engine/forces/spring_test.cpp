#include "engine/forces/spring.h"

#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

TEST_CASE("spring adjoint matches central differences", "[forces][spring]") {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> in(16);
    put3(in, 0, rand3(rng, -1, 1));
    put3(in, 3, rand3(rng, -1, 1));
    put3(in, 6, rand3(rng, -2, 2));
    put3(in, 9, rand3(rng, -2, 2));
    std::uniform_real_distribution<double> u(0.1, 2);
    in[12] = 100 * u(rng);  // ke
    in[13] = u(rng);        // kd
    in[14] = u(rng);        // rest
    in[15] = 0.3 * (u(rng) - 1);  // act
    FdReport r = check_vjp(SpringEval{}, [](const double* i, const double* o, double* a) { spring_adjoint(i, o, a); }, in, rng);
    INFO(r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("spring force: Hooke's law along the axis, equal and opposite", "[forces][spring]") {
  vec3<double> fi, fj;
  spring_force<double>({2, 0, 0}, {0, 0, 0}, {}, {}, 10.0, 0.0, 1.5, 0.0, fi, fj);
  CHECK(fi.x == Approx(-5.0));
  CHECK(fj.x == Approx(5.0));
  // actuation scales the rest length: 1.5 * (1 + 1/3) = 2 -> no force
  spring_force<double>({2, 0, 0}, {0, 0, 0}, {}, {}, 10.0, 0.0, 1.5, 1.0 / 3.0, fi, fj);
  CHECK(std::fabs(fi.x) < 1e-12);
  // damping opposes the relative velocity along the axis
  spring_force<double>({1.5, 0, 0}, {0, 0, 0}, {1, 0, 0}, {}, 10.0, 2.0, 1.5, 0.0, fi, fj);
  CHECK(fi.x == Approx(-2.0));
}
