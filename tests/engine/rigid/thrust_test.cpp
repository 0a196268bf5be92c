// thrust actuators (body forces along a body-fixed axis, rotors): hover balance, the step's
// dual Jacobian against central differences, and the reverse adjoint against J^T adj_out
#include "rigid_test_util.h"

using namespace adj;
using namespace adj::test;

namespace {

// a 1 kg free box with four rotors at (+-0.15, 0, +-0.15) pushing along its +y; a revolute arm
// hangs below so the tree is not a single body
RigidBuilder drone() {
  RigidBuilder b;
  b.ground = false;
  int body = b.add_body("drone", {.type = RIGID_JOINT_FREE});
  mat33<double> I;
  I.m[0][0] = I.m[1][1] = I.m[2][2] = 0.01;
  b.set_mass(body, 1.0, {}, I);
  b.add_shape(body, {.type = RIGID_SHAPE_BOX, .size = {0.15, 0.03, 0.15}});
  for (double x : {0.15, -0.15})
    for (double z : {0.15, -0.15})
      b.add_actuator(body, {.type = RIGID_ACTUATOR_THRUST, .gear = 5, .pos = {x, 0, z}, .axis = {0, 1, 0}});
  return b;
}

}  // namespace

TEST_CASE("thrust: four rotors at mg/4 hover; unequal thrust pitches the body", "[rigid][thrust]") {
  RigidModelT<double> m = finalize(drone());
  REQUIRE(m.actuator_count() == 4);
  RigidStateT<double> s = m.make_state();
  RigidControlT<double> u{std::vector<double>(4, 9.81 / 4 / 5)};
  auto qdd = rigid_forward_dynamics(m, s, u);
  REQUIRE(qdd.is_ok());
  for (double a : qdd.value()) CHECK(std::fabs(a) < 1e-12);
  u.act[0] += 0.1;  // the +x,+z rotor: a torque about -x... and +z... (x cross y = z)
  qdd = rigid_forward_dynamics(m, s, u);
  REQUIRE(qdd.is_ok());
  CHECK(qdd.value()[1] > 0);  // net lift
  CHECK(std::fabs(qdd.value()[3]) > 1e-3);
  CHECK(std::fabs(qdd.value()[5]) > 1e-3);
}

TEST_CASE("thrust: step Jacobian matches central differences; reverse adjoint is J^T adj_out",
          "[rigid][thrust][grad]") {
  RigidModelT<double> m = finalize(drone());
  std::mt19937 rng(5);
  RigidStateT<double> s = random_state(m, rng, 0.4, 1.0);
  RigidControlT<double> u{{0.3, 0.5, 0.4, 0.6}};
  const double dt = 1.0 / 60.0;
  RigidSolverT<double> solver({.substeps = 2});
  std::vector<double> J;
  REQUIRE(solver.step_jacobian(m, s, u, dt, J).is_ok());
  const int nq = m.q_count(), nv = m.dof_count(), n_out = nq + nv;
  const int n_in = nq + nv + m.actuator_count() + m.param_count();
  REQUIRE(int(J.size()) == n_out * n_in);
  // the act columns and the qd columns against central differences
  auto step = [&](const RigidStateT<double>& in, const RigidControlT<double>& c) {
    RigidStateT<double> out;
    REQUIRE(solver.step(m, in, out, c, dt).is_ok());
    std::vector<double> y = out.joint_q;
    y.insert(y.end(), out.joint_qd.begin(), out.joint_qd.end());
    return y;
  };
  const double eps = 1e-6;
  for (int a = 0; a < m.actuator_count(); ++a) {
    RigidControlT<double> up = u, um = u;
    up.act[a] += eps;
    um.act[a] -= eps;
    auto yp = step(s, up), ym = step(s, um);
    for (int o = 0; o < n_out; ++o) {
      double fd = (yp[o] - ym[o]) / (2 * eps), ad = J[std::size_t(o) * n_in + nq + nv + a];
      INFO("d out " << o << " / d act " << a);
      CHECK(std::fabs(ad - fd) <= 1e-6 + 1e-5 * std::fabs(fd));
    }
  }
  for (int d = 0; d < nv; ++d) {
    RigidStateT<double> sp = s, sm = s;
    sp.joint_qd[d] += eps;
    sm.joint_qd[d] -= eps;
    auto yp = step(sp, u), ym = step(sm, u);
    for (int o = 0; o < n_out; ++o) {
      double fd = (yp[o] - ym[o]) / (2 * eps), ad = J[std::size_t(o) * n_in + nq + d];
      INFO("d out " << o << " / d qd " << d);
      CHECK(std::fabs(ad - fd) <= 1e-6 + 1e-5 * std::fabs(fd));
    }
  }
  // reverse pass = J^T adj_out
  RigidStateT<double> adj_out = random_state(m, rng, 1.0, 1.0), adj_in;
  RigidControlT<double> adj_u = m.make_control();
  RigidModelGradT<double> adj_m = m.make_grad();
  REQUIRE(solver.step_adjoint(m, s, u, dt, adj_out, adj_in, adj_u, adj_m).is_ok());
  std::vector<double> ao = adj_out.joint_q;
  ao.insert(ao.end(), adj_out.joint_qd.begin(), adj_out.joint_qd.end());
  std::vector<double> g(std::size_t(n_in), 0.0);
  for (int o = 0; o < n_out; ++o)
    for (int i = 0; i < n_in; ++i) g[i] += ao[o] * J[std::size_t(o) * n_in + i];
  for (int i = 0; i < nq; ++i) CHECK(std::fabs(adj_in.joint_q[i] - g[i]) <= 1e-9 * (1 + std::fabs(g[i])));
  for (int i = 0; i < nv; ++i) CHECK(std::fabs(adj_in.joint_qd[i] - g[nq + i]) <= 1e-9 * (1 + std::fabs(g[nq + i])));
  for (int a = 0; a < m.actuator_count(); ++a)
    CHECK(std::fabs(adj_u.act[a] - g[nq + nv + a]) <= 1e-9 * (1 + std::fabs(g[nq + nv + a])));
  for (int b = 0; b < m.body_count(); ++b)
    CHECK(std::fabs(adj_m.body_mass[b] - g[nq + nv + 4 + b]) <= 1e-9 * (1 + std::fabs(g[nq + nv + 4 + b])));
}
