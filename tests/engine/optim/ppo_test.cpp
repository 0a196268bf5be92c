// engine/optim/ppo.h: generalized advantages against a hand-computed example, running
// statistics against a direct computation and the trainer's observation statistics, the
// value network's gradient against central differences, a smoke test that PPO raises the
// return on a small task, determinism for a seed, and errors
#include "engine/optim/ppo.h"

#include <cmath>
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

// 8 copies x 10 frames (one episode each) per iteration
PpoOptions small_ppo() {
  PpoOptions o;
  o.seed = 9;
  o.steps_per_env = 10;
  o.minibatches = 2;
  o.lr = 3e-3;
  o.reward_scale = 10;
  return o;
}

Result<PpoTrainer> cage_ppo(const scene::CompiledSceneT<double>& cs, const Task& t, PpoOptions o, int copies = 8) {
  auto made = make_task(cs, t);
  if (!made) return made.status();
  return PpoTrainer::create(**made, o, {.env_count = copies});
}

}  // namespace

TEST_CASE("ppo: generalized advantages of a hand-computed example", "[optim][ppo]") {
  // frame 1 ends an episode at a time limit (its last state's value 2 bootstraps); frame 2
  // starts the next one, which the batch cuts off (the value 1 after it bootstraps)
  std::vector<GaeFrame> f = {{1.0, 0.5, false, 0}, {0.0, 1.0, true, 2.0}, {2.0, 0.0, false, 0}};
  std::vector<double> adv;
  generalized_advantages(f, 1.0, 0.9, 0.5, adv);
  REQUIRE(adv.size() == 3);
  // delta_2 = 2 + 0.9 x 1 - 0 = 2.9; delta_1 = 0 + 0.9 x 2 - 1 = 0.8 (the episode's end: no
  // carry from frame 2); delta_0 = 1 + 0.9 x 1 - 0.5 = 1.4, adv_0 = 1.4 + 0.9 x 0.5 x 0.8
  CHECK(adv[2] == Approx(2.9).epsilon(1e-14));
  CHECK(adv[1] == Approx(0.8).epsilon(1e-14));
  CHECK(adv[0] == Approx(1.76).epsilon(1e-14));
  // lambda = 1, gamma = 1, no ends: the return to go minus the value
  std::vector<GaeFrame> g = {{1, 0.25, false, 0}, {2, 0.5, false, 0}, {3, 0.75, false, 0}};
  generalized_advantages(g, 4.0, 1.0, 1.0, adv);
  CHECK(adv[0] == Approx(10 - 0.25));
  CHECK(adv[1] == Approx(9 - 0.5));
  CHECK(adv[2] == Approx(7 - 0.75));
}

TEST_CASE("ppo: running statistics merged batch by batch equal the direct ones", "[optim][ppo]") {
  std::mt19937_64 rng(4);
  const int rows = 11, n = 3;
  std::vector<double> x(rows * n);
  for (int k = 0; k < rows * n; ++k) x[k] = double(rng() % 1000) / 100.0 + 5.0 * (k % n);
  RunningMeanStd s;
  s.resize(n);
  s.update(x.data(), 1);
  s.update(x.data() + n, 4);
  s.update(x.data() + 5 * n, 6);
  CHECK(s.count == rows);
  for (int k = 0; k < n; ++k) {
    double m = 0, v = 0;
    for (int r = 0; r < rows; ++r) m += x[r * n + k] / rows;
    for (int r = 0; r < rows; ++r) v += (x[r * n + k] - m) * (x[r * n + k] - m) / rows;
    CHECK(s.mean[k] == Approx(m).epsilon(1e-12));
    CHECK(s.var[k] == Approx(v).epsilon(1e-12));
  }
  std::vector<double> y = {s.mean[0] + 2 * std::sqrt(s.var[0]), s.mean[1], s.mean[2] + 100 * std::sqrt(s.var[2])};
  s.normalize(y, 10);
  CHECK(y[0] == Approx(2).epsilon(1e-6));
  CHECK(y[1] == Approx(0).margin(1e-12));
  CHECK(y[2] == 10);  // clipped
}

TEST_CASE("ppo: observation statistics cover every copy's observations", "[optim][ppo]") {
  auto cs = cage_scene<double>(true);
  auto made = must_ok(make_task(cs, cage_policy_task()));
  std::vector<double> first;
  must_ok(made->policy_env({}))->observe(0, first);
  PpoOptions o = small_ppo();
  o.steps_per_env = 4;
  PpoTrainer ppo = must_ok(PpoTrainer::create(*made, o, {.env_count = 3}));
  // the copies start alike: the statistics are the first observation, no spread
  const RunningMeanStd& s = ppo.observation_stats();
  REQUIRE(s.size() == int(first.size()));
  CHECK(s.count == 3);
  for (int k = 0; k < s.size(); ++k) {
    CHECK(s.mean[k] == first[k]);
    CHECK(s.var[k] == 0);
  }
  must_ok(ppo.iterate());
  CHECK(ppo.observation_stats().count == 3 * (1 + 4));
  bool moved = false;
  for (int k = 0; k < s.size(); ++k) moved |= s.var[k] > 0;
  CHECK(moved);
  o.normalize_observations = false;
  PpoTrainer raw = must_ok(PpoTrainer::create(*made, o, {.env_count = 3}));
  must_ok(raw.iterate());
  CHECK(raw.observation_stats().count == 0);
}

TEST_CASE("ppo: the value network (linear output) backward vs FD", "[optim][ppo][fd]") {
  MlpT<double> m({5, 7, 6, 1}, 1.0, true);
  std::vector<double> w(std::size_t(m.weight_count()));
  m.init_weights(w.data(), 2);
  for (double& x : w) x += 0.1;  // nonzero biases too
  std::vector<double> x = {0.3, -0.2, 0.5, 0.1, -0.7}, d_in;
  std::vector<double> ad(w.size(), 0.0);
  m.backward(w.data(), x, {1.0}, ad.data(), d_in);
  auto f = [&](const std::vector<double>& v) {
    std::vector<double> out;
    m.forward(v.data(), x, out);
    return out[0];
  };
  FdReport r = fd_check(f, w, ad, 1e-6, 1e-8, 1e-6);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("ppo: raises the return on the actuated cage, for each of seeds 1 2 3", "[optim][ppo]") {
  // measured: the mean return of the first 3 iterations -0.004 .. -0.014, of the last 3 of 40
  // +0.007 .. +0.018 (seeds 1-5 all rise)
  auto cs = cage_scene<double>(true);
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    PpoOptions o = small_ppo();
    o.seed = seed;
    PpoTrainer ppo = must_ok(cage_ppo(cs, cage_policy_task(), o));
    double before = -must_ok(ppo.evaluate());
    double early = 0, late = 0;
    const int n = 40;
    for (int k = 0; k < n; ++k) {
      PpoIteration it = must_ok(ppo.iterate());
      if (k < 3) early += it.mean_return / 3;
      if (k >= n - 3) late += it.mean_return / 3;
    }
    double after = -must_ok(ppo.evaluate());
    INFO("seed " << seed << ": return " << early << " -> " << late << ", mean action " << before << " -> " << after);
    CHECK(late > early);
    CHECK(after > before);
    CHECK(ppo.sim_steps() == 40LL * 8 * 10 * cs.substeps);
    CHECK(ppo.env_count() == 8);
  }
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
  o = small_ppo();
  o.minibatches = 81;  // more than the 80 frames of a batch
  r = cage_ppo(cs, cage_policy_task(), o);
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("minibatches"));
  Task t = cage_policy_task();
  t.loss = {{LossKind::position, "cage", "goal", 5}};
  r = cage_ppo(cs, t, small_ppo());
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("step -1"));
}
