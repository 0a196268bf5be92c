// Authoring from nothing (app/editor/authoring.h): the starter scene and every template play
// 5 s in the editor's worker; every Add entry compiles, plays and undoes exactly; and what
// Apply keeps reproduces the optimized loss when the saved file is optimized again.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "app/editor/authoring.h"
#include "app/editor/document.h"
#include "app/editor/worker.h"
#include "engine/optim/task.h"
#include "engine/optim/write_back.h"
#include "engine/scene/scene_json.h"
#include "engine/scene/scene_paths.h"
#include "tests/editor/worker_wait.h"

using namespace adj;
using namespace adj::editor;
using adj::editor::test::wait_idle;

namespace {

// `frames` frames of the scene in the editor's worker (particles and robots); the snapshot after
Snapshot play(const scene::Scene& s, const std::string& base_dir, int frames) {
  auto cs = scene::compile<float>(s, base_dir);
  REQUIRE(cs.is_ok());
  Worker w;
  w.set_scene(s, *cs, base_dir, 1);
  w.step(frames);
  REQUIRE(wait_idle(w));
  Snapshot snap;
  w.snapshot(snap);
  return snap;
}

bool all_finite(const State& st) {
  for (const auto& q : st.particle_q)
    if (!std::isfinite(q.x) || !std::isfinite(q.y) || !std::isfinite(q.z)) return false;
  return true;
}

}  // namespace

TEST_CASE("authoring: File > New's starter cloth plays 5 s at 8 substeps", "[editor][authoring]") {
  const scene::Scene s = starter_scene();
  CHECK(s.settings.substeps == 8);  // what the issue saw diverge at frame 1
  const Snapshot snap = play(s, ".", 300);
  INFO(snap.sim_error);
  CHECK(snap.sim_error.empty());
  CHECK(snap.frame == 300);
  CHECK(all_finite(snap.state));
  // it fell and came to rest on the ground (y = 0), not through it
  float lowest = 1e9f, highest = -1e9f;
  for (const auto& q : snap.state.particle_q) lowest = std::min(lowest, q.y), highest = std::max(highest, q.y);
  CHECK(lowest > -0.01f);
  CHECK(highest < 0.2f);
}

TEST_CASE("authoring: every template plays 5 s without an error", "[editor][authoring]") {
  for (const TemplateEntry& t : templates()) {
    INFO(t.file);
    auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/" + t.file);
    REQUIRE(doc.is_ok());
    const Snapshot snap = play(*doc, ADJ_SCENES, 300);
    INFO(snap.sim_error);
    CHECK(snap.sim_error.empty());
    CHECK(snap.frame == 300);
    CHECK(all_finite(snap.state));
  }
}

TEST_CASE("authoring: every Add entry compiles, plays 2 s, and undo/redo give the documents back exactly",
          "[editor][authoring]") {
  const std::string data = ADJ_TEST_DATA, assets = ADJ_ASSETS;
  auto file_for = [&](const AddEntry& e) -> std::string {
    switch (e.kind) {
      case AddKind::cloth_obj:
        return data + "/meshes/quad_cloth.obj";
      case AddKind::soft_obj:
      case AddKind::mesh_collider:
        return data + "/meshes/cube.obj";
      case AddKind::body_mesh:
        return assets + "/robots/meshes/knob.obj";
      case AddKind::urdf:
        return assets + "/robots/arm3.urdf";
      case AddKind::mjcf:
        return data + "/mjcf/servo_arm.xml";
      default:
        return "";
    }
  };
  for (const AddEntry& e : add_entries()) {
    INFO(e.id);
    CHECK(find_add_entry(e.id) == &e);
    if (e.file_filter) CHECK_FALSE(make_object(e.kind, e.id, {0, 0, 0}).is_ok());  // needs its file
    Document doc(starter_scene(), "");
    const scene::Scene before = doc.scene();
    auto o = make_object(e.kind, "cloth", {0.3, 0.0, -0.2}, file_for(e));  // "cloth" is taken: renamed
    REQUIRE(o.is_ok());
    const int i = doc.add_object(*o, std::string("Add ") + e.label);
    REQUIRE(i == int(before.objects.size()));
    CHECK(doc.scene().objects[size_t(i)].name == "cloth.001");
    CHECK(doc.undo_count() == 1);  // one undo step
    const scene::Scene after = doc.scene();
    REQUIRE(doc.undo());
    CHECK(doc.scene() == before);
    REQUIRE(doc.redo());
    CHECK(doc.scene() == after);
    // the file format keeps it exactly
    const auto path = (std::filesystem::temp_directory_path() / "adj_add_roundtrip.json").string();
    REQUIRE(scene::save_scene(after, path).is_ok());
    auto back = scene::load_scene(path);
    REQUIRE(back.is_ok());
    CHECK(*back == after);
    // sensible: it simulates with the starter for 2 s
    const Snapshot snap = play(after, ".", 120);
    INFO(snap.sim_error);
    CHECK(snap.sim_error.empty());
    CHECK(all_finite(snap.state));
  }
}

// the first robot brings the shipped robot scenes' contact (kg-scale bodies sink into the soft
// default), in the same undo step; a scene that states its own keeps it, and so does a second
// robot or any other object
TEST_CASE("authoring: the first robot added brings the stiff robot contact, one undo step", "[editor][authoring]") {
  const std::string assets = ADJ_ASSETS;
  Document doc(starter_scene(), "");
  const scene::Scene before = doc.scene();
  REQUIRE(before.settings.robot_contact == scene::RobotContactSettings{});
  auto cloth = make_object(AddKind::cloth_grid, "sheet", {0.3, 0.0, -0.2});
  REQUIRE(cloth.is_ok());
  CHECK_FALSE(settings_for_added(before, *cloth).has_value());
  auto arm = make_object(AddKind::urdf, "arm", {0.3, 0.0, -0.2}, assets + "/robots/arm3.urdf");
  REQUIRE(arm.is_ok());
  const auto settings = settings_for_added(before, *arm);
  REQUIRE(settings.has_value());
  CHECK(settings->robot_contact.ke == 1e4);
  CHECK(settings->robot_contact.kd == 1e2);
  CHECK(settings->robot_contact.kf == 1e2);
  CHECK(settings->robot_contact.mu == 0.8);
  CHECK(settings->robot_contact.eps == before.settings.robot_contact.eps);
  CHECK(settings->dt == before.settings.dt);  // nothing else changes
  doc.add_object(*arm, "Add URDF robot", &*settings);
  CHECK(doc.undo_count() == 1);
  CHECK(doc.scene().settings.robot_contact.ke == 1e4);
  auto second = make_object(AddKind::body_box, "box", {1.0, 0.0, 0.5});
  REQUIRE(second.is_ok());
  CHECK_FALSE(settings_for_added(doc.scene(), *second).has_value());  // a robot is there already
  REQUIRE(doc.undo());
  CHECK(doc.scene() == before);  // the contact goes back with the robot
  scene::Scene own = before;
  own.settings.robot_contact.ke = 5e3;
  CHECK_FALSE(settings_for_added(own, *arm).has_value());  // the scene's own choice stays
}

TEST_CASE("authoring: in a z-up scene an MJCF robot is added as it is and objects rise along +z",
          "[editor][authoring][up]") {
  const std::string file = std::string(ADJ_TEST_DATA) + "/mjcf/servo_arm.xml";
  auto y = make_object(AddKind::mjcf, "arm", {0.3, 0.0, -0.2}, file);
  auto z = make_object(AddKind::mjcf, "arm", {0.3, -0.2, 0.0}, file, "z");
  REQUIRE(y.is_ok());
  REQUIRE(z.is_ok());
  CHECK(y->robot.rotation == scene::V3{-90, 0, 0});  // MJCF is z-up: stood up in a y-up scene
  CHECK(z->robot.rotation == scene::V3{0, 0, 0});    // and left as it is in a z-up one
  auto ball = make_object(AddKind::sphere, "ball", {0.3, -0.2, 0.0}, "", "z");
  REQUIRE(ball.is_ok());
  CHECK(ball->collider.position == scene::V3{0.3, -0.2, 0.25});  // lifted along +z by its radius
  auto ground = make_object(AddKind::ground, "ground", {0.3, -0.2, 0.4}, "", "z");
  REQUIRE(ground.is_ok());
  CHECK(ground->collider.position[1] == 0.4);  // a ground's height, along the up axis
  // a cloth grid and a soft block lie level and rise along +z: every particle of the cloth
  // at one height 1 m over the click, the block's bottom just over it
  scene::Scene zs = starter_scene();
  zs.settings.up = "z";
  zs.settings.gravity = {0, 0, -9.81};
  zs.objects.clear();
  for (AddKind k : {AddKind::cloth_grid, AddKind::soft_grid}) {
    auto o = make_object(k, "thing", {0.3, -0.2, 0.0}, "", "z");
    REQUIRE(o.is_ok());
    zs.objects.push_back(*o);
  }
  auto cs = scene::compile<double>(zs, "");
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  const scene::ObjectRange& cloth = cs->objects[0];
  const scene::ObjectRange& soft = cs->objects[1];
  double lo_x = 1e9, hi_x = -1e9, lo_y = 1e9, hi_y = -1e9;
  for (int i = cloth.particle_begin; i < cloth.particle_end; ++i) {
    const vec3<double>& p = cs->model.particle_q[i];
    CHECK(p.z == Approx(1.0).margin(1e-9));
    lo_x = std::min(lo_x, p.x), hi_x = std::max(hi_x, p.x), lo_y = std::min(lo_y, p.y), hi_y = std::max(hi_y, p.y);
  }
  CHECK(0.5 * (lo_x + hi_x) == Approx(0.3).margin(0.05));  // centred on the click
  CHECK(0.5 * (lo_y + hi_y) == Approx(-0.2).margin(0.05));
  double soft_low = 1e9;
  for (int i = soft.particle_begin; i < soft.particle_end; ++i)
    soft_low = std::min(soft_low, cs->model.particle_q[i].z);
  CHECK(soft_low == Approx(0.05).margin(1e-9));
}

TEST_CASE("authoring: a new task measures the first moving object against the first target", "[editor][authoring]") {
  scene::Scene s = starter_scene();
  auto target = make_object(AddKind::target, "goal", {1, 0, 0});
  REQUIRE(target.is_ok());
  s.objects.push_back(*target);
  scene::Task t = make_task(s, "land", 90);
  CHECK(t.name == "land");
  CHECK(t.horizon == 90);
  REQUIRE(t.loss.size() == 1);
  CHECK(t.loss[0].object == "cloth");
  CHECK(t.loss[0].target == "goal");
  s.tasks.push_back(t);
  CHECK(make_task(s, "land", 10).name == "land.001");
}

namespace {

// optimize `task` of the scene file for `iterations` in the worker, apply the best iterate,
// save, load the saved file and evaluate its task as `adjoint optimize --iterations 0` does
void check_kept(const std::string& file, const std::string& task, int iterations, int pick = -1) {
  INFO(file << " / " << task);
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/" + file);
  REQUIRE(doc.is_ok());
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  Worker w;
  w.set_scene(*doc, *cs, ADJ_SCENES, 3);
  w.start_optimize(task, iterations);
  REQUIRE(wait_idle(w));
  Snapshot snap;
  w.snapshot(snap);
  INFO(snap.opt_error);
  REQUIRE(snap.loss.size() == size_t(iterations));
  // the best iterate: the lowest loss of the plot
  REQUIRE(snap.best_iteration >= 0);
  const auto lowest = std::min_element(snap.loss.begin(), snap.loss.end());
  CHECK(snap.best_iteration == int(lowest - snap.loss.begin()));
  CHECK(snap.best_loss == *lowest);
  CHECK(snap.best_loss <= snap.loss.front());

  // the best iterate, or the one picked on the loss plot
  std::vector<float> theta = snap.best_theta;
  double want = snap.best_loss;
  if (pick >= 0) {
    REQUIRE(w.iteration_theta(pick, theta));
    want = snap.loss[size_t(pick)];
    CHECK(want != snap.best_loss);
  }
  scene::Scene applied = *doc;
  apply_optimization(snap, theta, *cs, applied);
  CHECK_FALSE(applied == *doc);
  // saved elsewhere, as Save As does: the file references follow
  const std::string dir = std::filesystem::temp_directory_path().string();
  const auto path = (std::filesystem::path(dir) / ("adj_kept_" + file)).string();
  scene::rebase_paths(applied, ADJ_SCENES, dir);
  REQUIRE(scene::save_scene(applied, path).is_ok());
  auto saved = scene::load_scene(path);
  REQUIRE(saved.is_ok());
  CHECK(*saved == applied);
  auto cs2 = scene::compile<float>(*saved, dir);
  REQUIRE(cs2.is_ok());
  const scene::Task* t = saved->find_task(task);
  REQUIRE(t);
  auto r = optim::make_task(*cs2, *t);  // whatever the scene holds
  REQUIRE(r.is_ok());
  CHECK(optim::start_from_stored(**r, (*r)->blocks(), *t).empty());
  auto l = (*r)->evaluate((*r)->theta());
  REQUIRE(l.is_ok());
  const double loss = double(*l);
  CHECK(std::abs(loss - want) <= 1e-5 * std::abs(want));
}

}  // namespace

TEST_CASE("authoring: Apply keeps a cloth's per-particle initial velocities exactly", "[editor][authoring][apply]") {
  check_kept("default.json", "land_on_target", 6);
}

TEST_CASE("authoring: Apply keeps per-frame control forces in the task", "[editor][authoring][apply]") {
  check_kept("push_block.json", "push", 4);
}

TEST_CASE("authoring: Apply keeps a robot's per-frame actuator inputs", "[editor][authoring][apply]") {
  check_kept("robot_arm_reach.json", "reach", 4);
}

TEST_CASE("authoring: Apply keeps a walker's policy weights", "[editor][authoring][apply]") {
  check_kept("robot_walker.json", "walk", 3);
}

TEST_CASE("authoring: Apply of an iteration picked on the loss plot keeps that iteration's loss",
          "[editor][authoring][apply]") {
  check_kept("default.json", "land_on_target", 6, 2);
}
