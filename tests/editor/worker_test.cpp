// The editor's worker: steps and optimizes on its own thread and publishes snapshots; the
// caller only ever copies them.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "app/editor/worker.h"
#include "engine/scene/scene_json.h"

using namespace adj;
using namespace adj::editor;

namespace {

bool wait_idle(const Worker& w, double seconds = 120) {
  auto t0 = std::chrono::steady_clock::now();
  while (!w.idle()) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace

TEST_CASE("worker: steps N frames, records them, resets", "[editor][worker]") {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/default.json");
  REQUIRE(doc.is_ok());
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  Worker w;
  w.set_scene(*doc, *cs, ADJ_SCENES, 7);
  w.step(12);
  REQUIRE(wait_idle(w));
  Snapshot s;
  w.snapshot(s);
  CHECK(s.generation == 7);
  CHECK(s.frame == 12);
  CHECK(s.recorded_frames == 13);
  CHECK(s.state.particle_count() == cs->model.particle_count());
  State f0;
  REQUIRE(w.recorded_state(0, f0));
  CHECK(f0.particle_q[0].y == cs->model.particle_q[0].y);  // frame 0 is the initial state
  CHECK(s.state.particle_q[0].y != f0.particle_q[0].y);    // it moved
  w.reset();
  REQUIRE(wait_idle(w));
  w.snapshot(s);
  CHECK(s.frame == 0);
}

TEST_CASE("worker: optimizes a few iterations and the loss goes down", "[editor][worker]") {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/bounce.json");
  REQUIRE(doc.is_ok());
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  Worker w;
  w.set_scene(*doc, *cs, ADJ_SCENES, 1);
  w.start_optimize(doc->tasks.at(0).name, 4);
  REQUIRE(wait_idle(w, 600));
  Snapshot s;
  w.snapshot(s);
  INFO(s.opt_error);
  CHECK(s.opt_phase == OptPhase::finished);
  REQUIRE(s.loss.size() == 4);
  CHECK(s.loss.back() < s.loss.front());
  CHECK(s.has_opt_final_state);
  CHECK_FALSE(s.step_grad_norms.empty());
}

TEST_CASE("worker: a missing task is an error, not a crash", "[editor][worker]") {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/default.json");
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  Worker w;
  w.set_scene(*doc, *cs, ADJ_SCENES, 1);
  w.start_optimize("no_such_task", 3);
  REQUIRE(wait_idle(w));
  Snapshot s;
  w.snapshot(s);
  CHECK(s.opt_phase == OptPhase::failed);
  CHECK(s.opt_error.find("no_such_task") != std::string::npos);
}

TEST_CASE("worker: a pulled particle moves towards the target", "[editor][worker]") {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/bounce.json");
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  auto run = [&](bool pull) {
    Worker w;
    w.set_scene(*doc, *cs, ADJ_SCENES, 1);
    if (pull) w.pull(0, {-0.5f, 3.0f, 0.0f});  // up, above its start
    w.step(20);
    REQUIRE(wait_idle(w));
    Snapshot s;
    w.snapshot(s);
    return s.state.particle_q[0].y;
  };
  CHECK(run(true) > run(false) + 0.5f);
}

TEST_CASE("worker: recorded rollouts, one per iteration, and the optimizer waits for the video", "[editor][worker]") {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/bounce.json");
  REQUIRE(doc.is_ok());
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  Worker w;
  w.set_scene(*doc, *cs, ADJ_SCENES, 1);
  w.set_record_rollouts(60);  // bounce: horizon 36 at 60 fps, stride 1
  const int iterations = Worker::k_rollout_queue + 2;
  w.start_optimize(doc->tasks.at(0).name, iterations);

  // nobody takes them: the optimizer stops k_rollout_queue iterations ahead
  auto t0 = std::chrono::steady_clock::now();
  while (w.rollouts_queued() < Worker::k_rollout_queue &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Snapshot s;
  w.snapshot(s);
  CHECK(w.rollouts_queued() == Worker::k_rollout_queue);
  CHECK(s.opt_phase == OptPhase::running);
  CHECK(s.recording_rollouts);
  CHECK(int(s.loss.size()) == Worker::k_rollout_queue);
  CHECK_FALSE(w.idle());

  // taking them lets it finish; each is the rollout its iteration measured
  std::vector<RecordedRollout> got;
  t0 = std::chrono::steady_clock::now();
  for (RecordedRollout r;
       int(got.size()) < iterations && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120);)
    if (w.take_rollout(r))
      got.push_back(std::move(r));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  REQUIRE(wait_idle(w));
  w.snapshot(s);
  REQUIRE(int(got.size()) == iterations);
  CHECK(s.opt_phase == OptPhase::finished);
  CHECK_FALSE(s.recording_rollouts);
  for (int i = 0; i < iterations; ++i) {
    const RecordedRollout& r = got[size_t(i)];
    CHECK(r.iteration == i);
    CHECK(r.loss == s.loss[size_t(i)]);
    CHECK(r.run == s.opt_run);
    REQUIRE(r.states.size() == 37);
    CHECK(r.frames.back() == 36);
    CHECK(r.path.size() == 37);
    // the first frame is the initial state at this iteration's parameters: the ball's start
    CHECK(r.states[0].particle_q[0].x == Approx(-0.5f));
  }
  CHECK(got[0].states.back().particle_q[0].x != got.back().states.back().particle_q[0].x);  // the ball's end moved

  // off: nothing is kept
  w.set_record_rollouts(0);
  w.start_optimize(doc->tasks.at(0).name, 1);
  REQUIRE(wait_idle(w));
  CHECK(w.rollouts_queued() == 0);
}
