// URDF import (engine/rigid/urdf.h) against the same robots built in C++, and the drawing
// arrays of engine/rigid/rigid_vis.h
#include <cmath>
#include <random>

#include "engine/rigid/rigid_vis.h"
#include "engine/rigid/urdf.h"
#include "rigid_test_util.h"

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
RigidStateT<double> same_dofs(const RigidModelT<double>& m, const RigidStateT<double>& ref) {
  RigidStateT<double> s = m.make_state();
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
  CHECK(u.shape_type[1] == RIGID_SHAPE_CAPSULE);
  CHECK(std::fabs(u.shape_size[1].x - 0.02) < 1e-12);
  CHECK(std::fabs(u.shape_size[1].y - 0.5) < 1e-12);
  std::mt19937 rng(7);
  for (int k = 0; k < 5; ++k) {
    RigidStateT<double> sc = test::random_state(c, rng, 2.0, 1.0);
    RigidStateT<double> su = same_dofs(u, sc);
    require_close(rigid_mass_matrix(u, su), rigid_mass_matrix(c, sc), 1e-12);
    // no actuators on the URDF model: compare the passive dynamics
    RigidControlT<double> zc{std::vector<double>(c.actuator_count(), 0.0)};
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
    RigidStateT<double> sa = test::random_state(a, rng, 2.8, 2.0);  // some past the limits
    RigidStateT<double> su = same_dofs(u, sa);
    require_close(rigid_mass_matrix(u, su), rigid_mass_matrix(a, sa), 1e-10);
    RigidControlT<double> ctl{{0.3, -0.7, 1.1}};
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
  auto w = rigid_import_urdf_string(mesh, "mesh.urdf", b2);
  REQUIRE(w.is_ok());
  REQUIRE(w->warnings.size() == 1);
  CHECK(w->warnings[0].find("link \"m\"") != std::string::npos);
}

TEST_CASE("rigid_vis: shape transforms follow the bodies; joint axes and contacts as floats", "[rigid][vis]") {
  RigidModelT<double> m = test::finalize(rigid_arm3());
  RigidStateT<double> s = m.make_state();
  s.joint_q = {3.14159265358979 / 2, 0, 0};  // first link swung to +x
  std::vector<float> shapes(m.shape_count() * kRigidShapeFloats), joints(m.body_count() * kRigidJointFloats);
  rigid_vis_shapes(m, s, shapes.data());
  rigid_vis_joints(m, s, joints.data());
  // link 0's capsule centre: 0.25 m along +x; its quaternion turns y onto x (90 deg about z)
  CHECK(std::fabs(shapes[0] - 0.25f) < 1e-6f);
  CHECK(std::fabs(shapes[1]) < 1e-6f);
  CHECK(std::fabs(shapes[3] - std::sqrt(0.5f)) < 1e-6f);
  CHECK(std::fabs(shapes[6] - std::sqrt(0.5f)) < 1e-6f);
  CHECK(shapes[10] == float(RIGID_SHAPE_CAPSULE));
  CHECK(shapes[kRigidShapeFloats + 11] == 1.0f);  // second shape on body 1
  // joint 1 anchor at the end of link 0; every axis +z
  CHECK(std::fabs(joints[kRigidJointFloats + 0] - 0.5f) < 1e-6f);
  for (int b = 0; b < m.body_count(); ++b) CHECK(std::fabs(joints[b * kRigidJointFloats + 5] - 1.0f) < 1e-6f);
  // a box pressed into the ground: the contact floats are the recorded contacts
  RigidModelT<double> box = test::finalize(rigid_free_box({0.1, 0.1, 0.1}, 100));
  RigidStateT<double> bs = box.make_state();
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
