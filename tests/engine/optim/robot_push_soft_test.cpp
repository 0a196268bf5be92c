// the arm pushing a soft ball (assets/scenes/robot_arm_push_soft.json): the 3-link arm of
// robot_arm_push.json (PD joint targets per frame) pushes a particle ball on springs across
// the ground to a target, through two-way body-particle contact (engine/articulation/body_particle.h).
// the loss on the ball's centre of mass falls by a stated factor, and the gradient through
// arm-ball, ball-ground and spring forces holds against central differences in double
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>

#include "engine/optim/task.h"
#include "engine/optim/trainer.h"
#include "engine/scene/scene_json.h"

using namespace adj;
using namespace adj::optim;

namespace {

const std::string kScenes = ADJ_ASSET_SCENES;

scene::Scene load_push_soft() {
  auto s = scene::load_scene(kScenes + "/robot_arm_push_soft.json");
  INFO(s.status().message());
  REQUIRE(s.is_ok());
  return s.value();
}

template <class S>
TaskRunnerT<S> make_runner(const scene::Scene& s, const scene::Task& task) {
  auto cs = scene::compile<S>(s, kScenes);
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  REQUIRE(std::string(make_task(cs.value(), task).value()->kind()) == "robot + particles, coupled");
  auto r = TaskRunnerT<S>::create(cs.value(), task);
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  return std::move(r.value());
}

}  // namespace

TEST_CASE("robot push soft: the arm pushes the soft ball toward the target, loss falls 50x in 60 iterations",
          "[optim][robot][coupling]") {
  scene::Scene s = load_push_soft();
  const scene::Task& task = s.tasks.at(0);
  auto r = make_runner<float>(s, task);
  auto t0 = std::chrono::steady_clock::now();
  double first = 0, last = 0;
  for (int i = 0; i < task.optimizer.iterations; ++i) {
    auto it = r.iterate();
    INFO(it.status().message());
    REQUIRE(it.is_ok());
    if (i == 0) first = it->loss;
    last = it->loss;
  }
  auto final_loss = r.evaluate(r.theta());
  REQUIRE(final_loss.is_ok());
  WARN("last iteration's loss " << last << ", at the final parameters " << *final_loss);
  last = double(*final_loss);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("push soft: loss " << first << " -> " << last << " in " << task.optimizer.iterations << " iterations, " << secs
                          << " s");
  CHECK(last < first / 50);  // measured: 0.146 -> 6.5e-4
  // the ball moved toward the goal (x 0.5 -> 0.9)
  double cx = 0;
  const auto& ball = r.frames().back().particle_q;
  for (const auto& x : ball) cx += x.x / double(ball.size());
  CHECK(cx > 0.85);
}

TEST_CASE("robot push soft: gradients through arm-ball contact match central differences (double)",
          "[optim][robot][coupling]") {
  scene::Scene s = load_push_soft();
  scene::Task task = s.tasks.at(0);
  task.horizon = 40;  // the arm reaches the ball within the first frames
  // and a particle-side parameter: the ball's initial velocities (theta = robot block, then it)
  scene::ParamSpec v0;
  v0.kind = scene::ParamKind::initial_velocity;
  v0.object = "ball";
  task.parameters.push_back(v0);
  auto r = make_runner<double>(s, task);
  // a few iterations first, so the arm presses into the ball
  for (int i = 0; i < 3; ++i) REQUIRE(r.iterate().is_ok());
  auto rep = r.check_grad(16, 1e-6, 5);
  INFO(rep.status().message());
  REQUIRE(rep.is_ok());
  INFO(rep->format());
  WARN("push soft check-grad: max rel err " << rep->max_rel_err);
  CHECK(rep->max_rel_err < 1e-3);
  // the test has teeth: some entries have a real gradient
  double max_fd = 0;
  for (const auto& row : rep->rows) max_fd = std::max(max_fd, std::fabs(row.fd));
  CHECK(max_fd > 1e-4);
  bool particle_entry = false;
  for (const auto& row : rep->rows) particle_entry |= row.entry >= r.robot_size() && std::fabs(row.fd) > 1e-4;
  CHECK(particle_entry);
}

// the coupled task through the Task interface, as receding horizon and the editor read it: the
// loss of the frames its rollout flew is evaluate's (the ball's terms and the arm's effort), and
// |dL/d state_t| is reported for every frame
TEST_CASE("robot push soft: the task's loss of its own frames equals evaluate's, with step gradient norms per frame",
          "[optim][robot][coupling]") {
  scene::Scene s = load_push_soft();
  auto cs = scene::compile<double>(s, kScenes);
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  auto task = make_task(cs.value(), s.tasks.at(0));
  INFO(task.status().message());
  REQUIRE(task.is_ok());
  TaskT<double>& t = **task;
  std::vector<double> grad;
  auto value = t.evaluate(t.theta(), &grad);
  INFO(value.status().message());
  REQUIRE(value.is_ok());
  auto again = t.trajectory_loss(t.frames(), t.theta());
  INFO(again.status().message());
  REQUIRE(again.is_ok());
  CHECK(*again == *value);
  REQUIRE(t.step_grad_norms().size() == std::size_t(s.tasks[0].horizon + 1));
  CHECK(t.step_grad_norms().back() > 0);
  CHECK(t.step_grad_norms().front() > 0);
}

// a scene has one gravity: a task's gravity parameter moves the arm (its weight against the PD
// joints) and the ball alike, and its gradient is the bodies' part plus the particles'. The
// bodies' part is about 30% of it here: either part alone misses by that much
TEST_CASE("robot push soft: one gravity, its gradient through the arm and the ball matches central differences",
          "[optim][robot][coupling][fd]") {
  scene::Scene s = load_push_soft();
  scene::Task task = s.tasks.at(0);
  task.horizon = 40;
  task.loss.resize(1);  // the ball's position (the arm's effort needs its inputs as parameters)
  scene::ParamSpec g;
  g.kind = scene::ParamKind::gravity;
  task.parameters = {g};
  auto cs = scene::compile<double>(s, kScenes);
  REQUIRE(cs.is_ok());
  auto r = TaskRunnerT<double>::create(cs.value(), task);
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  REQUIRE(r->theta() == std::vector<double>{0, -9.81, 0});
  auto rep = r->check_grad(0, 1e-6, 5);
  INFO(rep.status().message());
  REQUIRE(rep.is_ok());
  INFO(rep->format());
  REQUIRE(rep->rows.size() == 3);
  CHECK(rep->max_rel_err < 1e-4);           // measured 4.4e-5 (gravity.z, whose gradient is ~1e-10)
  CHECK(std::fabs(rep->rows[0].fd) > 0.1);  // the loss depends on gravity.x and .y
  CHECK(std::fabs(rep->rows[1].fd) > 0.05);
}
