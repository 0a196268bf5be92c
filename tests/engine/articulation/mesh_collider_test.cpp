// body shapes against a static mesh collider (engine/collision/pairs.h: sphere-mesh,
// capsule-mesh, box-mesh; engine/articulation/mesh_pairs.h: a mesh shape's hull vertices): a
// sphere, a lying capsule, a box and a mesh box come to rest on a mesh floor as on a plane at
// its height (spheres meet the mesh's two-sided shell, the box's corners and the hull's
// vertices its solid below the faces), a box on a floor wound the wrong way falls through, and
// the step's dual Jacobian against central differences and the reverse adjoint against J^T in
// double for each in contact with it
#include <cmath>
#include <tuple>

#include "mesh_test_util.h"
#include "step_check.h"

using namespace adj;
using namespace adj::test;

namespace {

using Q = rigid::quat<double>;

// a square floor of 2 x 2 m at height h, cut into n x n x 2 triangles facing up (down: wound
// the other way round)
RigidColliderDesc mesh_floor(double h, int n, bool down = false) {
  RigidColliderDesc cd;
  cd.type = GEOM_MESH;
  for (int i = 0; i <= n; ++i)
    for (int j = 0; j <= n; ++j) cd.mesh_vertices.push_back({-1 + 2.0 * i / n, h, -1 + 2.0 * j / n});
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const int a = i * (n + 1) + j, b = a + 1, c = a + n + 1, d = c + 1;
      cd.mesh_tris.push_back(down ? Idx3{a, d, b} : Idx3{a, b, d});
      cd.mesh_tris.push_back(down ? Idx3{a, c, d} : Idx3{a, d, c});
    }
  return cd;
}

// one free body with `shape` above a floor at height 0.3: a mesh floor or the same plane
RigidModelT<double> on_floor(const RigidShapeDesc& shape, bool mesh, bool down = false) {
  RigidBuilder b;
  b.ground = false;
  b.contact_ke = 1e4, b.contact_kd = 1e2, b.contact_kf = 1e2, b.contact_mu = 0.8;
  int body = b.add_body("body", {.type = RIGID_JOINT_FREE});
  RigidShapeDesc s = shape;
  s.density = 500;
  b.add_shape(body, s);
  if (mesh) {
    b.colliders.push_back(mesh_floor(0.3, 4, down));
  } else {
    RigidColliderDesc plane;
    plane.pos = {0, 0.3, 0};
    plane.size = {0, 1, 0};
    b.colliders.push_back(plane);
  }
  return finalize(b);
}

// the body dropped from 5 cm above its rest for 2 s: its final state
StateT<double> settle(const RigidModelT<double>& m, double rest, const Q& rot) {
  StateT<double> st = m.make_state(), next;
  place(m, st, 0, {0.13, rest + 0.05, -0.07}, rot);
  SolverT<double> solver({.substeps = 8});
  const ModelT<double> bodies = world(m);
  ControlT<double> u = m.make_control();
  for (int t = 0; t < 120; ++t) {
    REQUIRE(solver.step(bodies, st, next, u, 1.0 / 60.0).is_ok());
    st = next;
  }
  return st;
}

const Q kLie = axis_quat({0, 0, 1}, 1.5707963267948966);  // a capsule's axis (local y) along x

const RigidShapeDesc kSphere{.type = GEOM_SPHERE, .size = {0.08, 0, 0}};
const RigidShapeDesc kCapsule{.type = GEOM_CAPSULE, .size = {0.05, 0.15, 0}};
const RigidShapeDesc kBox{.type = GEOM_BOX, .size = {0.1, 0.05, 0.08}};
RigidShapeDesc mesh_box() {
  const test::TestMesh m = test::box_mesh({0.1, 0.05, 0.08});
  return {.type = GEOM_MESH, .mesh_vertices = m.v, .mesh_tris = m.t};
}

}  // namespace

TEST_CASE("mesh collider: a sphere, a lying capsule, a box and a mesh box rest on a mesh floor as on a plane",
          "[rigid][mesh][collider]") {
  // the box and the mesh box: corners 0.05 below their centre (their half height)
  for (const auto& [name, shape, r, rot] :
       {std::tuple{"sphere", kSphere, 0.08, Q()}, std::tuple{"capsule", kCapsule, 0.05, kLie},
        std::tuple{"box", kBox, 0.05, Q()}, std::tuple{"mesh box", mesh_box(), 0.05, Q()}}) {
    INFO(name);
    const StateT<double> on_mesh = settle(on_floor(shape, true), 0.3 + r, rot);
    const StateT<double> on_plane = settle(on_floor(shape, false), 0.3 + r, rot);
    INFO("height on the mesh " << on_mesh.joint_q[1] << ", on the plane " << on_plane.joint_q[1]);
    CHECK(std::fabs(on_mesh.joint_q[1] - (0.3 + r)) < 2e-3);  // resting, pressed in by its weight
    // the same samples, the same law (the corners' depth is their distance to a face's plane
    // there, to a plane's here: equal but for rounding)
    CHECK(std::fabs(on_mesh.joint_q[1] - on_plane.joint_q[1]) < 1e-9);
    INFO("qd " << on_mesh.joint_qd[0] << " " << on_mesh.joint_qd[1] << " " << on_mesh.joint_qd[2] << " "
               << on_mesh.joint_qd[3] << " " << on_mesh.joint_qd[4] << " " << on_mesh.joint_qd[5] << " plane "
               << on_plane.joint_qd[0] << " " << on_plane.joint_qd[3] << " " << on_plane.joint_qd[5] << " x "
               << on_mesh.joint_q[0] << " z " << on_mesh.joint_q[2]);
    for (int d = 0; d < 6; ++d) CHECK(std::fabs(on_mesh.joint_qd[d]) < 1e-2);
    RigidContactsT<double> c;
    const RigidModelT<double> m = on_floor(shape, true);
    REQUIRE(rigid_contacts(m, on_mesh, m.make_control(), c).is_ok());
    REQUIRE(c.contact_count() > 0);
    for (int k = 0; k < c.contact_count(); ++k) CHECK(c.collider[k] == 0);
  }
}

TEST_CASE("mesh collider: a box falls through a mesh floor wound the wrong way (its solid above)",
          "[rigid][mesh][collider]") {
  // the corners start above the faces, outside the solid's 60-degree cone once they pass below
  const StateT<double> fell = settle(on_floor(kBox, true, true), 0.35, Q());
  CHECK(fell.joint_q[1] < 0.0);
}

TEST_CASE(
    "mesh collider: a sphere, a capsule, a box and a mesh box against a mesh, step Jacobian and reverse "
    "adjoint (double)",
    "[rigid][mesh][collider][grad]") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  // the box and the mesh box lying along x as the capsule does: their lowest corners 0.1 below
  for (const auto& [name, shape, r] : {std::tuple{"sphere", kSphere, 0.08}, std::tuple{"capsule", kCapsule, 0.05},
                                       std::tuple{"box", kBox, 0.1}, std::tuple{"mesh box", mesh_box(), 0.1}}) {
    INFO(name);
    const RigidModelT<double> m = on_floor(shape, true);
    StateT<double> s = m.make_state();
    // over a triangle's inside, tilted, pressed 1 cm in and sliding
    place(m, s, 0, {0.13, 0.3 + r - 0.01, -0.07}, rigid::qmul(axis_quat({0.2, 1, 0.1}, 0.15), kLie));
    for (double& v : s.joint_qd) v = 0.3 * u(rng);
    RigidContactsT<double> c;
    REQUIRE(rigid_contacts(m, s, m.make_control(), c).is_ok());
    REQUIRE(c.contact_count() > 0);
    check_step_gradients(m, s, m.make_control());
  }
}
