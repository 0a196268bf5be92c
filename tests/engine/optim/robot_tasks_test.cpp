// robot tasks (engine/optim/trainer.h): the reference robot scenes in assets/scenes run a
// few iterations with the loss falling by a stated factor, and their gradients hold against
// central differences in double (every parameter kind, short horizons)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/optim/task.h"
#include "engine/optim/trainer.h"
#include "engine/scene/scene_json.h"

using namespace adj;
using namespace adj::optim;

namespace {

const std::string kScenes = ADJ_ASSET_SCENES;

scene::Scene load(const std::string& file) {
  auto s = scene::load_scene(kScenes + "/" + file);
  INFO(s.status().message());
  REQUIRE(s.is_ok());
  return s.value();
}

template <class S>
TaskRunnerT<S> runner(const scene::Scene& s, const scene::Task& task, scene::CompiledSceneT<S>* keep = nullptr) {
  auto cs = scene::compile<S>(s, kScenes);
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  REQUIRE(std::string(make_task(cs.value(), task).value()->kind()) == "robot");
  auto r = TaskRunnerT<S>::create(cs.value(), task);
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  if (keep) *keep = cs.value();
  return std::move(r.value());
}

// theta moved off its start (zero controls sit on symmetric points)
template <class S>
void perturb(TaskRunnerT<S>& r, double amount) {
  std::vector<S> th = r.theta();
  for (size_t i = 0; i < th.size(); ++i) th[i] += S(amount * std::sin(0.7 * double(i) + 0.3));
  r.set_theta(th);
}

void check_grad(const scene::Scene& s, scene::Task task, int horizon, int samples, double tol) {
  task.horizon = horizon;
  for (scene::LossTerm& l : task.loss)
    if (l.step > horizon) l.step = -1;
  TaskRunnerT<double> r = runner<double>(s, task);
  perturb(r, 0.05);
  auto rep = r.check_grad(samples, 1e-6, 3);
  INFO(rep.status().message());
  REQUIRE(rep.is_ok());
  INFO(rep->format());
  CHECK(rep->max_rel_err < tol);
}

std::vector<IterationStats> iterate(TaskRunnerT<float>& r, int n) {
  std::vector<IterationStats> h;
  for (int i = 0; i < n; ++i) {
    auto it = r.iterate();
    INFO(it.status().message());
    REQUIRE(it.is_ok());
    h.push_back(it.value());
  }
  return h;
}

// what the walker's frames show: torso com travel along x [m], the lowest torso com height
// [m] and the least torso up-alignment (R y).y over every frame
struct WalkStats {
  double distance = 0, min_height = 1e9, min_up = 1e9;
};
template <class S>
WalkStats walk_stats(const TaskRunnerT<S>& r) {
  WalkStats w;
  const auto& fr = r.frames();
  for (const auto& f : fr) {
    RigidBodyProbe<S> p = rigid_body_probe<S>(r.model().rigid, f.joint_q, f.joint_qd, 0);
    w.min_height = std::min(w.min_height, double(p.c.y));
    w.min_up = std::min(w.min_up, double(p.R.m[1][1]));
  }
  w.distance = double(rigid_body_com<S>(r.model().rigid, fr.back().joint_q, 0, nullptr).x -
                      rigid_body_com<S>(r.model().rigid, fr.front().joint_q, 0, nullptr).x);
  return w;
}

}  // namespace

TEST_CASE("robot task: 3-link arm reach (URDF, PD targets): loss falls 100x in 40 iterations, FD in double",
          "[optim][robot]") {
  scene::Scene s = load("robot_arm_reach.json");
  check_grad(s, s.tasks[0], 20, 16, 1e-5);
  TaskRunnerT<float> r = runner<float>(s, s.tasks[0]);
  auto h = iterate(r, 40);
  double last = double(r.evaluate(r.theta()).value());
  INFO("first " << h.front().loss << " last " << last);
  CHECK(last < h.front().loss / 100);
}

TEST_CASE("robot task: cartpole swing-up (SHAC cost, dt 1/60 x 4, 240 frames): loss falls, FD in double",
          "[optim][robot]") {
  scene::Scene s = load("robot_cartpole.json");
  check_grad(s, s.tasks[0], 40, 16, 1e-4);
  scene::Task task = s.tasks[0];
  REQUIRE(task.horizon == 240);
  TaskRunnerT<float> r = runner<float>(s, task);
  auto h = iterate(r, 300);
  double best = h.front().loss;
  for (const IterationStats& it : h) best = std::min(best, it.loss);
  INFO("first " << h.front().loss << " best " << best);
  // open-loop trajectory optimization over the whole 4 s horizon pumps energy slowly (the
  // pole does not reach upright in 300 iterations)
  CHECK(best < 0.92 * h.front().loss);
}

TEST_CASE("robot task: quadruped dive (open loop, free base, ground contact): travels > 0.3 m in 15 iterations, FD",
          "[optim][robot]") {
  scene::Scene s = load("robot_walker.json");
  REQUIRE(s.tasks.size() == 2);
  check_grad(s, s.tasks[1], 12, 12, 1e-5);
  TaskRunnerT<float> r = runner<float>(s, s.tasks[1]);
  auto h = iterate(r, 15);
  double last = double(r.evaluate(r.theta()).value());
  INFO("first " << h.front().loss << " last " << last);
  CHECK(h.front().loss > -0.05);
  CHECK(last < -0.3);  // distance loss = -(x travelled) [m]
}

TEST_CASE("robot task: drone through two waypoints (4 rotor thrusts): loss falls 50x in 150 iterations, FD in double",
          "[optim][robot]") {
  scene::Scene s = load("robot_drone.json");
  check_grad(s, s.tasks[0], 90, 16, 1e-5);
  TaskRunnerT<float> r = runner<float>(s, s.tasks[0]);
  auto h = iterate(r, 150);
  double best = h.front().loss;
  for (const IterationStats& it : h) best = std::min(best, it.loss);
  INFO("first " << h.front().loss << " best " << best);
  CHECK(best < h.front().loss / 50);
}

TEST_CASE(
    "robot task: cartpole balance with an MLP policy (closed loop, 1 s): loss falls 10x in 60 iterations, "
    "policy gradients against FD in double",
    "[optim][robot][policy]") {
  scene::Scene s = load("robot_cartpole_balance.json");
  check_grad(s, s.tasks[0], 20, 16, 1e-5);
  TaskRunnerT<float> r = runner<float>(s, s.tasks[0]);
  REQUIRE(r.has_policy());
  CHECK(r.entry_name(0) == "policy.W0[0][0]");
  auto h = iterate(r, 60);
  double last = double(r.evaluate(r.theta()).value());
  INFO("first " << h.front().loss << " last " << last);
  CHECK(last < h.front().loss / 10);
  // the swing-up policy task: gradients only (BPTT over 240 frames settles at the bottom)
  scene::Scene up = load("robot_cartpole.json");
  REQUIRE(up.tasks.size() == 2);
  check_grad(up, up.tasks[1], 30, 12, 1e-5);
}

TEST_CASE("robot task: every parameter kind (joint q/qd, PD gains, masses, contact) against FD in double",
          "[optim][robot]") {
  scene::Scene s = load("robot_walker.json");
  scene::Task task = s.tasks[1];
  task.parameters.clear();
  for (scene::ParamKind k : {scene::ParamKind::joint_q, scene::ParamKind::joint_qd, scene::ParamKind::actuator_control,
                             scene::ParamKind::actuator_kp, scene::ParamKind::actuator_kd, scene::ParamKind::body_mass})
    task.parameters.push_back({.kind = k, .object = "walker"});
  for (scene::ParamKind k : {scene::ParamKind::contact_ke, scene::ParamKind::contact_kd, scene::ParamKind::contact_mu})
    task.parameters.push_back({.kind = k});
  task.loss.push_back({.kind = scene::LossKind::joint,
                       .object = "walker",
                       .step = 6,
                       .weight = 0.5,
                       .body = "leg1_shin",
                       .value = -0.4});
  check_grad(s, task, 10, 24, 1e-5);
}

TEST_CASE("robot task: the cartpole term and a body position against FD on an inline robot", "[optim][robot]") {
  scene::Scene s = load("robot_cartpole.json");
  scene::Task task = s.tasks[0];
  task.parameters.push_back({.kind = scene::ParamKind::joint_q, .object = "cartpole"});
  task.parameters.push_back({.kind = scene::ParamKind::joint_qd, .object = "cartpole"});
  task.parameters.push_back({.kind = scene::ParamKind::body_mass, .object = "cartpole"});
  scene::Object goal;
  goal.name = "goal";
  goal.kind = scene::ObjectKind::target;
  goal.target.position = {0.3, 1.8, 0};
  s.objects.push_back(goal);
  task.loss.push_back(
      {.kind = scene::LossKind::position, .object = "cartpole", .target = "goal", .step = 10, .body = "pole"});
  task.loss.push_back({.kind = scene::LossKind::distance, .object = "cartpole", .step = 15, .body = "cart"});
  check_grad(s, task, 20, 0, 1e-5);
}

TEST_CASE("robot task: errors name the task and the entry, the particle parameters refuse robot kinds",
          "[optim][robot]") {
  scene::Scene s = load("robot_arm_reach.json");
  auto cs = scene::compile<float>(s, kScenes);
  REQUIRE(cs.is_ok());
  scene::Task task = s.tasks[0];
  task.loss[0].body = "hand";
  auto r = TaskRunnerT<float>::create(cs.value(), task);
  REQUIRE(!r.is_ok());
  CHECK(r.status().message() == "task 'reach': loss[0] (position): robot \"arm\" has no body \"hand\"");
  // a robot kind on an object of particles (a task that names no robot: every entry is the
  // particles') is refused, naming the kind
  scene::Scene soft = load("robot_arm_push_soft.json");
  auto soft_cs = scene::compile<float>(soft, kScenes);
  REQUIRE(soft_cs.is_ok());
  scene::Task on_ball = soft.tasks[0];
  on_ball.parameters[0].object = "ball";
  on_ball.loss.resize(1);  // the ball's position
  auto p = ParametersT<float>::create(soft_cs.value(), on_ball);
  REQUIRE(!p.is_ok());
  CHECK(p.status().message().find("actuator_control is a robot parameter") != std::string::npos);
  // entry names for the CLI's check-grad table
  auto ok = TaskRunnerT<float>::create(cs.value(), s.tasks[0]);
  REQUIRE(ok.is_ok());
  CHECK(ok->entry_name(3 * 2 + 1) == "actuator_control[arm][t=2][link1]");
}

// per-element bounds (one per actuator, as the editor takes a URDF's joint ranges and effort
// limits): every frame's input of an actuator stays inside its own bounds, before and while the
// optimizer moves it; a list of another length is refused, naming the actuators
TEST_CASE("robot task: each actuator's inputs stay inside their own bounds, and a wrong count is refused",
          "[optim][robot]") {
  scene::Scene s = load("robot_arm_reach.json");
  auto cs = scene::compile<float>(s, kScenes);
  REQUIRE(cs.is_ok());
  scene::Task task = s.tasks[0];
  task.optimizer.iterations = 4;
  scene::ParamSpec& p = task.parameters[0];
  p.lower_each = {-0.05, -0.4, -3.0};
  p.upper_each = {0.05, 0.4, 3.0};  // the third narrowed by the block's [-2.5, 2.5]
  auto r = TaskRunnerT<float>::create(cs.value(), task);
  REQUIRE(r.is_ok());
  const int n = 3;
  auto inside = [&](const std::vector<float>& theta) {
    for (int i = 0; i < int(theta.size()); ++i) {
      const double lo = std::max(p.lower, p.lower_each[size_t(i % n)]);
      const double hi = std::min(p.upper, p.upper_each[size_t(i % n)]);
      if (theta[size_t(i)] < float(lo) || theta[size_t(i)] > float(hi)) return false;
    }
    return true;
  };
  std::vector<float> far(r->theta().size(), 9.f);
  r->set_theta(far);
  CHECK(inside(r->theta()));
  CHECK(r->theta()[0] == 0.05f);
  CHECK(r->theta()[2] == 2.5f);
  for (int k = 0; k < 4; ++k) REQUIRE(r->iterate().is_ok());
  CHECK(inside(r->theta()));

  p.lower_each = {-1, -1};
  p.upper_each.clear();
  auto refused = TaskRunnerT<float>::create(cs.value(), task);
  REQUIRE_FALSE(refused.is_ok());
  CHECK_THAT(refused.status().message(),
             Catch::Contains("parameters[0] (actuator_control): \"lower\" lists 2 bounds for the block's 3 elements "
                             "(one each: link0, link1, link2)"));
}

TEST_CASE(
    "robot task: the quadruped walks: its phase-clock MLP policy, trained by BPTT over 2 s, moves the torso > 1 m "
    "with its com above 0.38 m and upright in every frame, policy gradients against FD in double",
    "[optim][robot][walker]") {
  scene::Scene s = load("robot_walker.json");
  const scene::Task& task = s.tasks[0];
  REQUIRE(task.has_policy);
  // (entries near 1e-6 carry FD noise of ~1e-11 absolute: rel 1e-4)
  check_grad(s, task, 20, 16, 1e-4);
  // BPTT through 120 contact-rich frames is not monotone (a step can tip the walker over):
  // keep the best policy seen, as a trainer with early stopping does
  TaskRunnerT<float> r = runner<float>(s, task);
  std::vector<float> best_theta = r.theta();
  double best = 1e30;
  for (int i = 0; i < task.optimizer.iterations; ++i) {
    std::vector<float> th = r.theta();
    auto it = r.iterate();
    REQUIRE(it.is_ok());
    if (it->loss < best) best = it->loss, best_theta = th;
  }
  double last = double(r.evaluate(r.theta()).value());
  if (last < best) best = last, best_theta = r.theta();
  REQUIRE(r.evaluate(best_theta).is_ok());
  WalkStats w = walk_stats(r);
  INFO("best loss " << best << ": torso travels " << w.distance << " m in " << task.horizon
                    << " frames, lowest com height " << w.min_height << " m, least up alignment " << w.min_up);
  CHECK(w.distance > 1.0);     // measured 1.98 m (seed 0, 60 iterations; best losses of seeds 2-4: -1.50, -0.88, -1.19)
  CHECK(w.min_height > 0.38);  // measured 0.443 m (standing: 0.447 m)
  CHECK(w.min_up > 0.9);       // measured 0.997
}

TEST_CASE("robot task: walker running costs (height, upright, speed) against FD in double", "[optim][robot][walker]") {
  scene::Scene s = load("robot_walker.json");
  scene::Task task = s.tasks[0];
  task.has_policy = false;
  task.parameters = {{.kind = scene::ParamKind::joint_q, .object = "walker"},
                     {.kind = scene::ParamKind::joint_qd, .object = "walker"},
                     {.kind = scene::ParamKind::actuator_control, .object = "walker"}};
  // every term active: the torso below 0.6 m, tilted (a pitched axis), slower than 0.5 m/s
  task.loss = {{.kind = scene::LossKind::height, .object = "walker", .weight = 2, .body = "torso", .value = 0.6},
               {.kind = scene::LossKind::upright, .object = "walker", .axis = {0.3, 1, 0.2}, .body = "torso"},
               {.kind = scene::LossKind::speed, .object = "walker", .axis = {1, 0, 0.1}, .body = "torso", .value = 0.5},
               {.kind = scene::LossKind::speed, .object = "walker", .step = 5, .axis = {0, 1, 0}, .body = "leg2_shin"}};
  check_grad(s, task, 10, 0, 1e-5);
  // each term is on (not a zero that any gradient matches)
  task.horizon = 10;
  TaskRunnerT<double> r = runner<double>(s, task);
  perturb(r, 0.05);
  REQUIRE(r.evaluate(r.theta()).is_ok());
  for (int k = 0; k < 4; ++k) {
    INFO(r.term_name(k) << " = " << r.term_values()[k]);
    CHECK(r.term_values()[k] > 1e-4);
  }
  // height: (0.6 - com y)^2 averaged over frames 1..10, by hand from the frames
  double h = 0;
  for (int f = 1; f <= 10; ++f) {
    double d = 0.6 - rigid_body_com<double>(r.model().rigid, r.frames()[f].joint_q, 0, nullptr).y;
    h += d > 0 ? d * d : 0;
  }
  CHECK(r.term_values()[0] == Approx(2 * h / 10).epsilon(1e-12));
}

TEST_CASE("robot task: walker loss kinds are read, written and checked with JSON paths", "[optim][robot][walker]") {
  scene::Scene s = load("robot_walker.json");
  scene::Task& t = s.tasks[0];
  t.loss = {{.kind = scene::LossKind::height, .object = "walker", .body = "torso", .value = 0.3},
            {.kind = scene::LossKind::upright, .object = "walker", .axis = {0, 1, 0}, .body = "torso"},
            {.kind = scene::LossKind::speed, .object = "walker", .axis = {1, 0, 0}, .body = "torso", .value = 0.4}};
  auto again = scene::parse_scene(scene::to_json(s), "walker.json");
  INFO(again.status().message());
  REQUIRE(again.is_ok());
  CHECK(again->tasks[0].loss == t.loss);
  // bad terms name the file and the path
  struct Bad {
    scene::LossTerm term;
    std::string message;
  };
  for (const Bad& b :
       {Bad{{.kind = scene::LossKind::height, .object = "walker", .value = 0.3}, "loss[0].body"},
        Bad{{.kind = scene::LossKind::upright, .object = "walker", .axis = {0, 0, 0}, .body = "torso"}, "loss[0].axis"},
        Bad{{.kind = scene::LossKind::speed, .object = "ground", .body = "torso"}, "loss[0].object"}}) {
    scene::Scene bad = s;
    bad.tasks[0].loss = {b.term};
    auto r = scene::parse_scene(scene::to_json(bad), "walker.json");
    REQUIRE(!r.is_ok());
    INFO(r.status().message());
    CHECK(r.status().message().find("walker.json") != std::string::npos);
    CHECK(r.status().message().find(b.message) != std::string::npos);
  }
  // an unknown body is the runner's error, with the task and the term
  t.loss[1].body = "head";
  auto cs = scene::compile<float>(s, kScenes);
  REQUIRE(cs.is_ok());
  auto r = TaskRunnerT<float>::create(cs.value(), t);
  REQUIRE(!r.is_ok());
  CHECK(r.status().message() == "task 'walk': loss[1] (upright): robot \"walker\" has no body \"head\"");
}

// ADJ_WALKER_SCENE=file ADJ_WALKER_ITERS=n: trains task 0 of a walker scene and prints the gait
TEST_CASE("robot walker: training experiment", "[.experiment]") {
  const char* file = std::getenv("ADJ_WALKER_SCENE");
  auto sc = scene::load_scene(file ? std::string(file) : kScenes + "/robot_walker.json");
  REQUIRE(sc.is_ok());
  scene::Scene s = sc.value();
  const char* iters = std::getenv("ADJ_WALKER_ITERS");
  const int n = iters ? std::atoi(iters) : s.tasks[0].optimizer.iterations;
  TaskRunnerT<float> r = runner<float>(s, s.tasks[0]);
  for (int i = 0; i <= n; ++i) {
    if (i % 10 == 0 || i == n) {
      double loss = double(r.evaluate(r.theta()).value());
      WalkStats w = walk_stats(r);
      std::printf("iter %3d loss %8.4f  x %6.3f m  min height %5.3f m  min up %5.3f  terms", i, loss, w.distance,
                  w.min_height, w.min_up);
      for (double v : r.term_values()) std::printf(" %.4f", v);
      std::printf("\n");
      std::fflush(stdout);
    }
    if (i < n) REQUIRE(r.iterate().is_ok());
  }
}
