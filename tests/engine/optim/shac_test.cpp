// engine/optim/shac.h: the window gradient against central differences (with observation
// normalization on), training progress on the walker, determinism and errors
#include "engine/optim/shac.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/grad/fd_check.h"
#include "engine/optim/task.h"
#include "tests/engine/optim/optim_scenes.h"

using namespace adj;
using namespace adj::optim;
using namespace adj::optim::test;

namespace {

Task shac_task(int horizon) {
  Task t;
  t.name = "walker";
  t.horizon = horizon;
  t.has_policy = true;
  t.policy.hidden = {16};
  t.policy.phases = 4;
  t.policy.phase_period = 0.5;
  t.policy.output_scale = 0.3;
  t.parameters = {{ParamKind::policy, "robot"}};
  t.loss = {{LossKind::distance, "robot", "", -1, {1, 0, 0}}};
  t.optimizer = {scene::OptimizerKind::adam, 0.01, 1.0, 20};
  t.seed = 5;
  return t;
}

Result<ShacTrainerT<double>> walker_shac(const scene::CompiledSceneT<double>& cs, const Task& t, ShacOptions o) {
  auto made = make_task(cs, t);
  if (!made) return made.status();
  return ShacTrainerT<double>::create(**made, o);
}

}  // namespace

TEST_CASE("shac: window gradient vs FD, mid-episode, observations normalized", "[optim][shac][fd]") {
  auto cs = robot_scene<double>();
  ShacOptions o;
  o.window = 16;
  ShacTrainerT<double> shac = must_ok(walker_shac(cs, shac_task(64), o));
  // three windows in: the running statistics are in use and the window starts at frame 48
  for (int k = 0; k < 3; ++k) must_ok(shac.step_window());
  std::vector<double> w = shac.weights(), g;
  must_ok(shac.window_loss(w, &g));
  std::mt19937 rng(4);
  std::vector<double> ad, fd;
  for (int n = 0; n < 24; ++n) {
    int i = int(rng() % w.size());
    const double eps = 1e-6;
    std::vector<double> x = w;
    x[i] = w[i] + eps;
    double fp = must_ok(shac.window_loss(x, nullptr));
    x[i] = w[i] - eps;
    double fm = must_ok(shac.window_loss(x, nullptr));
    ad.push_back(g[i]);
    fd.push_back((fp - fm) / (2 * eps));
  }
  FdReport r = compare_gradients(ad, fd, 1e-8, 1e-4);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("shac: windows train the walker forward", "[optim][shac]") {
  // 1 s episodes in 4 windows of 15 frames; measured 0.0014 -> -0.27 m over 12 episodes
  auto cs = robot_scene<double>();
  ShacOptions o;
  o.window = 15;
  o.lr = 0.01;
  o.normalize_observations = false;
  ShacTrainerT<double> shac = must_ok(walker_shac(cs, shac_task(60), o));
  double first = must_ok(shac.evaluate());
  for (int k = 0; k < 12 * shac.windows_per_episode(); ++k) must_ok(shac.step_window());
  double last = must_ok(shac.evaluate());
  INFO("walker loss " << first << " -> " << last);
  CHECK(last < first - 0.1);  // walked at least 0.1 m further
  CHECK(shac.sim_steps() == 12LL * 60 * cs.substeps);
}

TEST_CASE("shac: deterministic, with normalization", "[optim][shac]") {
  auto cs = robot_scene<double>();
  auto run = [&] {
    ShacTrainerT<double> shac = must_ok(walker_shac(cs, shac_task(40), {20}));
    for (int k = 0; k < 6; ++k) must_ok(shac.step_window());
    return shac.weights();
  };
  CHECK(run() == run());
}

TEST_CASE("shac: errors", "[optim][shac]") {
  auto cs = robot_scene<double>();
  ShacOptions o;
  o.window = 100;
  auto r = walker_shac(cs, shac_task(40), o);
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("window 100 must lie in 1..40"));
  Task t = shac_task(40);
  t.parameters.push_back({ParamKind::initial_velocity, "robot"});
  r = walker_shac(cs, t, {});
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("not initial_velocity"));
  t = shac_task(40);
  t.has_policy = false;
  r = walker_shac(cs, t, {});
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("no policy"));
}

TEST_CASE("shac critic: a particle policy task trains through the same trainer (actor gradient vs FD)",
          "[optim][shac][fd]") {
  // the walker's springs, not a robot's actuators, through the same ScenePolicyEnvT as the robots' tasks
  auto cs = robot_scene<double>();
  auto made = must_ok(make_task(cs, shac_task(32)));
  BatchShacOptions so;
  so.window = 8;
  so.critic_hidden = {8};
  so.action_noise = 0;  // actor_loss must be a function of w alone
  so.seed = 2;
  auto shac = must_ok(BatchShacTrainerT<double>::create(*made, so, {.env_count = 2}));
  for (int k = 0; k < 2; ++k) must_ok(shac.step());  // normalizer and critic in use, mid-episode
  std::vector<double> w = shac.weights(), g;
  must_ok(shac.actor_loss(w, &g));
  std::mt19937 rng(7);
  std::vector<double> ad, fd;
  for (int n = 0; n < 16; ++n) {
    int i = int(rng() % w.size());
    const double eps = 1e-6;
    std::vector<double> x = w;
    x[i] = w[i] + eps;
    double fp = must_ok(shac.actor_loss(x, nullptr));
    x[i] = w[i] - eps;
    double fm = must_ok(shac.actor_loss(x, nullptr));
    ad.push_back(g[i]);
    fd.push_back((fp - fm) / (2 * eps));
  }
  FdReport r = compare_gradients(ad, fd, 1e-9, 1e-4);
  INFO(r.message);
  CHECK(r.ok);
  double largest = 0;
  for (double x : fd) largest = std::max(largest, std::abs(x));
  CHECK(largest > 1e-5);  // not a comparison of zeros
  CHECK(shac.sim_steps() == 2LL * 2 * 8 * cs.substeps);
}
