// BPTT over randomized worlds (engine/optim/worlds_task.h): the loss and gradient are the
// worlds' means, world by world as each world's own task gives them, and the gradient matches
// central differences of that mean (double)
#include <catch2/catch.hpp>

#include "engine/model/randomize.h"
#include "engine/optim/worlds_task.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"

using namespace adj;
using namespace adj::optim;

TEST_CASE("worlds task: the mean of randomized worlds' losses and gradients, against central differences",
          "[optim][worlds]") {
  const std::string dir = ADJ_ASSET_SCENES;
  auto sc = scene::load_scene(dir + "/worlds_push_soft.json");
  REQUIRE(sc.is_ok());
  REQUIRE(sc->settings.randomize.active());
  scene::Task task = sc->tasks[0];
  task.horizon = 8;
  auto cs = scene::compile<double>(*sc, dir);
  REQUIRE(cs.is_ok());
  auto made = make_worlds_task(*cs, task, {.worlds = 3, .seed = 5});
  REQUIRE(made.is_ok());
  TaskT<double>& worlds = **made;
  std::vector<double> theta = worlds.theta();
  for (std::size_t i = 0; i < theta.size(); ++i) theta[i] += 0.05 * std::sin(0.7 * double(i));  // away from the start
  worlds.set_theta(theta);
  theta = worlds.theta();
  std::vector<double> g;
  auto evaluated = worlds.evaluate(theta, &g);
  REQUIRE(evaluated.is_ok());
  const double loss = evaluated.value();
  // each world alone: the scene's model randomized as world w
  double mean = 0;
  std::vector<double> mean_g(theta.size(), 0.0), gw;
  std::vector<double> losses;
  for (int w = 0; w < 3; ++w) {
    scene::CompiledSceneT<double> one = *cs;
    randomize_world(cs->randomize, 5, w, one.model);
    auto t = make_task(one, task);
    REQUIRE(t.is_ok());
    const double l = (*t)->evaluate(theta, &gw).value();
    losses.push_back(l);
    mean += l;
    for (std::size_t i = 0; i < gw.size(); ++i) mean_g[i] += gw[i];
  }
  CHECK(losses[0] != losses[1]);  // the worlds differ
  CHECK(loss == Approx(mean / 3).epsilon(1e-14));
  for (std::size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(mean_g[i] / 3).epsilon(1e-12).margin(1e-15));
  auto report = worlds.check_grad(12, 1e-6, 3);
  REQUIRE(report.is_ok());
  INFO("max relative error " << report->max_rel_err);
  CHECK(report->max_rel_err < 1e-4);
  // one world is the task itself
  auto alone = make_worlds_task(*cs, task, {.worlds = 1});
  auto plain = make_task(*cs, task);
  REQUIRE(alone.is_ok());
  REQUIRE(plain.is_ok());
  CHECK((*alone)->evaluate(theta).value() == (*plain)->evaluate(theta).value());
}
