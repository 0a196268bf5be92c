// shared by the rigid tests: a tree with every joint type, random states, small helpers
// (a two-body pair, axis-angle quaternions, a free body's pose)
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "engine/articulation/rigid_queries.h"
#include "engine/articulation/robots.h"
#include "engine/grad/rollout.h"
#include "engine/solver/solver.h"

namespace adj::test {

// a world of these bodies and the particles of `w` (none by default), for the one solver
// and rollout
template <class S>
ModelT<S> world(const RigidModelT<S>& m, ModelT<S> w = {}) {
  w.rigid = m;
  return w;
}

// a control of actuator inputs only
template <class S>
ControlT<S> joint_control(std::vector<S> act) {
  ControlT<S> c;
  c.joint_act = std::move(act);
  return c;
}

// free base; revolute, ball, prismatic and fixed joints below it; every shape type;
// PD and torque actuators; joint limits and damping
inline RigidBuilder mixed_tree() {
  RigidBuilder b;
  int base = b.add_body("base", {.type = RIGID_JOINT_FREE});
  b.add_shape(base, {.type = GEOM_BOX, .size = {0.2, 0.1, 0.15}, .density = 500});
  int arm = b.add_body("arm", {.type = RIGID_JOINT_REVOLUTE,
                               .parent = base,
                               .pos = {0.2, 0, 0.05},
                               .rot = {0.9, 0.1, 0.3, 0.2},
                               .axis = {0.3, 0.2, 1},
                               .lower = -0.5,
                               .upper = 0.6,
                               .limit_ke = 30,
                               .limit_kd = 0.5,
                               .damping = 0.05});
  b.add_shape(arm, {.type = GEOM_CAPSULE, .pos = {0.05, -0.15, 0}, .size = {0.04, 0.12, 0}, .density = 800});
  int ball = b.add_body("wrist", {.type = RIGID_JOINT_BALL, .parent = arm, .pos = {0.05, -0.3, 0}, .damping = 0.02});
  b.add_shape(ball, {.type = GEOM_SPHERE, .pos = {0.02, -0.08, 0.01}, .size = {0.06, 0, 0}, .density = 900});
  int slide = b.add_body("slider", {.type = RIGID_JOINT_PRISMATIC,
                                    .parent = ball,
                                    .pos = {0, -0.1, 0},
                                    .axis = {1, 1, 0},
                                    .lower = -0.1,
                                    .upper = 0.1,
                                    .limit_ke = 50,
                                    .limit_kd = 1});
  b.add_shape(slide, {.type = GEOM_BOX,
                      .pos = {0, -0.05, 0},
                      .rot = {0.95, 0.0, 0.31, 0.0},
                      .size = {0.05, 0.04, 0.03},
                      .density = 700});
  int tail = b.add_body("tail", {.type = RIGID_JOINT_FIXED, .parent = base, .pos = {-0.25, 0.02, 0}});
  b.add_shape(tail, {.type = GEOM_SPHERE, .size = {0.05, 0, 0}, .density = 600});
  b.add_actuator(arm, {.type = RIGID_ACTUATOR_PD, .kp = 20, .kd = 1});
  b.add_actuator(slide, {.type = RIGID_ACTUATOR_TORQUE, .gear = 3});
  b.add_actuator(ball, {.type = RIGID_ACTUATOR_TORQUE, .dof = 1, .gear = 0.5});
  return b;
}

// a random state: coordinates in [-a, a], unit quaternions, velocities in [-v, v]
inline StateT<double> random_state(const RigidModelT<double>& m, std::mt19937& rng, double a, double v) {
  std::uniform_real_distribution<double> u(-1, 1);
  StateT<double> s = m.make_state();
  for (double& x : s.joint_q) x = a * u(rng);
  for (double& x : s.joint_qd) x = v * u(rng);
  for (int j = 0; j < m.body_count(); ++j) {
    int at = m.joint_q_start[j] + (m.joint_type[j] == RIGID_JOINT_FREE ? 3 : 0);
    if (m.joint_type[j] == RIGID_JOINT_FREE || m.joint_type[j] == RIGID_JOINT_BALL) {
      double n = 0;
      s.joint_q[at] = 1 + 0.5 * u(rng);
      for (int k = 0; k < 4; ++k) n += s.joint_q[at + k] * s.joint_q[at + k];
      for (int k = 0; k < 4; ++k) s.joint_q[at + k] /= std::sqrt(n);
    }
  }
  return s;
}

// two free bodies with one shape each (density 500), no ground; contact ke 2e3, kd 20, kf 50,
// mu 0.6
inline RigidBuilder two_bodies(const RigidShapeDesc& a, const RigidShapeDesc& b) {
  RigidBuilder bld;
  bld.ground = false;
  bld.contact_ke = 2e3;
  bld.contact_kd = 20;
  bld.contact_kf = 50;
  bld.contact_mu = 0.6;
  int A = bld.add_body("a", {.type = RIGID_JOINT_FREE});
  RigidShapeDesc sa = a;
  sa.density = 500;
  bld.add_shape(A, sa);
  int B = bld.add_body("b", {.type = RIGID_JOINT_FREE});
  RigidShapeDesc sb = b;
  sb.density = 500;
  bld.add_shape(B, sb);
  return bld;
}

// the rotation by `angle` [rad] about the axis a (any length)
inline rigid::quat<double> axis_quat(vec3<double> a, double angle) {
  a = a / length(a);
  double s = std::sin(angle / 2);
  return {std::cos(angle / 2), a.x * s, a.y * s, a.z * s};
}

// free body `body` at position x with orientation r
inline void place(const RigidModelT<double>& m, StateT<double>& s, int body, const vec3<double>& x,
                  const rigid::quat<double>& r) {
  int at = m.joint_q_start[body];
  double v[7] = {x.x, x.y, x.z, r.w, r.x, r.y, r.z};
  for (int k = 0; k < 7; ++k) s.joint_q[at + k] = v[k];
}

inline RigidModelT<double> finalize(const RigidBuilder& b) {
  Result<RigidModelT<double>> r = b.finalize<double>();
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  return r.value();
}

}  // namespace adj::test
