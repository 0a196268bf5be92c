// PPO on robots (engine/optim/ppo.h over the task's policy env, engine/optim/policy_env.h):
// PPO learns to balance the cartpole from near upright in 35 iterations (measured: with
// one-step advantages, lambda = 0, it does not, so a broken GAE fails it); determinism; the
// sample-efficiency table for the cartpole (hidden: `adjoint_optim_tests "[.bench]"`)
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>

#include "engine/optim/ppo.h"
#include "engine/optim/sample_efficiency.h"
#include "engine/optim/task.h"
#include "engine/scene/scene_json.h"

using namespace adj;
using namespace adj::optim;

namespace {

const std::string kScenes = ADJ_ASSET_SCENES;

template <class T>
T ok(Result<T> r) {
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  return std::move(r.value());
}

// the swing-up task (pole_q: its start, 3.0 = near hanging; 0.2 = near upright) from starts
// within q_range of it
PpoTrainer cartpole_ppo(std::uint64_t seed, PpoOptions po, int copies, double pole_q = 3.0, double q_range = 3.14159,
                        double qd_range = 0.5) {
  scene::Scene sc = ok(scene::load_scene(kScenes + "/robot_cartpole.json"));
  REQUIRE(sc.objects[0].robot.initial.size() == 1);
  sc.objects[0].robot.initial[0].q = {pole_q};
  auto cs = ok(scene::compile<double>(sc, kScenes));
  scene::Task task = *sc.find_task("swing up (policy)");
  task.seed = seed;  // the policy's initial weights
  auto made = ok(make_task(cs, task));
  po.seed = seed;
  return ok(PpoTrainer::create(*made, po, {.env_count = copies, .q_range = q_range, .qd_range = qd_range}));
}

// the mean frame cost of an episode from 0.2 rad after `iterations` of 64 copies x 32 frames
// (starts within 0.3 rad and 0.3 rad/s of it)
double balance_cost(PpoOptions po, int iterations, std::uint64_t seed) {
  PpoTrainer ppo = cartpole_ppo(seed, po, 64, 0.2, 0.3, 0.3);
  for (int k = 0; k < iterations; ++k) ok(ppo.iterate());
  return ok(ppo.evaluate());
}

}  // namespace

TEST_CASE("ppo rigid: learns to balance the cartpole on 2 of seeds 1 2 3", "[optim][ppo][cartpole]") {
  // measured: mean frame cost 3.80 (the pole falls) before; after 35 iterations (71,680 frames)
  // seeds 1-5 give 7.5, 0.033, 0.049, 5.3, 13.5: PPO balances it within this budget on some
  // seeds only (so did PPO with one random stream for every copy: 0.061, 11.7, 0.055, 5.8, 34)
  PpoOptions po = SampleEfficiencyOptions::default_rigid_ppo();
  const double before = balance_cost(po, 0, 1);
  CHECK(before > 3.0);
  int balanced = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const double after = balance_cost(po, 35, seed);
    INFO("seed " << seed << ": mean frame cost from 0.2 rad " << before << " -> " << after);
    balanced += after < 0.5;
  }
  CHECK(balanced >= 2);
}

TEST_CASE("ppo rigid: the same seed gives the same parameters", "[optim][ppo]") {
  auto run = [](std::uint64_t seed) {
    PpoOptions po = SampleEfficiencyOptions::default_rigid_ppo();
    po.steps_per_env = 8;
    PpoTrainer ppo = cartpole_ppo(seed, po, 4);
    for (int k = 0; k < 2; ++k) ok(ppo.iterate());
    return ppo.parameters();
  };
  CHECK(run(3) == run(3));
  CHECK(run(3) != run(4));
}

// a copy whose simulation step fails (its state blew up: here every start's velocities are
// ~1e200, so the first substep overflows) does not end the run: the copy's episode restarts and
// the iteration's update is skipped, with a message naming the iteration, the copy, its episode
// frame and the step's own message (the quantity), and the count goes on
TEST_CASE("ppo rigid: a copy whose step fails skips the iteration's update, named and counted", "[optim][ppo]") {
  PpoOptions po = SampleEfficiencyOptions::default_rigid_ppo();
  po.steps_per_env = 8;
  po.minibatches = 2;
  PpoTrainer ppo = cartpole_ppo(1, po, 3, 3.0, 3.0, 1e200);
  const std::uint64_t w0 = ppo.fingerprint();
  for (int k = 0; k < 2; ++k) {
    PpoIteration it = ok(ppo.iterate());
    INFO(it.skip_reason);
    CHECK(it.skipped);
    CHECK(it.skipped_iterations == k + 1);
    CHECK_THAT(it.skip_reason, Catch::StartsWith("PPO iteration " + std::to_string(k) +
                                                 " skipped: the simulation step failed: env 0, frame 0: "));
    CHECK_THAT(it.skip_reason, Catch::Contains("joint_q"));  // the step's own message: the quantity
  }
  CHECK(ppo.fingerprint() == w0);
  // from ordinary starts the same settings train
  PpoTrainer trains = cartpole_ppo(1, po, 3);
  const std::uint64_t t0 = trains.fingerprint();
  PpoIteration it = ok(trains.iterate());
  CHECK(!it.skipped);
  CHECK(it.skipped_iterations == 0);
  CHECK(trains.fingerprint() != t0);
}

// an evaluation episode whose step fails (the task's start has a pole velocity of 1e200) ends
// there, named, and the run goes on
TEST_CASE("ppo rigid: an evaluation episode whose step fails ends there, named, and the run goes on", "[optim][ppo]") {
  scene::Scene sc = ok(scene::load_scene(kScenes + "/robot_cartpole.json"));
  REQUIRE(sc.objects[0].robot.initial.size() == 1);
  sc.objects[0].robot.initial[0].qd = {1e200};
  auto cs = ok(scene::compile<double>(sc, kScenes));
  auto made = ok(make_task(cs, *sc.find_task("swing up (policy)")));
  PpoOptions po = SampleEfficiencyOptions::default_rigid_ppo();
  po.steps_per_env = 8;
  po.minibatches = 2;
  PpoTrainer ppo = ok(PpoTrainer::create(*made, po, {.env_count = 1, .q_range = 3.0, .qd_range = 0.5}));
  for (int k = 0; k < 2; ++k) {
    CHECK(ok(ppo.evaluate()) == 0);
    INFO(ppo.evaluation_failure());
    CHECK_THAT(ppo.evaluation_failure(), Catch::StartsWith("PPO evaluation: env 0, frame 0: "));
    CHECK_THAT(ppo.evaluation_failure(), Catch::Contains("joint_q"));
    ok(ppo.iterate());  // the run goes on
  }
  PpoTrainer clear = cartpole_ppo(1, po, 1);
  ok(clear.evaluate());
  CHECK(clear.evaluation_failure().empty());
}

TEST_CASE("sample efficiency: cartpole swing-up, SHAC vs PPO", "[.bench]") {
  scene::Scene sc = ok(scene::load_scene(kScenes + "/robot_cartpole.json"));
  SampleEfficiencyOptions o;
  o.task = "swing up (policy)";
  o.seeds = {1};
  if (const char* s = std::getenv("SEEDS")) o.seeds = {std::uint64_t(std::atoi(s))};
  if (const char* s = std::getenv("PPO_STEPS")) o.ppo_max_steps = std::atoll(s);
  o.bptt_iterations = 50;
  o.target_cost = 3.0;
  auto t = ok(run_sample_efficiency(sc, kScenes, o, [](const std::string& l) {
    std::fputs(l.c_str(), stdout);
    std::fflush(stdout);
  }));
  std::fputs(t.format().c_str(), stdout);
}
