#include "engine/optim/loss.h"

#include <random>

#include "engine/grad/fd_check.h"
#include "tests/engine/optim/optim_scenes.h"

using namespace adj;
using namespace adj::optim;
using namespace adj::optim::test;

namespace {

// 4 particles of unequal mass (one pinned) in "body", 1 free particle in "other", a target
CompiledSceneT<double> loss_scene() {
  ModelBuilderT<double> b;
  b.add_particle({0, 0, 0}, {}, 1.0);
  b.add_particle({1, 0, 0}, {}, 2.0);
  b.add_particle({0, 1, 0}, {}, 0.0);
  b.add_particle({0, 0, 1}, {}, 0.5);
  b.add_particle({3, 3, 3}, {}, 1.0);
  CompiledSceneT<double> cs;
  cs.model = must(b.finalize());
  cs.objects = {particles_object("body", 0, 4), particles_object("other", 4, 5), target_object("goal", {0.5, 2, -1})};
  return cs;
}

// the loss of a trajectory of states (observe every state, then value)
double loss_of(LossT<double>& loss, const std::vector<StateT<double>>& states, const std::vector<double>& theta) {
  loss.begin();
  for (int t = 0; t < int(states.size()); ++t) loss.observe(t, states[t]);
  return loss.value(theta);
}

// seeds of every state entry against central differences of the loss
void check_seeds(const Task& task, double tol = 1e-7) {
  auto cs = loss_scene();
  auto params = must_ok(ParametersT<double>::create(cs, task));
  auto loss = must_ok(LossT<double>::create(cs, task, params));
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<StateT<double>> states(task.horizon + 1, cs.model.make_state());
  for (auto& s : states)
    for (int i = 0; i < s.particle_count(); ++i) {
      s.particle_q[i] = {u(rng), u(rng), u(rng)};
      s.particle_qd[i] = {u(rng), u(rng), u(rng)};
    }
  std::vector<double> theta(params.size());
  for (auto& x : theta) x = u(rng);
  loss_of(loss, states, theta);
  std::vector<double> ad, fd;
  const double eps = 1e-6;
  for (int t = 0; t <= task.horizon; ++t) {
    StateT<double> adj = cs.model.make_state();
    adj.zero();
    loss.seed(t, adj);
    for (int i = 0; i < cs.model.particle_count(); ++i)
      for (int c = 0; c < 6; ++c) {
        double& x = c < 3 ? states[t].particle_q[i][c] : states[t].particle_qd[i][c - 3];
        ad.push_back(c < 3 ? adj.particle_q[i][c] : adj.particle_qd[i][c - 3]);
        double x0 = x;
        x = x0 + eps;
        double fp = loss_of(loss, states, theta);
        x = x0 - eps;
        double fm = loss_of(loss, states, theta);
        x = x0;
        fd.push_back((fp - fm) / (2 * eps));
      }
  }
  // effort: theta gradient
  std::vector<double> g(theta.size(), 0.0);
  loss.add_effort(theta, g);
  for (std::size_t i = 0; i < theta.size(); ++i) {
    ad.push_back(g[i]);
    double x0 = theta[i];
    theta[i] = x0 + eps;
    double fp = loss_of(loss, states, theta);
    theta[i] = x0 - eps;
    double fm = loss_of(loss, states, theta);
    theta[i] = x0;
    fd.push_back((fp - fm) / (2 * eps));
  }
  FdReport r = compare_gradients(ad, fd, tol, 1e-6);
  INFO(r.message);
  CHECK(r.ok);
}

Task loss_task(std::vector<scene::LossTerm> terms) {
  Task t;
  t.name = "loss";
  t.horizon = 3;
  t.parameters = {{ParamKind::control_force, "other"}};
  t.loss = std::move(terms);
  return t;
}

}  // namespace

TEST_CASE("loss: position seeds vs FD (mass-weighted centre of mass, pinned ignored)", "[optim][loss]") {
  check_seeds(loss_task({{LossKind::position, "body", "goal"}, {LossKind::position, "body", "goal", 1, {}, 0.3}}));
}

TEST_CASE("loss: distance seeds vs FD (reads frames 0 and step)", "[optim][loss]") {
  check_seeds(loss_task({{LossKind::distance, "body", "", -1, {1, 1, 0}, 2.0}, {LossKind::distance, "other", "", 2}}));
}

TEST_CASE("loss: shape seeds vs FD", "[optim][loss]") {
  check_seeds(loss_task({{LossKind::shape, "body", "goal"}, {LossKind::shape, "body", "goal", 0}}));
}

TEST_CASE("loss: velocity and effort seeds vs FD, all terms summed", "[optim][loss]") {
  check_seeds(loss_task({{LossKind::velocity, "body", "", 2}, {LossKind::effort, "", "", -1, {}, 0.5},
                         {LossKind::position, "other", "goal", 3, {}, 0.7}, {LossKind::shape, "body", "goal", 1},
                         {LossKind::distance, "body", "", 3, {0, 0, 1}}}));
}

TEST_CASE("loss: values", "[optim][loss]") {
  auto cs = loss_scene();
  Task task = loss_task({{LossKind::position, "body", "goal"}, {LossKind::distance, "body", "", -1, {2, 0, 0}},
                         {LossKind::velocity, "other"}, {LossKind::effort, "other", "", -1, {}, 0.5}});
  auto params = must_ok(ParametersT<double>::create(cs, task));
  auto loss = must_ok(LossT<double>::create(cs, task, params));
  std::vector<StateT<double>> states(4, cs.model.make_state());
  for (auto& q : states[3].particle_q) q += vec3<double>(0.5, 0, 0);
  states[3].particle_qd[4] = {0, 2, 0};
  std::vector<double> theta(params.size(), 0.0);
  theta[0] = 3;
  double v = loss_of(loss, states, theta);
  // centre of mass of body: (1*0 + 2*1 + 0.5*0) / 3.5 in x, (0.5 / 3.5) in z; moved by 0.5 in x
  vec3<double> c(2.0 / 3.5 + 0.5, 0, 0.5 / 3.5), goal(0.5, 2, -1);
  REQUIRE(loss.term_values().size() == 4);
  CHECK(loss.term_values()[0] == Approx(length_sq(c - goal)));
  CHECK(loss.term_values()[1] == Approx(-0.5));
  CHECK(loss.term_values()[2] == Approx(4.0));
  CHECK(loss.term_values()[3] == Approx(0.5 * 9));
  CHECK(v == Approx(length_sq(c - goal) - 0.5 + 4 + 4.5));
  CHECK(loss.term_name(0) == "position[body -> goal]");
}

TEST_CASE("loss: errors name the task and the term", "[optim][loss]") {
  auto cs = loss_scene();
  auto err = [&](std::vector<scene::LossTerm> terms, bool controls = true) {
    Task t = loss_task(std::move(terms));
    if (!controls) t.parameters = {{ParamKind::initial_velocity, "body"}};
    auto params = must_ok(ParametersT<double>::create(cs, t));
    auto r = LossT<double>::create(cs, t, params);
    REQUIRE(!r.is_ok());
    return r.status().message();
  };
  CHECK_THAT(err({{LossKind::position, "nobody", "goal"}}), Catch::Contains("loss[0] (position): no object named"));
  CHECK_THAT(err({{LossKind::position, "body", "other"}}), Catch::Contains("'other' is not a target"));
  CHECK_THAT(err({{LossKind::velocity, "body", "", 4}}), Catch::Contains("outside the horizon"));
  CHECK_THAT(err({{LossKind::distance, "body", "", -1, {0, 0, 0}}}), Catch::Contains("axis is zero"));
  CHECK_THAT(err({{LossKind::effort, "body"}}), Catch::Contains("no control parameters of 'body'"));
  CHECK_THAT(err({{LossKind::effort, ""}}, false), Catch::Contains("no control parameters"));
  CHECK_THAT(err({}), Catch::Contains("no loss terms"));
}
