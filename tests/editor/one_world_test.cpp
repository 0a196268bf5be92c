// One world, one physics: a scene with robots and particles steps to the same bits through
// every path that simulates it: `adjoint run --out`, `adjoint render --states` (both written
// by the CTest fixtures in tests/editor/CMakeLists.txt), the editor's worker (CPU) and the
// rollout that `adjoint optimize` differentiates (the task runner at its initial parameters).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <thread>

#include "app/editor/worker.h"
#include "engine/optim/trainer.h"
#include "engine/scene/scene_json.h"
#include "tests/editor/worker_wait.h"

using namespace adj;
using namespace adj::editor;
using adj::editor::test::wait_idle;

namespace {

// the frames of a state log (app/state_log.h) as states
std::vector<State> read_log(const std::string& path) {
  std::ifstream f(path);
  INFO(path << " (written by the one_world fixtures)");
  REQUIRE(f.good());
  nlohmann::json j = nlohmann::json::parse(f);
  std::vector<State> out;
  for (const auto& fr : j.at("frames")) {
    State s;
    for (const auto& p : fr.at("positions"))
      s.particle_q.push_back({p[0].get<float>(), p[1].get<float>(), p[2].get<float>()});
    for (const auto& p : fr.at("velocities"))
      s.particle_qd.push_back({p[0].get<float>(), p[1].get<float>(), p[2].get<float>()});
    if (fr.contains("joint_q")) {
      for (const auto& v : fr["joint_q"]) s.joint_q.push_back(v.get<float>());
      for (const auto& v : fr["joint_qd"]) s.joint_qd.push_back(v.get<float>());
    }
    REQUIRE(fr.at("frame").get<int>() == int(out.size()));
    out.push_back(std::move(s));
  }
  return out;
}

// the first entry where two states differ, or "" when they are bit-identical
std::string first_difference(const State& a, const State& b) {
  if (a.particle_count() != b.particle_count() || a.joint_q.size() != b.joint_q.size() ||
      a.joint_qd.size() != b.joint_qd.size())
    return "sizes";
  for (int i = 0; i < a.particle_count(); ++i) {
    const vec3<float>&p = a.particle_q[i], &q = b.particle_q[i];
    if (p.x != q.x || p.y != q.y || p.z != q.z) return "particle " + std::to_string(i) + " position";
    const vec3<float>&u = a.particle_qd[i], &v = b.particle_qd[i];
    if (u.x != v.x || u.y != v.y || u.z != v.z) return "particle " + std::to_string(i) + " velocity";
  }
  for (size_t i = 0; i < a.joint_q.size(); ++i)
    if (a.joint_q[i] != b.joint_q[i]) return "joint_q[" + std::to_string(i) + "]";
  for (size_t i = 0; i < a.joint_qd.size(); ++i)
    if (a.joint_qd[i] != b.joint_qd[i]) return "joint_qd[" + std::to_string(i) + "]";
  return "";
}

void check_same(const std::vector<State>& a, const std::vector<State>& b, const char* what, int frames) {
  REQUIRE(int(a.size()) > frames);
  REQUIRE(int(b.size()) > frames);
  for (int t = 0; t <= frames; ++t) {
    INFO(what << ", frame " << t);
    CHECK(first_difference(a[size_t(t)], b[size_t(t)]) == "");
  }
}

// the editor's worker on the CPU: `frames` frames, each recorded state
std::vector<State> worker_frames(const scene::Scene& doc, const scene::CompiledScene& cs, int frames) {
  Worker w;
  w.set_scene(doc, cs, ADJ_SCENES, 1);
  w.step(frames);
  REQUIRE(wait_idle(w));
  Snapshot s;
  w.snapshot(s);
  INFO(s.sim_error);
  REQUIRE(s.sim_error.empty());
  std::vector<State> out(size_t(frames + 1));
  for (int t = 0; t <= frames; ++t) REQUIRE(w.recorded_state(t, out[size_t(t)]));
  return out;
}

void check_scene(const std::string& name, int frames) {
  const std::string path = std::string(ADJ_SCENES) + "/" + name + ".json";
  auto doc = scene::load_scene(path);
  REQUIRE(doc.is_ok());
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  REQUIRE(cs->has_robots());
  REQUIRE(cs->has_particles());
  const std::vector<State> run = read_log(std::string(ADJ_ONE_WORLD_OUT) + "/" + name + "_run.json");
  const std::vector<State> render = read_log(std::string(ADJ_ONE_WORLD_OUT) + "/" + name + "_render.json");
  check_same(run, render, "adjoint run vs adjoint render", frames);
  check_same(run, worker_frames(*doc, *cs, frames), "adjoint run vs the editor's worker", frames);
  // the optimizer's rollout at the task's initial parameters (PD targets: the initial pose)
  auto runner = optim::TaskRunner::create(*cs, doc->tasks.at(0));
  INFO(runner.status().message());
  REQUIRE(runner.is_ok());
  REQUIRE(runner->evaluate(runner->theta()).is_ok());
  check_same(run, runner->frames(), "adjoint run vs the optimizer's rollout", std::min(frames, doc->tasks[0].horizon));
}

}  // namespace

TEST_CASE("one world: an arm pushing a soft ball steps to the same bits on every path", "[editor][one_world]") {
  check_scene("robot_arm_push_soft", 30);
}

TEST_CASE("one world: a box dropped on a hammock steps to the same bits on every path", "[editor][one_world]") {
  check_scene("box_on_cloth", 60);
}

TEST_CASE("one world: the box comes to rest on the hammock, which sags under it", "[editor][one_world]") {
  const std::vector<State> run = read_log(std::string(ADJ_ONE_WORLD_OUT) + "/box_on_cloth_run.json");
  REQUIRE(run.size() == 181);
  // the box (half extent 0.1, placed at y 1.45) over the last second: resting, on the cloth
  const float placed_y = 1.45f, half = 0.1f;
  for (size_t t = 120; t < run.size(); ++t) {
    const State& s = run[t];
    float cloth_min = 1e9f;
    for (const auto& x : s.particle_q) cloth_min = std::min(cloth_min, x.y);
    const float bottom = placed_y + s.joint_q[1] - half;
    INFO("frame " << t << ": box bottom " << bottom << ", lowest cloth particle " << cloth_min);
    CHECK(cloth_min < 1.0f - 0.05f);          // sagged at least 5 cm below its pinned edges
    CHECK(bottom > cloth_min - 0.04f);        // on the cloth, not through it
    CHECK(bottom < 1.0f);                     // below the pinned edges: in the hollow
    CHECK(std::fabs(s.joint_qd[1]) < 0.15f);  // at rest (small contact jitter)
  }
}

TEST_CASE("one world: optimizing the box's throw onto a spot on the hammock lowers the loss", "[editor][one_world]") {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/box_on_cloth.json");
  REQUIRE(doc.is_ok());
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  scene::Task task = doc->tasks.at(0);
  task.optimizer.iterations = 10;
  auto runner = optim::TaskRunner::create(*cs, task);
  INFO(runner.status().message());
  REQUIRE(runner.is_ok());
  double first = -1, last = -1;
  while (runner->iterations_left() > 0) {
    auto it = runner->iterate();
    INFO(it.status().message());
    REQUIRE(it.is_ok());
    if (first < 0) first = it->loss;
    last = it->loss;
  }
  WARN("box on cloth: loss " << first << " -> " << last);
  CHECK(last < 0.3 * first);  // measured: 0.0194 -> 0.0014
}
