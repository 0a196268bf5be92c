// a scene's up axis ("up": "y" or "z"): read and written, gravity and the ground along -up, and
// the shared robot files (../shared/robots, in place; z-up like ROS and MuJoCo) standing in a
// z-up scene without a rotation, holding their pose under PD at 8 substeps of 1/240 s
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>

#include "engine/articulation/rigid_queries.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/solver.h"

using namespace adj;
using namespace adj::scene;

namespace {

const std::string kRobots = ADJ_SHARED_ROBOTS;

// a z-up scene at 1/240 s per frame, 8 substeps, with a ground and one robot object (JSON);
// the robots stand on the stiff body contact (not engine/collision/contact_law.h's defaults)
std::string z_up_scene(const std::string& robot) {
  return R"({"format": "adjoint-scene", "version": 1, "name": "z up",
  "settings": {"up": "z", "dt": 0.004166666666666667, "substeps": 8,
               "robot_contact": {"ke": 1e4, "kd": 100, "kf": 100, "mu": 0.8, "eps": 0.01}},
  "objects": [{"name": "ground", "type": "ground"}, )" +
         robot + "]}";
}

CompiledSceneT<double> compiled(const std::string& text, const std::string& dir) {
  auto doc = parse_scene(text, dir + "/scene.json");
  INFO(doc.status().message());
  REQUIRE(doc.is_ok());
  auto cs = compile<double>(*doc, dir);
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  return std::move(cs.value());
}

// PD targets at the initial coordinates (the robot holds its pose); other inputs zero
ControlT<double> hold(const RigidModelT<double>& m, const StateT<double>& s) {
  ControlT<double> u = m.make_control();
  for (int a = 0; a < m.actuator_count(); ++a)
    if (m.actuator_type[a] == RIGID_ACTUATOR_PD)
      u.joint_act[a] = s.joint_q[m.joint_q_start[m.dof_joint[m.actuator_dof[a]]]];
  return u;
}

// steps `frames` frames under the hold; the largest joint rate seen [rad/s or m/s]
double run(const CompiledSceneT<double>& cs, StateT<double>& s, int frames) {
  const RigidModelT<double>& m = cs.model.rigid;
  SolverT<double> solver({.substeps = 8});
  const ControlT<double> u = hold(m, s);
  StateT<double> next;
  double fastest = 0;
  for (int t = 0; t < frames; ++t) {
    Status st = solver.step(cs.model, s, next, u, 1.0 / 240);
    INFO("frame " << t + 1 << ": " << st.message());
    REQUIRE(st.is_ok());
    std::swap(s, next);
    for (double v : s.joint_qd) fastest = std::max(fastest, std::abs(v));
  }
  return fastest;
}

}  // namespace

TEST_CASE("up axis: \"up\" round-trips, defaults to y, and sets gravity's default along -up", "[scene][up]") {
  auto y = parse_scene(R"({"format": "adjoint-scene", "version": 1, "name": "y", "objects": []})", "y.json");
  REQUIRE(y.is_ok());
  CHECK(y->settings.up == "y");
  CHECK(y->settings.gravity == V3{0, -9.81, 0});
  CHECK(to_json(*y).find("\"up\"") == std::string::npos);  // existing scenes are written as before

  auto z = parse_scene(z_up_scene(R"({"name": "ball", "type": "particles", "particles": [{"position": [0, 0, 1]}]})"),
                       "z.json");
  INFO(z.status().message());
  REQUIRE(z.is_ok());
  CHECK(z->settings.up == "z");
  CHECK(z->settings.gravity == V3{0, 0, -9.81});
  const std::string text = to_json(*z);
  CHECK(text.find("\"up\": \"z\"") != std::string::npos);
  auto again = parse_scene(text, "again.json");
  REQUIRE(again.is_ok());
  CHECK(*again == *z);

  // a gravity given in the file wins over the default
  auto g = parse_scene(
      R"({"format": "adjoint-scene", "version": 1, "name": "g", "settings": {"up": "z", "gravity": [0, 0, -1.62]},
      "objects": []})",
      "g.json");
  REQUIRE(g.is_ok());
  CHECK(g->settings.gravity == V3{0, 0, -1.62});
  auto bad = parse_scene(R"({"format": "adjoint-scene", "version": 1, "name": "b", "settings": {"up": "x"},
      "objects": []})",
                         "b.json");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("settings.up") != std::string::npos);
}

TEST_CASE("up axis: in a z-up scene a particle and a free box fall along -z onto the ground", "[scene][up]") {
  const std::string text = z_up_scene(
      R"({"name": "ball", "type": "particles", "particles": [{"position": [0.3, 0.2, 0.5], "radius": 0.05}]},
      {"name": "box", "type": "robot", "bodies": [{"name": "box", "joint": "free",
        "shapes": [{"type": "box", "size": [0.1, 0.1, 0.1], "density": 500}]}],
       "position": [1, 0, 0.5]})");
  CompiledSceneT<double> cs = compiled(text, ".");
  CHECK(cs.model.rigid.gravity.z == -9.81);
  CHECK(cs.model.rigid.gravity.y == 0);
  CHECK_FALSE(cs.model.rigid.ground);  // the y-up ground: here a plane across z instead
  REQUIRE(cs.model.rigid.collider_count() == 1);
  CHECK(cs.model.rigid.collider_size[0].z == 1);
  SolverT<double> solver({.substeps = 8});
  StateT<double> s = cs.model.make_state(), next;
  const ControlT<double> u = cs.model.make_control();
  double lowest = 1;
  for (int t = 0; t < 240; ++t) {  // 1 s at 1/240 s
    Status st = solver.step(cs.model, s, next, u, 1.0 / 240);
    INFO(st.message());
    REQUIRE(st.is_ok());
    std::swap(s, next);
    lowest = std::min(lowest, s.particle_q[0].z);
  }
  // the particle fell 0.5 m onto the ground at z = 0 and not through it (the particle contact is
  // soft: it bounces below its start), where it was in x and y
  INFO("lowest " << lowest << ", final height " << s.particle_q[0].z);
  CHECK(lowest < 0.05);
  CHECK(lowest > -0.06);
  CHECK(s.particle_q[0].z < 0.4);
  CHECK(s.particle_q[0].x == Approx(0.3).margin(1e-6));
  CHECK(s.particle_q[0].y == Approx(0.2).margin(1e-6));
  // the box's origin rests half its height above the ground
  std::vector<vec3<double>> pos;
  std::vector<mat33<double>> rot;
  rigid_forward_kinematics(cs.model.rigid, s, pos, rot);
  CHECK(pos[0].z == Approx(0.1).margin(0.005));
  CHECK(pos[0].x == Approx(1).margin(1e-3));
}

TEST_CASE("up axis: the shared URDF arms stand in a z-up scene as they are and hold their pose 3 s",
          "[scene][up][robot]") {
  INFO("the shared robot files are read in place: " << kRobots);
  REQUIRE(std::filesystem::exists(kRobots + "/urdf"));
  for (const char* file : {"cartpole.urdf", "kuka_iiwa/model.urdf", "franka_panda/panda.urdf"}) {
    INFO(file);
    const std::string text =
        z_up_scene(std::string(R"({"name": "arm", "type": "urdf", "file": ")") + file +
                   R"(", "position": [0, 0, 0.5], "actuator": {"type": "pd", "kp": 2000, "kd": 20}})");
    CompiledSceneT<double> cs = compiled(text, kRobots + "/urdf");
    StateT<double> s = cs.model.make_state();
    const RigidModelT<double>& m = cs.model.rigid;
    for (int j = 0; j < m.body_count(); ++j)
      if (m.joint_type[j] == RIGID_JOINT_REVOLUTE) s.joint_q[m.joint_q_start[j]] = 0.2 * std::sin(j + 1.0);
    const StateT<double> start = s;
    const double fastest = run(cs, s, 720);
    INFO("fastest joint rate " << fastest);
    CHECK(fastest < 1.0);
    for (int i = 0; i < m.q_count(); ++i) CHECK(std::abs(s.joint_q[i] - start.joint_q[i]) < 0.05);
  }
}

TEST_CASE("up axis: the A1 stands on a z-up ground under its PD hold (torso above 0.2 m after 3 s)",
          "[scene][up][robot]") {
  REQUIRE(std::filesystem::exists(kRobots + "/urdf/a1/a1.urdf"));
  std::string initial;
  for (const char* leg : {"FR", "FL", "RR", "RL"})
    initial += std::string(initial.empty() ? "" : ", ") + R"({"body": ")" + leg +
               R"(_upper", "q": [0.8]}, {"body": ")" + leg + R"(_lower", "q": [-1.5]})";
  const std::string text = z_up_scene(R"({"name": "a1", "type": "urdf", "file": "a1.urdf", "position": [0, 0, 0.33],
      "fixed_base": false, "actuator": {"type": "pd", "kp": 80, "kd": 2}, "initial": [)" +
                                      initial + "]}");
  CompiledSceneT<double> cs = compiled(text, kRobots + "/urdf/a1");
  StateT<double> s = cs.model.make_state();
  run(cs, s, 720);
  std::vector<vec3<double>> pos;
  std::vector<mat33<double>> rot;
  rigid_forward_kinematics(cs.model.rigid, s, pos, rot);
  INFO("torso at " << pos[0].x << ", " << pos[0].y << ", " << pos[0].z);
  CHECK(pos[0].z > 0.2);
  CHECK(rot[0].m[2][2] > 0.9);  // upright: its z axis still points up
  for (double v : s.joint_qd) CHECK(std::abs(v) < 0.5);
}

TEST_CASE("up axis: the shared MJCF models stand in a z-up scene without a rotation and run 3 s",
          "[scene][up][robot][mjcf]") {
  const std::string dir = kRobots + "/mjcf";
  REQUIRE(std::filesystem::exists(dir));
  for (const char* name : {"ant.xml", "half_cheetah.xml", "hopper.xml", "inverted_pendulum.xml", "reacher.xml"}) {
    INFO(name);
    CompiledSceneT<double> cs =
        compiled(z_up_scene(std::string(R"({"name": "robot", "type": "mjcf", "file": ")") + name + R"("})"), dir);
    StateT<double> s = cs.model.make_state();
    const double fastest = run(cs, s, 720);
    INFO("fastest joint rate " << fastest);
    CHECK(fastest < 100);
    for (double q : s.joint_q) CHECK(std::isfinite(q));
  }
}

TEST_CASE("robot files: the xArm6 loads with balance_inertia (warned, naming link2) and hangs still under its PD hold",
          "[scene][up][robot]") {
  const std::string dir = kRobots + "/urdf/xarm";
  REQUIRE(std::filesystem::exists(dir + "/xarm6_robot.urdf"));
  const std::string robot = R"({"name": "xarm", "type": "urdf", "file": "xarm6_robot.urdf", "position": [0, 0, 0.1],
      "actuator": {"type": "pd", "kp": 200, "kd": 5})";
  {  // refused as it is, and the message says what repairs it
    auto doc = parse_scene(z_up_scene(robot + "}"), dir + "/scene.json");
    REQUIRE(doc.is_ok());
    auto cs = compile<double>(*doc, dir);
    REQUIRE_FALSE(cs.is_ok());
    INFO(cs.status().message());
    CHECK(cs.status().message().find("link \"link2\"") != std::string::npos);
    CHECK(cs.status().message().find("balance_inertia") != std::string::npos);
  }
  CompiledSceneT<double> cs = compiled(z_up_scene(robot + R"(, "balance_inertia": true})"), dir);
  bool warned = false;
  for (const std::string& w : cs.warnings)
    warned |= w.find("link2") != std::string::npos && w.find("balance") != std::string::npos;
  CHECK(warned);
  const RigidModelT<double>& m = cs.model.rigid;
  StateT<double> s = cs.model.make_state();
  for (int j = 0; j < m.body_count(); ++j)
    if (m.joint_type[j] == RIGID_JOINT_REVOLUTE) s.joint_q[m.joint_q_start[j]] = 0.3 * std::sin(j + 1.0);
  const StateT<double> start = s;
  const double fastest = run(cs, s, 480);  // 2 s at 8 substeps of 1/240 s
  INFO("fastest joint rate " << fastest);
  CHECK(fastest < 1.0);
  for (int i = 0; i < m.q_count(); ++i) CHECK(std::abs(s.joint_q[i] - start.joint_q[i]) < 0.05);
}

TEST_CASE("robot files: a scene overrides an imported robot's joints by name (damping, armature, stiffness, limits)",
          "[scene][robot]") {
  const std::string dir = kRobots + "/urdf/franka_panda";
  REQUIRE(std::filesystem::exists(dir + "/panda.urdf"));
  const std::string robot = R"({"name": "panda", "type": "urdf", "file": "panda.urdf", "limit_ke": 300, "limit_kd": 3,
      "joints": [{"name": "panda_joint2", "damping": 4, "armature": 0.25, "stiffness": 7},
                 {"name": "panda_joint4", "limit_ke": 5000}]})";
  auto doc = parse_scene(z_up_scene(robot), dir + "/scene.json");
  INFO(doc.status().message());
  REQUIRE(doc.is_ok());
  {  // the overrides survive a save and a load
    auto again = parse_scene(to_json(*doc), dir + "/scene.json");
    REQUIRE(again.is_ok());
    CHECK(again->objects == doc->objects);
  }
  CompiledSceneT<double> cs = compiled(z_up_scene(robot), dir);
  const RigidModelT<double>& m = cs.model.rigid;
  auto body = [&](const std::string& name) {
    for (int j = 0; j < m.body_count(); ++j)
      if (m.body_name[j] == name) return j;
    FAIL("no body " << name);
    return -1;
  };
  const int j2 = body("panda_link2"), j4 = body("panda_link4"), j1 = body("panda_link1");
  CHECK(m.dof_damping[m.joint_dof_start[j2]] == 4);
  CHECK(m.dof_armature[m.joint_dof_start[j2]] == 0.25);
  CHECK(m.joint_stiffness[j2] == 7);
  CHECK(m.joint_limit_ke[j4] == 5000);
  CHECK(m.joint_limit_kd[j4] == 3);  // the object's limit_kd
  CHECK(m.joint_limit_ke[j1] == 300);
  CHECK(m.dof_armature[m.joint_dof_start[j1]] == 0);  // untouched
  for (const char* bad :
       {R"("joints": [{"name": "elbow", "damping": 1}])", R"("joints": [{"name": "panda_joint8", "damping": 1}])"}) {
    INFO(bad);
    auto d =
        parse_scene(z_up_scene(R"({"name": "panda", "type": "urdf", "file": "panda.urdf", )" + std::string(bad) + "}"),
                    dir + "/scene.json");
    REQUIRE(d.is_ok());
    auto c = compile<double>(*d, dir);
    REQUIRE_FALSE(c.is_ok());
    INFO(c.status().message());
    CHECK(c.status().message().find("objects[1] (\"panda\").joints[0]") != std::string::npos);
  }
  auto neg = parse_scene(z_up_scene(R"({"name": "p", "type": "urdf", "file": "panda.urdf",
      "joints": [{"name": "panda_joint2", "damping": -1}]})"),
                         dir + "/scene.json");
  REQUIRE_FALSE(neg.is_ok());
  CHECK(neg.status().message().find("objects[1].joints[0].damping") != std::string::npos);
}

TEST_CASE("empty scenes: a ground and nothing else compiles, steps and takes a robot later", "[scene][up]") {
  const std::string text = R"({"format": "adjoint-scene", "version": 1, "name": "nothing yet",
    "settings": {"up": "z"}, "objects": [{"name": "ground", "type": "ground"}]})";
  auto doc = parse_scene(text, "empty.json");
  INFO(doc.status().message());
  REQUIRE(doc.is_ok());
  auto cs = compile<double>(*doc, "");
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  CHECK(cs->model.particle_count() == 0);
  CHECK(cs->model.body_count() == 0);
  SolverT<double> solver({.substeps = 4});
  StateT<double> s = cs->model.make_state(), next;
  const ControlT<double> u = cs->model.make_control();
  for (int t = 0; t < 3; ++t) {
    Status st = solver.step(cs->model, s, next, u, 1.0 / 60);
    INFO(st.message());
    REQUIRE(st.is_ok());
    std::swap(s, next);
  }
  CHECK(s.particle_count() == 0);
}

TEST_CASE("robot files: a URDF object's cylinders touch as prisms with cylinder_segments (the A1's hip rotors)",
          "[scene][robot]") {
  const std::string dir = kRobots + "/urdf/a1";
  REQUIRE(std::filesystem::exists(dir + "/a1.urdf"));
  auto count = [&](const std::string& extra, int type) {
    CompiledSceneT<double> cs = compiled(
        z_up_scene(R"({"name": "a1", "type": "urdf", "file": "a1.urdf", "fixed_base": false)" + extra + "}"), dir);
    int n = 0;
    for (int s = 0; s < cs.model.rigid.shape_count(); ++s) n += cs.model.rigid.shape_type[s] == type;
    return n;
  };
  const int capsules = count("", GEOM_CAPSULE), meshes = count("", GEOM_MESH);
  CHECK(count(R"(, "cylinder_segments": 24)", GEOM_CAPSULE) == capsules - 8);  // the 8 cylinders
  CHECK(count(R"(, "cylinder_segments": 24)", GEOM_MESH) == meshes + 8);       // as 24-sided prisms
  auto bad = parse_scene(z_up_scene(R"({"name": "a1", "type": "urdf", "file": "a1.urdf", "cylinder_segments": 2})"),
                         dir + "/scene.json");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("objects[1].cylinder_segments") != std::string::npos);
}
