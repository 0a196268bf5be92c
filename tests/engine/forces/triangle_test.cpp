#include "engine/forces/triangle.h"

#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

static TriangleEval<double> random_triangle(std::mt19937& rng, std::vector<double>& in) {
  std::uniform_real_distribution<double> u(0.5, 1.5);
  TriangleEval<double> e{{u(rng), 0.2 * (u(rng) - 1), -0.1, u(rng)}, 0.5 * u(rng), 100 * u(rng), 50 * u(rng), u(rng)};
  in.assign(18, 0);
  put3(in, 0, rand3(rng, -0.2, 0.2));
  put3(in, 3, vec3<double>(1, 0, 0) + rand3(rng, -0.2, 0.2));
  put3(in, 6, vec3<double>(0, 1, 0) + rand3(rng, -0.2, 0.2));
  for (int k = 9; k < 18; k += 3) put3(in, k, rand3(rng, -1, 1));
  return e;
}

TEST_CASE("triangle adjoint matches central differences", "[forces][triangle]") {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> in;
    TriangleEval<double> e = random_triangle(rng, in);
    FdReport r = check_vjp(e, [&](const double* i, const double* o, double* a) { triangle_adjoint(e, i, o, a); }, in, rng);
    INFO(r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("triangle adjoint: dL/d(ke, ka, kd) match central differences", "[forces][triangle][fields]") {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> in;
    TriangleEval<double> e = random_triangle(rng, in);
    std::vector<double> ao = random_seed_vector(rng, 9), ai(18);
    double mat[3];
    triangle_adjoint(e, in.data(), ao.data(), ai.data(), mat);
    FdReport ke = check_coefficient(
        e, [](TriangleEval<double>& x, double v) { x.ke = v; }, e.ke, mat[0], in, ao);
    FdReport ka = check_coefficient(
        e, [](TriangleEval<double>& x, double v) { x.ka = v; }, e.ka, mat[1], in, ao);
    FdReport kd = check_coefficient(
        e, [](TriangleEval<double>& x, double v) { x.kd = v; }, e.kd, mat[2], in, ao);
    INFO("ke: " << ke.message << "\nka: " << ka.message << "\nkd: " << kd.message);
    CHECK(ke.ok);
    CHECK(ka.ok);
    CHECK(kd.ok);
    CHECK(mat[0] != 0.0);  // a stretched, moving triangle: every coefficient matters
    CHECK(mat[2] != 0.0);
  }
}

TEST_CASE("triangle at rest has no force, forces sum to zero", "[forces][triangle]") {
  // right triangle with legs 1: pose = identity, area 0.5
  mat22<double> pose{1, 0, 0, 1};
  vec3<double> f0, f1, f2;
  triangle_force<double, double>({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {}, {}, {}, pose, 0.5, 100, 100, 1, f0, f1, f2);
  CHECK(length(f0) + length(f1) + length(f2) < 1e-12);
  // a rotated, stretched copy: total force zero, and the stretched edge pulls back
  triangle_force<double, double>({0, 0, 0}, {0, 0, 1.2}, {0, 1, 0}, {}, {}, {}, pose, 0.5, 100, 100, 1, f0, f1, f2);
  CHECK(length(f0 + f1 + f2) < 1e-12);
  CHECK(f1.z < 0);
}
