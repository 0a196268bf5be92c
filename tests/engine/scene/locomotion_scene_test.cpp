// the DiffRL locomotion scenes (assets/scenes/locomotion, docs/scene-format.md): the robot files
// read as dflex reads them (import options: density, joint defaults, limits on unlimited hinges,
// per-joint action strength) and the depth-damped ground contact law; the robot files are the
// shared ones (../shared/robots/diffrl), read in place
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>

#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/solver.h"

using namespace adj;
using namespace adj::scene;

namespace {

const std::string k_scenes = std::string(ADJ_ASSET_SCENES) + "/locomotion";

Result<Scene> load(const std::string& name) { return load_scene(k_scenes + "/" + name); }

double total_mass(const RigidModelT<double>& m) {
  double s = 0;
  for (int b = 0; b < m.body_count(); ++b) s += m.body_mass[b];
  return s;
}

int body_index(const RigidModelT<double>& m, const std::string& name) {
  for (int b = 0; b < m.body_count(); ++b)
    if (m.body_name[b] == name) return b;
  return -1;
}

// DiffRL's Hopper in a scene with extra settings and robot keys (JSON text)
std::string hopper_scene(const std::string& settings, const std::string& robot) {
  return R"({"format": "adjoint-scene", "version": 1, "name": "hopper", "settings": {)" + settings +
         R"(}, "objects": [{"name": "ground", "type": "ground"},
    {"name": "hopper", "type": "mjcf", "file": "../../../../shared/robots/diffrl/hopper.xml", "rotation": [-90, 0, 0])" +
         robot + "}]}";
}

// a sphere and a capsule (radius r, segment length l) of density 1000
double sphere_mass(double r) { return 1000 * 4.0 / 3.0 * M_PI * r * r * r; }
double capsule_mass(double r, double l) { return 1000 * (M_PI * r * r * l + 4.0 / 3.0 * M_PI * r * r * r); }

}  // namespace

TEST_CASE("locomotion: the Ant read at density 1000 weighs 182 kg, joints and strengths as dflex reads them",
          "[scene][robot][locomotion]") {
  auto doc = load("ant.json");
  INFO(doc.status().message());
  REQUIRE(doc.is_ok());
  auto cs = compile<double>(*doc, k_scenes);
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  const RigidModelT<double>& m = cs->model.rigid;
  // the torso sphere (r 0.25), 4 aux and 4 leg capsules (r 0.08, 0.2 sqrt 2 long), 4 ankles (0.4 sqrt 2)
  const double torso = sphere_mass(0.25), expected = torso + 8 * capsule_mass(0.08, 0.2 * std::sqrt(2.0)) +
                                                     4 * capsule_mass(0.08, 0.4 * std::sqrt(2.0));
  CHECK(expected == Approx(182.2).margin(0.1));  // the spec's "about 182 kg"
  CHECK(total_mass(m) == Approx(expected).epsilon(1e-9));
  CHECK(m.contact_law == CONTACT_DEPTH_DAMPED);
  CHECK(m.contact_kd == 1e4);
  // the root states damping 0 and armature 0 itself; the hinges take the scene's 1 and 0.05
  REQUIRE(m.dof_count() == 6 + 8);
  for (int d = 0; d < 6; ++d) CHECK(m.dof_damping[d] == 0);
  for (int d = 6; d < 14; ++d) {
    CHECK(m.dof_damping[d] == 1);
    CHECK(m.dof_armature[d] == 0.05);
  }
  // the file's hinge ranges (hip +-40 deg) with the spec's penalty
  const int hip1 = body_index(m, "front_left_leg");
  REQUIRE(hip1 >= 0);
  CHECK(m.joint_upper[hip1] == Approx(40 * M_PI / 180));
  CHECK(m.joint_limit_ke[hip1] == 1000);
  // 8 torque actuators of strength 200 in the file's joint order (not the file's motor order, gear 150)
  REQUIRE(m.actuator_count() == 8);
  const char* order[] = {"front_left_leg", "front_left_foot", "front_right_leg", "front_right_foot",
                         "left_back_leg",  "left_back_foot",  "right_back_leg",  "right_back_foot"};
  for (int a = 0; a < 8; ++a) {
    INFO("actuator " << a);
    CHECK(m.actuator_gear[a] == 200);
    CHECK(m.actuator_dof[a] == m.joint_dof_start[body_index(m, order[a])]);
  }
  // the start: joints (0, 1, 0, -1, 0, -1, 0, 1) rad (the torso's height: locomotion_terms_test)
  CHECK(cs->model.joint_q[7 + 1] == 1);
  CHECK(cs->model.joint_q[7 + 3] == -1);
}

TEST_CASE("locomotion: without the import options the Ant weighs 1/200 as much (the file's density 5)",
          "[scene][robot][locomotion]") {
  auto doc = load("ant.json");
  REQUIRE(doc.is_ok());
  RobotObject& ant = doc->objects[1].robot;
  ant.import = {};
  ant.joints.clear();
  auto cs = compile<double>(*doc, k_scenes);
  REQUIRE(cs.is_ok());
  CHECK(total_mass(cs->model.rigid) == Approx(182.2 / 200).epsilon(1e-3));
  CHECK(cs->model.rigid.actuator_gear[0] == 150);  // the file's motors
}

// without actions the 182 kg Ant folds its legs (limit penalty 1e3 N m/rad) and comes to lie on
// its torso sphere (r 0.25): the depth-damped ground at ke 4e4, kd 1e4 holds it there, below the
// termination height 0.27, without bouncing or sinking through
TEST_CASE("locomotion: the passive Ant settles on its torso on the depth-damped ground", "[scene][robot][locomotion]") {
  auto doc = load("ant.json");
  REQUIRE(doc.is_ok());
  auto cs = compile<double>(*doc, k_scenes);
  REQUIRE(cs.is_ok());
  const RigidModelT<double>& m = cs->model.rigid;
  SolverT<double> solver({.substeps = doc->settings.substeps});
  StateT<double> s = cs->model.make_state(), next = s;
  ControlT<double> u = m.make_control();
  // the torso's world position: the root's joint frame placement + its coordinates
  auto torso = [&] { return m.joint_pos[0] + m.joint_rot[0] * vec3<double>(s.joint_q[0], s.joint_q[1], s.joint_q[2]); };
  double lowest = 1;
  for (int t = 0; t < 180; ++t) {  // 3 s
    Status st = solver.step(cs->model, s, next, u, doc->settings.dt);
    INFO("frame " << t << ": " << st.message());
    REQUIRE(st.is_ok());
    std::swap(s, next);
    lowest = std::min(lowest, torso().y);
  }
  const vec3<double> p = torso();
  std::string vel;
  for (int d = 0; d < 6; ++d) vel += std::to_string(s.joint_qd[d]) + " ";
  INFO("torso at " << p.x << " " << p.y << " " << p.z << ", lowest " << lowest << ", root velocity " << vel);
  // measured: 3.6 cm deep at the landing, 1.5 cm at rest (0.2485 m), the root still to 1e-5
  CHECK(p.y < 0.27);  // collapsed: an episode would end here
  CHECK(p.y > 0.23);
  CHECK(lowest > 0.2);
  for (int d = 0; d < 6; ++d) CHECK(std::abs(s.joint_qd[d]) < 0.01);
}

TEST_CASE("locomotion: import options and the contact law round-trip, bad ones are named",
          "[scene][robot][locomotion]") {
  auto doc = load("ant.json");
  REQUIRE(doc.is_ok());
  auto again = parse_scene(to_json(*doc), k_scenes + "/again.json");
  INFO(again.status().message());
  REQUIRE(again.is_ok());
  CHECK(*again == *doc);
  CHECK(again->settings.robot_contact.law == "depth_damped");
  REQUIRE(again->objects[1].robot.import.hinge_range);
  CHECK((*again->objects[1].robot.import.hinge_range)[1] == 170);

  auto bad = [&](const std::string& settings, const std::string& import) {
    return parse_scene(hopper_scene(settings, import), k_scenes + "/bad.json");
  };
  REQUIRE(bad("", "").is_ok());
  auto r = bad(R"("robot_contact": {"law": "hunt"})", "");
  REQUIRE(!r.is_ok());
  CHECK(r.status().message().find("settings.robot_contact.law") != std::string::npos);
  r = bad("", R"(, "import": {"hinge_range": [170, -170]})");
  REQUIRE(!r.is_ok());
  CHECK(r.status().message().find("objects[1].import.hinge_range") != std::string::npos);
  r = bad("", R"(, "import": {"joint_damping": -1})");
  REQUIRE(!r.is_ok());
  CHECK(r.status().message().find("import.joint_damping") != std::string::npos);

  // the law is the ground's: a static collider beside it is refused by name
  Object box;
  box.name = "box";
  box.kind = ObjectKind::collider;
  box.collider.kind = ColliderKind::box;
  doc->objects.push_back(box);
  auto cs = compile<double>(*doc, k_scenes);
  REQUIRE(!cs.is_ok());
  CHECK(cs.status().message().find("settings.robot_contact.law") != std::string::npos);
}

TEST_CASE("locomotion: hinge_range limits the hinges a file leaves unlimited (the Hopper's pitch)",
          "[scene][robot][locomotion]") {
  auto doc = parse_scene(hopper_scene("", R"(, "import": {"hinge_range": [-170, 170]})"), k_scenes + "/hopper.json");
  INFO(doc.status().message());
  REQUIRE(doc.is_ok());
  auto cs = compile<double>(*doc, k_scenes);
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  const RigidModelT<double>& m = cs->model.rigid;
  const int pitch = body_index(m, "torso"), thigh = body_index(m, "thigh");
  REQUIRE(pitch >= 0);
  REQUIRE(thigh >= 0);
  CHECK(m.joint_lower[pitch] == Approx(-170 * M_PI / 180));
  CHECK(m.joint_upper[pitch] == Approx(170 * M_PI / 180));
  CHECK(m.joint_limit_ke[pitch] > 0);
  CHECK(m.joint_lower[thigh] == Approx(-2.61799));  // a stated range stays
  // the slides stay unlimited
  const int x = body_index(m, "torso/rootx");
  REQUIRE(x >= 0);
  CHECK(m.joint_limit_ke[x] == 0);
}

// the tasks' SHAC blocks, previous_action and exclude observation terms, alive and effort
// rewards go through the writer and back; bad SHAC keys are named by their JSON path
TEST_CASE("locomotion: the four tasks round-trip, bad SHAC keys are named", "[scene][robot][locomotion]") {
  for (const char* file : {"ant.json", "hopper.json", "half_cheetah.json", "humanoid.json"}) {
    INFO(file);
    auto doc = load(file);
    INFO(doc.status().message());
    REQUIRE(doc.is_ok());
    REQUIRE(doc->tasks.size() == 1);
    const Task& t = doc->tasks[0];
    CHECK(t.shac.log_std_init == -1.0);
    CHECK(t.shac.activation == "elu");
    CHECK(t.shac.critic_iterations == 16);
    auto again = parse_scene(to_json(*doc), k_scenes + "/again.json");
    INFO(again.status().message());
    REQUIRE(again.is_ok());
    CHECK(*again == *doc);
  }
  auto ant = load("ant.json");
  REQUIRE(ant.is_ok());
  const Task& t = ant->tasks[0];
  CHECK(t.shac.envs == 64);
  CHECK(t.shac.betas == std::array<double, 2>{0.7, 0.95});
  CHECK(t.shac.critic_hidden == std::vector<int>{64, 64});
  CHECK(t.policy.observation.back().kind == ObservationKind::previous_action);
  // a task without the block keeps every default unset
  CHECK(ShacSpec{} == ShacSpec{});
  auto with_shac = [&](const std::string& shac) {
    return parse_scene(R"({"format": "adjoint-scene", "version": 1, "objects": [], "tasks": [{"name": "t",
      "horizon": 10, "loss": [{"kind": "velocity", "object": "x"}], "shac": )" +
                           shac + "}]}",
                       k_scenes + "/bad.json");
  };
  struct Bad {
    const char* shac;
    const char* path;
  };
  for (const Bad& b :
       {Bad{R"({"betas": [0.7]})", "tasks[0].shac.betas"}, Bad{R"({"activation": "relu"})", "tasks[0].shac.activation"},
        Bad{R"({"gamma": 1.5})", "tasks[0].shac.gamma"},
        Bad{R"({"critic_hidden": [0]})", "tasks[0].shac.critic_hidden[0]"},
        Bad{R"({"windw": 3})", "tasks[0].shac.windw"}}) {
    auto r = with_shac(b.shac);
    INFO(b.shac << ": " << r.status().message());
    REQUIRE(!r.is_ok());
    CHECK(r.status().message().find(b.path) != std::string::npos);
  }
}

TEST_CASE("locomotion: the Hopper and the Humanoid read with the spec's constants and fall without blowing up",
          "[scene][robot][locomotion]") {
  struct Case {
    const char* file;
    int actuators;
    double strength0;  // the first joint's strength
  };
  for (const Case& c : {Case{"hopper.json", 3, 200}, Case{"humanoid.json", 21, 0.35 * 200}}) {
    INFO(c.file);
    auto doc = load(c.file);
    INFO(doc.status().message());
    REQUIRE(doc.is_ok());
    auto cs = compile<double>(*doc, k_scenes);
    INFO(cs.status().message());
    REQUIRE(cs.is_ok());
    const RigidModelT<double>& m = cs->model.rigid;
    REQUIRE(m.actuator_count() == c.actuators);
    CHECK(m.actuator_gear[0] == Approx(c.strength0));
    SolverT<double> solver({.substeps = doc->settings.substeps});
    StateT<double> s = cs->model.make_state(), next = s;
    ControlT<double> u = m.make_control();
    for (int t = 0; t < 60; ++t) {
      Status st = solver.step(cs->model, s, next, u, doc->settings.dt);
      INFO("frame " << t << ": " << st.message());
      REQUIRE(st.is_ok());
      std::swap(s, next);
    }
    for (double q : s.joint_q) CHECK(std::isfinite(q));
    for (double v : s.joint_qd) CHECK(std::abs(v) < 50);
  }
}
