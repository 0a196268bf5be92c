// robot objects in scene files ("robot" listed body by body, "urdf" imported): round trips,
// JSON-path errors and their compilation to CompiledScene::rigid
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "engine/articulation/rigid_queries.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"

using namespace adj::scene;

namespace {

const char* kRobotScene = R"({
  "format": "adjoint-scene", "version": 1, "name": "robots",
  "settings": {"dt": 0.01, "substeps": 2, "robot_contact": {"ke": 5000, "kd": 50, "kf": 20, "mu": 0.6, "eps": 0.02}},
  "objects": [
    {"name": "ground", "type": "ground"},
    {"name": "ball", "type": "particles", "particles": [{"position": [0, 1, 0], "mass": 1}]},
    {"name": "arm", "type": "robot", "position": [0, 1, 0], "rotation": [0, 0, 90],
     "bodies": [
       {"name": "upper", "joint": "revolute", "axis": [0, 0, 1], "lower": -2, "upper": 2, "limit_ke": 100,
        "damping": 0.1, "armature": 0.01, "shapes": [{"type": "capsule", "position": [0, -0.2, 0], "size": [0.05, 0.15, 0], "density": 1000}]},
       {"name": "lower", "parent": "upper", "joint": "prismatic", "position": [0, -0.4, 0], "axis": [0, 1, 0],
        "mass": 0.5, "com": [0, -0.1, 0], "inertia": [0.01, 0.002, 0.01],
        "shapes": [{"type": "box", "size": [0.05, 0.1, 0.05]}, {"type": "sphere", "position": [0, -0.2, 0], "size": [0.05, 0, 0]}]}],
     "actuators": [{"body": "upper", "type": "pd", "kp": 30, "kd": 2}, {"body": "lower", "type": "torque", "gear": 5}],
     "initial": [{"body": "upper", "q": [0.3], "qd": [0.1]}]},
    {"name": "pole", "type": "urdf", "file": "cartpole.urdf", "position": [2, 0.5, 0], "default_actuators": false,
     "actuators": [{"body": "cart", "gear": 20}]},
    {"name": "goal", "type": "target", "position": [1, 1, 0]}
  ],
  "tasks": [{"name": "reach", "horizon": 10,
    "parameters": [{"kind": "actuator_control", "object": "arm", "lower": -1, "upper": 1}, {"kind": "body_mass", "object": "arm"},
                   {"kind": "contact_ke"}],
    "loss": [{"kind": "position", "object": "arm", "body": "lower", "target": "goal"},
             {"kind": "joint", "object": "pole", "body": "pole", "value": 0.5, "step": 5},
             {"kind": "effort", "object": "arm", "weight": 0.01}]}]
})";

std::string robots_dir() { return std::string(ADJ_ASSET_ROBOTS); }

}  // namespace

TEST_CASE("robot scenes: load -> save -> load is exact, robot_contact and loss fields included", "[scene][robot]") {
  auto a = parse_scene(kRobotScene, "robots.json");
  INFO(a.status().message());
  REQUIRE(a.is_ok());
  REQUIRE(a->objects[2].kind == ObjectKind::robot);
  CHECK(a->objects[2].robot.bodies.size() == 2);
  CHECK(a->objects[3].robot.urdf == "cartpole.urdf");
  CHECK(a->settings.robot_contact.ke == 5000);
  std::string text = to_json(*a);
  auto b = parse_scene(text, "again.json");
  INFO(b.status().message());
  REQUIRE(b.is_ok());
  CHECK(*a == *b);
  CHECK(to_json(*b) == text);
}

TEST_CASE("robot scenes: errors name the JSON path", "[scene][robot]") {
  auto expect = [](std::string from, const std::string& to, const std::string& message) {
    auto at = from.find(to.substr(0, to.find('|')));
    REQUIRE(at != std::string::npos);
    from.replace(at, to.find('|'), to.substr(to.find('|') + 1));
    auto r = parse_scene(from, "robots.json");
    REQUIRE(!r.is_ok());
    INFO(r.status().message());
    CHECK(r.status().message().find(message) != std::string::npos);
  };
  expect(kRobotScene, R"("joint": "prismatic"|"joint": "slider")",
         "robots.json: objects[2].bodies[1].joint: unknown value \"slider\"");
  expect(kRobotScene, R"("parent": "upper"|"parent": "uper")", "objects[2].bodies[1].parent: \"uper\" is not a body");
  expect(kRobotScene, R"("size": [0.05, 0.1, 0.05]|"size": [0.05, 0, 0.05])",
         "objects[2].bodies[1].shapes[0].size: sizes must be positive");
  expect(kRobotScene, R"("kind": "joint", "object": "pole", "body": "pole"|"kind": "joint", "object": "pole")",
         "tasks[0].loss[1].body: missing");
  expect(kRobotScene, R"({"kind": "body_mass", "object": "arm"}|{"kind": "body_mass", "object": "ball"})",
         "tasks[0].parameters[1].object: body_mass does not apply to \"ball\"");
  expect(kRobotScene, R"("damping": 0.1, "armature"|"dampin": 0.1, "armature")",
         "objects[2].bodies[0].dampin: unknown key");
}

TEST_CASE("robot scenes: compile to one rigid model with per-robot ranges and initial state", "[scene][robot]") {
  auto s = parse_scene(kRobotScene, "robots.json");
  REQUIRE(s.is_ok());
  auto c = compile<double>(*s, robots_dir());
  INFO(c.status().message());
  REQUIRE(c.is_ok());
  const adj::RigidModelT<double>& m = c->model.rigid;
  REQUIRE(c->has_robots());
  CHECK(c->has_particles());
  REQUIRE(m.body_count() == 5);  // upper, lower, rail, cart, pole
  CHECK(m.ground);
  CHECK(m.contact_ke == 5000);
  CHECK(m.actuator_count() == 3);
  const ObjectRange* arm = c->find("arm");
  const ObjectRange* pole = c->find("pole");
  CHECK(arm->body_begin == 0);
  CHECK(arm->body_end == 2);
  CHECK(pole->body_begin == 2);
  CHECK(pole->q_begin == 2);
  CHECK(pole->q_end == 4);
  CHECK(arm->actuator_end == 2);
  CHECK(pole->actuator_begin == 2);
  CHECK(c->model.joint_q[0] == 0.3);
  CHECK(c->model.joint_qd[0] == 0.1);
  // the given mass replaces the shapes'; the capsule's density gives the other
  CHECK(m.body_mass[1] == 0.5);
  CHECK(m.body_mass[0] > 0.5);
  // placement: rotated 90 deg about z, the upper link's capsule hangs along +x from (0, 1, 0)
  std::vector<adj::vec3<double>> p;
  std::vector<adj::mat33<double>> R;
  adj::StateT<double> rest = m.make_state();
  adj::rigid_forward_kinematics(m, rest, p, R);
  CHECK(std::fabs(p[1].x - 0.4) < 1e-12);
  CHECK(std::fabs(p[1].y - 1.0) < 1e-12);
  CHECK(std::fabs(p[2].x - 2.0) < 1e-12);
}

TEST_CASE("robot scenes: compile errors name the object", "[scene][robot]") {
  auto s = parse_scene(kRobotScene, "robots.json");
  REQUIRE(s.is_ok());
  Scene bad = *s;
  bad.objects[3].robot.urdf = "missing.urdf";
  auto c = compile<float>(bad, robots_dir());
  REQUIRE(!c.is_ok());
  CHECK(c.status().message().find("objects[3] (\"pole\"): ") != std::string::npos);
  CHECK(c.status().message().find("missing.urdf: no such file") != std::string::npos);
  bad = *s;
  bad.objects[2].robot.initial[0].q = {0.1, 0.2};
  c = compile<float>(bad, robots_dir());
  REQUIRE(!c.is_ok());
  CHECK(c.status().message().find("objects[2] (\"arm\").initial[0].q: the joint of \"upper\" has 1 coordinates") !=
        std::string::npos);
  bad = *s;
  bad.objects[3].robot.actuators[0].body = "wheel";
  c = compile<float>(bad, robots_dir());
  REQUIRE(!c.is_ok());
  CHECK(c.status().message().find("objects[3] (\"pole\").actuators[0].body: no body named \"wheel\"") !=
        std::string::npos);
}

TEST_CASE("robot scenes: a scene of robots only compiles without a particle model", "[scene][robot]") {
  auto s = load_scene(std::string(ADJ_ASSET_SCENES) + "/robot_cartpole.json");
  REQUIRE(s.is_ok());
  auto c = compile<float>(*s, ADJ_ASSET_SCENES);
  INFO(c.status().message());
  REQUIRE(c.is_ok());
  CHECK(!c->has_particles());
  CHECK(c->model.rigid.dof_count() == 2);
  CHECK(std::fabs(c->model.joint_q[1] - 3.0f) < 1e-6f);
}

TEST_CASE(
    "robot scenes: a zero quaternion in a ball joint's initial q is refused naming the field, others are made unit",
    "[scene][robot]") {
  auto ball = [](const char* q) {
    return std::string(R"({"format": "adjoint-scene", "version": 1, "name": "q",
      "objects": [{"name": "ball", "type": "robot",
        "bodies": [{"name": "b", "joint": "ball", "mass": 1, "inertia": [0.1, 0.1, 0.1]}],
        "initial": [{"body": "b", "q": )") +
           q + "}]}]}";
  };
  // not "the mass matrix is not positive definite" at the first step: the JSON path of the numbers
  auto zero = parse_scene(ball("[0, 0, 0, 0]"), "q.json");
  REQUIRE(zero.is_ok());
  auto c = compile<double>(*zero, ".");
  REQUIRE(!c.is_ok());
  CHECK(c.status().message() ==
        "objects[0] (\"ball\").initial[0].q[0..3]: the quaternion (w, x, y, z) is zero or not finite; the identity is "
        "[1, 0, 0, 0]");
  // any other is normalized, as MuJoCo normalizes qpos
  auto half = parse_scene(ball("[0, 0, 0, 2]"), "q.json");
  REQUIRE(half.is_ok());
  auto u = compile<double>(*half, ".");
  INFO(u.status().message());
  REQUIRE(u.is_ok());
  const size_t q0 = size_t(u->objects[0].q_begin);
  CHECK(u->model.joint_q[q0] == 0.0);
  CHECK(u->model.joint_q[q0 + 3] == 1.0);
}
