// SHAC and AHAC on the Ant (the scene's shac block, 8 copies, 3 windows, seed 0) end with the
// weights fingerprints recorded at the commit whose free joint keeps its linear velocity in the
// joint frame (the Ant's networks with SHAC's LayerNorm and orthogonal initial weights: the
// scene's shac.layer_norm and shac.init), the same on 1 and 2 threads (`adjoint
// optimize assets/scenes/locomotion/ant.json --method shac --envs 8 --iterations 3 --seed 0`
// prints them); and the last window's time by part
#include <catch2/catch.hpp>

#include <cstdint>

#include "engine/optim/shac.h"
#include "engine/optim/shac_task.h"
#include "engine/optim/task.h"
#include "tests/engine/asset_scene.h"

using namespace adj;
using namespace adj::optim;

TEST_CASE("SHAC and AHAC on the Ant give the recorded weights, on 1 and 2 threads", "[optim][shac][ahac][locomotion]") {
  const bool ahac = GENERATE(false, true);
  const int threads = GENERATE(1, 2);
  INFO((ahac ? "AHAC" : "SHAC") << " on " << threads << " threads");
  adj::test::AssetScene<float> ant("locomotion/ant.json", "run");
  auto task = adj::test::ok(make_task(ant.cs, ant.task, {.thread_count = threads}));
  auto shac = adj::test::ok(
      make_shac_trainer(*task, {.envs = 8, .windows = 3, .seed = 0, .thread_count = threads, .ahac = ahac}));
  BatchShacStats st;
  for (int k = 0; k < 3; ++k) st = adj::test::ok(shac.step());
  CHECK(shac.fingerprint() == (ahac ? 0x92ceef9d8d5847f6ull : 0x64f55578fafaaafeull));
  // the window's time by part: each part measured, the copies' parts within the threads' time
  const ShacWindowTimes& t = st.time;
  CHECK(t.rollout > 0);
  CHECK(t.sim_forward > 0);
  CHECK(t.sim_backward > 0);
  CHECK(t.policy_forward > 0);
  CHECK(t.policy_backward > 0);
  CHECK(t.critic_fit > 0);
  CHECK(t.idle >= 0);
  CHECK(t.sim_forward + t.sim_backward + t.policy_forward + t.policy_backward + t.observe + t.end_value <=
        threads * t.rollout * 1.001);
}
