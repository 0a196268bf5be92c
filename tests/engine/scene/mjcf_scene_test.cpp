// "mjcf" robot objects in scene files: round trip, compilation with the importer's warnings,
// and the shared Gymnasium models (../shared/robots/mjcf, in place) simulating 2 s on the
// scene's ground at 8 substeps of 1/240 s without blowing up
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

// a scene (y up) with one MJCF robot (z up, turned by -90 degrees about x)
std::string mjcf_scene(const std::string& file, double height) {
  return R"({"format": "adjoint-scene", "version": 1, "name": "mjcf",
  "settings": {"dt": 0.016666666666666666, "substeps": 4},
  "objects": [{"name": "ground", "type": "ground"},
    {"name": "robot", "type": "mjcf", "file": ")" +
         file + R"(", "position": [0, )" + std::to_string(height) + R"(, 0], "rotation": [-90, 0, 0]}]})";
}

}  // namespace

TEST_CASE("mjcf scenes: round trip, bodies named as in the file, warnings kept", "[scene][robot][mjcf]") {
  const std::string data = std::string(ADJ_TEST_DATA) + "/mjcf";
  auto a = parse_scene(mjcf_scene("servo_arm.xml", 0.5), data + "/scene.json");
  INFO(a.status().message());
  REQUIRE(a.is_ok());
  REQUIRE(a->objects[1].kind == ObjectKind::robot);
  CHECK(a->objects[1].robot.mjcf);
  std::string text = to_json(*a);
  CHECK(text.find("\"mjcf\"") != std::string::npos);
  auto b = parse_scene(text, data + "/again.json");
  REQUIRE(b.is_ok());
  CHECK(*a == *b);

  auto cs = compile<double>(*a, data);
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  CHECK(cs->model.rigid.body_count() == 3);
  CHECK(cs->model.rigid.body_name[2] == "forearm");
  CHECK(cs->model.rigid.actuator_count() == 3);
  CHECK(cs->model.rigid.collider_count() == 0);  // the file's floor: the scene has its own ground
  bool sensor = false;
  for (const std::string& w : cs->warnings)
    sensor |= w.find("servo_arm.xml:") != std::string::npos && w.find("<sensor>") != std::string::npos &&
              w.find("objects[1]") != std::string::npos;
  CHECK(sensor);
}

TEST_CASE("mjcf scenes: the shared Gymnasium models simulate 2 s on the ground", "[scene][robot][mjcf]") {
  const std::string dir = std::string(ADJ_SHARED_ROBOTS) + "/mjcf";
  INFO("the shared robot files are read in place: " << dir);
  REQUIRE(std::filesystem::exists(dir));
  for (const char* name : {"ant.xml", "half_cheetah.xml", "hopper.xml", "inverted_pendulum.xml", "reacher.xml"}) {
    INFO(name);
    auto doc = parse_scene(mjcf_scene(name, 0.0), dir + "/scene.json");
    REQUIRE(doc.is_ok());
    auto cs = compile<double>(*doc, dir);
    INFO(cs.status().message());
    REQUIRE(cs.is_ok());
    SolverT<double> solver({.substeps = 8});
    StateT<double> s = cs->model.make_state(), next = s;
    ControlT<double> u = cs->model.rigid.make_control();
    const double dt = 1.0 / 240;  // 2 s of frames of 1/240 s, 8 substeps each
    for (int t = 0; t < 480; ++t) {
      Status st = solver.step(cs->model, s, next, u, dt);
      INFO("frame " << t << ": " << st.message());
      REQUIRE(st.is_ok());
      std::swap(s, next);
    }
    for (double q : s.joint_q) CHECK(std::isfinite(q));
    for (double v : s.joint_qd) CHECK(std::abs(v) < 100);
  }
}
