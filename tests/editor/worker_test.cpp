// The editor's worker: steps and optimizes on its own thread and publishes snapshots; the
// caller only ever copies them.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "app/editor/worker.h"
#include "engine/cuda/cuda.h"
#include "engine/optim/parameters.h"
#include "engine/optim/write_back.h"
#include "engine/scene/scene_json.h"
#include "tests/editor/worker_wait.h"

using namespace adj;
using namespace adj::editor;
using adj::editor::test::wait_idle;

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

// a simulation that keeps its pace plays on schedule whether or not the UI takes its frames; one
// that cannot (here at 1000x real time) runs at most one frame ahead of the frame the UI took
// last (snapshot()): the viewport is not starved by it (on a CPU rasterizer both need the
// cores), the UI draws frame F while frame F + 1 is computed, and every frame is shown
TEST_CASE("worker: playing runs at most one frame ahead of the UI when it cannot keep its pace", "[editor][worker]") {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/bounce.json");
  REQUIRE(doc.is_ok());
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  Worker w;
  w.set_scene(*doc, *cs, ADJ_SCENES, 1);
  REQUIRE(wait_idle(w));
  Snapshot s;
  w.snapshot(s);  // the UI takes frame 0
  REQUIRE(s.frame == 0);
  w.play(true);  // real time: 24 frames in 0.4 s, a bounce keeps that pace, taken or not
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  w.snapshot(s);
  CHECK(s.playing);
  CHECK(s.frame >= 10);
  w.play(false);
  w.reset();
  REQUIRE(wait_idle(w));
  w.snapshot(s);
  REQUIRE(s.frame == 0);
  w.set_speed(1000);  // no scene keeps 1000x: it waits for the UI
  w.play(true);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  w.snapshot(s);
  CHECK(s.playing);
  CHECK(s.frame <= 1);
  // a UI that takes a frame every 20 ms gets them one by one, and the simulation goes on
  int last = s.frame, shown = 0;
  for (int k = 0; k < 30; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    w.snapshot(s);
    CHECK(s.frame - last <= 1);
    shown += s.frame - last;
    last = s.frame;
  }
  CHECK(shown >= 5);
  w.play(false);
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

TEST_CASE("worker: a policy task's rollouts are recorded per iteration too (closed loop)", "[editor][worker]") {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/walker.json");
  REQUIRE(doc.is_ok());
  scene::Task& task = doc->tasks.at(0);
  REQUIRE(task.has_policy);
  task.horizon = 40;  // short: 40 frames at 60 fps, stride 1
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  Worker w;
  w.set_scene(*doc, *cs, ADJ_SCENES, 1);
  w.set_record_rollouts(60);
  w.start_optimize(task.name, 2);
  std::vector<RecordedRollout> got;
  auto t0 = std::chrono::steady_clock::now();
  for (RecordedRollout r; got.size() < 2 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(300);)
    if (w.take_rollout(r))
      got.push_back(std::move(r));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  REQUIRE(wait_idle(w));
  Snapshot s;
  w.snapshot(s);
  REQUIRE(got.size() == 2);
  REQUIRE(s.loss.size() == 2);
  for (int i = 0; i < 2; ++i) {
    CHECK(got[size_t(i)].iteration == i);
    CHECK(got[size_t(i)].loss == s.loss[size_t(i)]);
    REQUIRE(got[size_t(i)].states.size() == 41);
    CHECK(got[size_t(i)].frames.back() == 40);
  }
  // the last replay is the optimizer's last rollout (same parameters, same policy): its end
  // state is the one the optimizer reports, to rounding
  REQUIRE(s.has_opt_final_state);
  const State& a = got[1].states.back();
  REQUIRE(a.particle_count() == s.opt_final_state.particle_count());
  double worst = 0;
  for (int p = 0; p < a.particle_count(); ++p)
    for (int k = 0; k < 3; ++k)
      worst =
          std::max(worst, double(std::abs(a.particle_q[size_t(p)][k] - s.opt_final_state.particle_q[size_t(p)][k])));
  CHECK(worst < 1e-5);
  // the policy moved the walker: the replayed end differs from the start
  CHECK(a.particle_q[0].x != got[1].states.front().particle_q[0].x);
}

TEST_CASE("worker: settings.backend cuda runs on the GPU where it can, else on the CPU with the reason",
          "[editor][worker]") {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/default.json");
  REQUIRE(doc.is_ok());
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  Worker cpu, gpu;
  cpu.set_scene(*doc, *cs, ADJ_SCENES, 1);
  doc->settings.backend = "cuda";
  gpu.set_scene(*doc, *cs, ADJ_SCENES, 1);
  cpu.step(10);
  gpu.step(10);
  REQUIRE(wait_idle(cpu));
  REQUIRE(wait_idle(gpu));
  Snapshot a, b;
  cpu.snapshot(a);
  gpu.snapshot(b);
  CHECK(a.backend == "cpu");
  CHECK(a.backend_error.empty());
  std::string why;
  if (cuda_available(&why)) {
    CHECK(b.backend == "cuda");
    CHECK(b.backend_error.empty());
  } else {  // this machine: the reason, and the simulation still runs
    CHECK(b.backend == "cpu");
    CHECK(b.backend_error.find(why) != std::string::npos);
  }
  REQUIRE(b.sim_error.empty());
  CHECK(b.frame == 10);
  // the same kernels: the GPU matches the CPU to rounding
  double worst = 0;
  for (int p = 0; p < a.state.particle_count(); ++p)
    for (int k = 0; k < 3; ++k)
      worst = std::max(worst, double(std::abs(a.state.particle_q[size_t(p)][k] - b.state.particle_q[size_t(p)][k])));
  CHECK(worst < 1e-4);
}

// ---- edits that simulate the same keep the frame; physics edits restart (Editor::sync)

TEST_CASE("worker: set_scene without restart keeps the frame and the timeline", "[editor][worker]") {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/default.json");
  REQUIRE(doc.is_ok());
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  Worker w;
  w.set_scene(*doc, *cs, ADJ_SCENES, 1);
  w.step(8);
  REQUIRE(wait_idle(w));
  Snapshot s;
  w.snapshot(s);
  REQUIRE(s.frame == 8);
  const float y8 = s.state.particle_q[0].y;
  w.set_scene(*doc, *cs, ADJ_SCENES, 2, false);  // e.g. a rename
  REQUIRE(wait_idle(w));
  w.snapshot(s);
  CHECK(s.generation == 2);
  CHECK(s.frame == 8);
  CHECK(s.recorded_frames == 9);
  CHECK(s.state.particle_q[0].y == y8);
  w.set_scene(*doc, *cs, ADJ_SCENES, 3);  // a physics edit
  REQUIRE(wait_idle(w));
  w.snapshot(s);
  CHECK(s.frame == 0);
  CHECK(s.recorded_frames == 1);
}

// ---- robots (engine/articulation) in the worker: stepped beside the particles, optimized by the
// rigid task runner as `adjoint optimize` does

namespace {

scene::Scene arm_scene() {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/robot_arm_reach.json");
  REQUIRE(doc.is_ok());
  return *doc;
}

}  // namespace

TEST_CASE("worker: a posed robot arm is stepped beside a falling particle", "[editor][worker][robots]") {
  scene::Scene doc = arm_scene();
  // joint0 posed at 1 rad (the PD actuators hold the initial pose while playing; gravity sags it)
  doc.objects[0].robot.initial.push_back({"link0", {1.0}, {}});
  scene::Object ball;
  ball.name = "ball";
  ball.kind = scene::ObjectKind::particles;
  ball.particles.particles.push_back({{2, 2, 0}, {0, 0, 0}, 1.0, 0.05});
  doc.objects.push_back(ball);
  auto cs = scene::compile<float>(doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  REQUIRE(cs->has_robots());
  REQUIRE(cs->has_particles());
  Worker w;
  w.set_scene(doc, *cs, ADJ_SCENES, 3);
  w.step(30);
  REQUIRE(wait_idle(w));
  Snapshot s;
  w.snapshot(s);
  INFO(s.sim_error);
  CHECK(s.sim_error.empty());
  CHECK(s.frame == 30);
  REQUIRE(s.state.joint_q.size() == 3);
  // the particle fell freely: y = 2 - g t^2 / 2 at t = 0.5 s (semi-implicit Euler, 1% slack)
  CHECK(s.state.particle_q[0].y == Approx(2.0 - 0.5 * 9.81 * 0.25).epsilon(0.03));
  // the arm sagged below its 1 rad pose under gravity (PD kp 50 cannot hold 3 links level)
  CHECK(s.state.joint_q[0] < 0.97f);
  CHECK(s.state.joint_q[0] > 0.0f);
  State r0;
  REQUIRE(w.recorded_state(0, r0));
  CHECK(r0.joint_q[0] == 1.0f);  // frame 0 is the posed initial state
  State r30;
  REQUIRE(w.recorded_state(30, r30));
  CHECK(r30.joint_q[0] == s.state.joint_q[0]);
  CHECK(s.recorded_frames == 31);
  // deterministic: the same scene steps to the same bits
  Worker w2;
  w2.set_scene(doc, *cs, ADJ_SCENES, 3);
  w2.step(30);
  REQUIRE(wait_idle(w2));
  Snapshot s2;
  w2.snapshot(s2);
  CHECK(s2.state.joint_q[0] == s.state.joint_q[0]);
  CHECK(s2.state.joint_q[2] == s.state.joint_q[2]);
  w.reset();
  REQUIRE(wait_idle(w));
  w.snapshot(s);
  CHECK(s.state.joint_q[0] == 1.0f);
}

TEST_CASE("worker: particles land on a robot's body (robots and particles are stepped coupled)",
          "[editor][worker][robots]") {
  // a fixed 0.2 m box with its top at y = 0.5, and a particle dropped onto it from y = 1
  scene::Scene doc;
  doc.settings.substeps = 8;
  doc.settings.contact.kd = 5.0;  // a damped landing: at rest within the 3 s stepped
  scene::Object box;
  box.name = "pedestal";
  box.kind = scene::ObjectKind::robot;
  box.robot.position = {0, 0.4, 0};
  scene::RobotBody b;
  b.name = "block";
  b.joint = scene::RobotJointKind::fixed;
  scene::RobotShape shape;
  shape.kind = scene::RobotShapeKind::box;
  shape.size = {0.1, 0.1, 0.1};
  shape.density = 500;
  b.shapes.push_back(shape);
  box.robot.bodies.push_back(b);
  doc.objects.push_back(box);
  scene::Object ground;
  ground.name = "ground";
  ground.kind = scene::ObjectKind::collider;
  doc.objects.push_back(ground);
  scene::Object drop;
  drop.name = "drop";
  drop.kind = scene::ObjectKind::particles;
  drop.particles.particles.push_back({{0.02, 1.0, 0.01}, {0, 0, 0}, 0.05, 0.03});
  doc.objects.push_back(drop);
  auto cs = scene::compile<float>(doc, ADJ_SCENES);
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  REQUIRE(cs->has_robots());
  Worker w;
  w.set_scene(doc, *cs, ADJ_SCENES, 1);
  w.step(180);
  REQUIRE(wait_idle(w));
  Snapshot s;
  w.snapshot(s);
  INFO(s.sim_error);
  REQUIRE(s.sim_error.empty());
  // resting on the block's top (0.5 + its radius, a few mm of penalty sink), not on the ground
  CHECK(s.state.particle_q[0].y == Approx(0.53).margin(0.015));
  CHECK(std::abs(s.state.particle_qd[0].y) < 0.05f);
}

TEST_CASE("worker: a robot falling on the ground publishes its contacts", "[editor][worker][robots]") {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/robot_walker.json");
  REQUIRE(doc.is_ok());
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  Worker w;
  w.set_scene(*doc, *cs, ADJ_SCENES, 1);
  w.step(60);
  REQUIRE(wait_idle(w));
  Snapshot s;
  w.snapshot(s);
  INFO(s.sim_error);
  CHECK(s.sim_error.empty());
  REQUIRE(s.rigid_contacts.contact_count() > 0);
  // after a second the walker stands on the ground: the contact forces carry its weight
  double fy = 0, mass = 0;
  for (int c = 0; c < s.rigid_contacts.contact_count(); ++c) fy += s.rigid_contacts.force[size_t(c)].y;
  for (int b = 0; b < cs->model.rigid.body_count(); ++b) mass += cs->model.rigid.body_mass[size_t(b)];
  CHECK(fy == Approx(mass * 9.81).epsilon(0.25));
}

TEST_CASE("worker: a robot task optimizes with the rigid runner", "[editor][worker][robots]") {
  scene::Scene doc = arm_scene();
  auto cs = scene::compile<float>(doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  Worker w;
  w.set_scene(doc, *cs, ADJ_SCENES, 5);
  w.start_optimize("reach", 4);
  REQUIRE(wait_idle(w, 600));
  Snapshot s;
  w.snapshot(s);
  INFO(s.opt_error);
  CHECK(s.opt_phase == OptPhase::finished);
  REQUIRE(s.loss.size() == 4);
  CHECK(s.loss.back() < s.loss.front());
  CHECK(s.has_opt_final_state);  // the arm's joints at the end of the last rollout
  CHECK(s.opt_final_state.joint_q.size() == 3);
  CHECK(s.opt_final_state.particle_count() == 0);
  REQUIRE_FALSE(s.blocks.empty());
  CHECK(s.blocks[0].kind == scene::ParamKind::actuator_control);
  CHECK(s.theta.size() == size_t(60 * 3));
  // the same task's gradient against central differences in double precision
  w.check_gradient("reach", 6);
  REQUIRE(wait_idle(w, 600));
  w.snapshot(s);
  INFO(s.grad_check_text);
  CHECK(s.grad_check_max_rel_err >= 0);
  CHECK(s.grad_check_max_rel_err < 1e-3);
}

TEST_CASE("write_back_robot: optimized robot parameters round-trip through the document", "[editor][robots]") {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/robot_walker.json");
  REQUIRE(doc.is_ok());
  scene::Task task = doc->tasks.at(0);
  task.parameters.clear();
  using K = scene::ParamKind;
  for (K k : {K::joint_q, K::joint_qd, K::actuator_kp, K::actuator_kd, K::body_mass})
    task.parameters.push_back({k, "walker"});
  task.parameters.push_back({K::contact_ke, ""});
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  auto params = optim::ParametersT<float>::create(*cs, task);
  REQUIRE(params.is_ok());
  std::vector<float> theta = params->initial(*cs);
  for (size_t i = 0; i < theta.size(); ++i) theta[i] = theta[i] * 1.25f + 0.01f * float(i % 7);  // all change
  scene::Scene edited = *doc;
  std::vector<std::string> notes = optim::write_back_robot(params->blocks(), theta, *cs, edited);
  CHECK(notes.empty());
  // the document now compiles to exactly these parameters
  auto cs2 = scene::compile<float>(edited, ADJ_SCENES);
  REQUIRE(cs2.is_ok());
  std::vector<float> back = params->initial(*cs2);
  REQUIRE(back.size() == theta.size());
  for (size_t i = 0; i < theta.size(); ++i) {
    INFO(params->entry_name(int(i)));
    CHECK(back[i] == Approx(theta[i]).epsilon(1e-5).margin(1e-6));
  }
  // and survives saving: the JSON holds it
  auto reread = scene::parse_scene(scene::to_json(edited), "round trip");
  REQUIRE(reread.is_ok());
  CHECK(*reread == edited);
}

TEST_CASE("write_back_robot: a URDF robot's default actuators share their mean gain", "[editor][robots]") {
  scene::Scene doc = arm_scene();
  scene::Task task = doc.tasks.at(0);
  task.parameters = {{scene::ParamKind::actuator_kp, "arm"}, {scene::ParamKind::actuator_control, "arm"}};
  auto cs = scene::compile<float>(doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  auto params = optim::ParametersT<float>::create(*cs, task);
  REQUIRE(params.is_ok());
  std::vector<float> theta = params->initial(*cs);
  theta[0] = 60, theta[1] = 70, theta[2] = 80;  // the three kp
  std::vector<std::string> notes = optim::write_back_robot(params->blocks(), theta, *cs, doc);
  CHECK(doc.objects[0].robot.default_actuator.kp == Approx(70.0));
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("mean") != std::string::npos);
  // the per-frame inputs are kept in the task, not dropped with a note
  CHECK(optim::store_values(params->blocks(), theta, task) == 1);
  REQUIRE(task.values.size() == 1);
  CHECK(task.values[0].kind == scene::ParamKind::actuator_control);
  CHECK(task.values[0].object == "arm");
  CHECK(int(task.values[0].values.size()) == params->blocks()[1].count);
}

// the replay of an optimization: the best iterate's rollout as it was measured, and what the
// scene with those parameters applied simulates live, frame for frame, bit for bit
TEST_CASE("worker: the replay of the best iterate is the applied scene's simulation", "[editor][worker][replay]") {
  auto doc = scene::load_scene(std::string(ADJ_SCENES) + "/bounce.json");
  REQUIRE(doc.is_ok());
  auto cs = scene::compile<float>(*doc, ADJ_SCENES);
  REQUIRE(cs.is_ok());
  Worker w;
  w.set_scene(*doc, *cs, ADJ_SCENES, 1);
  w.replay(-1);  // nothing to replay yet
  REQUIRE(wait_idle(w));
  Snapshot s;
  w.snapshot(s);
  CHECK(s.replay.frames == 0);
  CHECK(s.replay.error == "no iteration has finished yet");
  const scene::Task& task = doc->tasks.at(0);
  w.start_optimize(task.name, 20);
  REQUIRE(wait_idle(w, 600));
  w.replay(-1);
  REQUIRE(wait_idle(w));
  w.snapshot(s);
  INFO(s.opt_error << s.replay.error);
  REQUIRE(s.replay.frames == task.horizon + 1);
  CHECK(s.replay.iteration == s.best_iteration);
  CHECK(s.replay.loss == s.best_loss);
  // the best parameters applied to the scene, simulated as the editor plays it
  scene::Scene applied = *doc;
  optim::write_back_task(s.blocks, s.best_theta, *cs, applied);
  auto cs2 = scene::compile<float>(applied, ADJ_SCENES);
  REQUIRE(cs2.is_ok());
  Worker& live = w;  // as the editor: the same worker simulates the applied scene
  live.set_scene(applied, *cs2, ADJ_SCENES, 2);
  live.step(task.horizon);
  REQUIRE(wait_idle(live));
  for (int k : {0, 10, task.horizon}) {
    State r, l;
    REQUIRE(w.replay_state(k, r));
    REQUIRE(live.recorded_state(k, l));
    INFO("frame " << k);
    CHECK(r.particle_q[0].x == l.particle_q[0].x);
    CHECK(r.particle_q[0].y == l.particle_q[0].y);
    CHECK(r.particle_qd[0].x == l.particle_qd[0].x);
  }
  State none;
  CHECK_FALSE(w.replay_state(task.horizon + 1, none));
  // an earlier iteration: evaluated again at its kept parameters; it starts elsewhere
  w.replay(1);
  REQUIRE(wait_idle(w));
  w.snapshot(s);
  REQUIRE(s.replay.iteration == 1);
  CHECK(std::abs(s.replay.loss - s.loss[1]) <= 1e-6 * std::abs(s.loss[1]));
  State r1, rb;
  REQUIRE(w.replay_state(task.horizon, r1));
  REQUIRE(live.recorded_state(task.horizon, rb));
  CHECK(r1.particle_q[0].x != rb.particle_q[0].x);
  w.clear_optimization();
  REQUIRE(wait_idle(w));
  w.snapshot(s);
  CHECK(s.replay.frames == 0);
  CHECK_FALSE(w.replay_state(0, none));
}
