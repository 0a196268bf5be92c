// Receding-horizon control of the drone (Warp's drone example): plans over short windows from
// the real state reach the waypoints about as well as the open-loop optimum, and, unlike the
// open-loop plan, still reach the last waypoint after a push the plan did not know about.
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/optim/receding_horizon.h"
#include "engine/optim/task.h"
#include "engine/optim/trainer.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/solver.h"
#include "engine/vis/rigid_vis.h"

using namespace adj;
using namespace adj::optim;

namespace {

const std::string kScenes = ADJ_ASSET_SCENES;

struct Drone {
  scene::Scene doc;
  scene::CompiledScene cs;
  scene::Task task;
  vec3<float> wp2;
};

Drone drone() {
  auto s = scene::load_scene(kScenes + "/robot_drone.json");
  INFO(s.status().message());
  REQUIRE(s);
  auto cs = scene::compile<float>(*s, kScenes);
  INFO(cs.status().message());
  REQUIRE(cs);
  Drone d{*s, *cs, s->tasks[0], {}};
  const scene::ObjectRange* wp = d.cs.find("wp2");
  REQUIRE(wp);
  d.wp2 = {float(wp->target[0]), float(wp->target[1]), float(wp->target[2])};
  return d;
}

// the drone's distance to the last waypoint at the end of a trajectory
float miss(const Drone& d, const State& end) {
  std::vector<float> joints(size_t(d.cs.model.rigid.body_count()) * kRigidJointFloats);
  rigid_vis_joints(d.cs.model.rigid, end, joints.data());
  vec3<float> p{joints[6], joints[7], joints[8]};
  return length(p - d.wp2);
}

// a gust at frame 40: 1.5 m/s sideways, which no plan made before it knew of
void gust(int frame, State& s) {
  if (frame == 40) s.joint_qd[2] += 1.5f;  // free joint: linear (joint frame), then angular velocity
}

}  // namespace

TEST_CASE("receding horizon: the drone flies the waypoints from short plans, and recovers from a gust",
          "[optim][robot][mpc]") {
  Drone d = drone();
  const RecedingHorizonOptions opt{.window = 40, .iterations = 10, .execute = 3};

  // zero inputs: the drone falls; the loss of that trajectory is the yardstick
  auto idle = TaskRunnerT<float>::create(d.cs, d.task);
  REQUIRE(idle);
  std::vector<float> zero(idle->theta().size(), 0.0f);
  auto idle_loss = idle->evaluate(zero);
  REQUIRE(idle_loss);

  auto task = make_task(d.cs, d.task);
  REQUIRE(task);
  auto mpc = RecedingHorizonT<float>::create(**task, opt);
  INFO(mpc.status().message());
  REQUIRE(mpc);
  auto calm = mpc->run();
  INFO(calm.status().message());
  REQUIRE(calm);
  CHECK(calm->replans == 30);
  REQUIRE(calm->states.size() == size_t(d.task.horizon + 1));
  INFO("idle loss " << *idle_loss << ", receding-horizon loss " << calm->loss << " in " << calm->ms << " ms");
  CHECK(calm->loss < 0.02 * double(*idle_loss));
  CHECK(miss(d, calm->states.back()) < 0.25f);

  // the open-loop optimum of the same task (150 Adam steps over the whole horizon)
  auto open = TaskRunnerT<float>::create(d.cs, d.task);
  REQUIRE(open);
  for (int k = 0; k < 150; ++k) REQUIRE(open->iterate());
  auto open_loss = open->evaluate(open->theta());
  REQUIRE(open_loss);
  INFO("open-loop loss " << *open_loss);
  CHECK(calm->loss < 5.0 * double(*open_loss) + 0.05);

  // a gust: the open-loop plan, replayed blind, misses the last waypoint by far more than
  // the receding-horizon controller, which sees the push and corrects for it
  Solver solver({.substeps = d.cs.substeps});
  Model m = d.cs.model;
  State init = d.cs.model.make_state(), s = d.cs.model.make_state(), nxt = s;
  std::vector<Control> controls;
  open->parameters().apply(open->theta(), d.cs.model.rigid, m, init, controls);
  for (int t = 0; t < d.task.horizon; ++t) {
    gust(t, s);
    REQUIRE(solver.step(d.cs.model, s, nxt, controls[size_t(t)], d.cs.frame_dt));
    std::swap(s, nxt);
  }
  const float open_miss = miss(d, s);
  auto gusty = mpc->run(gust);
  REQUIRE(gusty);
  const float mpc_miss = miss(d, gusty->states.back());
  INFO("miss after the gust: open loop " << open_miss << " m, receding horizon " << mpc_miss << " m");
  CHECK(mpc_miss < 0.4f);
  CHECK(open_miss > 3.0f * mpc_miss);
}

TEST_CASE("receding horizon: bad options and tasks are refused with the task's name", "[optim][robot][mpc]") {
  Drone d = drone();
  auto task = make_task(d.cs, d.task);
  REQUIRE(task);
  CHECK_THAT(RecedingHorizonT<float>::create(**task, {.window = 0}).status().message(),
             Catch::Contains("waypoints") && Catch::Contains("window"));
  CHECK_THAT(RecedingHorizonT<float>::create(**task, {.window = 10, .execute = 11}).status().message(),
             Catch::Contains("1..window"));
  scene::Task no_inputs = d.task;
  no_inputs.parameters.clear();
  no_inputs.parameters.push_back({.kind = scene::ParamKind::body_mass, .object = "drone"});
  std::erase_if(no_inputs.loss, [](const scene::LossTerm& l) { return l.kind == scene::LossKind::effort; });
  auto masses = make_task(d.cs, no_inputs);
  INFO(masses.status().message());
  REQUIRE(masses);
  CHECK_THAT(RecedingHorizonT<float>::create(**masses, {}).status().message(), Catch::Contains("actuator_control"));
}
