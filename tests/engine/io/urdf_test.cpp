// URDF import (engine/io/urdf.h) against the same robots built in C++, and the drawing
// arrays of engine/vis/rigid_vis.h
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/io/urdf.h"
#include "engine/model/builder.h"
#include "engine/vis/rigid_vis.h"
#include "tests/engine/articulation/rigid_test_util.h"

using namespace adj;

namespace {

const std::string kRobots = ADJ_ASSET_ROBOTS;

RigidModelT<double> import(const std::string& file, const UrdfOptions& opt, UrdfImport* out = nullptr) {
  RigidBuilder b;
  b.ground = false;
  auto imp = rigid_import_urdf(kRobots + "/" + file, b, opt);
  INFO(imp.status().message());
  REQUIRE(imp.is_ok());
  if (out) *out = imp.value();
  return test::finalize(b);
}

// a state of `m` with the same 1-dof coordinates and velocities as `ref` (rest elsewhere)
StateT<double> same_dofs(const RigidModelT<double>& m, const StateT<double>& ref) {
  StateT<double> s = m.make_state();
  REQUIRE(s.q_count() == ref.q_count());
  s.joint_q = ref.joint_q;
  s.joint_qd = ref.joint_qd;
  return s;
}

void require_close(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("entry " << i << ": " << a[i] << " vs " << b[i]);
    REQUIRE(std::fabs(a[i] - b[i]) <= tol * (1 + std::fabs(b[i])));
  }
}

}  // namespace

TEST_CASE("urdf: cartpole.urdf matches rigid_cartpole (mass matrix and dynamics at random states)", "[rigid][urdf]") {
  UrdfOptions opt;
  opt.default_actuators = false;
  UrdfImport imp;
  RigidModelT<double> u = import("cartpole.urdf", opt, &imp);
  RigidBuilder cb = rigid_cartpole();
  // the same actuator on the cart (the URDF has no actuators; scenes add them)
  RigidModelT<double> c = test::finalize(cb);
  REQUIRE(imp.links == std::vector<std::string>{"rail", "cart", "pole"});
  REQUIRE(imp.joints[2] == "hinge");
  REQUIRE(u.dof_count() == 2);
  REQUIRE(u.shape_count() == 2);
  CHECK(u.shape_type[1] == GEOM_CAPSULE);
  CHECK(std::fabs(u.shape_size[1].x - 0.02) < 1e-12);
  CHECK(std::fabs(u.shape_size[1].y - 0.5) < 1e-12);
  std::mt19937 rng(7);
  for (int k = 0; k < 5; ++k) {
    StateT<double> sc = test::random_state(c, rng, 2.0, 1.0);
    StateT<double> su = same_dofs(u, sc);
    require_close(rigid_mass_matrix(u, su), rigid_mass_matrix(c, sc), 1e-12);
    // no actuators on the URDF model: compare the passive dynamics
    ControlT<double> zc = test::joint_control<double>(std::vector<double>(c.actuator_count(), 0.0));
    auto au = rigid_forward_dynamics(u, su, u.make_control());
    auto ac = rigid_forward_dynamics(c, sc, zc);
    REQUIRE(au.is_ok());
    REQUIRE(ac.is_ok());
    require_close(au.value(), ac.value(), 1e-10);
  }
}

TEST_CASE("urdf: arm3.urdf with default PD actuators matches rigid_arm3", "[rigid][urdf]") {
  UrdfOptions opt;
  opt.actuator = {.type = RIGID_ACTUATOR_PD, .kp = 50, .kd = 5};
  opt.limit_ke = 1000;
  opt.limit_kd = 10;
  RigidModelT<double> u = import("arm3.urdf", opt);
  RigidModelT<double> a = test::finalize(rigid_arm3());
  REQUIRE(u.dof_count() == 3);
  REQUIRE(u.actuator_count() == 3);
  std::mt19937 rng(11);
  for (int k = 0; k < 5; ++k) {
    StateT<double> sa = test::random_state(a, rng, 2.8, 2.0);  // some past the limits
    StateT<double> su = same_dofs(u, sa);
    require_close(rigid_mass_matrix(u, su), rigid_mass_matrix(a, sa), 1e-10);
    ControlT<double> ctl = test::joint_control<double>({0.3, -0.7, 1.1});
    auto au = rigid_forward_dynamics(u, su, ctl);
    auto aa = rigid_forward_dynamics(a, sa, ctl);
    REQUIRE(au.is_ok());
    REQUIRE(aa.is_ok());
    require_close(au.value(), aa.value(), 1e-8);
  }
}

TEST_CASE("urdf: a free base and placement put the root where asked", "[rigid][urdf]") {
  UrdfOptions opt;
  opt.fixed_base = false;
  opt.position = {1, 2, 3};
  RigidModelT<double> u = import("cartpole.urdf", opt);
  REQUIRE(u.joint_type[0] == RIGID_JOINT_FREE);
  REQUIRE(u.dof_count() == 8);
  std::vector<vec3<double>> p;
  std::vector<mat33<double>> R;
  rigid_forward_kinematics(u, u.make_state(), p, R);
  CHECK(std::fabs(p[0].x - 1) + std::fabs(p[0].y - 2) + std::fabs(p[0].z - 3) < 1e-12);
}

TEST_CASE("urdf: errors name the file and the joint or link", "[rigid][urdf]") {
  RigidBuilder b;
  const std::string planar = R"(<robot name="r"><link name="a"/><link name="b"/>
    <joint name="slide2d" type="planar"><parent link="a"/><child link="b"/></joint></robot>)";
  auto r = rigid_import_urdf_string(planar, "robot.urdf", b);
  REQUIRE(!r.is_ok());
  CHECK(r.status().message().find("robot.urdf") != std::string::npos);
  CHECK(r.status().message().find("joint \"slide2d\"") != std::string::npos);

  auto bad = rigid_import_urdf_string("<robot name=\"r\"><link name=\"a\"", "broken.urdf", b);
  REQUIRE(!bad.is_ok());
  CHECK(bad.status().message().find("broken.urdf") != std::string::npos);

  auto missing = rigid_import_urdf(kRobots + "/nope.urdf", b);
  REQUIRE(!missing.is_ok());
  CHECK(missing.status().message().find("nope.urdf: no such file") != std::string::npos);

  const std::string mesh = R"(<robot name="r"><link name="m"><collision><geometry>
    <mesh filename="x.obj"/></geometry></collision></link></robot>)";
  RigidBuilder b2;
  auto w = rigid_import_urdf_string(mesh, "mesh.urdf", b2);  // meshes are read now: x.obj is missing
  REQUIRE(!w.is_ok());
  CHECK(w.status().message().find("link \"m\"") != std::string::npos);
  CHECK(w.status().message().find("x.obj") != std::string::npos);
}

TEST_CASE("rigid_vis: shape transforms follow the bodies, joint axes and contacts as floats", "[rigid][vis]") {
  RigidModelT<double> m = test::finalize(rigid_arm3());
  StateT<double> s = m.make_state();
  s.joint_q = {3.14159265358979 / 2, 0, 0};  // first link swung to +x
  std::vector<float> shapes(m.shape_count() * kRigidShapeFloats), joints(m.body_count() * kRigidJointFloats);
  rigid_vis_shapes(m, s, shapes.data());
  rigid_vis_joints(m, s, joints.data());
  // link 0's capsule centre: 0.25 m along +x; its quaternion turns y onto x (90 deg about z)
  CHECK(std::fabs(shapes[0] - 0.25f) < 1e-6f);
  CHECK(std::fabs(shapes[1]) < 1e-6f);
  CHECK(std::fabs(shapes[3] - std::sqrt(0.5f)) < 1e-6f);
  CHECK(std::fabs(shapes[6] - std::sqrt(0.5f)) < 1e-6f);
  CHECK(shapes[10] == float(GEOM_CAPSULE));
  CHECK(shapes[kRigidShapeFloats + 11] == 1.0f);  // second shape on body 1
  // joint 1 anchor at the end of link 0; every axis +z
  CHECK(std::fabs(joints[kRigidJointFloats + 0] - 0.5f) < 1e-6f);
  for (int b = 0; b < m.body_count(); ++b) CHECK(std::fabs(joints[b * kRigidJointFloats + 5] - 1.0f) < 1e-6f);
  // a box pressed into the ground: the contact floats are the recorded contacts
  RigidModelT<double> box = test::finalize(rigid_free_box({0.1, 0.1, 0.1}, 100));
  StateT<double> bs = box.make_state();
  bs.joint_q[1] = 0.099;
  RigidContactsT<double> c;
  REQUIRE(rigid_contacts(box, bs, box.make_control(), c).is_ok());
  REQUIRE(c.contact_count() >= 4);
  std::vector<float> cf(c.contact_count() * kRigidContactFloats);
  REQUIRE(rigid_vis_contacts(c, cf.data(), c.contact_count()) == c.contact_count());
  CHECK(rigid_vis_contacts(c, cf.data(), 2) == 2);
  for (int i = 0; i < c.contact_count(); ++i) {
    CHECK(cf[i * kRigidContactFloats + 1] == float(c.point[i].y));
    CHECK(cf[i * kRigidContactFloats + 4] == float(c.force[i].y));
    CHECK(cf[i * kRigidContactFloats + 4] > 0.0f);
  }
}

TEST_CASE("urdf: mesh links (binary STL by package://, OBJ with a scale) become mesh shapes with their inertial",
          "[rigid][urdf][mesh]") {
  UrdfImport imp;
  UrdfOptions opt;
  opt.position = {0, 0.05, 0};
  RigidModelT<double> m = import("mesh_paddle.urdf", opt, &imp);
  REQUIRE(imp.links == std::vector<std::string>{"base", "paddle", "knob"});
  REQUIRE(imp.warnings.size() == 1);  // the only thing it holds that is not simulated
  CHECK(imp.warnings[0].find("<limit effort velocity> ignored") != std::string::npos);
  REQUIRE(m.shape_count() == 3);
  CHECK(m.shape_type[0] == GEOM_BOX);
  CHECK(m.shape_type[1] == GEOM_MESH);
  CHECK(m.shape_type[2] == GEOM_MESH);
  // the paddle: 12 triangles, 8 welded corners, hull = the box
  CHECK(m.shape_mesh_tri_start[2] - m.shape_mesh_tri_start[1] == 12);
  CHECK(m.shape_hull_vertex_start[2] - m.shape_hull_vertex_start[1] == 8);
  for (int h = m.shape_hull_vertex_start[1]; h < m.shape_hull_vertex_start[2]; ++h) {
    const vec3<double>& p = m.hull_vertex[h];
    CHECK((std::fabs(p.x) < 1e-7 || std::fabs(p.x - 0.3) < 1e-7));
    CHECK(std::fabs(std::fabs(p.y) - 0.02) < 1e-7);
    CHECK(std::fabs(std::fabs(p.z) - 0.03) < 1e-7);
  }
  // the knob: an octahedron scaled by (0.04, 0.03, 0.04)
  CHECK(m.shape_hull_vertex_start[3] - m.shape_hull_vertex_start[2] == 6);
  CHECK(std::fabs(m.shape_size[2].x - 0.04) < 1e-12);
  // the paddle's URDF inertial is the mass property of its closed STL at 1000 kg/m^3
  double mass;
  vec3<double> com;
  mat33<double> I;
  std::vector<vec3<double>> v(m.mesh_vertex.begin(), m.mesh_vertex.end());
  std::vector<Idx3> t(m.mesh_tri.begin() + m.shape_mesh_tri_start[1], m.mesh_tri.begin() + m.shape_mesh_tri_start[2]);
  REQUIRE(rigid_mesh_mass(v, t, 1000, mass, com, I, "paddle").is_ok());
  CHECK(std::fabs(m.body_mass[1] - 0.72) < 1e-12);
  CHECK(std::fabs(mass - 0.72) < 1e-6);
  CHECK(length(m.body_com[1] - com) < 1e-7);
  for (int i = 0; i < 3; ++i) CHECK(std::fabs(m.body_inertia[1].m[i][i] - I.m[i][i]) < 1e-6 * I.m[i][i] + 1e-9);
}

TEST_CASE("urdf: a mesh robot steps under gravity and poses, its mesh shapes follow the joint", "[rigid][urdf][mesh]") {
  RigidBuilder b;
  UrdfOptions opt;
  opt.position = {0, 0.05, 0};
  opt.actuator = {.type = RIGID_ACTUATOR_PD, .kp = 20, .kd = 1};
  REQUIRE(rigid_import_urdf(kRobots + "/mesh_paddle.urdf", b, opt).is_ok());
  RigidModelT<double> m = test::finalize(b);
  REQUIRE(m.dof_count() == 1);
  // posed by hand: the knob sits at the hinge + R_z(0.7) (0.3, 0, 0)
  StateT<double> s = m.make_state();
  s.joint_q[0] = 0.7;
  std::vector<float> f(size_t(m.shape_count()) * kRigidShapeFloats);
  rigid_vis_shapes(m, s, f.data());
  const float* knob = &f[2 * kRigidShapeFloats];
  CHECK(std::fabs(knob[0] - 0.3 * std::cos(0.7)) < 1e-6);
  CHECK(std::fabs(knob[1] - (0.15 + 0.3 * std::sin(0.7))) < 1e-6);
  CHECK(int(knob[10]) == GEOM_MESH);
  // stepped: the PD actuator holds the paddle at its target against gravity
  SolverT<double> solver({.substeps = 4});
  const ModelT<double> bodies = test::world(m);
  ControlT<double> u = m.make_control();
  u.joint_act[0] = 0.5;
  StateT<double> next;
  s = m.make_state();
  for (int k = 0; k < 180; ++k) {
    REQUIRE(solver.step(bodies, s, next, u, 1.0 / 60.0).is_ok());
    s = next;
  }
  // gravity torque on the paddle at 0.5 rad: m g (0.15 cos 0.5); the PD settles below target by it / kp
  const double sag = 0.72 * 9.81 * 0.15 * std::cos(0.5) / 20;
  INFO("angle " << s.joint_q[0] << ", expected about " << 0.5 - sag);
  CHECK(std::fabs(s.joint_q[0] - (0.5 - sag)) < 0.01);
}

TEST_CASE("urdf: mesh errors name the link, the geometry element and the file", "[rigid][urdf][mesh]") {
  auto urdf_with = [](const std::string& filename) {
    return "<robot name=\"r\"><link name=\"base\"/><joint name=\"j\" type=\"revolute\"><parent link=\"base\"/>"
           "<child link=\"arm\"/><axis xyz=\"0 0 1\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/>"
           "</joint><link name=\"arm\"><collision><geometry><mesh filename=\"" +
           filename + "\"/></geometry></collision></link></robot>";
  };
  const std::string src = kRobots + "/inline.urdf";
  {
    RigidBuilder b;
    auto r = rigid_import_urdf_string(urdf_with("meshes/missing.obj"), src, b);
    REQUIRE_FALSE(r.is_ok());
    INFO(r.status().message());
    CHECK(r.status().message().find("link \"arm\", collision 0") != std::string::npos);
    CHECK(r.status().message().find("missing.obj") != std::string::npos);
  }
  {
    RigidBuilder b;
    auto r = rigid_import_urdf_string(urdf_with("package://nowhere/meshes/gone.stl"), src, b);
    REQUIRE_FALSE(r.is_ok());
    INFO(r.status().message());
    CHECK(r.status().message().find("link \"arm\", collision 0") != std::string::npos);
    CHECK(r.status().message().find("not found") != std::string::npos);
    CHECK(r.status().message().find("gone.stl") != std::string::npos);
  }
  {
    RigidBuilder b;
    auto r = rigid_import_urdf_string(urdf_with("meshes/knob.3mf"), src, b);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().message().find("unknown format") != std::string::npos);
  }
  {  // a Collada file that is not there
    RigidBuilder b;
    auto r = rigid_import_urdf_string(urdf_with("meshes/knob.dae"), src, b);
    REQUIRE_FALSE(r.is_ok());
    INFO(r.status().message());
    CHECK(r.status().message().find("knob.dae") != std::string::npos);
  }
}

TEST_CASE("mesh files: a Collada count past what the file can hold is refused before assimp reserves it",
          "[rigid][mesh][dae]") {
  const std::string data = ADJ_TEST_DATA;
  // a Name_array of count 50 million in a 2 kB file (assimp would reserve 1.6 GB)
  const std::string path = data + "/fuzz/mesh_dae/name_array_count_reserves.dae";
  auto m = load_mesh<double>(path);
  REQUIRE_FALSE(m.is_ok());
  INFO(m.status().message());
  CHECK(m.status().message().find(path) != std::string::npos);
  CHECK(m.status().message().find("<Name_array> has count=\"50000000\", more items than a file of") !=
        std::string::npos);
  // an accessor reading past its array: 9 items of stride 3 from 24 values
  std::ifstream in(data + "/meshes/box_cm.dae");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t at = text.find("count=\"8\" stride=\"3\"");
  REQUIRE(at != std::string::npos);
  text.replace(at, 9, "count=\"9\"");
  const std::string past = (std::filesystem::temp_directory_path() / "adj_accessor_past.dae").string();
  std::ofstream(past) << text;
  auto p = load_mesh<double>(past);
  REQUIRE_FALSE(p.is_ok());
  INFO(p.status().message());
  CHECK(p.status().message().find("<accessor> reads 9 items of stride 3 from offset 0, past the 24 values") !=
        std::string::npos);
  std::filesystem::remove(past);
}

TEST_CASE("mesh files: Collada through assimp, in metres by its <unit>, placed by its nodes, up axis as written",
          "[rigid][mesh][dae]") {
  const std::string data = ADJ_TEST_DATA;
  auto m = load_mesh<double>(data + "/meshes/box_cm.dae");
  INFO(m.status().message());
  REQUIRE(m.is_ok());
  CHECK(m->tris.size() == 12);
  CHECK(m->vertices.size() == 8);  // identical vertices joined
  vec3<double> lo(1e9, 1e9, 1e9), hi(-1e9, -1e9, -1e9);
  for (const vec3<double>& p : m->vertices)
    for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], p[k]), hi[k] = std::max(hi[k], p[k]);
  // 4 x 2 x 2 cm, its node 10 cm along x; Z_UP is not turned into y-up (ROS reads it so)
  CHECK(lo.x == Approx(0.08).margin(1e-9));
  CHECK(hi.x == Approx(0.12).margin(1e-9));
  CHECK(lo.z == Approx(-0.01).margin(1e-9));
  CHECK(hi.z == Approx(0.01).margin(1e-9));
  CHECK(hi.y == Approx(0.01).margin(1e-9));
  // a URDF link with that mesh as its collision shape: a closed mesh, so its hull is the box
  const std::string urdf = R"(<robot name="r"><link name="base"/><joint name="j" type="revolute"><parent link="base"/>
    <child link="arm"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
    <link name="arm"><inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/>
    </inertial><collision><geometry><mesh filename="box_cm.dae"/></geometry></collision></link></robot>)";
  RigidBuilder b;
  auto r = rigid_import_urdf_string(urdf, data + "/meshes/inline.urdf", b);
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  RigidModelT<double> model = test::finalize(b);
  REQUIRE(model.shape_count() == 1);
  CHECK(int(model.shape_type[0]) == GEOM_MESH);
}

TEST_CASE("mesh files: ASCII and binary STL read the same triangles, bad STL is an error naming the file",
          "[rigid][mesh][stl]") {
  auto bin = load_stl<double>(kRobots + "/meshes/paddle.stl");
  REQUIRE(bin.is_ok());
  REQUIRE(bin->tris.size() == 12);
  REQUIRE(bin->vertices.size() == 36);
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string ascii = dir + "/adj_mesh_ascii_test.stl";
  {
    std::ofstream out(ascii);
    out << "solid paddle\n";
    out.precision(17);
    for (size_t t = 0; t < bin->tris.size(); ++t) {
      out << " facet normal 0 0 0\n  outer loop\n";
      for (int k = 0; k < 3; ++k) {
        const vec3<double>& p = bin->vertices[3 * t + size_t(k)];
        out << "   vertex " << p.x << " " << p.y << " " << p.z << "\n";
      }
      out << "  endloop\n endfacet\n";
    }
    out << "endsolid paddle\n";
  }
  auto asc = load_mesh<double>(ascii);
  REQUIRE(asc.is_ok());
  REQUIRE(asc->vertices.size() == bin->vertices.size());
  for (size_t i = 0; i < asc->vertices.size(); ++i) CHECK(length(asc->vertices[i] - bin->vertices[i]) < 1e-12);
  const std::string bad = dir + "/adj_mesh_bad_test.stl";
  {
    std::ofstream out(bad);
    out << "solid x\n facet normal 0 0 1\n outer loop\n vertex 0 0 0\n vertex 1 0\n";
  }
  auto r = load_mesh<double>(bad);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message().find("adj_mesh_bad_test.stl") != std::string::npos);
  std::filesystem::remove(ascii);
  std::filesystem::remove(bad);
}

TEST_CASE("urdf: pybullet's capsule and spherical joint are read, xacro and broken XML are refused with their line",
          "[rigid][urdf]") {
  const char* urdf = R"(<robot name="r">
    <link name="base"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
    <link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
      <visual><geometry><capsule radius="0.05" length="0.4"/></geometry></visual>
      <collision><geometry><capsule radius="0.05" length="0.4"/></geometry></collision></link>
    <joint name="shoulder" type="spherical"><parent link="base"/><child link="arm"/></joint>
  </robot>)";
  RigidBuilder b;
  UrdfOptions opt;
  opt.cylinder_segments = 16;  // cylinders as prisms: a capsule stays a capsule all the same
  auto r = rigid_import_urdf_string(urdf, "ext.urdf", b, opt);
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  RigidModelT<double> m = test::finalize(b);
  REQUIRE(m.body_count() == 2);
  CHECK(m.joint_type[1] == RIGID_JOINT_BALL);
  CHECK(m.dof_count() == 3);
  REQUIRE(m.shape_count() == 1);
  CHECK(m.shape_type[0] == GEOM_CAPSULE);
  CHECK(m.shape_size[0].x == Approx(0.05));
  CHECK(m.shape_size[0].y == Approx(0.2));  // half the length between the cap centres
  // its axis is the link's z (URDF's cylinder axis): the capsule's y turned onto z
  const vec3<double> axis = m.shape_rot[0] * vec3<double>(0, 1, 0);
  CHECK(std::abs(axis.z) == Approx(1).margin(1e-9));

  const char* xacro = R"(<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">
    <xacro:property name="len" value="0.4"/>
    <link name="base"/>
  </robot>)";
  auto x = rigid_import_urdf_string(xacro, "arm.urdf.xacro", b);
  REQUIRE_FALSE(x.is_ok());
  INFO(x.status().message());
  CHECK(x.status().message().find("arm.urdf.xacro:2: <xacro:property> is a xacro macro") != std::string::npos);
  CHECK(x.status().message().find("xacro arm.urdf.xacro > robot.urdf") != std::string::npos);

  auto bad = rigid_import_urdf_string("<robot name=\"r\">\n<link name=\"a\">\n</robot>", "broken.urdf", b);
  REQUIRE_FALSE(bad.is_ok());
  INFO(bad.status().message());
  CHECK(bad.status().message().find("broken.urdf:") != std::string::npos);
  CHECK(bad.status().message().find("not well-formed XML") != std::string::npos);
}

TEST_CASE("urdf: elements a simulator would use but Adjoint does not are named, by file and line, once each",
          "[rigid][urdf][fidelity]") {
  const char* urdf = R"(<robot name="r">
    <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
      <contact><lateral_friction value="0.9"/></contact></link>
    <link name="b"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
    <joint name="j" type="continuous"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>
    <transmission name="t"><type>transmission_interface/SimpleTransmission</type></transmission>
    <gazebo reference="b"><mu1>0.2</mu1></gazebo>
    <gazebo reference="a"><mu1>0.3</mu1></gazebo>
  </robot>)";
  RigidBuilder b;
  auto r = rigid_import_urdf_string(urdf, "extras.urdf", b);
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  const auto& w = r->warnings;
  REQUIRE(w.size() == 3);
  CHECK(w[0].find("extras.urdf:6: <transmission> ignored") != std::string::npos);
  CHECK(w[1].find("extras.urdf:7: <gazebo> ignored") != std::string::npos);
  CHECK(w[1].find("(2 elements)") != std::string::npos);
  CHECK(w[2].find("extras.urdf:3: <contact> of a link ignored") != std::string::npos);
}
