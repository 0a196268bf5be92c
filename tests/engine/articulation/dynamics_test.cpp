// kinematics, mass matrix (CRBA), bias forces (RNEA), the Cholesky solve, contact and
// actuator forces, each against an independent reference in double precision
#include "rigid_test_util.h"

using namespace adj;
using namespace adj::test;

namespace {

std::vector<double> lagrangian_bias(const RigidModelT<double>& m, StateT<double> s) {
  // c = dM/dt qd - dT/dq + dV/dq by central differences (1-dof joints only)
  const int n = m.dof_count();
  const double h = 1e-6;
  auto kinetic = [&](const StateT<double>& x) {
    RigidModelT<double> m0 = m;
    m0.gravity = {0, 0, 0};
    return rigid_energy(m0, x);
  };
  auto potential = [&](const StateT<double>& x) {
    StateT<double> y = x;
    std::fill(y.joint_qd.begin(), y.joint_qd.end(), 0.0);
    return rigid_energy(m, y);
  };
  std::vector<double> c(std::size_t(n), 0.0);
  StateT<double> sp = s, sm = s;
  for (int i = 0; i < n; ++i) {
    sp.joint_q[i] += h * s.joint_qd[i];
    sm.joint_q[i] -= h * s.joint_qd[i];
  }
  std::vector<double> Mp = rigid_mass_matrix(m, sp), Mm = rigid_mass_matrix(m, sm);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) c[i] += (Mp[i * n + j] - Mm[i * n + j]) / (2 * h) * s.joint_qd[j];
  for (int i = 0; i < n; ++i) {
    StateT<double> a = s, b = s;
    a.joint_q[i] += h;
    b.joint_q[i] -= h;
    c[i] += -(kinetic(a) - kinetic(b)) / (2 * h) + (potential(a) - potential(b)) / (2 * h);
  }
  return c;
}

}  // namespace

TEST_CASE("kinematics: body velocities match central differences of the poses", "[rigid][fk]") {
  RigidModelT<double> m = finalize(mixed_tree());
  m.ground = false;
  std::mt19937 rng(3);
  for (int trial = 0; trial < 5; ++trial) {
    StateT<double> s = random_state(m, rng, 0.4, 1.0);
    rigid::Params<double> par = rigid::lift_params<double>(m);
    rigid::Work<double> w;
    w.resize(m.body_count(), m.q_count(), m.dof_count());
    rigid::kinematics(m, par, s.joint_q.data(), s.joint_qd.data(), w);
    // exact flow of constant velocities for +-h (exp map), then central differences
    const double h = 1e-6;
    StateT<double> sp = s, sm = s;
    std::vector<double> neg(s.joint_qd.size());
    for (std::size_t i = 0; i < neg.size(); ++i) neg[i] = -s.joint_qd[i];
    rigid::integrate_positions(m, s.joint_q.data(), s.joint_qd.data(), h, sp.joint_q.data());
    rigid::integrate_positions(m, s.joint_q.data(), neg.data(), h, sm.joint_q.data());
    std::vector<vec3<double>> pp, pm;
    std::vector<mat33<double>> Rp, Rm;
    rigid_forward_kinematics(m, sp, pp, Rp);
    rigid_forward_kinematics(m, sm, pm, Rm);
    for (int b = 0; b < m.body_count(); ++b) {
      vec3<double> v_fd = (pp[b] - pm[b]) / (2 * h);
      vec3<double> v = w.v[b].v + cross(w.v[b].w, w.p[b]);  // velocity of the body origin
      INFO("body " << b);
      CHECK(length(v - v_fd) < 1e-6);
      // angular velocity: dR/dt R^T = [w]x
      for (int k = 0; k < 3; ++k) {
        vec3<double> dcol = (Rp[b].col(k) - Rm[b].col(k)) / (2 * h);
        CHECK(length(dcol - cross(w.v[b].w, w.R[b].col(k))) < 1e-6);
      }
    }
  }
}

TEST_CASE("kinematics: the 3-link arm's joints sit where trigonometry says", "[rigid][fk]") {
  RigidModelT<double> m = finalize(rigid_arm3());
  StateT<double> s = m.make_state();
  s.joint_q = {0.3, -0.7, 1.1};
  std::vector<vec3<double>> p;
  std::vector<mat33<double>> R;
  rigid_forward_kinematics(m, s, p, R);
  double a = 0;
  vec3<double> ref{0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    CHECK(length(p[i] - ref) < 1e-12);
    a += s.joint_q[i];
    ref = ref + vec3<double>(0.5 * std::sin(a), -0.5 * std::cos(a), 0);  // link points down at angle 0
  }
}

TEST_CASE("crba: the mass matrix is the Hessian of the kinetic energy (brute force)", "[rigid][crba]") {
  RigidModelT<double> m = finalize(mixed_tree());
  m.gravity = {0, 0, 0};
  m.ground = false;
  std::mt19937 rng(5);
  const int n = m.dof_count();
  for (int trial = 0; trial < 3; ++trial) {
    StateT<double> s = random_state(m, rng, 0.5, 0.0);
    std::vector<double> M = rigid_mass_matrix(m, s);
    // kinetic energy is quadratic in qd: M_ij = T(e_i + e_j) - T(e_i) - T(e_j), exactly
    auto T = [&](int i, int j) {
      StateT<double> x = s;
      std::fill(x.joint_qd.begin(), x.joint_qd.end(), 0.0);
      if (i >= 0) x.joint_qd[i] += 1;
      if (j >= 0) x.joint_qd[j] += 1;
      return rigid_energy(m, x);
    };
    double scale = 0;
    for (double v : M) scale = std::max(scale, std::fabs(v));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double ref = i == j ? 2 * T(i, -1) : T(i, j) - T(i, -1) - T(j, -1);
        INFO("M(" << i << ", " << j << ") " << M[i * n + j] << " vs " << ref);
        CHECK(std::fabs(M[i * n + j] - ref) < 1e-12 * scale);
      }
  }
}

TEST_CASE("rnea: inverse dynamics is M qdd + c, and c matches Lagrange's equations", "[rigid][rnea]") {
  std::mt19937 rng(7);
  SECTION("tree with every joint type: tau(qdd) = M qdd + tau(0)") {
    RigidModelT<double> m = finalize(mixed_tree());
    m.ground = false;
    const int n = m.dof_count();
    StateT<double> s = random_state(m, rng, 0.5, 1.5);
    std::vector<double> qdd(static_cast<std::size_t>(n)), zero(static_cast<std::size_t>(n), 0.0);
    std::uniform_real_distribution<double> u(-2, 2);
    for (double& x : qdd) x = u(rng);
    std::vector<double> tau = rigid_inverse_dynamics(m, s, qdd), c = rigid_inverse_dynamics(m, s, zero);
    std::vector<double> M = rigid_mass_matrix(m, s);
    for (int i = 0; i < n; ++i) {
      double ref = c[i];
      for (int j = 0; j < n; ++j) ref += M[i * n + j] * qdd[j];
      CHECK(std::fabs(tau[i] - ref) < 1e-10 * (1 + std::fabs(ref)));
    }
  }
  SECTION("arm and cartpole: c = dM/dt qd - dT/dq + dV/dq (central differences)") {
    for (RigidBuilder b : {rigid_arm3(), rigid_cartpole()}) {
      RigidModelT<double> m = finalize(b);
      StateT<double> s = random_state(m, rng, 1.0, 2.0);
      std::vector<double> zero(std::size_t(m.dof_count()), 0.0);
      std::vector<double> c = rigid_inverse_dynamics(m, s, zero), ref = lagrangian_bias(m, s);
      for (int i = 0; i < m.dof_count(); ++i) {
        INFO("dof " << i << ": " << c[i] << " vs " << ref[i]);
        CHECK(std::fabs(c[i] - ref[i]) < 1e-5 * (1 + std::fabs(ref[i])));
      }
    }
  }
}

TEST_CASE("cholesky: solves a random SPD system and rejects an indefinite one", "[rigid][cholesky]") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  const int n = 9;
  std::vector<double> A(n * n), M(n * n, 0.0), L(n * n), b(n), x(n);
  for (double& v : A) v = u(rng);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      for (int k = 0; k < n; ++k) M[i * n + j] += A[i * n + k] * A[j * n + k];
      if (i == j) M[i * n + j] += 0.1;
    }
  for (double& v : b) v = u(rng);
  REQUIRE(rigid::cholesky(M, L, n));
  rigid::cholesky_solve(L, n, b.data(), x.data());
  for (int i = 0; i < n; ++i) {
    double r = -b[i];
    for (int j = 0; j < n; ++j) r += M[i * n + j] * x[j];
    CHECK(std::fabs(r) < 1e-11);
  }
  M[0] = -1;
  CHECK_FALSE(rigid::cholesky(M, L, n));
}

TEST_CASE("contact: a box pressed into the ground feels 4 ke depth, mapped to the free joint", "[rigid][contact]") {
  RigidModelT<double> m = finalize(rigid_free_box({0.1, 0.1, 0.1}, 1000));
  StateT<double> s = m.make_state();
  const double depth = 1e-3;
  s.joint_q[1] = 0.1 - depth;
  RigidContactsT<double> c;
  REQUIRE(rigid_contacts(m, s, m.make_control(), c).is_ok());
  REQUIRE(c.contact_count() == 4);
  for (int k = 0; k < 4; ++k) {
    CHECK(std::fabs(c.force[k].y - m.contact_ke * depth) < 1e-9);
    CHECK(std::fabs(c.point[k].y + depth) < 1e-12);
    CHECK(c.normal[k].y == 1.0);
  }
  // generalized force: inverse dynamics at rest is gravity minus J^T f_contact
  std::vector<double> tau = rigid_inverse_dynamics(m, s, std::vector<double>(6, 0.0));
  double mg = m.body_mass[0] * 9.81;
  CHECK(std::fabs(tau[1] - (mg - 4 * m.contact_ke * depth)) < 1e-9);
  for (int k : {0, 2, 3, 4, 5}) CHECK(std::fabs(tau[k]) < 1e-9);
  // sliding along +x: friction opposes the slip, bounded by mu f_n
  s.joint_qd[0] = 0.5;
  REQUIRE(rigid_contacts(m, s, m.make_control(), c).is_ok());
  for (int k = 0; k < 4; ++k) {
    CHECK(c.force[k].x < 0);
    CHECK(-c.force[k].x <= m.contact_mu * c.force[k].y + 1e-12);
  }
  // joint reaction of a free body is zero
  for (double v : {c.joint_force[0].x, c.joint_force[0].y, c.joint_torque[0].z}) CHECK(std::fabs(v) < 1e-9);
}

TEST_CASE("actuators: PD and torque actuators give their generalized force", "[rigid][actuator]") {
  RigidModelT<double> m = finalize(rigid_arm3());
  m.gravity = {0, 0, 0};
  StateT<double> s = m.make_state();
  s.joint_q = {0.2, -0.1, 0.4};
  s.joint_qd = {0.5, 0.3, -0.2};
  ControlT<double> u = joint_control<double>({0.7, 0.1, -0.3});
  Result<std::vector<double>> qdd = rigid_forward_dynamics(m, s, u);
  REQUIRE(qdd.is_ok());
  // M qdd + c = kp (target - q) - kd qd - damping qd
  std::vector<double> lhs = rigid_inverse_dynamics(m, s, qdd.value());
  for (int i = 0; i < 3; ++i) {
    double ref = 50 * (u.joint_act[i] - s.joint_q[i]) - 5 * s.joint_qd[i] - 0.05 * s.joint_qd[i];
    CHECK(std::fabs(lhs[i] - ref) < 1e-10);
  }
  RigidModelT<double> cp = finalize(rigid_cartpole());
  cp.gravity = {0, 0, 0};
  StateT<double> x = cp.make_state();
  Result<std::vector<double>> a = rigid_forward_dynamics(cp, x, joint_control<double>({0.3}));
  REQUIRE(a.is_ok());
  std::vector<double> f = rigid_inverse_dynamics(cp, x, a.value());
  CHECK(std::fabs(f[0] - 20 * 0.3) < 1e-10);
  CHECK(std::fabs(f[1]) < 1e-10);
}

TEST_CASE("builder: errors name the body, and shape masses add up", "[rigid][builder]") {
  RigidBuilder b;
  b.add_body("a", {.type = RIGID_JOINT_REVOLUTE, .parent = 3});
  Result<RigidModelT<double>> r = b.finalize<double>();
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message().find("(a)") != std::string::npos);
  RigidBuilder c;
  int body = c.add_body("two spheres", {.type = RIGID_JOINT_FREE});
  c.add_shape(body, {.type = GEOM_SPHERE, .pos = {1, 0, 0}, .size = {0.1, 0, 0}, .density = 1000});
  c.add_shape(body, {.type = GEOM_SPHERE, .pos = {-1, 0, 0}, .size = {0.1, 0, 0}, .density = 1000});
  RigidModelT<double> m = finalize(c);
  double ms = 1000 * 4.0 / 3.0 * 3.14159265358979323846 * 1e-3;
  CHECK(std::fabs(m.body_mass[0] - 2 * ms) < 1e-9);
  CHECK(length(m.body_com[0]) < 1e-12);
  CHECK(std::fabs(m.body_inertia[0].m[1][1] - 2 * (0.4 * ms * 0.01 + ms)) < 1e-9);
  CHECK(std::fabs(m.body_inertia[0].m[0][0] - 2 * 0.4 * ms * 0.01) < 1e-9);
}

TEST_CASE("contact: a capsule lying on the ground touches at both end caps", "[rigid][contact]") {
  RigidBuilder b;
  int body = b.add_body("capsule", {.type = RIGID_JOINT_FREE});
  // axis along world x: the capsule's local y rotated by -90 degrees about z
  double s = std::sqrt(0.5);
  b.add_shape(body, {.type = GEOM_CAPSULE, .rot = {s, 0, 0, -s}, .size = {0.05, 0.2, 0}, .density = 1000});
  RigidModelT<double> m = finalize(b);
  StateT<double> st = m.make_state();
  st.joint_q[1] = 0.05 - 2e-3;
  RigidContactsT<double> c;
  REQUIRE(rigid_contacts(m, st, m.make_control(), c).is_ok());
  REQUIRE(c.contact_count() == 2);
  CHECK(std::fabs(std::fabs(c.point[0].x) - 0.2) < 1e-12);
  CHECK(std::fabs(c.point[0].x + c.point[1].x) < 1e-12);
  for (int k = 0; k < 2; ++k) CHECK(std::fabs(c.force[k].y - m.contact_ke * 2e-3) < 1e-9);
}

TEST_CASE("joint forces: a pendulum at rest hangs on its hinge with m g", "[rigid][contact]") {
  RigidModelT<double> m = finalize(rigid_pendulum(0.8, 1.5));
  RigidContactsT<double> c;
  REQUIRE(rigid_contacts(m, m.make_state(), m.make_control(), c).is_ok());
  REQUIRE(c.joint_force.size() == 1);
  CHECK(std::fabs(c.joint_force[0].y - 1.5 * 9.81) < 1e-9);
  CHECK(std::fabs(c.joint_force[0].x) < 1e-12);
  CHECK(length(c.joint_torque[0]) < 1e-9);
  CHECK(length(c.joint_point[0]) < 1e-12);
  // held horizontal by a torque actuator of gear 1: the hinge carries m g and m g L
  RigidBuilder b = rigid_pendulum(0.8, 1.5);
  b.add_actuator(0, {.type = RIGID_ACTUATOR_TORQUE});
  RigidModelT<double> held = finalize(b);
  StateT<double> s = held.make_state();
  s.joint_q[0] = 3.14159265358979323846 / 2;  // bob at +x
  REQUIRE(rigid_contacts(held, s, joint_control<double>({1.5 * 9.81 * 0.8}), c).is_ok());
  Result<std::vector<double>> qdd = rigid_forward_dynamics(held, s, joint_control<double>({1.5 * 9.81 * 0.8}));
  REQUIRE(qdd.is_ok());
  CHECK(std::fabs(qdd.value()[0]) < 1e-9);
  CHECK(std::fabs(c.joint_force[0].y - 1.5 * 9.81) < 1e-9);
  CHECK(std::fabs(c.joint_torque[0].z - 1.5 * 9.81 * 0.8) < 1e-9);
}

TEST_CASE("float: the float build agrees with double over a quadruped second", "[rigid][float]") {
  Result<RigidModelT<float>> mf = rigid_quadruped().finalize<float>();
  RigidModelT<double> md = finalize(rigid_quadruped());
  REQUIRE(mf.is_ok());
  StateT<float> sf = mf->make_state(), nf;
  StateT<double> sd = md.make_state(), nd;
  sf.joint_q[1] = 0.46f;
  sd.joint_q[1] = 0.46;
  SolverT<float> solver_f({.substeps = 8});
  SolverT<double> solver_d({.substeps = 8});
  const ModelT<float> bodies_f = world(mf.value());
  const ModelT<double> bodies_d = world(md);
  ControlT<float> uf = mf->make_control();
  ControlT<double> ud = md.make_control();
  for (int t = 0; t < 60; ++t) {
    for (int a = 0; a < 8; ++a) ud.joint_act[a] = 0.3 * std::sin(0.1 * t + a), uf.joint_act[a] = float(ud.joint_act[a]);
    REQUIRE(solver_f.step(bodies_f, sf, nf, uf, 1.0f / 60.0f).is_ok());
    REQUIRE(solver_d.step(bodies_d, sd, nd, ud, 1.0 / 60.0).is_ok());
    std::swap(sf, nf);
    std::swap(sd, nd);
  }
  CHECK(sd.joint_q[1] > 0.4);  // standing
  for (int i = 0; i < md.q_count(); ++i) CHECK(std::fabs(sf.joint_q[i] - sd.joint_q[i]) < 2e-3);
}
