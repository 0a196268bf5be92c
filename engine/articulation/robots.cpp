#include "engine/articulation/robots.h"

#include <cmath>

namespace adj {

namespace {
mat33<double> diag(double a, double b, double c) {
  mat33<double> r;
  r.m[0][0] = a;
  r.m[1][1] = b;
  r.m[2][2] = c;
  return r;
}

// the reference robots are kg-scale: they state a stiffer contact law than the defaults of
// engine/collision/contact_law.h (the articulated bodies' defaults before there was one set)
void state_body_contact(RigidBuilder& b) {
  b.contact_ke = 1e4;
  b.contact_kd = 1e2;
  b.contact_kf = 1e2;
  b.contact_mu = 0.8;
  b.contact_eps = 1e-2;
}
}  // namespace

RigidBuilder rigid_pendulum(double length, double mass) {
  RigidBuilder b;
  state_body_contact(b);
  b.ground = false;
  int bob = b.add_body("pendulum", {.type = RIGID_JOINT_REVOLUTE, .axis = {0, 0, 1}});
  double I = 0.4 * mass * 0.01 * 0.01;
  b.set_mass(bob, mass, {0, -length, 0}, diag(I, I, I));
  b.add_shape(bob, {.type = GEOM_SPHERE, .pos = {0, -length, 0}, .size = {0.01, 0, 0}});
  return b;
}

RigidBuilder rigid_free_box(const vec3<double>& half, double density) {
  RigidBuilder b;
  state_body_contact(b);
  int box = b.add_body("box", {.type = RIGID_JOINT_FREE});
  b.add_shape(box, {.type = GEOM_BOX, .size = half, .density = density});
  return b;
}

RigidBuilder rigid_cartpole() {
  RigidBuilder b;
  state_body_contact(b);
  b.ground = false;
  int cart = b.add_body("cart", {.type = RIGID_JOINT_PRISMATIC, .axis = {1, 0, 0}, .damping = 0.1});
  b.set_mass(cart, 1.0, {0, 0, 0}, diag(0.01, 0.01, 0.01));
  b.add_shape(cart, {.type = GEOM_BOX, .size = {0.2, 0.1, 0.1}});
  int pole = b.add_body("pole", {.type = RIGID_JOINT_REVOLUTE, .parent = cart, .axis = {0, 0, 1}, .damping = 0.01});
  double m = 0.5, L = 1.0;
  b.set_mass(pole, m, {0, L / 2, 0}, diag(m * L * L / 12, 1e-4, m * L * L / 12));
  b.add_shape(pole, {.type = GEOM_CAPSULE, .pos = {0, L / 2, 0}, .size = {0.02, L / 2, 0}});
  b.add_actuator(cart, {.type = RIGID_ACTUATOR_TORQUE, .gear = 20});
  return b;
}

RigidBuilder rigid_arm3() {
  RigidBuilder b;
  state_body_contact(b);
  b.ground = false;
  int parent = -1;
  for (int i = 0; i < 3; ++i) {
    RigidJointDesc j{.type = RIGID_JOINT_REVOLUTE,
                     .parent = parent,
                     .pos = {0, parent < 0 ? 0.0 : -0.5, 0},
                     .axis = {0, 0, 1},
                     .lower = -2.5,
                     .upper = 2.5,
                     .limit_ke = 1000,
                     .limit_kd = 10,
                     .damping = 0.05};
    int link = b.add_body("link" + std::to_string(i), j);
    b.add_shape(link, {.type = GEOM_CAPSULE, .pos = {0, -0.25, 0}, .size = {0.04, 0.21, 0}, .density = 1000});
    b.add_actuator(link, {.type = RIGID_ACTUATOR_PD, .kp = 50, .kd = 5});
    parent = link;
  }
  return b;
}

RigidBuilder rigid_quadruped() {
  RigidBuilder b;
  state_body_contact(b);
  int torso = b.add_body("torso", {.type = RIGID_JOINT_FREE});
  b.add_shape(torso, {.type = GEOM_BOX, .size = {0.3, 0.05, 0.15}, .density = 500});
  const double sx[4] = {0.25, 0.25, -0.25, -0.25}, sz[4] = {0.15, -0.15, 0.15, -0.15};
  for (int l = 0; l < 4; ++l) {
    std::string leg = "leg" + std::to_string(l);
    // hip swings the thigh about z (fore-aft); knee bends the shin about z
    RigidJointDesc hip{.type = RIGID_JOINT_REVOLUTE, .parent = torso, .pos = {sx[l], -0.05, sz[l]}};
    hip.lower = -1.2;
    hip.upper = 1.2;
    hip.limit_ke = 100;
    hip.limit_kd = 1;
    hip.damping = 0.1;
    hip.armature = 0.01;
    int thigh = b.add_body(leg + "_thigh", hip);
    b.add_shape(thigh, {.type = GEOM_CAPSULE, .pos = {0, -0.1, 0}, .size = {0.03, 0.08, 0}, .density = 500});
    RigidJointDesc knee = hip;
    knee.parent = thigh;
    knee.pos = {0, -0.2, 0};
    knee.lower = -2.0;
    knee.upper = 0.2;
    int shin = b.add_body(leg + "_shin", knee);
    b.add_shape(shin, {.type = GEOM_CAPSULE, .pos = {0, -0.1, 0}, .size = {0.025, 0.08, 0}, .density = 500});
    b.add_actuator(thigh, {.type = RIGID_ACTUATOR_PD, .kp = 40, .kd = 1});
    b.add_actuator(shin, {.type = RIGID_ACTUATOR_PD, .kp = 40, .kd = 1});
  }
  return b;
}

}  // namespace adj
