// AHAC (engine/optim/ahac.h on BatchShacTrainerT): a copy's window is cut where the contact
// measure passes the threshold, the dual step and the horizon follow the stated rule, the double
// critic's value is the pessimistic critic's (the larger cost) and the TD(lambda) targets read it, its actor gradient
// matches central differences, a CI-sized run raises the Ant's return, and a run saved and
// loaded mid-way goes on with the same bits
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "engine/optim/ahac.h"
#include "engine/optim/checkpoint.h"
#include "engine/optim/shac.h"
#include "engine/optim/shac_task.h"
#include "engine/optim/task.h"
#include "tests/engine/asset_scene.h"
#include "tests/engine/optim/grad_check.h"

using namespace adj;
using namespace adj::optim;

namespace {

using adj::test::ok;

// a small AHAC on the Ant's run task: deterministic actions (no noise), narrow networks
template <class S>
BatchShacOptions small_ahac(const scene::Task& task, double threshold) {
  BatchShacOptions so = shac_options(task, 20);
  so.window = 32;
  so.critic_hidden = {16};
  so.learned_std = false;
  so.action_noise = 0;
  so.thread_count = 1;
  so.seed = 5;
  so.ahac = ahac_options(task);
  so.ahac.contact_threshold = threshold;
  return so;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("AHAC: the dual step and the horizon follow the rule on given numbers", "[optim][ahac]") {
  AhacOptions o;
  o.horizon_min = 8;
  o.dual_lr = 4;
  // phi <- clamp(phi + 4 v, 0, 32 - 8), T = 32 - phi
  AhacHorizon h = ahac_dual_step(o, 32, 0.0, 0.5);
  CHECK(h.dual == 2.0);
  CHECK(h.horizon == 30.0);
  h = ahac_dual_step(o, 32, 2.0, -1.0);  // below the threshold on average: back to the window
  CHECK(h.dual == 0.0);
  CHECK(h.horizon == 32.0);
  h = ahac_dual_step(o, 32, 20.0, 3.0);  // far above: the floor, the dual kept where T can follow
  CHECK(h.dual == 24.0);
  CHECK(h.horizon == 8.0);
  h = ahac_dual_step(o, 32, 5.5, 0.125);
  CHECK(h.dual == 6.0);
  CHECK(h.horizon == 26.0);
}

TEST_CASE("AHAC: the double critic's value is the larger cost (the smaller return) and the TD(lambda) targets read it",
          "[optim][ahac]") {
  // the critics learn costs to go: the pessimistic of two is the larger cost, whatever the sign
  CHECK(double_critic_value(-120.0, -80.0) == -80.0);  // returns 120 and 80: the 80
  CHECK(double_critic_value(-80.0, -120.0) == -80.0);
  CHECK(double_critic_value(3.0, 5.0) == 5.0);
  // by hand: gamma 0.5, lambda 0.5, two frames; values max(v1, v2) = (9, 5, 6)
  const std::vector<double> v1{9, 4, 6}, v2{9, 5, 3}, cost{1, 2};
  std::vector<double> v(3), target;
  for (int t = 0; t < 3; ++t) v[t] = double_critic_value(v1[t], v2[t]);
  CHECK(v == std::vector<double>{9, 5, 6});
  td_lambda_targets(cost, v, 2, 0.5, 0.5, target);
  REQUIRE(target.size() == 3);
  CHECK(target[2] == 6.0);
  CHECK(target[1] == Approx(2 + 0.5 * (0.5 * 6 + 0.5 * 6)).epsilon(1e-15));  // 5
  CHECK(target[0] == Approx(1 + 0.5 * (0.5 * 5 + 0.5 * 5)).epsilon(1e-15));  // 3.5

  // the trainer's value of a state: 1 / (1 - gamma) times the larger critic output (cost)
  adj::test::AssetScene<double> ant("locomotion/ant.json", "run");
  ant.task.policy.hidden = {16};
  auto task = ok(make_task(ant.cs, ant.task));
  BatchShacOptions so = small_ahac<double>(ant.task, 1e9);
  auto ahac = ok(BatchShacTrainerT<double>::create(*task, so, {.env_count = 2}));
  ok(ahac.step());
  std::vector<double> obs(std::size_t(ahac.env().observation_size()));
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-3, 3);
  int larger_second = 0;
  for (int k = 0; k < 32; ++k) {
    for (double& x : obs) x = u(rng);
    for (bool target : {false, true}) {
      const double a = ahac.critic_output(obs, 0, target), b = ahac.critic_output(obs, 1, target);
      CHECK(a != b);  // two critics, initialized apart
      CHECK(ahac.value(obs, target) == Approx(std::max(a, b) / (1 - so.gamma)).epsilon(1e-14));
      larger_second += b > a ? 1 : 0;
    }
  }
  INFO("states where the second critic is the larger: " << larger_second);
  CHECK(larger_second > 0);  // both branches of the maximum taken
  CHECK(larger_second < 64);
}

// the Ant dropped from its start height: its feet meet the ground some frames in; with the
// threshold below its standing weight the window ends after the first frame whose end state's
// contact forces pass it, as an env stepped alongside with the same policy measures
TEST_CASE("AHAC: a copy's window is cut after the first frame whose contact measure passes the threshold",
          "[optim][ahac]") {
  adj::test::AssetScene<double> ant("locomotion/ant.json", "run");
  ant.task.policy.hidden = {16};
  auto task = ok(make_task(ant.cs, ant.task));
  const double C = 200;  // [N]; the Ant weighs ~1.8 kN
  BatchShacOptions so = small_ahac<double>(ant.task, C);
  auto ahac = ok(BatchShacTrainerT<double>::create(*task, so, {.env_count = 1}));
  // the same frames by hand: the task's start, raw observations (no statistics before the first window)
  auto env = ok(task->policy_env({.env_count = 1}));
  env->measure_contacts(true);
  env->reset(0, nullptr);
  int expected = -1;
  std::vector<double> obs, action;
  double below = 0;
  for (int t = 0; t < so.window && expected < 0; ++t) {
    env->observe(0, obs);
    env->mlp().forward(ahac.weights().data(), obs, action);
    REQUIRE(env->step(0, action).is_ok());
    if (env->contact_measure(0) > C)
      expected = t + 1;
    else
      below = std::max(below, env->contact_measure(0));
  }
  INFO("cut after frame " << expected << "; the largest measure before: " << below << " N");
  REQUIRE(expected > 1);  // some frames in the air first: the cut is the contact's, not the window's
  REQUIRE(expected < so.window);
  BatchShacStats st = ok(ahac.step());
  CHECK(ahac.copy_frames_run(0) == expected);
  CHECK(ahac.copy_cut(0));
  CHECK(st.contact_cut == 1);
  CHECK(st.window_frames == so.window);
  CHECK(st.sim_steps == (long long)expected * env->substeps());

  SECTION("above every measure seen, the window runs whole") {
    BatchShacOptions high = so;
    high.ahac.contact_threshold = 1e12;
    auto whole = ok(BatchShacTrainerT<double>::create(*task, high, {.env_count = 1}));
    ok(whole.step());
    CHECK(whole.copy_frames_run(0) == so.window);
    CHECK_FALSE(whole.copy_cut(0));
  }
  SECTION("the horizon after the window: the dual step on the frames' mean relative violation") {
    const double v = (st.contact_mean - C) / C;
    const AhacHorizon h = ahac_dual_step(so.ahac, so.window, 0.0, v);
    CHECK(st.dual == Approx(h.dual).epsilon(1e-12));
    CHECK(st.horizon == Approx(h.horizon).epsilon(1e-12));
    CHECK(ahac.horizon() == st.horizon);
    CHECK(ahac.window_frames() == std::clamp(int(std::floor(st.horizon)), so.ahac.horizon_min, so.window));
  }
}

// the actor's loss with AHAC's cuts and the double critic's bootstrap (through whichever
// critic gives the larger cost) against central differences in double, mid-episode
TEST_CASE("AHAC: the window gradient with cuts and the double critic matches central differences",
          "[optim][ahac][fd]") {
  adj::test::AssetScene<double> ant("locomotion/ant.json", "run");
  ant.task.policy.hidden = {16};
  auto task = ok(make_task(ant.cs, ant.task));
  BatchShacOptions so = small_ahac<double>(ant.task, 1500);
  so.window = 8;
  so.ahac.horizon_min = 4;
  auto ahac = ok(BatchShacTrainerT<double>::create(*task, so, {.env_count = 3, .q_range = 0.2, .qd_range = 0.25}));
  int cut = 0;
  for (int k = 0; k < 4; ++k) cut += ok(ahac.step()).contact_cut;
  INFO("windows cut by contact so far: " << cut);
  CHECK(cut > 0);
  std::vector<double> w = ahac.weights();
  for (double& x : w) x *= 3;
  optim::test::check_actor_loss_grad(ahac, w, 24, 13);
}

// CI-sized AHAC on the Ant (as the SHAC test in locomotion_tasks_test.cpp: 8 copies, windows of
// up to 16 frames, narrower networks without the scene's LayerNorm and orthogonal start,
// 300-frame episodes) raises the evaluation return (with the scene's networks these 40 windows
// took it from 76 to 52)
TEST_CASE("AHAC: a CI-sized run raises the Ant's return", "[optim][ahac][locomotion]") {
  adj::test::AssetScene<float> ant("locomotion/ant.json", "run");
  scene::Task t = ant.task;
  t.horizon = 300;
  t.policy.hidden = {64, 32};
  t.shac.window = 16;
  t.shac.critic_hidden = std::vector<int>{32, 32};
  t.shac.layer_norm = false;
  t.shac.init = std::nullopt;
  auto task = ok(make_task(ant.cs, t));
  const int windows = 40;
  auto ahac = ok(make_shac_trainer(*task, {.envs = 8, .windows = windows, .seed = 0, .thread_count = 2, .ahac = true}));
  REQUIRE(ahac.options().ahac.enabled);
  const double before = -double(ok(ahac.evaluate())) * t.horizon;
  int cut = 0;
  for (int k = 0; k < windows; ++k) cut += ok(ahac.step()).contact_cut;
  const double after = -double(ok(ahac.evaluate())) * t.horizon;
  INFO("evaluation return " << before << " -> " << after << "; windows cut by contact: " << cut << "; horizon now "
                            << ahac.horizon());
  CHECK(after > before + 20);
}

TEST_CASE("AHAC saved and loaded mid-run goes on with the same bits", "[optim][ahac][checkpoint]") {
  adj::test::AssetScene<float> ant("locomotion/ant.json", "run");
  ant.task.policy.hidden = {16};
  auto task = ok(make_task(ant.cs, ant.task));
  BatchShacOptions so = shac_options(ant.task, 12);
  so.window = 8;
  so.critic_hidden = {16};
  so.thread_count = 1;
  so.seed = 3;
  so.ahac = ahac_options(ant.task);
  so.ahac.contact_threshold = 1500;  // cuts, and a horizon that moves
  so.ahac.horizon_min = 3;
  PolicyEnvOptions eo = training_starts(ant.task, 3);
  auto straight = ok(BatchShacTrainerT<float>::create(*task, so, eo));
  auto first = ok(BatchShacTrainerT<float>::create(*task, so, eo));
  std::vector<double> costs, horizons;
  int cut = 0;
  for (int k = 0; k < 10; ++k) {
    BatchShacStats st = ok(straight.step());
    costs.push_back(st.mean_cost), horizons.push_back(st.horizon), cut += st.contact_cut;
  }
  INFO("windows cut: " << cut << ", horizons " << horizons.front() << " .. " << horizons.back());
  CHECK(cut > 0);
  for (int k = 0; k < 6; ++k) ok(first.step());
  Checkpoint ck;
  REQUIRE(first.save(ck).is_ok());
  CHECK(ck.header.contains("ahac"));
  CHECK(ck.has("critic2.weights"));
  Checkpoint back = ok(decode_checkpoint(encode_checkpoint(ck), "mem.adjck"));
  auto second = ok(BatchShacTrainerT<float>::create(*task, so, eo));
  REQUIRE(second.load(back).is_ok());
  for (int k = 6; k < 10; ++k) {
    BatchShacStats st = ok(second.step());
    CHECK(st.mean_cost == costs[std::size_t(k)]);
    CHECK(st.horizon == horizons[std::size_t(k)]);
  }
  CHECK(same_bits(second.weights(), straight.weights()));
  CHECK(second.fingerprint() == straight.fingerprint());

  SECTION("a SHAC run refuses AHAC's checkpoint, and the other way round") {
    BatchShacOptions plain = so;
    plain.ahac = {};
    auto shac = ok(BatchShacTrainerT<float>::create(*task, plain, eo));
    CHECK_THAT(shac.load(back).message(), Catch::Contains("mem.adjck: the checkpoint holds AHAC's training state"));
    Checkpoint shac_ck;
    REQUIRE(shac.save(shac_ck).is_ok());
    CHECK_THAT(second.load(shac_ck).message(), Catch::Contains("the checkpoint holds SHAC's training state"));
  }
}
