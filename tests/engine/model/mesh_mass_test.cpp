// mesh shapes (engine/model/rigid_mesh.h): mass, centre of mass and inertia of closed meshes
// against the analytic box and sphere, moved meshes, the convex hull and its cap, and the
// errors of open, flat and bad meshes
#include <cmath>

#include "tests/engine/articulation/mesh_test_util.h"
#include "tests/engine/articulation/rigid_test_util.h"

using namespace adj;
using namespace adj::test;

namespace {

constexpr double kPi = 3.14159265358979323846;

RigidShapeDesc mesh_shape(const TestMesh& tm, double density, const char* name = "test.obj") {
  RigidShapeDesc s;
  s.type = GEOM_MESH;
  s.mesh_vertices = tm.v;
  s.mesh_tris = tm.t;
  s.density = density;
  s.mesh_name = name;
  return s;
}

double max_diff(const mat33<double>& a, const mat33<double>& b) {
  double d = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) d = std::max(d, std::fabs(a.m[i][j] - b.m[i][j]));
  return d;
}

}  // namespace

TEST_CASE("mesh shapes: a mesh cube has the box's mass, centre and inertia, placed, turned and scaled",
          "[rigid][mesh][mass]") {
  const vec3<double> h{0.2, 0.1, 0.15};
  const rigid::quat<double> rot = rigid::qnormalize(rigid::quat<double>(0.9, 0.2, -0.3, 0.1));
  for (int grid : {1, 4}) {
    INFO("faces as " << grid << " x " << grid << " grids");
    RigidBuilder b;
    int a = b.add_body("prim", {.type = RIGID_JOINT_FREE});
    b.add_shape(a, {.type = GEOM_BOX, .pos = {0.3, -0.1, 0.2}, .rot = rot, .size = h, .density = 700});
    int c = b.add_body("mesh", {.type = RIGID_JOINT_FREE});
    // the unit-half-extent cube scaled to h by the shape's scale
    RigidShapeDesc s = mesh_shape(box_mesh({1, 1, 1}, grid), 700);
    s.pos = {0.3, -0.1, 0.2};
    s.rot = rot;
    s.scale = h;
    b.add_shape(c, s);
    RigidModelT<double> m = finalize(b);
    const double mass = 700 * 8 * h.x * h.y * h.z;
    CHECK(std::fabs(m.body_mass[0] - mass) < 1e-12 * mass);
    CHECK(std::fabs(m.body_mass[1] - mass) < 1e-12 * mass);
    CHECK(length(m.body_com[1] - m.body_com[0]) < 1e-12);
    CHECK(length(m.body_com[1] - vec3<double>(0.3, -0.1, 0.2)) < 1e-12);
    INFO("inertia difference " << max_diff(m.body_inertia[1], m.body_inertia[0]));
    CHECK(max_diff(m.body_inertia[1], m.body_inertia[0]) < 1e-12 * mass);
    // the hull is the 8 corners (grid points on faces and edges are not vertices of it)
    CHECK(m.shape_hull_vertex_start[2] - m.shape_hull_vertex_start[1] == 8);
    CHECK(m.shape_hull_vertex_start[1] == 0);  // the primitive has none
    CHECK(std::fabs(m.shape_size[1].x - length(h)) < 1e-12);
  }
}

TEST_CASE("mesh shapes: mass properties of a mesh moved inside its own frame (com off the origin)",
          "[rigid][mesh][mass]") {
  // vertices rotated by R and moved by t: com = t, inertia about it = R I_box R^T
  TestMesh tm = box_mesh({0.3, 0.2, 0.1});
  const mat33<double> R = rigid::qmat(rigid::qnormalize(rigid::quat<double>(0.7, 0.1, 0.5, -0.2)));
  const vec3<double> t{1.5, -0.7, 2.0};
  for (auto& v : tm.v) v = R * v + t;
  double mass;
  vec3<double> com;
  mat33<double> I;
  REQUIRE(rigid_mesh_mass(tm.v, tm.t, 1000, mass, com, I, "moved").is_ok());
  RigidShapeDesc box{.type = GEOM_BOX, .size = {0.3, 0.2, 0.1}, .density = 1000};
  double mb;
  mat33<double> Ib;
  rigid_shape_mass(box, mb, Ib);
  CHECK(std::fabs(mass - mb) < 1e-12 * mb);
  CHECK(length(com - t) < 1e-12);
  CHECK(max_diff(I, R * Ib * transpose(R)) < 1e-11 * mb);
  // turned inside out (every face reversed): the same solid
  TestMesh inv = tm;
  for (Idx3& f : inv.t) std::swap(f.j, f.k);
  double mass2;
  vec3<double> com2;
  mat33<double> I2;
  REQUIRE(rigid_mesh_mass(inv.v, inv.t, 1000, mass2, com2, I2, "inverted").is_ok());
  CHECK(std::fabs(mass2 - mass) < 1e-12 * mass);
  CHECK(length(com2 - com) < 1e-12);
  CHECK(max_diff(I2, I) < 1e-12 * mass);
}

TEST_CASE("mesh shapes: a finely tessellated sphere has the sphere's mass and inertia", "[rigid][mesh][mass]") {
  // icosphere, 5120 triangles: its volume is 0.29% short of the sphere's (inscribed), so the
  // tolerances are 0.5% on mass and 0.8% on inertia
  const double r = 0.2, rho = 500;
  TestMesh tm = icosphere(r, 4);
  const vec3<double> at{0.1, 0.2, -0.3};
  for (auto& v : tm.v) v += at;
  double mass;
  vec3<double> com;
  mat33<double> I;
  REQUIRE(rigid_mesh_mass(tm.v, tm.t, rho, mass, com, I, "sphere").is_ok());
  const double m0 = rho * 4.0 / 3.0 * kPi * r * r * r, i0 = 0.4 * m0 * r * r;
  INFO("mass " << mass << " vs " << m0 << "; Ixx " << I.m[0][0] << " vs " << i0);
  CHECK(std::fabs(mass - m0) < 5e-3 * m0);
  CHECK(mass < m0);  // inscribed
  CHECK(length(com - at) < 1e-12);
  for (int i = 0; i < 3; ++i) {
    CHECK(std::fabs(I.m[i][i] - i0) < 8e-3 * i0);
    for (int j = 0; j < 3; ++j)
      if (i != j) CHECK(std::fabs(I.m[i][j]) < 1e-3 * i0);
  }
}

TEST_CASE("mesh shapes: a 20k-triangle mesh keeps at most kRigidMeshHullCap hull vertices, all on the surface",
          "[rigid][mesh][hull]") {
  TestMesh tm = icosphere(0.3, 5);  // 20480 triangles, 10242 vertices
  REQUIRE(tm.t.size() == 20480);
  RigidBuilder b;
  int body = b.add_body("ball", {.type = RIGID_JOINT_FREE});
  b.add_shape(body, mesh_shape(tm, 100));
  RigidModelT<double> m = finalize(b);
  const int nh = m.shape_hull_vertex_start[1] - m.shape_hull_vertex_start[0];
  INFO("hull vertices " << nh << ", faces " << m.hull_tri.size());
  CHECK(nh >= 32);
  CHECK(nh <= kRigidMeshHullCap);
  CHECK(int(m.mesh_tri.size()) == 20480);
  for (const auto& v : m.hull_vertex) CHECK(std::fabs(length(v) - 0.3) < 1e-12);
  // every hull vertex is on or behind every hull face; faces are unit normals
  for (std::size_t f = 0; f < m.hull_tri.size(); ++f) {
    CHECK(std::fabs(length(m.hull_normal[f]) - 1) < 1e-12);
    for (const auto& v : m.hull_vertex) CHECK(dot(m.hull_normal[f], v) - m.hull_offset[f] < 1e-12);
  }
}

TEST_CASE("mesh shapes: open, flat and bad meshes are errors naming the shape, body and mesh",
          "[rigid][mesh][errors]") {
  TestMesh open = box_mesh({0.1, 0.1, 0.1});
  open.t.pop_back();
  {
    RigidBuilder b;
    int body = b.add_body("lid", {.type = RIGID_JOINT_FREE});
    b.add_shape(body, mesh_shape(open, 500, "open_box.obj"));
    auto r = b.finalize<double>();
    REQUIRE_FALSE(r.is_ok());
    INFO(r.status().message());
    CHECK(r.status().message().find("shape 0 of body lid") != std::string::npos);
    CHECK(r.status().message().find("open_box.obj") != std::string::npos);
    CHECK(r.status().message().find("not closed") != std::string::npos);
  }
  {
    // open but without density: its given mass is used and it still collides (its hull)
    RigidBuilder b;
    int body = b.add_body("lid", {.type = RIGID_JOINT_FREE});
    b.add_shape(body, mesh_shape(open, 0, "open_box.obj"));
    b.set_mass(body, 2, {}, mat33<double>::identity());
    RigidModelT<double> m = finalize(b);
    CHECK(m.body_mass[0] == 2);
    CHECK(m.shape_hull_vertex_start[1] == 8);
  }
  TestMesh flat;
  flat.v = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};
  flat.t = {{0, 1, 2}, {1, 3, 2}};
  {
    RigidBuilder b;
    int body = b.add_body("sheet", {.type = RIGID_JOINT_FREE});
    b.add_shape(body, mesh_shape(flat, 0, "sheet.stl"));
    auto r = b.finalize<double>();
    REQUIRE_FALSE(r.is_ok());
    INFO(r.status().message());
    CHECK(r.status().message().find("sheet.stl") != std::string::npos);
    CHECK(r.status().message().find("flat") != std::string::npos);
  }
  TestMesh bad = box_mesh({0.1, 0.1, 0.1});
  bad.t[3].k = 99;
  {
    RigidBuilder b;
    int body = b.add_body("b", {.type = RIGID_JOINT_FREE});
    b.add_shape(body, mesh_shape(bad, 0, "bad.obj"));
    auto r = b.finalize<double>();
    REQUIRE_FALSE(r.is_ok());
    INFO(r.status().message());
    CHECK(r.status().message().find("triangle 3") != std::string::npos);
  }
  {
    RigidBuilder b;
    int body = b.add_body("b", {.type = RIGID_JOINT_FREE});
    RigidShapeDesc s = mesh_shape(box_mesh({0.1, 0.1, 0.1}), 0, "neg.obj");
    s.scale = {1, -1, 1};
    b.add_shape(body, s);
    auto r = b.finalize<double>();
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().message().find("scale must be positive") != std::string::npos);
  }
}
