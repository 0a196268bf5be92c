// the PODS example scenes in assets/scenes (issue #19): robot_payload.json (a cart carries a
// hanging payload to a target and stops it there) and robot_arm_throw.json (a 3-link arm
// throws a ball onto a target). Each compiles into a robot task with a policy that every
// policy method can train (its policy env exists); its reach term agrees with the running cost
// it is written as; the policy gradient and the open-loop action-sequence gradient that PODS
// steps on hold against central differences in double on a short horizon; a few PODS
// iterations lower the policy's cost from the task's start.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/grad/fd_check.h"
#include "engine/optim/body_probe.h"
#include "engine/optim/pods.h"
#include "engine/scene/scene_json.h"
#include "tests/engine/asset_scene.h"
#include "tests/engine/optim/grad_check.h"

using namespace adj;
using namespace adj::optim;
using namespace adj::test;

namespace {

using Example = AssetScene<double>;

// the policy weights' gradient (BPTT through the closed loop) against central differences on
// 24 sampled weights: |AD - FD| <= atol + 1e-4 |FD| (atol: the differences' own noise; the
// untrained policy's weights have gradients of 1e-6 to 1e-2)
void check_policy_grad(const Example& e, double atol) {
  auto task = ok(make_task(e.cs, e.task));
  REQUIRE(std::string(task->kind()) == "robot");
  GradCheckReport rep = ok(task->check_grad(24, 1e-6, 3));
  REQUIRE(rep.rows.size() == 24);
  optim::test::check_report_rows(rep, atol, 100 * atol);
}

// PODS's open-loop problem: dJ/da against central differences on every action entry, at
// actions drawn around zero
void check_action_grad(const Example& e, double scale) {
  auto task = ok(make_task(e.cs, e.task));
  auto env = ok(task->policy_env({}));
  ActionSequenceT<double> seq(*env, 0, e.task.horizon);
  const int n = seq.size();
  std::mt19937_64 rng(1);
  std::vector<double> a(static_cast<std::size_t>(n)), g;
  for (double& x : a) x = scale * (double(rng() >> 11) * 0x1.0p-52 - 1.0);
  const double j0 = ok(seq.cost(a, &g));
  INFO("J = " << j0 << ", " << n << " action entries");
  std::vector<double> fd(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    const double eps = 1e-6;
    std::vector<double> x = a;
    x[std::size_t(k)] += eps;
    const double jp = ok(seq.cost(x));
    x[std::size_t(k)] = a[std::size_t(k)] - eps;
    const double jm = ok(seq.cost(x));
    fd[std::size_t(k)] = (jp - jm) / (2 * eps);
  }
  FdReport r = compare_gradients(g, fd, 1e-9, 1e-4);
  INFO("gradient: " << r.message);
  CHECK(r.ok);
}

struct Trained {
  double before = 0, after = 0;
  std::vector<PodsStats> stats;
};

// PODS from the task's start (batch copies, no randomized starts)
Trained train(const Example& e, int order, int iterations, int batch) {
  auto task = ok(make_task(e.cs, e.task));
  PodsOptions o;
  o.order = order;
  o.batch = batch;
  auto pods = ok(PodsTrainerT<double>::create(*task, o));
  Trained t;
  t.before = ok(pods.evaluate());
  for (int k = 0; k < iterations; ++k) {
    t.stats.push_back(ok(pods.step()));
    CHECK(t.stats.back().improved_cost <= t.stats.back().policy_cost);
  }
  t.after = ok(pods.evaluate());
  return t;
}

}  // namespace

TEST_CASE("pods scenes: the payload's reach and speed terms are the running costs the policy env sums",
          "[optim][pods][scenes]") {
  Example e("robot_payload.json", "move payload (policy)", 30);
  auto task = ok(make_task(e.cs, e.task));
  // BPTT's loss of the untrained policy = the mean frame cost of the same episode in the env
  const double loss = ok(task->evaluate(task->theta()));
  auto env = ok(task->policy_env({}));
  std::vector<double> obs, out;
  double sum = 0;
  for (int t = 0; t < e.task.horizon; ++t) {
    env->observe(0, obs);
    env->mlp().forward(task->theta().data(), obs, out);
    sum += ok(env->step(0, out));
  }
  INFO("task loss " << loss << ", mean frame cost " << sum / e.task.horizon);
  CHECK(loss == Approx(sum / e.task.horizon).epsilon(1e-12));
  // the payload starts 1 m short of the goal at its height: the first frames cost ~1 m^2
  CHECK(loss > 0.9);
  CHECK(loss < 1.1);
}

TEST_CASE("pods scenes: payload, policy and action-sequence gradients against FD in double",
          "[optim][pods][scenes][fd]") {
  Example e("robot_payload.json", "move payload (policy)", 20);
  check_policy_grad(e, 1e-9);
  check_action_grad(e, 0.5);
}

TEST_CASE("pods scenes: throw, policy and action-sequence gradients against FD in double (ball on the paddle)",
          "[optim][pods][scenes][fd]") {
  Example e("robot_arm_throw.json", "throw (policy)", 12);
  check_policy_grad(e, 1e-8);
  check_action_grad(e, 0.5);
}

TEST_CASE("pods scenes: payload, PODS-1 lowers the policy's cost", "[optim][pods][scenes]") {
  Example e("robot_payload.json", "move payload (policy)");
  Trained t = train(e, 1, 6, 2);
  INFO("PODS-1: mean frame cost " << t.before << " -> " << t.after);
  CHECK(t.after < 0.8 * t.before);
}

TEST_CASE("pods scenes: throw, PODS-2 lowers the policy's cost", "[optim][pods][scenes]") {
  Example e("robot_arm_throw.json", "throw (policy)");
  Trained t = train(e, 2, 4, 2);
  INFO("PODS-2: mean frame cost " << t.before << " -> " << t.after);
  CHECK(t.after < 0.9 * t.before);
  CHECK(t.stats.back().hvps > 0);
}

// measured: BPTT's best of 40 iterations (0.5 s) throws the ball (0.8 m out and 1.1 m high at
// frame 30), lands it 0.4 m short of the goal by frame 50 and it rolls to rest 0.03 m from the
// goal (the ball's joint damping stands for rolling resistance)
TEST_CASE("pods scenes: BPTT trains the throw: the ball lands and comes to rest near the goal",
          "[optim][pods][scenes]") {
  Example e("robot_arm_throw.json", "throw (policy)");
  auto task = ok(make_task(e.cs, e.task));
  const RigidModelT<double>& m = e.cs.model.rigid;
  int ball = -1;
  for (int b = 0; b < m.body_count(); ++b)
    if (m.body_name[std::size_t(b)] == "ball") ball = b;
  REQUIRE(ball >= 0);
  const scene::ObjectRange* goal = e.cs.find("goal");
  REQUIRE(goal);
  double first = 0, best = 1e300;
  std::vector<StateT<double>> frames;
  for (int k = 0; k < 40; ++k) {
    const double loss = ok(task->iterate()).loss;
    if (k == 0) first = loss;
    if (loss < best) best = loss, frames = task->frames();
  }
  REQUIRE(frames.size() == std::size_t(e.task.horizon + 1));
  auto ball_at = [&](int t) { return rigid_body_com<double>(m, frames[std::size_t(t)].joint_q, ball, nullptr); };
  const vec3<double> end = ball_at(e.task.horizon), before = ball_at(e.task.horizon - 10);
  const double dx = end[0] - goal->target[0], dy = end[1] - goal->target[1];
  INFO("BPTT: " << first << " -> best " << best << "; the ball ends at (" << end[0] << ", " << end[1] << ")");
  CHECK(best < 0.5 * first);
  CHECK(std::sqrt(dx * dx + dy * dy) < 0.15);  // on the target
  CHECK(std::abs(end[0] - before[0]) < 0.05);  // and (nearly) at rest
  // thrown, not rolled: where it passes beyond the arm's reach (1.2 m of links, the paddle,
  // the ball) it is in the air
  int out = 0;
  while (out < e.task.horizon && ball_at(out)[0] < 1.35) ++out;
  INFO("beyond the arm's reach at frame " << out << ", height " << ball_at(out)[1]);
  CHECK(out < e.task.horizon);
  CHECK(ball_at(out)[1] > 0.15);
}
