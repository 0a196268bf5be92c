// every parameter kind's row (engine/optim/parameters.h: particle_param_rows, body_param_rows)
// against central differences in double: each row finds the first small scene whose object
// it covers, on its own side, and its block's gradient is checked through the whole task. A
// new row is tested by being added; a row no scene here covers fails the test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "engine/scene/scene_json.h"
#include "tests/engine/optim/grad_check.h"

using namespace adj;
using namespace adj::optim;
using namespace adj::optim::test;

namespace {

// a scene, its task (loss and horizon) and the object a row's block names
struct Setup {
  std::string name;
  std::function<CompiledSceneT<double>()> scene;
  Task task;
  std::string object;
  double tol;
};

CompiledSceneT<double> walker() {
  auto s = scene::load_scene(std::string(ADJ_ASSET_SCENES) + "/robot_walker.json");
  REQUIRE(s.is_ok());
  auto cs = scene::compile<double>(s.value(), ADJ_ASSET_SCENES);
  REQUIRE(cs.is_ok());
  // thrown into motion (standing still, most of its gradients are zero)
  for (std::size_t d = 0; d < cs->model.joint_qd.size(); ++d)
    cs->model.joint_qd[d] = 0.8 * std::sin(1.3 * double(d) + 0.4);
  return cs.value();
}

std::vector<Setup> setups() {
  Task soft;
  soft.name = "jelly";
  soft.horizon = 10;
  soft.loss = {{LossKind::shape, "jelly", "goal"}};
  Task cloth;
  cloth.name = "cloth";
  cloth.horizon = 10;
  cloth.loss = {{LossKind::position, "cloth", "goal"}, {LossKind::shape, "cloth", "goal", -1, {1, 0, 0}, 0.5}};
  auto s = scene::load_scene(std::string(ADJ_ASSET_SCENES) + "/robot_walker.json");
  REQUIRE(s.is_ok());
  Task walk = s.value().tasks[1];
  walk.horizon = 30;  // long enough to land: the contact fields matter
  // the one parameter of each task is no actuator input: no effort term
  std::erase_if(walk.loss, [](const scene::LossTerm& l) { return l.kind == LossKind::effort; });
  walk.loss.push_back(
      {.kind = LossKind::joint, .object = "walker", .step = 6, .weight = 0.5, .body = "leg1_shin", .value = -0.4});
  Task bounce = bounce_task(12), cage = cage_task(10);
  cage.loss = {{LossKind::position, "cage", "goal"}, {LossKind::velocity, "cage", "", 6}};
  Task slide;
  slide.name = "slide";
  slide.horizon = 12;
  slide.loss = {{LossKind::position, "ball", "goal"}};
  return {{"slide", [] { return slide_scene<double>(); }, slide, "ball", 1e-4},
          {"bounce", [] { return bounce_scene<double>(); }, bounce, "ball", 1e-4},
          {"cage",
           [] {
             CompiledSceneT<double> cs = cage_scene<double>(true);
             cs.model.particle_qd[0] = {0.3, -0.2, 0.1};  // off its rest, so every spring field matters
             return cs;
           },
           cage, "cage", 1e-5},
          {"soft", [] { return soft_scene<double>(); }, soft, "jelly", 1e-4},
          {"cloth", [] { return cloth_scene<double>(); }, cloth, "cloth", 5e-4},
          {"walker", walker, walk, "walker", 1e-5}};
}

}  // namespace

TEST_CASE("parameters: every kind's row, on its side, against central differences in double",
          "[optim][parameters][fd][rows]") {
  const std::vector<Setup> all = setups();
  std::vector<CompiledSceneT<double>> scenes;
  for (const Setup& u : all) scenes.push_back(u.scene());
  std::vector<const ParamRowT<double>*> rows;
  for (const ParamRowT<double>& r : particle_param_rows<double>()) rows.push_back(&r);
  for (const ParamRowT<double>& r : body_param_rows<double>()) rows.push_back(&r);
  int checked = 0;
  for (const ParamRowT<double>* row : rows) {
    if (row->kind == ParamKind::policy) continue;  // the policy's weights: policy_test, shac_test
    const std::string name =
        std::string(scene::to_string(row->kind)) + (row->side == TermSide::bodies ? " (bodies)" : " (particles)");
    bool found = false;
    for (std::size_t k = 0; k < all.size() && !found; ++k) {
      Task t = all[k].task;
      const bool scene_wide = row->field && row->field->domain == FieldDomain::scene;
      t.parameters = {{row->kind, scene_wide ? "" : all[k].object}};
      auto p = ParametersT<double>::create(scenes[k], t);
      if (!p || p->blocks().size() != 1 || p->blocks()[0].side != row->side) continue;
      TaskRunnerT<double> r = must_ok(TaskRunnerT<double>::create(scenes[k], t));
      // off the start (zero controls and PD targets at the pose sit on symmetric points)
      std::vector<double> th = r.theta();
      for (std::size_t i = 0; i < th.size(); ++i)
        th[i] += 0.02 * std::sin(0.7 * double(i) + 0.3) * (1 + std::abs(th[i]));
      r.set_theta(th);
      // central differences at three steps relative to the block's largest entry (at least 1),
      // the closest kept: a large step crosses contact's kinks (the walker's contact_ke, 1e4),
      // a small one drowns in rounding (the cloth's stiffnesses, 200, have gradients of 1e-8)
      double scale = 1;
      for (double x : th) scale = std::max(scale, std::abs(x));
      GradCheckReport rep;
      for (double eps : {1e-4, 1e-6, 1e-8}) {
        GradCheckReport at = must_ok(r.check_grad(8, eps * scale, 5));
        if (rep.rows.empty() || at.max_rel_err < rep.max_rel_err) rep = std::move(at);
      }
      // a scene where the kind does not change the loss (lift without cloth) checks nothing: the next
      double largest = 0;
      for (const GradCheckRow& row_k : rep.rows)
        largest = std::max({largest, std::abs(row_k.analytic), std::abs(row_k.fd)});
      if (!(largest > 1e-12)) continue;
      found = true;
      INFO(name << " on " << all[k].name << "\n" << rep.format());
      CHECK(rep.max_rel_err < all[k].tol);
      ++checked;
    }
    INFO(name << ": no scene here covers the row (add one to setups())");
    CHECK(found);
  }
  CHECK(checked >= 20);
}
