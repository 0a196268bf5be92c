// contact of mesh shapes (engine/articulation/mesh_pairs.h): forces against their closed
// form (ke x depth) for a mesh box against every shape type and against another mesh; the
// step's dual Jacobian against central differences and the reverse adjoint against J^T in
// double, per pair, per static collider and on the ground; a mesh box resting on the ground
// as the box primitive does; a mesh dropped on a box body rests; the cost of a 20k-triangle mesh
#include <chrono>
#include <cmath>

#include "mesh_test_util.h"
#include "step_check.h"

using namespace adj;
using namespace adj::test;

namespace {

using Q = rigid::quat<double>;

RigidShapeDesc mesh_of(const TestMesh& tm) {
  RigidShapeDesc s;
  s.type = GEOM_MESH;
  s.mesh_vertices = tm.v;
  s.mesh_tris = tm.t;
  s.mesh_name = "test mesh";
  return s;
}

struct PairCase {
  const char* name;
  RigidShapeDesc a, b;
  vec3<double> xb;   // body b's position in a's frame
  Q rb;              // body b's orientation relative to a's
  double depth_sum;  // expected sum of depths over the touching features [m]
};

// body a: a mesh box (half extents 0.2, 0.1, 0.15) turned by `tilt`; body b on its top face
std::vector<PairCase> pair_cases() {
  const RigidShapeDesc mesh_box = mesh_of(box_mesh({0.2, 0.1, 0.15}, 2));
  const RigidShapeDesc sphere{.type = GEOM_SPHERE, .size = {0.08, 0, 0}};
  const RigidShapeDesc small_box{.type = GEOM_BOX, .size = {0.08, 0.05, 0.06}};
  const RigidShapeDesc capsule{.type = GEOM_CAPSULE, .size = {0.05, 0.15, 0}};
  const RigidShapeDesc small_mesh = mesh_of(box_mesh({0.08, 0.05, 0.06}));
  const Q lie = axis_quat({0, 0, 1}, 1.5707963267948966);
  const Q turn = axis_quat({0, 1, 0}, 0.4);
  std::vector<PairCase> c;
  c.push_back({"mesh-sphere", mesh_box, sphere, {0.05, 0.1 + 0.08 - 0.01, 0.02}, Q(), 0.01});
  c.push_back({"mesh-capsule", mesh_box, capsule, {0.01, 0.1 + 0.05 - 0.01, 0.02}, lie, 7 * 0.01});
  c.push_back({"mesh-box", mesh_box, small_box, {0.02, 0.1 + 0.05 - 0.005, -0.01}, turn, 4 * 0.005});
  c.push_back({"mesh-mesh", mesh_box, small_mesh, {0.02, 0.1 + 0.05 - 0.005, -0.01}, turn, 4 * 0.005});
  // the primitive first: the mesh is shape b
  c.push_back({"box-mesh", small_box, mesh_box, {-0.02, -0.1 - 0.05 + 0.005, 0.01}, turn, 4 * 0.005});
  return c;
}

RigidModelT<double> pair_model(const PairCase& pc, StateT<double>& s, const Q& ra) {
  RigidModelT<double> m = finalize(two_bodies(pc.a, pc.b));
  s = m.make_state();
  place(m, s, 0, {0, 0, 0}, ra);
  place(m, s, 1, rigid::qmat(ra) * pc.xb, rigid::qmul(ra, pc.rb));
  return m;
}

// a body with one shape resting on the ground for 3 s from its analytic rest height: the final
// height of its origin
double rest_height(const RigidShapeDesc& shape, double half) {
  RigidBuilder b;
  b.contact_ke = 1e4, b.contact_kd = 1e2, b.contact_kf = 1e2, b.contact_mu = 0.8;  // the stiff body contact it was measured with
  int body = b.add_body("body", {.type = RIGID_JOINT_FREE});
  RigidShapeDesc s = shape;
  s.density = 500;
  b.add_shape(body, s);
  RigidModelT<double> m = finalize(b);
  StateT<double> st = m.make_state(), next;
  place(m, st, 0, {0.1, half - m.body_mass[0] * 9.81 / (4 * m.contact_ke), -0.2}, axis_quat({0, 1, 0}, 0.3));
  SolverT<double> solver({.substeps = 8});
  const ModelT<double> bodies = world(m);
  ControlT<double> u = m.make_control();
  for (int t = 0; t < 180; ++t) {
    REQUIRE(solver.step(bodies, st, next, u, 1.0 / 60.0).is_ok());
    st = next;
  }
  CHECK(std::fabs(st.joint_q[0] - 0.1) < 1e-4);  // no sliding
  CHECK(std::fabs(st.joint_q[2] + 0.2) < 1e-4);
  for (int d = 0; d < m.dof_count(); ++d) CHECK(std::fabs(st.joint_qd[d]) < 1e-3);
  return st.joint_q[1];
}

}  // namespace

TEST_CASE("mesh contact: a mesh box's force against each shape type is ke x depth along the normal",
          "[rigid][mesh][contact]") {
  const Q tilt = axis_quat({0.3, 1, 0.2}, 0.5);
  for (const PairCase& pc : pair_cases()) {
    INFO(pc.name);
    StateT<double> s;
    RigidModelT<double> m = pair_model(pc, s, tilt);
    RigidContactsT<double> c;
    REQUIRE(rigid_contacts(m, s, m.make_control(), c).is_ok());
    REQUIRE(c.contact_count() > 0);
    vec3<double> on_b{};
    for (int k = 0; k < c.contact_count(); ++k) {
      CHECK(c.body[k] == 0);
      CHECK(c.other_body[k] == 1);
      on_b -= c.force[k];
    }
    // the normal into b: up in a's frame, or down when b is the one below
    const vec3<double> n = rigid::qmat(tilt) * vec3<double>(0, pc.xb.y > 0 ? 1 : -1, 0);
    INFO("force on b " << on_b.x << " " << on_b.y << " " << on_b.z << ", contacts " << c.contact_count());
    CHECK(std::fabs(dot(on_b, n) - m.contact_ke * pc.depth_sum) < 1e-9 * m.contact_ke);
    CHECK(length(on_b - n * dot(on_b, n)) < 1e-9 * m.contact_ke);
  }
}

TEST_CASE("mesh contact: step Jacobian and reverse adjoint per mesh pair match central differences (double)",
          "[rigid][mesh][contact][grad]") {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-1, 1);
  const Q tilt = axis_quat({0.3, 1, 0.2}, 0.5);
  for (const PairCase& pc : pair_cases()) {
    INFO(pc.name);
    StateT<double> s;
    RigidModelT<double> m = pair_model(pc, s, tilt);
    for (double& v : s.joint_qd) v = 0.5 * u(rng);
    check_step_gradients(m, s, m.make_control());
  }
}

TEST_CASE("mesh contact: a mesh against the ground and each static collider, FD in double",
          "[rigid][mesh][contact][collider][grad]") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  // an irregular convex mesh: an icosphere squashed into an ellipsoid (42 vertices)
  TestMesh tm = icosphere(1, 1);
  for (auto& v : tm.v) v = vec3<double>(0.12 * v.x, 0.08 * v.y, 0.1 * v.z);
  for (int ct = -1; ct < 4; ++ct) {
    INFO("collider type " << ct << " (-1: the ground)");
    RigidBuilder b;
    b.ground = ct < 0;
    b.contact_ke = 2e3;
    b.contact_kd = 20;
    b.contact_kf = 50;
    int body = b.add_body("body", {.type = RIGID_JOINT_FREE});
    RigidShapeDesc sd = mesh_of(tm);
    sd.density = 500;
    b.add_shape(body, sd);
    RigidColliderDesc cd;
    cd.type = std::max(ct, 0);
    double top = ct < 0 ? 0.0 : -0.2;
    if (ct == 0) {
      cd.pos = {0, -0.2, 0};
      cd.size = {0.05, 1, 0.02};
    } else if (ct == 1) {
      cd.pos = {0.01, -0.5, 0.02};
      cd.size = {0.3, 0, 0};
    } else if (ct == 2) {
      cd.pos = {0, -0.3, 0};
      cd.size = {0.5, 0.1, 0.4};
    } else if (ct == 3) {
      cd.pos = {0.01, -0.3, 0};
      cd.rot = axis_quat({1, 0, 0}, 1.5707963267948966);
      cd.size = {0.1, 0.3, 0};
    }
    if (ct >= 0) b.colliders.push_back(cd);
    RigidModelT<double> m = finalize(b);
    StateT<double> s = m.make_state();
    place(m, s, 0, {0.0, top + 0.08 - 0.01, 0.0}, axis_quat({0.2, 1, 0.1}, 0.15));
    for (double& v : s.joint_qd) v = 0.3 * u(rng);
    RigidContactsT<double> c;
    REQUIRE(rigid_contacts(m, s, m.make_control(), c).is_ok());
    REQUIRE(c.contact_count() > 0);
    for (int k = 0; k < c.contact_count(); ++k) {
      CHECK(c.collider[k] == (ct < 0 ? -1 : 0));
      CHECK(c.force[k].y > 0);
    }
    check_step_gradients(m, s, m.make_control());
  }
}

TEST_CASE("mesh contact: a mesh box rests on the ground at the box primitive's height", "[rigid][mesh][rest]") {
  const vec3<double> h{0.15, 0.1, 0.12};
  double box = rest_height({.type = GEOM_BOX, .size = h}, h.y);
  double mesh = rest_height(mesh_of(box_mesh(h, 3)), h.y);
  const double mass = 500 * 8 * h.x * h.y * h.z, ke = 1e4;
  INFO("box " << box << ", mesh box " << mesh);
  CHECK(std::fabs(mesh - box) < 1e-9);
  CHECK(std::fabs(mesh - (h.y - mass * 9.81 / (4 * ke))) < 1e-6);
}

// a body with `shape` dropped from 0.4 m above the top of a fixed box: its trajectory
std::vector<StateT<double>> drop_on_box(const RigidShapeDesc& shape, RigidModelT<double>& m) {
  RigidBuilder b;
  b.contact_ke = 1e4, b.contact_kd = 1e2, b.contact_kf = 1e2, b.contact_mu = 0.8;  // the stiff body contact it was measured with
  int box = b.add_body("box", {.type = RIGID_JOINT_FIXED, .pos = {0, 0.2, 0}});
  b.add_shape(box, {.type = GEOM_BOX, .size = {0.3, 0.2, 0.3}});
  int drop = b.add_body("drop", {.type = RIGID_JOINT_FREE});
  RigidShapeDesc sd = shape;
  sd.density = 300;
  b.add_shape(drop, sd);
  m = finalize(b);
  StateT<double> s = m.make_state(), next;
  place(m, s, 1, {0.05, 0.8, -0.02}, Q());
  SolverT<double> solver({.substeps = 8});
  const ModelT<double> bodies = world(m);
  ControlT<double> u = m.make_control();
  std::vector<StateT<double>> path;
  for (int t = 0; t < 240; ++t) {
    REQUIRE(solver.step(bodies, s, next, u, 1.0 / 60.0).is_ok());
    s = next;
    path.push_back(s);
  }
  return path;
}

TEST_CASE("mesh contact: a mesh box dropped on a box body falls and rests on it as the box primitive does",
          "[rigid][mesh][rest]") {
  const vec3<double> h{0.08, 0.06, 0.07};
  RigidModelT<double> mm, mb;
  auto mesh = drop_on_box(mesh_of(box_mesh(h, 2)), mm);
  auto prim = drop_on_box({.type = GEOM_BOX, .size = h}, mb);
  // the same corners against the same box: the same path up to summation order, which the
  // rocking after the impact amplifies to ~0.5 mm
  double worst = 0, lowest = 1e9;
  for (std::size_t t = 0; t < mesh.size(); ++t) {
    for (int k = 0; k < mm.q_count(); ++k) worst = std::max(worst, std::fabs(mesh[t].joint_q[k] - prim[t].joint_q[k]));
    lowest = std::min(lowest, mesh[t].joint_q[1]);
  }
  const StateT<double>& s = mesh.back();
  // rest: 4 bottom corners share the weight. both shapes keep rocking slightly about x after
  // the drop (~0.2-0.5 rad/s, amplitude ~0.1 mm at the corners: the engine's 4-corner penalty
  // contact, not the mesh), hence 0.5 mm
  const double top = 0.4, rest = top + h.y - mm.body_mass[1] * 9.81 / (4 * mm.contact_ke);
  INFO("largest difference from the primitive " << worst << "; lowest " << lowest << ", final " << s.joint_q[1]
                                                << ", rest " << rest);
  CHECK(worst < 2e-3);
  CHECK(mesh[20].joint_q[1] < 0.75);  // it fell
  CHECK(lowest > rest - 0.01);        // never through the box
  CHECK(std::fabs(s.joint_q[1] - rest) < 5e-4);
  CHECK(std::fabs(s.joint_q[0] - 0.05) < 1e-3);
  CHECK(std::fabs(s.joint_q[2] + 0.02) < 1e-3);
  CHECK(std::fabs(s.joint_qd[1]) < 0.02);  // no longer falling or bouncing
}

TEST_CASE("mesh contact: a 20k-triangle sphere mesh rests on the ground and on a box body at hull cost",
          "[rigid][mesh][rest][cost]") {
  RigidBuilder b;
  b.contact_ke = 1e4, b.contact_kd = 1e2, b.contact_kf = 1e2, b.contact_mu = 0.8;  // the stiff body contact it was measured with
  int box = b.add_body("box", {.type = RIGID_JOINT_FREE});
  b.add_shape(box, {.type = GEOM_BOX, .size = {0.3, 0.1, 0.3}, .density = 300});
  int ball = b.add_body("ball", {.type = RIGID_JOINT_FREE});
  RigidShapeDesc sd = mesh_of(icosphere(0.1, 5));
  sd.density = 300;
  b.add_shape(ball, sd);
  RigidModel m = b.finalize<float>().value();
  State s = m.make_state(), next;
  s.joint_q[1] = 0.1f;
  s.joint_q[7 + 1] = 0.35f;
  SolverT<float> solver({.substeps = 8});
  const ModelT<float> bodies = world(m);
  Control u = m.make_control();
  auto t0 = std::chrono::steady_clock::now();
  const int steps = 120;
  for (int t = 0; t < steps; ++t) {
    REQUIRE(solver.step(bodies, s, next, u, 1.0f / 60.0f).is_ok());
    s = next;
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / steps;
  WARN("20480-triangle mesh on a box on the ground: " << ms << " ms per 1/60 s step (8 substeps)");
  // resting: the ball on the box's top (0.2 minus the box's sink), the box on the ground
  INFO("box " << s.joint_q[0] << " " << s.joint_q[1] << " " << s.joint_q[2] << " ball " << s.joint_q[7] << " "
              << s.joint_q[8] << " " << s.joint_q[9]);
  // the ball on the box's top: its lowest hull face is within 1 cm of the sphere's bottom
  // (64 hull vertices on a sphere of radius 0.1), never below the box's top
  const double top = s.joint_q[1] + 0.1;
  CHECK(s.joint_q[8] < top + 0.1 + 1e-3);
  CHECK(s.joint_q[8] > top + 0.1 - 0.01);
  CHECK(std::fabs(s.joint_q[1] - (0.1 - (m.body_mass[0] + m.body_mass[1]) * 9.81f / (4 * m.contact_ke))) < 1e-4);
  for (int d = 0; d < m.dof_count(); ++d) CHECK(std::fabs(s.joint_qd[d]) < 0.05);
  CHECK(ms < 50);
}
