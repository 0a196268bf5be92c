// joint couplings (URDF <mimic>): a spring-damper between two joint coordinates that pulls the
// follower to ratio * leader + offset; the Panda's second finger follows the first, and the
// step's gradients through a coupling match central differences in double
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "engine/articulation/rigid_queries.h"
#include "engine/io/mujoco_dynamics.h"
#include "engine/io/urdf.h"
#include "tests/engine/articulation/step_check.h"

using namespace adj;

TEST_CASE("mimic: a coupling's step gradients match central differences", "[rigid][mimic][grad]") {
  RigidBuilder b;
  b.ground = false;
  int upper = b.add_body("upper", {.type = RIGID_JOINT_REVOLUTE, .axis = {0, 0, 1}, .damping = 0.05});
  b.add_shape(upper, {.type = GEOM_CAPSULE, .pos = {0, -0.2, 0}, .size = {0.04, 0.15, 0}, .density = 800});
  int slider =
      b.add_body("slider", {.type = RIGID_JOINT_PRISMATIC, .parent = upper, .pos = {0, -0.4, 0}, .axis = {1, 0, 0}});
  b.add_shape(slider, {.type = GEOM_BOX, .size = {0.05, 0.04, 0.03}, .density = 700});
  int lower =
      b.add_body("lower", {.type = RIGID_JOINT_REVOLUTE, .parent = slider, .pos = {0, -0.1, 0}, .axis = {1, 0, 1}});
  b.add_shape(lower, {.type = GEOM_SPHERE, .pos = {0, -0.1, 0}, .size = {0.05, 0, 0}, .density = 900});
  b.couplings.push_back({.joint = lower, .leader = upper, .ratio = -0.5, .offset = 0.1, .ke = 40, .kd = 0.5});
  b.couplings.push_back({.joint = slider, .leader = lower, .ratio = 0.2, .offset = 0, .ke = 80, .kd = 1});
  b.add_actuator(upper, {.type = RIGID_ACTUATOR_TORQUE, .gear = 2});
  auto m = b.finalize<double>();
  INFO(m.status().message());
  REQUIRE(m.is_ok());
  REQUIRE(m->coupling_count() == 2);
  std::mt19937 rng(9);
  for (int trial = 0; trial < 2; ++trial) {
    StateT<double> s = adj::test::random_state(*m, rng, 0.5, 1.0);
    ControlT<double> u = test::joint_control<double>({0.3});
    adj::test::check_step_gradients(*m, s, u,
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

TEST_CASE("mimic: the Panda's second finger follows the first", "[rigid][mimic]") {
  const std::string panda = std::string(ADJ_SHARED_ROBOTS) + "/urdf/franka_panda/panda.urdf";
  RigidBuilder b;
  b.ground = false;
  b.gravity = {0, 0, 0};  // only the fingers move
  auto imp = rigid_import_urdf(panda, b, {.default_actuators = false});
  INFO(imp.status().message());
  REQUIRE(imp.is_ok());
  for (const std::string& w : imp->warnings) CHECK(w.find("mimic") == std::string::npos);
  auto m = b.finalize<double>();
  REQUIRE(m.is_ok());
  REQUIRE(m->coupling_count() == 1);
  CHECK(m->body_name[m->coupling_joint[0]] == "panda_rightfinger");
  CHECK(m->body_name[m->coupling_leader[0]] == "panda_leftfinger");
  CHECK(m->coupling_ratio[0] == 1);
  // fingers apart: the coupling brings the second to the first within a second
  StateT<double> s = m->make_state(), next = s;
  const int f1 = m->joint_q_start[m->coupling_leader[0]], f2 = m->joint_q_start[m->coupling_joint[0]];
  s.joint_q[f1] = 0.03, s.joint_q[f2] = 0.0;
  SolverT<double> solver({.substeps = 8});
  const ModelT<double> bodies = test::world(*m);
  ControlT<double> u = m->make_control();
  for (int t = 0; t < 60; ++t) {
    REQUIRE(solver.step(bodies, s, next, u, 1.0 / 60).is_ok());
    std::swap(s, next);
  }
  CHECK(std::abs(s.joint_q[f2] - s.joint_q[f1]) < 2e-3);
  // and MuJoCo's numbers hold with the coupling left out, as the references were taken
  auto file = load_robot_file(panda);
  REQUIRE(file.is_ok());
  CHECK(file->model.coupling_count() == 1);
}
