#include "engine/collision/contact_law.h"

#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

namespace {

// the depth-damped law as a packed function: in (c, vrel (3), ke, kd, mu), out the force (3);
// the normal is tilted so that no component is an axis's
struct DepthDampedEval {
  static constexpr int in_count = 7, out_count = 3;
  double kf = 300;
  vec3<double> n = vec3<double>(0.3, 1, 0.2) / length(vec3<double>(0.3, 1, 0.2));
  template <class T>
  void eval(const T* in, T* out) const {
    const vec3<T> nn(T(n.x), T(n.y), T(n.z));
    store3(out, depth_damped_contact_force(in[0], nn, vec3<T>(in[1], in[2], in[3]), in[4], in[5], kf, in[6]));
  }
};

void depth_damped_adjoint(const DepthDampedEval& e, const double* in, const double* adj_out, double* adj_in) {
  for (int k = 0; k < DepthDampedEval::in_count; ++k) adj_in[k] = 0;
  vec3<double> adj_v;
  depth_damped_contact_force_adjoint(in[0], e.n, vec3<double>(in[1], in[2], in[3]), in[4], in[5], e.kf, in[6],
                                     load3(adj_out), adj_in[0], adj_v, adj_in[4], adj_in[5], adj_in[6]);
  adj_in[1] = adj_v.x, adj_in[2] = adj_v.y, adj_in[3] = adj_v.z;
}

// a velocity with normal speed vn and slip of length slip along a direction across n
vec3<double> velocity(const vec3<double>& n, double vn, double slip) {
  vec3<double> t = cross(n, vec3<double>(1, 0, 0));
  return n * vn + t / length(t) * slip;
}

}  // namespace

TEST_CASE("depth-damped contact law: ke d, damping kd d min(vn, 0), friction min(kf |vt|, mu ke d)",
          "[forces][contact]") {
  const vec3<double> n(0, 1, 0);
  const double ke = 4e4, kd = 1e4, kf = 3e3, mu = 0.75, d = 0.002;
  // approaching at 0.1 m/s, slipping 0.01 m/s: viscous friction (kf |vt| = 30 < mu ke d = 60)
  vec3<double> f = depth_damped_contact_force<double, double>(-d, n, {0.01, -0.1, 0}, ke, kd, kf, mu);
  CHECK(f.y == Approx(ke * d + kd * d * 0.1));
  CHECK(f.x == Approx(-kf * 0.01));
  // receding: no damping; slipping 1 m/s: Coulomb on the elastic part only
  f = depth_damped_contact_force<double, double>(-d, n, {0, 0.5, -1}, ke, kd, kf, mu);
  CHECK(f.y == Approx(ke * d));
  CHECK(f.z == Approx(mu * ke * d));
  CHECK(f.x == 0);
  // apart: nothing
  f = depth_damped_contact_force<double, double>(d, n, {0.01, -0.1, 0}, ke, kd, kf, mu);
  CHECK(length(f) == 0);
}

TEST_CASE("depth-damped contact law: adjoint matches central differences (sticking, sliding, receding)",
          "[forces][contact]") {
  std::mt19937 rng(41);
  const DepthDampedEval e;
  struct Case {
    const char* what;
    double c, vn, slip;
  };
  // kf |vt| against mu ke d = 0.75 * 4e4 * d: 30 vs 60 (sticking), 2700 vs 90 (sliding)
  for (const Case& k :
       {Case{"sticking, approaching", -2e-3, -0.2, 0.01}, Case{"sliding, approaching", -3e-3, -0.1, 0.9},
        Case{"sticking, receding", -1e-3, 0.3, 0.005}, Case{"sliding, receding", -4e-3, 0.05, 0.5}}) {
    const vec3<double> v = velocity(e.n, k.vn, k.slip);
    const std::vector<double> in = {k.c, v.x, v.y, v.z, 4e4, 1e4, 0.75};
    double out[3];
    e.eval(in.data(), out);
    INFO(k.what);
    REQUIRE(length(load3(out)) > 0);
    FdReport r = check_vjp(
        e, [&](const double* i, const double* o, double* a) { depth_damped_adjoint(e, i, o, a); }, in, rng, 1e-8);
    INFO(r.message);
    CHECK(r.ok);
  }
}
