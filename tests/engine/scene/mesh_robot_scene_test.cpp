// mesh shapes of robot bodies in scene files ({"type": "mesh", "file", "scale"}): round trip,
// compilation to a mesh shape with the mesh's mass, errors naming the JSON path and the file,
// and rebase_paths moving the file reference on Save As
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <utility>

#include "engine/articulation/rigid_queries.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/scene/scene_paths.h"
#include "engine/solver/solver.h"

using namespace adj;
using namespace adj::scene;
namespace fs = std::filesystem;

namespace {

const char* kMeshScene = R"({
  "format": "adjoint-scene", "version": 1, "name": "mesh robot",
  "settings": {"dt": 0.01, "substeps": 2,
               "robot_contact": {"ke": 1e4, "kd": 100, "kf": 100, "mu": 0.8, "eps": 0.01}},
  "objects": [
    {"name": "ground", "type": "ground", "position": [0, 0, 0]},
    {"name": "crate", "type": "robot", "position": [0, 0.5, 0],
     "bodies": [{"name": "lid", "joint": "free",
                 "shapes": [{"type": "mesh", "file": "meshes/paddle.stl", "scale": [1, 2, 1], "density": 1000}]}]}]
})";

}  // namespace

TEST_CASE("robot scenes: a mesh body shape round-trips, compiles with its mass and falls onto the ground",
          "[scene][robot][mesh]") {
  auto s = parse_scene(kMeshScene, "mesh.json");
  INFO(s.status().message());
  REQUIRE(s.is_ok());
  const RobotShape& sh = s->objects[1].robot.bodies[0].shapes[0];
  CHECK(sh.kind == RobotShapeKind::mesh);
  CHECK(sh.file == "meshes/paddle.stl");
  CHECK(sh.scale[1] == 2);
  auto again = parse_scene(to_json(*s), "again.json");
  REQUIRE(again.is_ok());
  CHECK(*again == *s);
  auto c = compile<double>(*s, ADJ_ASSET_ROBOTS);
  INFO(c.status().message());
  REQUIRE(c.is_ok());
  const RigidModelT<double>& m = c->model.rigid;
  REQUIRE(m.shape_count() == 1);
  CHECK(m.shape_type[0] == GEOM_MESH);
  // the paddle box 0.3 x 0.04 x 0.06 with y doubled, 1000 kg/m^3, com at (0.15, 0, 0)
  CHECK(std::fabs(m.body_mass[0] - 1000 * 0.3 * 0.08 * 0.06) < 1e-6);
  CHECK(std::fabs(m.body_com[0].x - 0.15) < 1e-7);
  // 16 substeps: the stated contact damping (kd 100) on a 1.4 kg bar whose corners are 0.15 m
  // from its centre needs dt < ~2 ms, or the explicit damping rocks it onto its end (the box
  // primitive does the same)
  SolverT<double> solver({.substeps = 16});
  StateT<double> st = c->model.make_state(), next;
  for (int k = 0; k < 120; ++k) {
    REQUIRE(solver.step(c->model, st, next, m.make_control(), 1.0 / 60).is_ok());
    st = next;
  }
  std::vector<vec3<double>> pos;
  std::vector<mat33<double>> rot;
  rigid_forward_kinematics(m, st, pos, rot);
  INFO("body origin height " << pos[0].y);
  CHECK(std::fabs(pos[0].y - 0.04) < 2e-3);  // resting on the ground on its 0.08 m side
}

TEST_CASE("robot scenes: mesh shape errors name the JSON path and the file", "[scene][robot][mesh]") {
  std::string text = kMeshScene;
  text.replace(text.find("meshes/paddle.stl"), 17, "meshes/nothing.obj");
  auto s = parse_scene(text, "mesh.json");
  REQUIRE(s.is_ok());
  auto c = compile<double>(*s, ADJ_ASSET_ROBOTS);
  REQUIRE_FALSE(c.is_ok());
  INFO(c.status().message());
  CHECK(c.status().message().find("objects[1] (\"crate\").bodies[0] (\"lid\").shapes[0].file") != std::string::npos);
  CHECK(c.status().message().find("nothing.obj") != std::string::npos);
  std::string no_file = kMeshScene;
  no_file.replace(no_file.find("\"file\": \"meshes/paddle.stl\", "), 29, "");
  auto r = parse_scene(no_file, "mesh.json");
  REQUIRE_FALSE(r.is_ok());
  INFO(r.status().message());
  CHECK(r.status().message().find("objects[1].bodies[0].shapes[0]") != std::string::npos);
}

TEST_CASE("robot scenes: rebase_paths moves a mesh shape's file with the scene", "[scene][robot][mesh][paths]") {
  auto s = parse_scene(kMeshScene, "mesh.json");
  REQUIRE(s.is_ok());
  rebase_paths(*s, "/data/robots", "/data/scenes/saved");
  CHECK(s->objects[1].robot.bodies[0].shapes[0].file == "../../robots/meshes/paddle.stl");
}

TEST_CASE("robot scenes: a mesh collider stops every body shape and one wound inside out is warned of",
          "[scene][robot][mesh]") {
  std::string text = kMeshScene;
  const std::string ground = R"({"name": "ground", "type": "ground", "position": [0, 0, 0]},)";
  const std::string rock = R"({"name": "rock", "type": "mesh_collider", "mesh": "meshes/knob.obj", "scale": 0.2},)";
  text.replace(text.find(ground), ground.size(), ground + rock);
  auto warned_of_rock = [](const CompiledSceneT<double>& cs, const std::string& how) {
    int n = 0;
    for (const std::string& w : cs.warnings)
      n += w.find("objects[1] (\"rock\")") != std::string::npos && w.find(how) != std::string::npos;
    return n;
  };
  auto compiled = [](const std::string& json) {
    auto s = parse_scene(json, "mesh.json");
    INFO(s.status().message());
    REQUIRE(s.is_ok());
    auto c = compile<double>(*s, ADJ_ASSET_ROBOTS);
    INFO(c.status().message());
    REQUIRE(c.is_ok());
    return std::move(c.value());
  };
  // the knob wound counter-clockwise seen from outside: the robot's mesh shape meets its solid
  CHECK(compiled(text).warnings.empty());
  {  // the same octahedron wound inward, and an open sheet facing down: warned of, the cause named
    const fs::path dir = fs::temp_directory_path() / "adjoint_mesh_winding_test";
    fs::create_directories(dir);
    {
      std::ofstream f(dir / "inward.obj");
      f << "v 1 0 0\nv -1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\nv 0 0 -1\n"
           "f 1 5 3\nf 1 3 6\nf 1 4 5\nf 1 6 4\nf 2 3 5\nf 2 6 3\nf 2 5 4\nf 2 4 6\n";
      std::ofstream g(dir / "sheet.obj");
      g << "v -1 0 -1\nv 1 0 -1\nv 1 0 1\nv -1 0 1\nf 1 2 3\nf 1 3 4\n";  // clockwise seen from above
    }
    for (const auto& [file, how] :
         {std::pair{"inward.obj", "faces point inward"}, std::pair{"sheet.obj", "faces face down"}}) {
      std::string t = text;
      t.replace(t.find("meshes/knob.obj"), std::string("meshes/knob.obj").size(), (dir / file).string());
      const CompiledSceneT<double> c = compiled(t);
      INFO(file);
      CHECK(warned_of_rock(c, how) == 1);
    }
    fs::remove_all(dir);
  }
  // a sphere touches it: the bodies' collider list holds the mesh's triangles, no warning
  const std::string mesh_shape =
      R"({"type": "mesh", "file": "meshes/paddle.stl", "scale": [1, 2, 1], "density": 1000})";
  text.replace(text.find(mesh_shape), mesh_shape.size(),
               R"({"type": "sphere", "size": [0.1, 0.1, 0.1], "density": 1000})");
  const CompiledSceneT<double> cs = compiled(text);
  CHECK(cs.warnings.empty());
  const RigidModelT<double>& m = cs.model.rigid;
  REQUIRE(m.collider_count() == 1);
  CHECK(m.collider_type[0] == GEOM_MESH);
  const int shape = cs.objects[1].shape;  // the particles' copy, the same triangles
  CHECK(m.collider_mesh_count[0] == cs.model.shape_mesh_count[shape]);
  CHECK(m.collider_mesh_vertices.size() == cs.model.mesh_vertices.size());
}
