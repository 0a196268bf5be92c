// joint damping, armature, springs, limits and PD gains integrated implicitly in velocity
// (rigid_dynamics.h's implicit_system, as MuJoCo's implicitfast): one joint's substep is the
// linearized backward-Euler update, links with wrist-sized inertias under real gains stay
// still at 8 substeps of 1/240 s where the explicit update diverges, the step's gradients
// (joint damping and armature included) match central differences, and a blow-up is reported
// by substep, joint and quantity
#include <cmath>
#include <string>

#include "step_check.h"

using namespace adj;
using namespace adj::test;

namespace {

// one revolute joint about z at the origin (no gravity: no bias force), a sphere off the axis
RigidModelT<double> one_joint(double damping, double armature, double stiffness, double kp, double kd) {
  RigidBuilder b;
  b.ground = false;
  b.gravity = {0, 0, 0};
  int link = b.add_body("link", {.type = RIGID_JOINT_REVOLUTE,
                                 .axis = {0, 0, 1},
                                 .damping = damping,
                                 .armature = armature,
                                 .stiffness = stiffness,
                                 .spring_q = 0.2});
  b.add_shape(link, {.type = GEOM_SPHERE, .pos = {0.1, 0, 0}, .size = {0.02, 0, 0}, .density = 1000});
  b.add_actuator(link, {.type = RIGID_ACTUATOR_PD, .kp = kp, .kd = kd});
  return finalize(b);
}

// a 6-joint arm whose last three links weigh 20 g with inertias of 8e-5 kg m^2 (the xArm6's
// wrist, a G1's fingers), PD-held with kp 200, kd 5 and damped 0.5 per joint: kd h / I is 16 at
// h = 1/1920 s, so explicit Euler diverges (it needs kd h / I < 2)
RigidModelT<double> light_wrist_arm() {
  RigidBuilder b;
  b.ground = false;
  int parent = -1;
  for (int k = 0; k < 6; ++k) {
    const bool wrist = k >= 3;
    const vec3<double> axis = k % 2 ? vec3<double>{0, 0, 1} : vec3<double>{1, 0, 0};
    int link = b.add_body("link" + std::to_string(k + 1), {.type = RIGID_JOINT_REVOLUTE,
                                                           .parent = parent,
                                                           .pos = {0, parent < 0 ? 0.0 : -0.12, 0},
                                                           .axis = axis,
                                                           .lower = -2.5,
                                                           .upper = 2.5,
                                                           .limit_ke = 1000,
                                                           .limit_kd = 10,
                                                           .damping = 0.5});
    const double mass = wrist ? 0.02 : 1.0, I = wrist ? 8e-5 : 5e-3;
    mat33<double> inertia;
    for (int i = 0; i < 3; ++i) inertia.m[i][i] = I;
    b.set_mass(link, mass, {0, -0.06, 0}, inertia);
    b.add_actuator(link, {.type = RIGID_ACTUATOR_PD, .kp = 200, .kd = 5});
    parent = link;
  }
  return finalize(b);
}

// PD targets at the state's joint coordinates: the arm holds its pose
ControlT<double> hold(const RigidModelT<double>& m, const StateT<double>& s) {
  ControlT<double> u = m.make_control();
  for (int a = 0; a < m.actuator_count(); ++a)
    u.joint_act[a] = s.joint_q[m.joint_q_start[m.dof_joint[m.actuator_dof[a]]]];
  return u;
}

}  // namespace

TEST_CASE("implicit joints: one joint's substep is the linearized backward-Euler update", "[rigid][implicit]") {
  const double d = 0.3, a = 0.02, k = 4, kp = 50, kd = 2, h = 1.0 / 240;
  RigidModelT<double> m = one_joint(d, a, k, kp, kd);
  StateT<double> s = m.make_state(), out;
  s.joint_q = {0.4};
  s.joint_qd = {-1.5};
  const double target = -0.1;
  ControlT<double> u = joint_control<double>({target});
  SolverT<double> solver({.substeps = 1});
  const ModelT<double> bodies = world(m);
  REQUIRE(solver.step(bodies, s, out, u, h).is_ok());
  // (I + h D + h^2 K) qdd = tau - h K qd, D = d + kd, K = k + kp; I includes the armature
  const double I = rigid_mass_matrix(m, s)[0], q = s.joint_q[0], qd = s.joint_qd[0];
  REQUIRE(I > a);
  const double tau = kp * (target - q) - kd * qd - d * qd - k * (q - 0.2);
  const double qdd = (tau - h * (k + kp) * qd) / (I + h * (d + kd) + h * h * (k + kp));
  const double qd1 = qd + h * qdd, q1 = q + h * qd1;
  CHECK(std::abs(out.joint_qd[0] - qd1) <= 1e-13 * std::abs(qd1));
  CHECK(std::abs(out.joint_q[0] - q1) <= 1e-13 * std::abs(q1));
  // the explicit update differs by O(h): the test tells the two apart
  const double qd_explicit = qd + h * tau / I;
  CHECK(std::abs(out.joint_qd[0] - qd_explicit) > 1e-3 * std::abs(qd1));
}

TEST_CASE("implicit joints: a wrist of 8e-5 kg m^2 under real gains holds still at 8 x 1/240 s", "[rigid][implicit]") {
  RigidModelT<double> m = light_wrist_arm();
  StateT<double> s = m.make_state(), next;
  for (int j = 0; j < m.body_count(); ++j) s.joint_q[j] = 0.3 * std::sin(j + 1.0);
  const StateT<double> start = s;
  const ControlT<double> u = hold(m, s);
  SolverT<double> solver({.substeps = 8});
  const ModelT<double> bodies = world(m);
  double fastest = 0;
  for (int t = 0; t < 720; ++t) {  // 3 s
    Status st = solver.step(bodies, s, next, u, 1.0 / 240);
    INFO("frame " << t << ": " << st.message());
    REQUIRE(st.is_ok());
    std::swap(s, next);
    for (double v : s.joint_qd) fastest = std::max(fastest, std::abs(v));
  }
  INFO("fastest joint rate " << fastest << " rad/s");
  CHECK(fastest < 2.0);
  // PD under gravity: each joint sags by at most its load over kp
  for (int j = 0; j < m.body_count(); ++j) {
    INFO("joint " << j);
    CHECK(std::abs(s.joint_q[j] - start.joint_q[j]) < 0.05);
    CHECK(std::abs(s.joint_qd[j]) < 1e-3);
  }
}

TEST_CASE("implicit joints: the explicit update of the same arm diverges (the test needs the implicit one)",
          "[rigid][implicit]") {
  // one explicit substep of the wrist's own PD and damping: qd' = qd (1 - h (kd + d) / I)
  const double h = 1.0 / 1920, I = 8e-5, damping = 5 + 0.5;
  CHECK(std::abs(1 - h * damping / I) > 1);  // the amplification factor of explicit Euler
  RigidModelT<double> m = light_wrist_arm();
  StateT<double> s = m.make_state(), next;
  s.joint_qd[5] = 1.0;
  SolverT<double> solver({.substeps = 8});
  const ModelT<double> bodies = world(m);
  REQUIRE(solver.step(bodies, s, next, hold(m, s), 1.0 / 240).is_ok());
  // implicitly the wrist's rate decays monotonically within the step, without overshoot
  CHECK(next.joint_qd[5] < 1.0);
  CHECK(next.joint_qd[5] > -0.1);
}

TEST_CASE("implicit joints: step gradients (damping, armature, gains, limits) match central differences",
          "[rigid][implicit][grad]") {
  RigidModelT<double> m = light_wrist_arm();
  for (int d = 0; d < m.dof_count(); ++d) m.dof_armature[d] = 1e-4 * (d + 1);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 2; ++trial) {
    StateT<double> s = random_state(m, rng, 0.5, 1.0);
    s.joint_q[2] = 2.505;  // inside the limit's ramp (0.01 rad)
    s.joint_q[4] = -2.53;  // past the ramp
    ControlT<double> u = hold(m, s);
    for (double& x : u.joint_act) x += 0.1;
    INFO("trial " << trial);
    check_step_gradients(m, s, u,
                         {.dt = 1.0 / 240,
                          .substeps = 2,
                          .fd_eps = 1e-6,
                          .fd_abs = 1e-6,
                          .fd_rel = 1e-5,
                          .rev_of_largest = 1e-12,
                          .adj_rng = &rng,
                          .contact_in_step = false});
  }
}

TEST_CASE("blow-up errors name the substep, the joint and the quantity, and suggest remedies", "[rigid][implicit]") {
  // a 1 g ball on a 1e9 N/m ground, falling at 5 m/s: explicit contact at 1/60 s explodes
  RigidModelT<double> m = finalize(rigid_free_box({0.005, 0.005, 0.005}, 1000));
  m.contact_ke = 1e9;
  m.contact_kd = 0;
  StateT<double> s = m.make_state(), next;
  s.joint_q[1] = 0.006;
  s.joint_qd[1] = -5;
  SolverT<double> solver({.substeps = 1});
  const ModelT<double> bodies = world(m);
  Status st = Status::ok();
  for (int t = 0; t < 50 && st; ++t) {
    st = solver.step(bodies, s, next, m.make_control(), 1.0 / 60);
    std::swap(s, next);
  }
  REQUIRE_FALSE(st.is_ok());
  const std::string msg = st.message();
  INFO(msg);
  CHECK(msg.find("substep 1 of 1") != std::string::npos);
  CHECK(msg.find("joint_q") != std::string::npos);
  CHECK(msg.find("joint 0 (body box)") != std::string::npos);
  CHECK(msg.find("more substeps") != std::string::npos);
  CHECK(msg.find("damping") != std::string::npos);
  CHECK(msg.find("no mass") == std::string::npos);
}

TEST_CASE("a dof that moves no mass is told apart from a blow-up", "[rigid][implicit]") {
  RigidBuilder b;
  b.ground = false;
  b.add_body("ghost", {.type = RIGID_JOINT_REVOLUTE, .axis = {0, 0, 1}});  // no shape, no mass
  auto m = b.finalize<double>();
  if (!m.is_ok()) {  // refused at load time: as good, and named
    INFO(m.status().message());
    CHECK(m.status().message().find("ghost") != std::string::npos);
    return;
  }
  StateT<double> s = m->make_state(), next;
  SolverT<double> solver;
  const ModelT<double> bodies = world(*m);
  Status st = solver.step(bodies, s, next, m->make_control(), 1.0 / 60);
  REQUIRE_FALSE(st.is_ok());
  INFO(st.message());
  CHECK(st.message().find("no mass or inertia") != std::string::npos);
  CHECK(st.message().find("body ghost") != std::string::npos);
  CHECK(st.message().find("blew up") == std::string::npos);
}
