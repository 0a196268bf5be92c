#include "engine/collision/particle_particle.h"

#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

TEST_CASE("particle pair contact adjoint matches central differences", "[forces][particle_contact]") {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 20; ++trial) {
    vec3<double> dir = rand3(rng, -1, 1);
    dir = dir / length(dir);
    double dist = 0.08 + 0.01 * (trial % 5);  // radius sum 0.1
    std::vector<double> in(15);
    put3(in, 0, dir * dist);
    put3(in, 3, {0, 0, 0});
    put3(in, 6, rand3(rng, -1, 1));
    put3(in, 9, rand3(rng, -1, 1) - dir * 0.5);
    in[12] = 1e3;
    in[13] = 2;
    in[14] = 0.4;
    PairContactEval<double> e{0.1, 30.0, 0.05};
    double out[3];
    e.eval(in.data(), out);
    if (length(load3(out)) == 0) continue;  // separating fast enough to cancel: no contact force
    FdReport r = check_vjp(
        e, [&](const double* i, const double* o, double* a) { pair_contact_adjoint(e, i, o, a); }, in, rng, 1e-7);
    INFO(r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("pair contact forces are equal and opposite", "[forces][particle_contact]") {
  vec3<double> xi(0.05, 0.02, 0), xj(0, 0, 0), vi(1, 0, 0), vj(0, 0.5, 0);
  vec3<double> fij = particle_pair_force<double, double>(xi, xj, vi, vj, 0.1, 1e3, 2.0, 30.0, 0.4, 0.05);
  vec3<double> fji = particle_pair_force<double, double>(xj, xi, vj, vi, 0.1, 1e3, 2.0, 30.0, 0.4, 0.05);
  CHECK(length(fij + fji) < 1e-12);
  CHECK(dot(fij, xi - xj) > 0);
}
