// engine/optim/ppo.h: the value network's gradient against central differences, a smoke
// test that PPO raises the return on a small task, determinism for a seed, and errors
#include "engine/optim/ppo.h"

#include <random>

#include "engine/grad/fd_check.h"
#include "engine/optim/task.h"
#include "tests/engine/optim/optim_scenes.h"

using namespace adj;
using namespace adj::optim;
using namespace adj::optim::test;

namespace {

// the spring cage with 4 actuated springs: move the centre particle to the goal in 10 frames
Task cage_policy_task() {
  Task t;
  t.name = "cage";
  t.horizon = 10;
  t.has_policy = true;
  t.policy.hidden = {8};
  t.policy.phases = 2;
  t.policy.output_scale = 0.5;
  t.parameters = {{ParamKind::policy, "cage"}};
  t.loss = {{LossKind::position, "cage", "goal"}};
  t.seed = 3;
  return t;
}

PpoOptions small_ppo() {
  PpoOptions o;
  o.seed = 9;
  o.episodes_per_iteration = 8;
  o.minibatch = 40;
  o.lr = 3e-3;
  o.reward_scale = 10;
  return o;
}

Result<PpoTrainer> cage_ppo(const scene::CompiledSceneT<double>& cs, const Task& t, PpoOptions o) {
  auto made = make_task(cs, t);
  if (!made) return made.status();
  return PpoTrainer::create(**made, o);
}

}  // namespace

TEST_CASE("ppo: value network backward vs FD", "[optim][ppo][fd]") {
  std::mt19937_64 rng(2);
  Mlp m;
  m.init({5, 7, 1}, rng);
  for (double& w : m.w) w += 0.1;  // nonzero biases too
  std::vector<double> x = {0.3, -0.2, 0.5, 0.1, -0.7};
  std::vector<double> ad(m.w.size(), 0.0);
  m.backward(x, 1.0, ad.data());
  auto f = [&](const std::vector<double>& w) {
    Mlp n = m;
    n.w = w;
    return n.forward(x);
  };
  FdReport r = fd_check(f, m.w, ad, 1e-6, 1e-8, 1e-6);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("ppo: raises the return on the actuated cage", "[optim][ppo]") {
  // measured: mean return of the first 3 iterations -0.0032, of the last 3 of 40 +0.0034
  auto cs = cage_scene<double>(true);
  PpoTrainer ppo = must_ok(cage_ppo(cs, cage_policy_task(), small_ppo()));
  double before = -must_ok(ppo.evaluate());
  double early = 0, late = 0;
  const int n = 40;
  for (int k = 0; k < n; ++k) {
    PpoIteration it = must_ok(ppo.iterate());
    if (k < 3) early += it.mean_return / 3;
    if (k >= n - 3) late += it.mean_return / 3;
  }
  double after = -must_ok(ppo.evaluate());
  INFO("return " << early << " -> " << late << ", mean action " << before << " -> " << after);
  CHECK(late > early);
  CHECK(after > before);
  CHECK(ppo.sim_steps() == 40LL * 8 * 10 * cs.substeps);
}

TEST_CASE("ppo: the same seed gives the same parameters, bit for bit", "[optim][ppo]") {
  auto cs = cage_scene<double>(true);
  auto run = [&](std::uint64_t seed) {
    PpoOptions o = small_ppo();
    o.seed = seed;
    PpoTrainer ppo = must_ok(cage_ppo(cs, cage_policy_task(), o));
    for (int k = 0; k < 3; ++k) must_ok(ppo.iterate());
    return ppo.parameters();
  };
  CHECK(run(9) == run(9));
  CHECK(run(9) != run(10));
}

TEST_CASE("ppo: errors", "[optim][ppo]") {
  auto cs = cage_scene<double>(true);
  PpoOptions o = small_ppo();
  o.epochs = 0;
  auto r = cage_ppo(cs, cage_policy_task(), o);
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("options out of range"));
  Task t = cage_policy_task();
  t.loss = {{LossKind::position, "cage", "goal", 5}};
  r = cage_ppo(cs, t, small_ppo());
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("step -1"));
}
