// one loss, one parameter table over both sides of a coupled scene: the arm of
// assets/scenes/robot_arm_push_soft.json pushing the soft ball, with a particle term (the
// ball's centre of mass to the goal) and a body term (the arm's last link's centre of mass to
// the goal) in one LossT, and a parameter block on each side in one ParametersT (the arm's PD
// targets per frame, the ball's initial velocities). The task's gradient holds against
// central differences in double, and it is the sum of the two one-term tasks' gradients, each
// of which misses the other term's part by far (a loss that dropped one side's seeds fails).
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/optim/trainer.h"
#include "engine/scene/scene_json.h"

using namespace adj;
using namespace adj::optim;

namespace {

const std::string kScenes = ADJ_ASSET_SCENES;

struct Coupled {
  scene::Scene scene;
  scene::Task task;
};

// the push task over 30 frames, with the arm's term beside the ball's and the ball's initial
// velocities beside the arm's inputs
Coupled coupled_task() {
  auto s = scene::load_scene(kScenes + "/robot_arm_push_soft.json");
  INFO(s.status().message());
  REQUIRE(s.is_ok());
  Coupled c{s.value(), s.value().tasks.at(0)};
  c.task.horizon = 30;
  scene::ParamSpec v0;
  v0.kind = scene::ParamKind::initial_velocity;
  v0.object = "ball";
  v0.lower = -1, v0.upper = 1;
  c.task.parameters.push_back(v0);
  c.task.loss.clear();
  scene::LossTerm ball;
  ball.kind = scene::LossKind::position;
  ball.object = "ball";
  ball.target = "goal";
  scene::LossTerm hand = ball;
  hand.object = "arm";
  hand.body = "link2";
  hand.weight = 0.5;
  c.task.loss = {ball, hand};
  return c;
}

TaskRunnerT<double> runner(const Coupled& c, const scene::Task& task) {
  auto cs = scene::compile<double>(c.scene, kScenes);
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  auto r = TaskRunnerT<double>::create(cs.value(), task);
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  return std::move(r.value());
}

std::vector<double> gradient(TaskRunnerT<double>& r, const std::vector<double>& theta) {
  std::vector<double> g;
  auto v = r.evaluate(theta, &g);
  INFO(v.status().message());
  REQUIRE(v.is_ok());
  return g;
}

}  // namespace

TEST_CASE(
    "loss sides: a coupled task's particle and body terms and both sides' blocks, gradient against central "
    "differences (double)",
    "[optim][robot][coupling]") {
  const Coupled c = coupled_task();
  auto r = runner(c, c.task);
  CHECK(std::string(r.kind()) == "robot + particles, coupled");
  // one parameter table: the arm's block first, then the ball's
  REQUIRE(r.blocks().size() == 2);
  CHECK(r.blocks()[0].side == TermSide::bodies);
  CHECK(r.blocks()[0].kind == scene::ParamKind::actuator_control);
  CHECK(r.blocks()[1].side == TermSide::particles);
  CHECK(r.blocks()[1].offset == r.robot_size());
  // one loss: the body term first, then the particle term
  REQUIRE(r.evaluate(r.theta()).is_ok());
  REQUIRE(r.term_values().size() == 2);
  CHECK(r.term_name(0) == "position[arm.link2] -> goal");
  CHECK(r.term_name(1) == "position[ball -> goal]");
  CHECK(r.term_values()[0] > 1e-3);
  CHECK(r.term_values()[1] > 1e-3);

  // a few steps first, so the arm presses into the ball
  for (int i = 0; i < 3; ++i) REQUIRE(r.iterate().is_ok());
  auto rep = r.check_grad(24, 1e-6, 11);
  INFO(rep.status().message());
  REQUIRE(rep.is_ok());
  INFO(rep->format());
  CHECK(rep->max_rel_err < 1e-3);
  bool robot_entry = false, particle_entry = false;
  for (const auto& row : rep->rows) {
    robot_entry |= row.entry < r.robot_size() && std::fabs(row.fd) > 1e-4;
    particle_entry |= row.entry >= r.robot_size() && std::fabs(row.fd) > 1e-4;
  }
  CHECK(robot_entry);
  CHECK(particle_entry);

  // each one-term task: the other side's term dropped. The two gradients add up to the whole
  // (the loss is their sum), and each misses the whole by far more than the check's tolerance
  const std::vector<double> theta = r.theta();
  const std::vector<double> whole = gradient(r, theta);
  scene::Task ball_only = c.task, hand_only = c.task;
  ball_only.loss = {c.task.loss[0]};
  hand_only.loss = {c.task.loss[1]};
  auto rb = runner(c, ball_only);
  auto rh = runner(c, hand_only);
  REQUIRE(rb.theta().size() == theta.size());
  const std::vector<double> gb = gradient(rb, theta), gh = gradient(rh, theta);
  double scale = 0, sum_err = 0, miss_b = 0, miss_h = 0;
  for (std::size_t i = 0; i < theta.size(); ++i) {
    scale = std::max(scale, std::fabs(whole[i]));
    sum_err = std::max(sum_err, std::fabs(gb[i] + gh[i] - whole[i]));
    miss_b = std::max(miss_b, std::fabs(gb[i] - whole[i]));
    miss_h = std::max(miss_h, std::fabs(gh[i] - whole[i]));
  }
  INFO("max |g| " << scale << ", |g_ball + g_hand - g| " << sum_err << ", |g_ball - g| " << miss_b << ", |g_hand - g| "
                  << miss_h);
  CHECK(sum_err < 1e-9 * scale);
  CHECK(miss_b > 1e-2 * scale);
  CHECK(miss_h > 1e-2 * scale);
}
