// box-box edge-edge contact (engine/articulation/body_contact.h, box_edge_contact): two boxes crossed
// edge to edge with no corner inside the other, a fixed one below turned 45 degrees about x
// (its top is an edge along x) and a free one above turned 45 degrees about z (its bottom is an
// edge along z): the force against its closed form, the step's gradients against central
// differences in double, and the upper box resting on the crossing
#include <cmath>

#include "step_check.h"

using namespace adj;
using namespace adj::test;

namespace {

using Q = rigid::quat<double>;

constexpr double kPi = 3.14159265358979323846;
const double kHalfDiag = 0.1 * std::sqrt(2.0);  // centre to edge of a 0.2 x 0.2 cross-section
const double kApex = 0.3 + kHalfDiag;           // height of the lower box's top edge

RigidModelT<double> crossed_boxes() {
  RigidBuilder b;
  b.ground = false;
  b.contact_ke = 2e4;
  b.contact_kd = 1e2;
  int lower =
      b.add_body("lower", {.type = RIGID_JOINT_FIXED, .pos = {0, 0.3, 0}, .rot = axis_quat({1, 0, 0}, kPi / 4)});
  b.add_shape(lower, {.type = GEOM_BOX, .size = {0.3, 0.1, 0.1}, .density = 100});
  int upper = b.add_body("upper", {.type = RIGID_JOINT_FREE});
  b.add_shape(upper, {.type = GEOM_BOX, .size = {0.1, 0.1, 0.3}, .density = 100});
  return finalize(b);
}

// the upper box with its bottom edge `depth` below the lower box's top edge
StateT<double> crossed_state(const RigidModelT<double>& m, double depth) {
  StateT<double> s = m.make_state();
  const Q r = axis_quat({0, 0, 1}, kPi / 4);
  const double q[7] = {0, kApex + kHalfDiag - depth, 0, r.w, r.x, r.y, r.z};
  for (int k = 0; k < 7; ++k) s.joint_q[k] = q[k];
  return s;
}

}  // namespace

TEST_CASE("box-box edge-edge: crossed edges with no corner inside push the boxes apart", "[rigid][contact][edge]") {
  RigidModelT<double> m = crossed_boxes();
  const double depth = 0.004;
  StateT<double> s = crossed_state(m, depth);
  RigidContactsT<double> c;
  REQUIRE(rigid_contacts(m, s, m.make_control(), c).is_ok());
  // one contact, at the crossing: the edge pair (no corner of either box is inside the other)
  REQUIRE(c.contact_count() == 1);
  CHECK(c.body[0] == 0);  // pairs are reported on the lower-numbered shape's body
  CHECK(c.other_body[0] == 1);
  CHECK(std::fabs(c.point[0].x) < 1e-9);
  CHECK(std::fabs(c.point[0].z) < 1e-9);
  CHECK(std::fabs(c.point[0].y - (kApex - depth / 2)) < 1e-9);
  // normal along the edges' cross product (vertical), pointing into the lower box (body 0)
  CHECK(std::fabs(c.normal[0].y + 1) < 1e-9);
  // depth: the least of the gap along the normal (depth) and each closest point's depth in
  // the other box (depth sin 45 degrees, to the faces beside the edge)
  const double d = depth * std::sqrt(0.5);
  CHECK(std::fabs(c.force[0].y + m.contact_ke * d) < 1e-9 * m.contact_ke);
  CHECK(std::fabs(c.force[0].x) < 1e-9);
  CHECK(std::fabs(c.force[0].z) < 1e-9);
  // apart: nothing
  StateT<double> apart = crossed_state(m, -0.001);
  REQUIRE(rigid_contacts(m, apart, m.make_control(), c).is_ok());
  CHECK(c.contact_count() == 0);
}

TEST_CASE("box-box edge-edge: the step's dual Jacobian matches central differences in double, reverse = J^T",
          "[rigid][contact][edge]") {
  RigidModelT<double> m = crossed_boxes();
  // off-centre (the weight ramp near an edge end: 0.285 m along the upper edge of half length
  // 0.3, weight 1/2) and moving, so every term of the feature is exercised
  for (double z : {0.0, 0.285}) {
    INFO("crossing at z = " << z);
    // a generic pose (the symmetric one is a tie of the depth's max and of the distance's
    // nearest face, where the force is continuous but not differentiable)
    StateT<double> s = crossed_state(m, 0.005);
    const Q r = rigid::qmul(axis_quat({0.3, 0.2, 1}, 0.05), axis_quat({0, 0, 1}, kPi / 4));
    const double pose[7] = {0.013, s.joint_q[1], -z, r.w, r.x, r.y, r.z};
    for (int k = 0; k < 7; ++k) s.joint_q[k] = pose[k];
    const double v[6] = {0.05, -0.1, 0.02, 0.1, -0.2, 0.15};
    for (int k = 0; k < 6; ++k) s.joint_qd[k] = v[k];
    RigidContactsT<double> c;
    REQUIRE(rigid_contacts(m, s, m.make_control(), c).is_ok());
    REQUIRE(c.contact_count() == 1);
    // the reverse pass against J^T adj_out to 1e-12 + 1e-7 relative, per input
    check_step_gradients(m, s, m.make_control(),
                         {.rev_abs = 1e-12, .rev_rel = 1e-7, .rev_of_largest = 0, .adj_seed = 11});
  }
}

TEST_CASE("box-box edge-edge: a box set crossed on another's edge rests there (does not fall through)",
          "[rigid][contact][edge][rest]") {
  RigidModelT<double> m = crossed_boxes();
  StateT<double> s = crossed_state(m, -0.002), next;  // 2 mm above, at rest
  SolverT<double> solver({.substeps = 8});
  const ModelT<double> bodies = world(m);
  const ControlT<double> u = m.make_control();
  double lowest = 1e9;
  for (int t = 0; t < 90; ++t) {  // 1.5 s
    REQUIRE(solver.step(bodies, s, next, u, 1.0 / 60.0).is_ok());
    s = next;
    lowest = std::min(lowest, s.joint_q[1]);
  }
  // equilibrium: ke * depth sin 45 = m g (see the force test)
  const double mass = m.body_mass[1], g = 9.81;
  const double depth = mass * g / (m.contact_ke * std::sqrt(0.5));
  const double rest = kApex + kHalfDiag - depth;
  INFO("rest height " << rest << ", now " << s.joint_q[1] << ", lowest " << lowest);
  CHECK(lowest > rest - 0.004);  // never sinks through (without edge contact it falls 0.4 m)
  CHECK(std::fabs(s.joint_q[1] - rest) < 2e-4);
  CHECK(std::fabs(s.joint_q[0]) < 1e-6);  // still centred on the crossing
  CHECK(std::fabs(s.joint_q[2]) < 1e-6);
  double speed = 0;
  for (double v : s.joint_qd) speed = std::max(speed, std::fabs(v));
  CHECK(speed < 1e-2);
  // and it carries the weight
  RigidContactsT<double> c;
  REQUIRE(rigid_contacts(m, s, u, c).is_ok());
  REQUIRE(c.contact_count() == 1);
  CHECK(std::fabs(-c.force[0].y - mass * g) < 0.01 * mass * g);
}
