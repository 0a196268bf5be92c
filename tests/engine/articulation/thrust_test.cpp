// thrust actuators (body forces along a body-fixed axis, rotors): hover balance, the step's
// dual Jacobian against central differences, and the reverse adjoint against J^T adj_out
#include "step_check.h"

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
  b.add_shape(body, {.type = GEOM_BOX, .size = {0.15, 0.03, 0.15}});
  for (double x : {0.15, -0.15})
    for (double z : {0.15, -0.15})
      b.add_actuator(body, {.type = RIGID_ACTUATOR_THRUST, .gear = 5, .pos = {x, 0, z}, .axis = {0, 1, 0}});
  return b;
}

}  // namespace

TEST_CASE("thrust: four rotors at mg/4 hover, unequal thrust pitches the body", "[rigid][thrust]") {
  RigidModelT<double> m = finalize(drone());
  REQUIRE(m.actuator_count() == 4);
  StateT<double> s = m.make_state();
  ControlT<double> u = joint_control<double>(std::vector<double>(4, 9.81 / 4 / 5));
  auto qdd = rigid_forward_dynamics(m, s, u);
  REQUIRE(qdd.is_ok());
  for (double a : qdd.value()) CHECK(std::fabs(a) < 1e-12);
  u.joint_act[0] += 0.1;  // the +x,+z rotor: a torque about -x... and +z... (x cross y = z)
  qdd = rigid_forward_dynamics(m, s, u);
  REQUIRE(qdd.is_ok());
  CHECK(qdd.value()[1] > 0);  // net lift
  CHECK(std::fabs(qdd.value()[3]) > 1e-3);
  CHECK(std::fabs(qdd.value()[5]) > 1e-3);
}

TEST_CASE("thrust: step Jacobian matches central differences, reverse adjoint is J^T adj_out",
          "[rigid][thrust][grad]") {
  RigidModelT<double> m = finalize(drone());
  std::mt19937 rng(5);
  StateT<double> s = random_state(m, rng, 0.4, 1.0);
  ControlT<double> u = joint_control<double>({0.3, 0.5, 0.4, 0.6});
  // every column against central differences to 1e-6 + 1e-5 relative; the reverse pass and the
  // dual-number adjoint to 1e-9 (1 + |J^T adj_out|) per input (no contact: no ground)
  check_step_gradients(m, s, u,
                       {.dt = 1.0 / 60.0,
                        .fd_rel = 1e-5,
                        .rev_abs = 1e-9,
                        .rev_rel = 1e-9,
                        .rev_of_largest = 0,
                        .adj_rng = &rng,
                        .contact_in_step = false});
}
