// rebase_paths: a scene saved into another directory still names the same files
#include <catch2/catch.hpp>

#include <filesystem>

#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/scene/scene_paths.h"

using namespace adj;
namespace fs = std::filesystem;

TEST_CASE("scene paths: relative references follow the file, absolute and empty ones stay", "[scene]") {
  scene::Scene s;
  scene::Object cloth, rock, robot, plain;
  cloth.kind = scene::ObjectKind::cloth, cloth.cloth.mesh = "meshes/flag.obj";
  rock.kind = scene::ObjectKind::collider, rock.collider.mesh = "../meshes/cube.obj";
  robot.kind = scene::ObjectKind::robot, robot.robot.urdf = "/abs/arm.urdf";
  plain.kind = scene::ObjectKind::cloth;  // a grid: no file
  s.objects = {cloth, rock, robot, plain};

  scene::rebase_paths(s, "/data/scenes", "/data/out/deep");
  CHECK(s.objects[0].cloth.mesh == "../../scenes/meshes/flag.obj");
  CHECK(s.objects[1].collider.mesh == "../../meshes/cube.obj");
  CHECK(s.objects[2].robot.urdf == "/abs/arm.urdf");
  CHECK(s.objects[3].cloth.mesh.empty());
  // and back again: the original text
  scene::rebase_paths(s, "/data/out/deep", "/data/scenes");
  CHECK(s.objects[0].cloth.mesh == "meshes/flag.obj");
  CHECK(s.objects[1].collider.mesh == "../meshes/cube.obj");
  // the same directory changes nothing
  scene::Scene before = s;
  scene::rebase_paths(s, "/data/scenes", "/data/scenes/");
  CHECK(s == before);
}

TEST_CASE("scene paths: a URDF scene saved elsewhere compiles from its new place", "[scene]") {
  const std::string src = std::string(ADJ_ASSET_SCENES) + "/robot_arm_reach.json";
  auto s = scene::load_scene(src);
  REQUIRE(s);
  const fs::path out_dir = fs::temp_directory_path() / "adjoint_scene_paths_test" / "nested";
  fs::create_directories(out_dir);
  const std::string out = (out_dir / "arm.json").string();
  scene::Scene moved = *s;
  scene::rebase_paths(moved, fs::path(src).parent_path().string(), out_dir.string());
  REQUIRE(scene::save_scene(moved, out));
  auto again = scene::load_scene(out);
  REQUIRE(again);
  auto cs = scene::compile<float>(*again, out_dir.string());
  INFO((cs ? std::string() : cs.status().message()));
  REQUIRE(cs);
  CHECK(cs->has_robots());
  // without the rebase, the copied reference points nowhere and compiling says which file
  REQUIRE(scene::save_scene(*s, out));
  auto stale = scene::compile<float>(*scene::load_scene(out), out_dir.string());
  REQUIRE_FALSE(stale);
  CHECK_THAT(stale.status().message(), Catch::Contains("arm3.urdf"));
  fs::remove_all(out_dir.parent_path());
}
