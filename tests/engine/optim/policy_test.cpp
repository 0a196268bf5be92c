#include "engine/optim/policy.h"

#include <cstdio>
#include <cstdlib>
#include <random>

#include "engine/grad/fd_check.h"
#include "tests/engine/optim/grad_check.h"
#include "tests/engine/optim/optim_scenes.h"

using namespace adj;
using namespace adj::optim;
using namespace adj::optim::test;

namespace {

Task walker_task(int horizon, bool observe_state) {
  Task t;
  t.name = "walker";
  t.horizon = horizon;
  t.has_policy = true;
  t.policy.hidden = {16};
  t.policy.phases = 4;
  t.policy.phase_period = 0.5;
  t.policy.output_scale = 0.3;
  t.parameters = {{ParamKind::policy, observe_state ? "robot" : ""}};
  t.loss = {{LossKind::distance, "robot", "", -1, {1, 0, 0}}};
  t.optimizer = {scene::OptimizerKind::adam, 0.03, 1.0, 20};
  t.seed = 5;
  return t;
}

}  // namespace

TEST_CASE("policy: MLP backward vs FD (weights and observations)", "[optim][policy]") {
  auto cs = robot_scene<double>();
  Task task = walker_task(10, true);
  task.policy.hidden = {7, 5};
  auto p = must_ok(PolicyT<double>::create(cs, task));
  CHECK(p.input_size() == 4 + 6 * 6);
  CHECK(p.output_size() == 11);
  CHECK(p.weight_count() == (40 + 1) * 7 + (7 + 1) * 5 + (5 + 1) * 11);
  CHECK(p.weight_name(0) == "W0[0][0]");
  CHECK(p.weight_name(41) == "W0[1][1]");
  CHECK(p.weight_name(40 * 7) == "b0[0]");
  CHECK(p.weight_name(41 * 7) == "W1[0][0]");
  CHECK(p.weight_name(p.weight_count() - 1) == "b2[10]");
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> w(p.weight_count()), obs(p.input_size()), d_out(p.output_size());
  p.init_weights(w.data(), 3);
  for (auto& x : w) x += 0.3 * u(rng);  // biases away from zero too
  for (auto& x : obs) x = u(rng);
  for (auto& x : d_out) x = u(rng);
  auto f = [&](const std::vector<double>& ww, const std::vector<double>& oo) {
    std::vector<double> out;
    p.forward(ww.data(), oo, out);
    double l = 0;
    for (int k = 0; k < p.output_size(); ++k) l += d_out[k] * out[k];
    return l;
  };
  std::vector<double> d_w(w.size(), 0.0), d_obs;
  p.backward(w.data(), obs, d_out, d_w.data(), d_obs);
  FdReport rw = fd_check([&](const std::vector<double>& x) { return f(x, obs); }, w, d_w, 1e-6, 1e-8, 1e-6);
  INFO(rw.message);
  CHECK(rw.ok);
  FdReport ro = fd_check([&](const std::vector<double>& x) { return f(w, x); }, obs, d_obs, 1e-6, 1e-8, 1e-6);
  INFO(ro.message);
  CHECK(ro.ok);
}

TEST_CASE("policy: observation adjoint vs FD", "[optim][policy]") {
  auto cs = robot_scene<double>();
  auto p = must_ok(PolicyT<double>::create(cs, walker_task(10, true)));
  StateT<double> s = cs.model.make_state();
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& v : s.particle_qd) v = {u(rng), u(rng), u(rng)};
  std::vector<double> g(p.input_size());
  for (auto& x : g) x = u(rng);
  StateT<double> adj = cs.model.make_state();
  adj.zero();
  p.observe_adjoint(s, g, adj);
  std::vector<double> x, ad;
  for (int i = 0; i < s.particle_count(); ++i)
    for (int c = 0; c < 3; ++c) {
      x.push_back(s.particle_q[i][c]);
      ad.push_back(adj.particle_q[i][c]);
    }
  for (int i = 0; i < s.particle_count(); ++i)
    for (int c = 0; c < 3; ++c) {
      x.push_back(s.particle_qd[i][c]);
      ad.push_back(adj.particle_qd[i][c]);
    }
  auto f = [&](const std::vector<double>& xx) {
    StateT<double> t = s;
    int n = t.particle_count();
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) {
        t.particle_q[i][c] = xx[3 * i + c];
        t.particle_qd[i][c] = xx[3 * n + 3 * i + c];
      }
    std::vector<double> obs;
    p.observe(7, t, obs);
    double l = 0;
    for (std::size_t k = 0; k < obs.size(); ++k) l += g[k] * obs[k];
    return l;
  };
  FdReport r = fd_check(f, x, ad, 1e-6, 1e-8, 1e-6);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("policy: closed-loop BPTT gradient vs FD (phases and state observations)", "[optim][policy][fd]") {
  Task t = walker_task(20, true);
  t.parameters.push_back({ParamKind::initial_velocity, "robot"});  // through the observations too
  GradCheckReport rep = check_task_grad(robot_scene<double>(), t, 24, 1e-4);
  CHECK(rep.rows.front().name.rfind("policy.W0[", 0) == 0);
  CHECK(rep.rows.back().name.rfind("initial_velocity[robot]", 0) == 0);
}

TEST_CASE("policy: the closed loop's |dL/dx_t| per frame: frame 0's is the norm of the initial state's gradient",
          "[optim][policy]") {
  // every particle's initial position and velocity are parameters, so dL/dx_0 is in the gradient
  Task t = walker_task(20, true);
  t.parameters.push_back({ParamKind::initial_position, "robot"});
  t.parameters.push_back({ParamKind::initial_velocity, "robot"});
  TaskRunnerT<double> r = must_ok(TaskRunnerT<double>::create(robot_scene<double>(), t));
  std::vector<double> g;
  must_ok(r.evaluate(r.theta(), &g));
  const std::vector<double>& norms = r.step_grad_norms();
  REQUIRE(int(norms.size()) == t.horizon + 1);
  double sum = 0;
  for (const ParamBlock& b : r.blocks())
    if (b.kind == ParamKind::initial_position || b.kind == ParamKind::initial_velocity)
      for (int i = b.offset; i < b.offset + b.count; ++i) sum += g[std::size_t(i)] * g[std::size_t(i)];
  CHECK(norms[0] == Approx(std::sqrt(sum)).epsilon(1e-12));
  for (double n : norms) CHECK((std::isfinite(n) && n > 0));
}

TEST_CASE("policy: open-loop (phases only) gradient vs FD, with control forces", "[optim][policy][fd]") {
  Task t = walker_task(15, false);
  t.parameters.push_back({ParamKind::control_force, "robot"});
  t.loss.push_back({LossKind::effort, "robot", "", -1, {1, 0, 0}, 0.1});
  check_task_grad(robot_scene<double>(), t, 24, 1e-4);
}

TEST_CASE("policy: training the walker moves it forward", "[optim][policy]") {
  // Adam lr 0.01, clip 1, 1 s horizon: measured distance loss 0.0014 -> -0.51 m, falling every iteration
  Task t = walker_task(60, true);
  t.optimizer.lr = 0.01;
  auto cs = robot_scene<double>();
  TaskRunnerT<double> r = must_ok(TaskRunnerT<double>::create(cs, t));
  double first = 0, last = 0;
  int falls = 0;
  for (int k = 0; k <= 20; ++k) {
    auto it = r.iterate();
    INFO(it.status().message());
    REQUIRE(it.is_ok());
    if (std::getenv("ADJ_TEST_VERBOSE"))
      std::printf("walker it %2d loss %.6g |g| %.4g %.2f ms\n", it->iteration, it->loss, it->grad_norm, it->ms);
    if (k == 0) first = it->loss;
    falls += k > 0 && it->loss < last;
    last = it->loss;
  }
  INFO("walker loss " << first << " -> " << last);
  CHECK(last < first - 0.3);  // walked at least 0.3 m further
  CHECK(falls >= 16);
}

TEST_CASE("policy: errors", "[optim][policy]") {
  auto cs = robot_scene<double>();
  Task t = walker_task(10, true);
  t.parameters.push_back({ParamKind::spring_activation, "robot"});
  auto r = TaskRunnerT<double>::create(cs, t);
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("both drive the actuated springs"));
  t = walker_task(10, true);
  t.policy.hidden = {4, 0};
  r = TaskRunnerT<double>::create(cs, t);
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("hidden[1]"));
  auto cage = cage_scene<double>(false);
  t = walker_task(10, false);
  t.loss = {{LossKind::position, "cage", "goal"}};
  r = TaskRunnerT<double>::create(cage, t);
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("no actuated springs"));
}
