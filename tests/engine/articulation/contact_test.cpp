// body-body and body-collider contact (engine/articulation/body_contact.h): the force of each pair
// type against its closed form, equal and opposite; the step's dual Jacobian against central
// differences and the reverse adjoint against J^T, per pair type, in double; resting and
// dropping scenes; filters
#include <cmath>

#include "step_check.h"

using namespace adj;
using namespace adj::test;

namespace {

using Q = rigid::quat<double>;

// one configuration of a pair: the shapes, body b's pose, and the expected total normal force
// on b at rest (ke x summed depth; < 0 = not checked)
struct PairCase {
  const char* name;
  RigidShapeDesc a, b;
  Q ra;                 // body a's orientation (at the origin)
  vec3<double> xb;      // body b's position in a's frame
  Q rb;                 // body b's orientation relative to a's
  double depth_sum;     // expected sum of depths over the features [m]
  vec3<double> normal;  // expected normal into b, a's frame
};

std::vector<PairCase> pair_cases() {
  const RigidShapeDesc sphere{.type = GEOM_SPHERE, .size = {0.1, 0, 0}};
  const RigidShapeDesc sphere2{.type = GEOM_SPHERE, .size = {0.08, 0, 0}};
  const RigidShapeDesc box{.type = GEOM_BOX, .size = {0.2, 0.1, 0.15}};
  const RigidShapeDesc small_box{.type = GEOM_BOX, .size = {0.08, 0.05, 0.06}};
  const RigidShapeDesc capsule{.type = GEOM_CAPSULE, .size = {0.05, 0.2, 0}};
  const RigidShapeDesc capsule2{.type = GEOM_CAPSULE, .size = {0.05, 0.15, 0}};
  const Q tilt = axis_quat({0.3, 1, 0.2}, 0.5);
  const Q lie = axis_quat({0, 0, 1}, 1.5707963267948966);  // capsule axis along -x
  std::vector<PairCase> c;
  // sphere - sphere: centres 0.2 apart along (3, 2, 1)/|.|, radii 0.1 + 0.08
  vec3<double> u = vec3<double>(3, 2, 1) / std::sqrt(14.0);
  c.push_back({"sphere-sphere", sphere, sphere2, tilt, u * 0.17, Q(), 0.01, u});
  // sphere on the box's top face, 0.01 deep
  c.push_back({"box-sphere", box, sphere2, tilt, {0.05, 0.1 + 0.08 - 0.01, 0.02}, Q(), 0.01, {0, 1, 0}});
  // sphere against the capsule's side, 0.012 deep
  c.push_back({"capsule-sphere", capsule, sphere2, tilt, {0.118, 0.05, 0}, Q(), 0.012, {1, 0, 0}});
  // capsules crossed at right angles, axes 0.09 apart along x (radii 0.05 + 0.05)
  c.push_back({"capsule-capsule",
               capsule,
               capsule2,
               tilt,
               {0.09, 0.03, 0.02},
               axis_quat({1, 0, 0}, 1.5707963267948966),
               0.01,
               {1, 0, 0}});
  // capsule lying on the box's top face along x, 0.01 deep: 7 axis samples touch
  c.push_back({"box-capsule", box, capsule2, tilt, {0.01, 0.1 + 0.05 - 0.01, 0.02}, lie, 7 * 0.01, {0, 1, 0}});
  // small box flat on the box's top face turned 0.4 rad about y, 0.005 deep: 4 corners
  c.push_back({"box-box",
               box,
               small_box,
               tilt,
               {0.02, 0.1 + 0.05 - 0.005, -0.01},
               axis_quat({0, 1, 0}, 0.4),
               4 * 0.005,
               {0, 1, 0}});
  // the same pairs with a tilt that spreads the depths, for the gradients
  return c;
}

RigidModelT<double> pair_model(const PairCase& pc, StateT<double>& s) {
  RigidModelT<double> m = finalize(two_bodies(pc.a, pc.b));
  s = m.make_state();
  mat33<double> Ra = rigid::qmat(pc.ra);
  place(m, s, 0, {0, 0, 0}, pc.ra);
  place(m, s, 1, Ra * pc.xb, rigid::qmul(pc.ra, pc.rb));
  return m;
}

}  // namespace

TEST_CASE("body contact: each pair type's force is ke x depth along the normal, equal and opposite",
          "[rigid][contact][pair]") {
  for (const PairCase& pc : pair_cases()) {
    INFO(pc.name);
    StateT<double> s;
    RigidModelT<double> m = pair_model(pc, s);
    m.gravity = {0, 0, 0};
    RigidContactsT<double> c;
    REQUIRE(rigid_contacts(m, s, m.make_control(), c).is_ok());
    REQUIRE(c.contact_count() > 0);
    vec3<double> on_b{};
    for (int k = 0; k < c.contact_count(); ++k) {
      // every contact is between the two bodies: recorded on a (shape 0) from b (shape 1)
      CHECK(c.body[k] == 0);
      CHECK(c.other_body[k] == 1);
      CHECK(c.other_shape[k] == 1);
      CHECK(c.collider[k] == -1);
      on_b -= c.force[k];
    }
    mat33<double> Ra = rigid::qmat(pc.ra);
    vec3<double> n = Ra * (pc.normal / length(pc.normal));
    INFO("force on b " << on_b.x << " " << on_b.y << " " << on_b.z);
    CHECK(std::fabs(dot(on_b, n) - m.contact_ke * pc.depth_sum) < 1e-9 * m.contact_ke);
    CHECK(length(on_b - n * dot(on_b, n)) < 1e-9 * m.contact_ke);
    // equal and opposite: at rest the contact accelerates the pair's momentum by nothing
    auto qdd = rigid_forward_dynamics(m, s, m.make_control());
    REQUIRE(qdd.is_ok());
    std::vector<vec3<double>> pos;
    std::vector<mat33<double>> rot;
    rigid_forward_kinematics(m, s, pos, rot);
    vec3<double> momentum_rate{};
    for (int b = 0; b < 2; ++b)  // free joint: linear acceleration of the origin in the joint frame
    {
      const double* a = qdd->data() + 6 * b;
      vec3<double> acc = m.joint_rot[b] * vec3<double>(a[0], a[1], a[2]);
      vec3<double> alpha = rot[b] * vec3<double>(a[3], a[4], a[5]);
      vec3<double> com = rot[b] * m.body_com[b];
      momentum_rate += (acc + cross(alpha, com)) * m.body_mass[b];
    }
    CHECK(length(momentum_rate) < 1e-9 * m.contact_ke);
  }
}

TEST_CASE("body contact: step Jacobian and reverse adjoint per pair type match central differences (double)",
          "[rigid][contact][pair][grad]") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const PairCase& pc : pair_cases()) {
    INFO(pc.name);
    StateT<double> s;
    RigidModelT<double> m = pair_model(pc, s);
    // sliding and spinning: damping and smoothed friction in play
    for (double& v : s.joint_qd) v = 0.5 * u(rng);
    check_step_gradients(m, s, m.make_control());
  }
}

TEST_CASE("static colliders: every body shape against a plane, sphere, box and capsule, FD in double",
          "[rigid][contact][collider][grad]") {
  const RigidShapeDesc shapes[3] = {{.type = GEOM_SPHERE, .size = {0.1, 0, 0}},
                                    {.type = GEOM_BOX, .size = {0.1, 0.06, 0.08}},
                                    {.type = GEOM_CAPSULE, .size = {0.05, 0.12, 0}}};
  // colliders with their top at y = -0.2 under the body; the body's lowest point ~0.01 inside
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int st = 0; st < 3; ++st)
    for (int ct = 0; ct < 4; ++ct) {
      INFO("shape type " << st << ", collider type " << ct);
      RigidBuilder b;
      b.ground = false;
      b.contact_ke = 2e3;
      b.contact_kd = 20;
      b.contact_kf = 50;
      int body = b.add_body("body", {.type = RIGID_JOINT_FREE});
      RigidShapeDesc sd = shapes[st];
      sd.density = 500;
      if (st == 2) sd.rot = axis_quat({0, 0, 1}, 1.5707963267948966);  // capsule lying along x
      b.add_shape(body, sd);
      RigidColliderDesc cd;
      cd.type = ct;
      double top = 0;  // collider's top below the body origin
      if (ct == 0) {
        cd.pos = {0, -0.2, 0};
        cd.size = {0.05, 1, 0.02};  // a slightly tilted plane
        top = -0.2;
      } else if (ct == 1) {
        cd.pos = {0.01, -0.5, 0.02};
        cd.size = {0.3, 0, 0};
        top = -0.2;
      } else if (ct == 2) {
        cd.pos = {0, -0.3, 0};
        cd.size = {0.5, 0.1, 0.4};
        top = -0.2;
      } else {
        cd.pos = {0.01, -0.3, 0};
        cd.rot = axis_quat({1, 0, 0}, 1.5707963267948966);  // axis along z, across the body
        cd.size = {0.1, 0.3, 0};
        top = -0.2;
      }
      b.colliders.push_back(cd);
      RigidModelT<double> m = finalize(b);
      StateT<double> s = m.make_state();
      double half = st == 0 ? 0.1 : st == 1 ? 0.06 : 0.05;
      place(m, s, 0, {0.0, top + half - 0.01, 0.0}, axis_quat({0.2, 1, 0.1}, 0.15));
      for (double& v : s.joint_qd) v = 0.3 * u(rng);
      RigidContactsT<double> c;
      REQUIRE(rigid_contacts(m, s, m.make_control(), c).is_ok());
      REQUIRE(c.contact_count() > 0);
      for (int k = 0; k < c.contact_count(); ++k) {
        CHECK(c.collider[k] == 0);
        CHECK(c.other_body[k] == -1);
        CHECK(c.force[k].y > 0);  // pushed up
      }
      check_step_gradients(m, s, m.make_control());
    }
}

TEST_CASE("body contact: a box resting on another box on the ground stays put for 3 s", "[rigid][contact][rest]") {
  RigidBuilder b;
  b.contact_ke = 1e4, b.contact_kd = 1e2, b.contact_kf = 1e2,
  b.contact_mu = 0.8;  // the stiff body contact it was measured with
  int lower = b.add_body("lower", {.type = RIGID_JOINT_FREE});
  b.add_shape(lower, {.type = GEOM_BOX, .size = {0.3, 0.1, 0.3}, .density = 500});
  int upper = b.add_body("upper", {.type = RIGID_JOINT_FREE});
  b.add_shape(upper, {.type = GEOM_BOX, .size = {0.1, 0.1, 0.1}, .density = 500});
  RigidModelT<double> m = finalize(b);
  StateT<double> s = m.make_state(), next;
  // resting depths: the lower box carries both weights on 4 corners, the upper its own
  const double g = 9.81, ml = m.body_mass[0], mu_ = m.body_mass[1];
  const double d_lower = (ml + mu_) * g / (4 * m.contact_ke), d_upper = mu_ * g / (4 * m.contact_ke);
  place(m, s, 0, {0, 0.1 - d_lower, 0}, Q());
  place(m, s, 1, {0.05, 0.3 - d_lower - d_upper, -0.03}, axis_quat({0, 1, 0}, 0.3));
  SolverT<double> solver({.substeps = 8});
  const ModelT<double> bodies = world(m);
  ControlT<double> u = m.make_control();
  for (int t = 0; t < 180; ++t) {
    REQUIRE(solver.step(bodies, s, next, u, 1.0 / 60.0).is_ok());
    s = next;
  }
  // the upper box: within 1 mm of where it was put, still level, at rest
  CHECK(std::fabs(s.joint_q[7] - 0.05) < 1e-3);
  CHECK(std::fabs(s.joint_q[9] + 0.03) < 1e-3);
  CHECK(std::fabs(s.joint_q[8] - (0.3 - d_lower - d_upper)) < 1e-3);
  Q r{s.joint_q[10], s.joint_q[11], s.joint_q[12], s.joint_q[13]};
  mat33<double> R = rigid::qmat(r);
  CHECK(R.m[1][1] > 0.99999);  // its y axis still up
  for (int d = 0; d < m.dof_count(); ++d) CHECK(std::fabs(s.joint_qd[d]) < 1e-3);
  RigidContactsT<double> c;
  REQUIRE(rigid_contacts(m, s, u, c).is_ok());
  int between = 0;
  vec3<double> carried{};
  for (int k = 0; k < c.contact_count(); ++k)
    if (c.other_body[k] >= 0) {
      ++between;
      carried += c.force[k];  // on the lower box (shape 0) from the upper
    }
  CHECK(between == 4);
  CHECK(std::fabs(-carried.y - mu_ * g) < 1e-3 * mu_ * g);
}

TEST_CASE("body contact: a sphere dropped on a box bounces, then rests on it", "[rigid][contact][rest]") {
  RigidBuilder b;
  b.contact_ke = 1e4, b.contact_kd = 1e2, b.contact_kf = 1e2,
  b.contact_mu = 0.8;  // the stiff body contact it was measured with
  int box = b.add_body("box", {.type = RIGID_JOINT_FIXED, .pos = {0, 0.2, 0}});
  b.add_shape(box, {.type = GEOM_BOX, .size = {0.3, 0.2, 0.3}});
  int ball = b.add_body("ball", {.type = RIGID_JOINT_FREE});
  b.add_shape(ball, {.type = GEOM_SPHERE, .size = {0.1, 0, 0}, .density = 300});
  RigidModelT<double> m = finalize(b);
  StateT<double> s = m.make_state(), next;
  place(m, s, 1, {0.05, 0.8, 0}, Q());
  SolverT<double> solver({.substeps = 8});
  const ModelT<double> bodies = world(m);
  ControlT<double> u = m.make_control();
  double lowest = 1e9;
  bool bounced = false, fell = false;
  for (int t = 0; t < 240; ++t) {
    REQUIRE(solver.step(bodies, s, next, u, 1.0 / 60.0).is_ok());
    s = next;
    lowest = std::min(lowest, s.joint_q[1]);
    if (s.joint_qd[1] < -1) fell = true;
    if (fell && s.joint_qd[1] > 0.3) bounced = true;  // moving up after the fall
  }
  const double top = 0.4, r = 0.1, mass = m.body_mass[1];
  const double rest = top + r - mass * 9.81 / m.contact_ke;
  INFO("lowest " << lowest << ", final " << s.joint_q[1] << ", rest " << rest);
  CHECK(bounced);
  CHECK(lowest > top + r - 0.05);  // never through the box
  CHECK(std::fabs(s.joint_q[1] - rest) < 1e-3);
  CHECK(std::fabs(s.joint_q[0] - 0.05) < 1e-3);  // straight down, no sideways drift
  CHECK(std::fabs(s.joint_qd[1]) < 1e-2);
}

TEST_CASE("body contact: filters (same body, parent and child, self_collision, group and mask)",
          "[rigid][contact][filter]") {
  // a 2-link chain folded so that link 2's sphere sits inside the base's box, plus a free ball
  RigidBuilder b;
  b.ground = false;
  int base = b.add_body("base", {.type = RIGID_JOINT_FIXED});
  b.add_shape(base, {.type = GEOM_BOX, .size = {0.2, 0.1, 0.2}});
  int l1 = b.add_body("l1", {.type = RIGID_JOINT_REVOLUTE, .parent = base, .pos = {0, 0.05, 0}});
  b.add_shape(l1, {.type = GEOM_SPHERE, .size = {0.05, 0, 0}, .density = 100});  // inside the base
  int l2 = b.add_body("l2", {.type = RIGID_JOINT_REVOLUTE, .parent = l1, .pos = {0.1, 0, 0}});
  b.add_shape(l2, {.type = GEOM_SPHERE, .size = {0.05, 0, 0}, .density = 100});  // in base and l1
  int ball = b.add_body("ball", {.type = RIGID_JOINT_FREE});
  b.add_shape(ball, {.type = GEOM_SPHERE, .pos = {0.05, 0.08, 0}, .size = {0.05, 0, 0}, .density = 100});
  auto pairs = [](const RigidModelT<double>& m) {
    RigidContactsT<double> c;
    REQUIRE(rigid_contacts(m, m.make_state(), m.make_control(), c).is_ok());
    std::vector<std::pair<int, int>> p;
    for (int k = 0; k < c.contact_count(); ++k) p.push_back({c.body[k], c.other_body[k]});
    return p;
  };
  using P = std::vector<std::pair<int, int>>;
  // one tree: only the free ball touches (base, l2 and l1)
  CHECK(pairs(finalize(b)) == P{{0, 3}, {1, 3}, {2, 3}});
  // self collision: base - l2 (not base - l1 or l1 - l2: parent and child)
  b.self_collision = true;
  CHECK(pairs(finalize(b)) == P{{0, 2}, {0, 3}, {1, 3}, {2, 3}});
  // the ball's group masked out by l2
  RigidModelT<double> m = finalize(b);
  m.shape_group[3] = 2;
  m.shape_mask[2] = 1;
  CHECK(pairs(m) == P{{0, 2}, {0, 3}, {1, 3}});
  m.body_contact = false;
  CHECK(pairs(m).empty());
}
