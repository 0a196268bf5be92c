// the free joint (rigid_model.h: linear velocity in the joint frame, angular in the body frame):
// its accelerations against Newton and Euler's equations about the centre of mass, written
// out here without spatial algebra; a spinning sphere in free flight keeps its velocity and a
// rolling one does not speed up over many explicit substeps; the step's gradients of a spinning,
// off-centre body in a turned joint frame against central differences
#include "step_check.h"

using namespace adj;
using namespace adj::test;

namespace {

using Q = rigid::quat<double>;

// one free body, its centre of mass off its origin and its inertia not a sphere's, hanging from
// a turned and moved joint frame
RigidModelT<double> lopsided_body(const vec3<double>& gravity) {
  RigidBuilder b;
  b.ground = false;
  b.gravity = gravity;
  const int body =
      b.add_body("body", {.type = RIGID_JOINT_FREE, .pos = {0.1, 0.2, -0.3}, .rot = axis_quat({1, 1, 0.3}, 0.7)});
  mat33<double> I;
  I.m[0][0] = 0.02, I.m[1][1] = 0.05, I.m[2][2] = 0.03;
  I.m[0][1] = I.m[1][0] = 0.004, I.m[1][2] = I.m[2][1] = -0.003;
  b.set_mass(body, 2.0, {0.15, -0.05, 0.1}, I);
  return finalize(b);
}

// a sphere of radius 0.08 (density 500), its centre its origin
RigidModelT<double> sphere(bool ground, const vec3<double>& gravity) {
  RigidBuilder b;
  b.ground = ground;
  b.gravity = gravity;
  const int body = b.add_body("ball", {.type = RIGID_JOINT_FREE});
  b.add_shape(body, {.type = GEOM_SPHERE, .size = {0.08, 0, 0}, .density = 500});
  return finalize(b);
}

void run(const RigidModelT<double>& m, StateT<double>& s, int frames) {
  SolverT<double> solver({.substeps = 8});
  const ModelT<double> bodies = world(m);
  const ControlT<double> u = m.make_control();
  StateT<double> next;
  for (int t = 0; t < frames; ++t) {
    REQUIRE(solver.step(bodies, s, next, u, 1.0 / 60.0).is_ok());
    s = next;
  }
}

}  // namespace

TEST_CASE("free joint: accelerations obey Newton and Euler about the centre of mass", "[rigid][rnea][free]") {
  const vec3<double> g{0.3, -9.81, 0.5};
  const RigidModelT<double> m = lopsided_body(g);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-2, 2);
  for (int trial = 0; trial < 5; ++trial) {
    StateT<double> s = m.make_state();
    place(m, s, 0, {u(rng), u(rng), u(rng)}, axis_quat({u(rng), u(rng), u(rng)}, u(rng)));
    for (double& x : s.joint_qd) x = 2 * u(rng);
    auto qdd = rigid_forward_dynamics(m, s, m.make_control());
    REQUIRE(qdd.is_ok());
    const double* a = qdd->data();
    const double* v = s.joint_qd.data();
    const mat33<double> RJ = m.joint_rot[0];
    const mat33<double> R = RJ * rigid::qmat(Q(s.joint_q[3], s.joint_q[4], s.joint_q[5], s.joint_q[6]));
    // the origin's velocity and acceleration in the world are RJ qd and RJ qdd (the joint frame
    // does not turn); the body-frame angular velocity's rate, turned to the world, is alpha
    const vec3<double> du = RJ * vec3<double>(a[0], a[1], a[2]);
    const vec3<double> w = R * vec3<double>(v[3], v[4], v[5]), alpha = R * vec3<double>(a[3], a[4], a[5]);
    const vec3<double> r = R * m.body_com[0];
    const double mass = m.body_mass[0];
    // m (du + alpha x r + w x (w x r)) = m g
    const vec3<double> com_acc = du + cross(alpha, r) + cross(w, cross(w, r));
    INFO("trial " << trial);
    CHECK(length(com_acc - g) < 1e-10);
    // Ic alpha + w x Ic w = 0 (gravity has no moment about the centre of mass)
    const mat33<double> Ic = R * m.body_inertia[0] * transpose(R);
    CHECK(length(Ic * alpha + cross(w, Ic * w)) < 1e-12 * mass);
  }
}

TEST_CASE("free joint: a spinning sphere in free flight keeps its velocity over 9.5 s of explicit substeps",
          "[rigid][free]") {
  // 20 rad/s about z while moving along x: a body-frame linear velocity would be turned by
  // sqrt(1 + (h w)^2) each substep, from 1 m/s to tens in this time
  const RigidModelT<double> m = sphere(false, {0, 0, 0});
  StateT<double> s = m.make_state();
  const double qd[6] = {1, 0, 0, 0, 0, -20};
  for (int k = 0; k < 6; ++k) s.joint_qd[k] = qd[k];
  run(m, s, 570);
  CHECK(s.joint_qd[0] == Approx(1).epsilon(1e-12));
  CHECK(std::fabs(s.joint_qd[1]) < 1e-12);
  CHECK(std::fabs(s.joint_qd[2]) < 1e-12);
  CHECK(s.joint_qd[5] == Approx(-20).epsilon(1e-12));
  CHECK(s.joint_q[0] == Approx(9.5).epsilon(1e-9));
}

TEST_CASE("free joint: a sphere rolling on the ground does not speed up", "[rigid][free][contact]") {
  // a body-frame linear velocity sped a rolling ball up by about 7% a second at 8 substeps
  const RigidModelT<double> m = sphere(true, {0, -9.81, 0});
  StateT<double> s = m.make_state();
  place(m, s, 0, {0, 0.08, 0}, Q{});
  run(m, s, 120);  // settle into the ground
  // rolling along +x at 1 m/s: spinning about -z at v / r
  s.joint_qd[0] = 1, s.joint_qd[5] = -1 / 0.08;
  for (int k = 0; k < 5; ++k) {
    run(m, s, 60);
    const double along = std::hypot(s.joint_qd[0], s.joint_qd[2]);
    INFO("second " << k + 1 << ": " << along << " m/s, spin " << s.joint_qd[5] << " rad/s");
    CHECK(along <= 1 + 1e-9);
    CHECK(along > 0.9);
    CHECK(std::fabs(s.joint_qd[5]) <= 12.5 * (1 + 1e-9));
  }
}

TEST_CASE("free joint: the step's gradients of a spinning, off-centre body in a turned joint frame (double)",
          "[rigid][free][grad]") {
  const RigidModelT<double> m = lopsided_body({0.3, -9.81, 0.5});
  StateT<double> s = m.make_state();
  place(m, s, 0, {0.2, 0.5, -0.1}, axis_quat({0.3, 1, -0.5}, 0.9));
  const double qd[6] = {0.4, -0.7, 1.1, 3.0, -2.0, 4.5};
  for (int k = 0; k < 6; ++k) s.joint_qd[k] = qd[k];
  check_step_gradients(m, s, m.make_control(), {.contact_in_step = false});
}
