// engine/scene/scene_json.h: every reference scene round-trips exactly; broken files give
// messages that name the file and the JSON path; saves are atomic; settings.integrator.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/solver.h"

namespace fs = std::filesystem;
using namespace adj::scene;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("adjoint-scene-test-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("every reference scene loads, and load -> save -> load round-trips exactly", "[scene]") {
  int count = 0;
  for (const auto& e : fs::directory_iterator(ADJ_ASSET_SCENES)) {
    if (e.path().extension() != ".json") continue;
    INFO(e.path().string());
    auto a = load_scene(e.path().string());
    REQUIRE(a.is_ok());
    fs::path d = temp_dir("roundtrip");
    fs::path out = d / e.path().filename();
    REQUIRE(save_scene(*a, out.string()).is_ok());
    auto b = load_scene(out.string());
    REQUIRE(b.is_ok());
    CHECK(*a == *b);
    CHECK(to_json(*a) == to_json(*b));  // and the text is stable
    ++count;
  }
  CHECK(count >= 4);
}

TEST_CASE("broken scene files report the file, the JSON path and the problem", "[scene]") {
  struct Case {
    const char* file;
    const char* message;
  };
  const Case cases[] = {
      {"not_json.json", "not_json.json:5:"},
      {"not_json.json", "not valid JSON"},
      {"wrong_type.json", "objects[1].material.tri_ke: expected a number"},
      {"unknown_key.json", "objects[0].particles[0].mas: unknown key"},
      {"huge_grid.json", "objects[0].grid: 1000000000 cells is too many"},
      {"bad_spring.json", "objects[0].springs[0].j: 5 is out of range [0, 1]"},
      {"missing_target.json", "tasks[0].loss[0].target: \"nowhere\" is not a target object"},
      {"duplicate_name.json", "objects[1].name: \"a\" is used by an earlier object"},
      {"newer_version.json", "version: version 7 is newer than this program reads"},
      {"wrong_format.json", "format: expected \"adjoint-scene\""},
      {"negative_dt.json", "settings.dt: -0.01 is out of range"},
      {"negative_dt.json", "settings.substeps: 0 is out of range"},
      {"not_finite.json", "not valid JSON: number overflow parsing '1e999'"},
      {"bad_enum.json", "objects[0].type: unknown value \"teapot\""},
      {"bad_integrator.json", "settings.integrator: unknown value \"rk4\""},
      {"bad_loss_particles.json", "tasks[0].loss[0].particles[1]: expected a particle index"},
      {"effort_particles.json", "tasks[0].loss[0].particles: only particle terms"},
  };
  for (const Case& c : cases) {
    std::string path = std::string(ADJ_TEST_DATA) + "/scenes/broken/" + c.file;
    INFO(path);
    auto s = load_scene(path);
    REQUIRE_FALSE(s.is_ok());
    INFO(s.status().message());
    CHECK(s.status().message().find(path) != std::string::npos);
    CHECK(s.status().message().find(c.message) != std::string::npos);
  }
}

// a policy task's randomized training starts (SHAC, PPO, PODS): the cartpole keeps the defaults
// (any angle), the throw starts with the ball on the paddle (no joint offsets); out of range is
// an error naming the JSON path
TEST_CASE("a policy's randomized starts are read, written only when they differ, and checked", "[scene]") {
  auto cart = load_scene(std::string(ADJ_ASSET_SCENES) + "/robot_cartpole.json");
  REQUIRE(cart.is_ok());
  const Task* swing = cart->find_task("swing up (policy)");
  REQUIRE(swing);
  CHECK(swing->policy.start_q_range == 3.14159);
  CHECK(swing->policy.start_qd_range == 0.5);
  auto throw_scene = load_scene(std::string(ADJ_ASSET_SCENES) + "/robot_arm_throw.json");
  REQUIRE(throw_scene.is_ok());
  const Task* th = throw_scene->find_task("throw (policy)");
  REQUIRE(th);
  CHECK(th->policy.start_q_range == 0.0);
  CHECK(th->policy.start_qd_range == 0.3);
  const fs::path dir = temp_dir("starts");
  Scene bad = *throw_scene;
  REQUIRE(save_scene(bad, (dir / "ok.json").string()).is_ok());
  CHECK(read_file(dir / "ok.json").find("start_qd_range") != std::string::npos);
  REQUIRE(save_scene(*cart, (dir / "cart.json").string()).is_ok());
  CHECK(read_file(dir / "cart.json").find("start_q_range") == std::string::npos);  // defaults: not written
  std::string text = read_file(dir / "ok.json");
  const std::string key = "\"start_q_range\": 0.0";
  const auto at = text.find(key);
  REQUIRE(at != std::string::npos);
  text.replace(at, key.size(), "\"start_q_range\": -1.0");
  std::ofstream(dir / "bad.json") << text;
  auto refused = load_scene((dir / "bad.json").string());
  REQUIRE_FALSE(refused.is_ok());
  INFO(refused.status().message());
  CHECK(refused.status().message().find("policy.start_q_range: -1 is out of range") != std::string::npos);
}

TEST_CASE("a missing mesh is an error that names the object and the file", "[scene]") {
  std::string path = std::string(ADJ_TEST_DATA) + "/scenes/broken/missing_mesh.json";
  auto s = load_scene(path);
  REQUIRE(s.is_ok());  // the document is fine; the mesh is missing at compile time
  auto c = compile<float>(*s, fs::path(path).parent_path().string());
  REQUIRE_FALSE(c.is_ok());
  INFO(c.status().message());
  CHECK(c.status().message().find("objects[0] (\"sheet\")") != std::string::npos);
  CHECK(c.status().message().find("does_not_exist.obj") != std::string::npos);
}

TEST_CASE("a missing file is an error, not a crash", "[scene]") {
  auto s = load_scene("/nonexistent/scene.json");
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.status().message() == "/nonexistent/scene.json: no such file");
}

TEST_CASE("saving is atomic: an unwritable target leaves the old file and no debris", "[scene]") {
  fs::path d = temp_dir("atomic");
  Scene s;
  s.name = "first";
  fs::path file = d / "scene.json";
  REQUIRE(save_scene(s, file.string()).is_ok());
  std::string before = read_file(file);

  // a directory where the file should go: rename must fail, the old file must survive
  Scene t;
  t.name = "second";
  fs::path blocked = d / "blocked.json";
  fs::create_directories(blocked / "inside");
  auto st = save_scene(t, blocked.string());
  CHECK_FALSE(st.is_ok());
  CHECK(fs::is_directory(blocked));
  CHECK(read_file(file) == before);

  // a folder that does not exist
  CHECK_FALSE(save_scene(t, (d / "no/such/dir/x.json").string()).is_ok());

  // overwrite works and leaves no temporary files
  REQUIRE(save_scene(t, file.string()).is_ok());
  CHECK(load_scene(file.string())->name == "second");
  int files = 0;
  for (const auto& e : fs::directory_iterator(d)) files += e.is_regular_file();
  CHECK(files == 1);
}

TEST_CASE("absurd sizes are refused before any memory is spent", "[scene]") {
  Scene s;
  Object o;
  o.name = "huge";
  o.kind = ObjectKind::soft;
  o.soft.nx = o.soft.ny = o.soft.nz = 1000;  // 1e9 cells: built by code, not a file
  s.objects.push_back(o);
  auto c = compile<float>(s, "");
  REQUIRE_FALSE(c.is_ok());
  CHECK(c.status().message().find("particles; at most") != std::string::npos);
}

TEST_CASE("compile keeps each object's index ranges", "[scene]") {
  auto s = load_scene(std::string(ADJ_ASSET_SCENES) + "/default.json");
  REQUIRE(s.is_ok());
  auto c = compile<float>(*s, ADJ_ASSET_SCENES);
  REQUIRE(c.is_ok());
  const ObjectRange* cloth = c->find("cloth");
  REQUIRE(cloth);
  CHECK(cloth->particle_begin == 0);
  CHECK(cloth->particle_end == 13 * 13);
  CHECK(cloth->tri_end - cloth->tri_begin == 2 * 12 * 12);
  const ObjectRange* ground = c->find("ground");
  REQUIRE(ground);
  CHECK(ground->shape == 0);
  CHECK(c->find("ball")->shape == 1);
  CHECK(c->find("goal")->target[0] == Approx(1.4));
  CHECK(c->model.particle_count() == 169);
  CHECK(c->model.contact_ke == Approx(2000.0f));
  CHECK(c->substeps == 8);

  auto cage = load_scene(std::string(ADJ_ASSET_SCENES) + "/spring_cage.json");
  REQUIRE(cage.is_ok());
  auto cc = compile<double>(*cage, "");
  REQUIRE(cc.is_ok());
  CHECK(cc->model.spring_count() == 8);
  CHECK(cc->model.particle_mass[1] == 0.0);  // corners pinned
}

TEST_CASE("target points and actuated soft bodies: compiled, and bad points named by path", "[scene]") {
  auto s = load_scene(std::string(ADJ_ASSET_SCENES) + "/material_id.json");
  REQUIRE(s.is_ok());
  auto c = compile<double>(*s, "");
  REQUIRE(c.is_ok());
  CHECK(c->model.particle_count() == 27);
  CHECK(c->model.tet_count() == 40);
  CHECK(c->find("reference_60")->target_points.size() == 27);
  CHECK(c->actuated_tets.empty());
  auto w = load_scene(std::string(ADJ_ASSET_SCENES) + "/soft_walker.json");
  REQUIRE(w.is_ok());
  auto cw = compile<double>(*w, "");
  REQUIRE(cw.is_ok());
  CHECK(int(cw->actuated_tets.size()) == cw->model.tet_count());

  const char* text = R"({"format": "adjoint-scene", "version": 1, "name": "p", "objects": [
      {"name": "t", "type": "target", "position": [0, 0, 0], "points": [[0, 1, 2], [0, "x", 2]]}]})";
  auto bad = parse_scene(text, "inline.json");
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("objects[0].points[1]: expected [x, y, z] of finite numbers"));
}

TEST_CASE("a cloth's per-particle initial state and a task's stored values round-trip and compile", "[scene]") {
  Scene s;
  s.name = "kept";
  Object cloth;
  cloth.name = "cloth";
  cloth.kind = ObjectKind::cloth;
  cloth.cloth.nx = 2;
  cloth.cloth.ny = 1;  // 3 x 2 particles
  for (int i = 0; i < 6; ++i) {
    cloth.cloth.particle_velocities.push_back({0.1 * i, 1.0 / 3.0, -i * 1e-7});
    cloth.cloth.particle_positions.push_back({0.25 * i, 1.5, 0.125});
  }
  s.objects.push_back(cloth);
  Task t;
  t.name = "t";
  t.values.push_back({ParamKind::control_force, "cloth", {1.0 / 7.0, -2.5, 3e-9}});
  t.values.push_back({ParamKind::policy, "", {0.5, 0.25}});
  s.tasks.push_back(t);
  fs::path d = temp_dir("kept");
  REQUIRE(save_scene(s, (d / "kept.json").string()).is_ok());
  auto back = load_scene((d / "kept.json").string());
  REQUIRE(back.is_ok());
  CHECK(*back == s);  // exactly, as doubles
  // the compiled initial state is the listed one (the rest shape stays the grid's)
  auto cs = compile<double>(*back, d.string());
  REQUIRE(cs.is_ok());
  for (int i = 0; i < 6; ++i) {
    CHECK(cs->model.particle_qd[size_t(i)].x == 0.1 * i);
    CHECK(cs->model.particle_q[size_t(i)].x == 0.25 * i);
    CHECK(cs->model.particle_q[size_t(i)].y == 1.5);
  }
  // a list that does not match the particles is refused, naming the object and the key
  s.objects[0].cloth.particle_velocities.pop_back();
  auto bad = compile<double>(s, d.string());
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("particle_velocities: 5 entries for 6 particles") != std::string::npos);
  // stored values of a kind that is not per-frame nor a policy are refused with the JSON path
  std::ofstream(d / "bad.json") << R"({"format": "adjoint-scene", "version": 1, "name": "b", "objects": [],
    "tasks": [{"name": "t", "horizon": 2, "loss": [], "values": [{"kind": "spring_ke", "values": [1]}]}]})";
  auto refused = load_scene((d / "bad.json").string());
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.status().message().find("tasks[0].values[0].kind") != std::string::npos);
}

TEST_CASE("large stored values go to a sidecar file saved with the scene, and come back exactly", "[scene]") {
  Scene s;
  s.name = "big";
  Task small, large;
  small.name = "small";
  small.values.push_back({ParamKind::policy, "", {0.5, -0.25}});
  large.name = "walk";
  ParamValues v{ParamKind::actuator_control, "walker", {}};
  for (int i = 0; i < 5000; ++i) v.values.push_back(std::sin(0.1 * i) / 3.0);
  large.values.push_back(v);
  s.tasks = {small, large};
  fs::path d = temp_dir("sidecar");
  const fs::path scene = d / "big.json", side = d / "big.json.values.json";
  REQUIRE(save_scene(s, scene.string()).is_ok());
  REQUIRE(fs::exists(side));
  const std::string text = read_file(scene);
  CHECK(text.find("\"values_file\": \"big.json.values.json\"") != std::string::npos);
  CHECK(text.size() < 4000);  // the 5000 numbers are not in the scene file; the small task's are
  CHECK(text.find("-0.25") != std::string::npos);
  auto back = load_scene(scene.string());
  REQUIRE(back.is_ok());
  CHECK(*back == s);
  // saved elsewhere: a sidecar beside the new file
  fs::create_directories(d / "other");
  REQUIRE(save_scene(*back, (d / "other" / "copy.json").string()).is_ok());
  auto copy = load_scene((d / "other" / "copy.json").string());
  REQUIRE(copy.is_ok());
  CHECK(*copy == s);
  // a missing sidecar is an error that names it and the task's JSON path
  fs::remove(side);
  auto missing = load_scene(scene.string());
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message().find("tasks[1].values_file: cannot read the values file") != std::string::npos);
  // no temporary files left behind
  for (const auto& e : fs::directory_iterator(d)) CHECK(e.path().string().find(".tmp-") == std::string::npos);
}

// a parameter's bounds as a list (one per element: a robot's actuators) are read, written back
// and refused by JSON path when their lengths differ or a lower bound lies above its upper
TEST_CASE("a parameter's per-element bounds are read, written back and checked", "[scene]") {
  auto reach = load_scene(std::string(ADJ_ASSET_SCENES) + "/robot_arm_reach.json");
  REQUIRE(reach.is_ok());
  const fs::path dir = temp_dir("bounds_each");
  REQUIRE(save_scene(*reach, (dir / "reach.json").string()).is_ok());
  std::string text = read_file(dir / "reach.json");
  // the parameter's "lower": -2.5, "upper": 2.5, replaced whole
  const auto at = text.find("\"lower\": -2.5");
  const auto end = text.find("\"upper\": 2.5", at);
  REQUIRE(end != std::string::npos);
  auto with = [&](const std::string& bounds) {
    std::string t = text;
    t.replace(at, end + std::string("\"upper\": 2.5").size() - at, bounds);
    return parse_scene(t, (dir / "bounds.json").string());
  };
  auto each = with("\"lower\": [-0.5, -1.5, -2.0], \"upper\": 2.5");
  REQUIRE(each.is_ok());
  const ParamSpec& p = each->tasks[0].parameters[0];
  CHECK(p.lower_each == std::vector<double>{-0.5, -1.5, -2.0});
  CHECK(std::isinf(p.lower));
  CHECK(p.upper == 2.5);
  REQUIRE(save_scene(*each, (dir / "each.json").string()).is_ok());
  auto again = load_scene((dir / "each.json").string());
  REQUIRE(again.is_ok());
  CHECK(again->tasks[0].parameters[0] == p);
  // written narrowed by the block's bound: reading it back bounds every entry the same
  Scene narrowed = *each;
  narrowed.tasks[0].parameters[0].lower = -1.0;
  REQUIRE(save_scene(narrowed, (dir / "narrowed.json").string()).is_ok());
  auto read_narrowed = load_scene((dir / "narrowed.json").string());
  REQUIRE(read_narrowed.is_ok());
  CHECK(read_narrowed->tasks[0].parameters[0].lower_each == std::vector<double>{-0.5, -1.0, -1.0});

  auto refused = [&](const std::string& bounds) {
    auto r = with(bounds);
    REQUIRE_FALSE(r.is_ok());
    return r.status().message();
  };
  CHECK_THAT(refused("\"lower\": [-0.5, -1.5], \"upper\": [1, 2, 3]"),
             Catch::Contains("tasks[0].parameters[0].upper: lists 3 bounds, \"lower\" 2"));
  CHECK_THAT(refused("\"lower\": [-0.5, 3.0, -2.0], \"upper\": [1, 2, 3]"),
             Catch::Contains("tasks[0].parameters[0].lower[1]: lower bound is above the upper bound"));
  CHECK_THAT(refused("\"lower\": [-0.5, \"x\"]"),
             Catch::Contains("tasks[0].parameters[0].lower[1]: expected a finite number"));
}

// settings.integrator: the example scene (a 9 cm soft block on the ground at one substep of
// 1/60 s) compiles to an implicit model, comes to rest on the ground, and the key is written
// only when it is not the default
TEST_CASE("settings.integrator selects the implicit particle integrator", "[scene]") {
  auto s = load_scene(std::string(ADJ_ASSET_SCENES) + "/soft_block_implicit.json");
  REQUIRE(s.is_ok());
  CHECK(s->settings.integrator == "implicit");
  auto cs = compile<float>(*s, ADJ_ASSET_SCENES);
  REQUIRE(cs.is_ok());
  CHECK(cs->model.integrator == adj::INTEGRATOR_IMPLICIT);
  adj::Solver solver(adj::SolverOptions{.substeps = cs->substeps});
  adj::State a = cs->model.make_state(), b;
  for (int t = 0; t < 60; ++t) {
    adj::Status st = solver.step(cs->model, a, b, cs->model.make_control(), cs->frame_dt);
    INFO(st.message());
    REQUIRE(st);
    std::swap(a, b);
  }
  float speed = 0;
  for (const auto& v : a.particle_qd) speed = std::max(speed, length(v));
  CHECK(speed < 1e-2f);
  Scene plain = *s;
  plain.settings.integrator = "explicit";
  CHECK(to_json(*s).find("\"integrator\"") != std::string::npos);
  CHECK(to_json(plain).find("\"integrator\"") == std::string::npos);
}

// the keys no reference scene writes: an object observation over listed particles (and a
// policy's action map beside it) survive save -> load; "particles" on a term that reads no
// object is refused with its JSON path
TEST_CASE("a policy observation over listed particles round-trips, and particles on a joint term is refused",
          "[scene]") {
  auto a = load_scene(std::string(ADJ_ASSET_SCENES) + "/robot_arm_push_soft_policy.json");
  REQUIRE(a.is_ok());
  PolicySpec& p = a->tasks.at(0).policy;
  REQUIRE(p.observation.size() >= 3);
  REQUIRE(p.observation[2].kind == ObservationKind::object_position);
  p.observation[2].particles = {0, 3};
  p.action_scale = {0.5, 2, 1};
  p.action_offset = {0, -0.1, 0.1};
  auto b = parse_scene(to_json(*a), "roundtrip.json");
  INFO((b.is_ok() ? std::string() : b.status().message()));
  REQUIRE(b.is_ok());
  CHECK(b->tasks.at(0).policy.observation[2].particles == std::vector<int>{0, 3});
  CHECK(*a == *b);
  REQUIRE(p.observation[0].kind == ObservationKind::joint_positions);
  p.observation[0].particles = {1};
  auto bad = parse_scene(to_json(*a), "bad.json");
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(),
             Catch::Contains("tasks[0].policy.observation[0].particles: only object_position and object_velocity read "
                             "particles"));
}
