// a task on a robot file nobody here wrote: the Unitree A1 (../shared/robots, in place) in a
// z-up scene, standing on the ground under PD control. the running costs measure height and
// uprightness along the scene's up axis (z here), and the gradient of a contact-rich rollout
// (feet pushing on the ground) holds against central differences in double
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>

#include "engine/optim/body_probe.h"
#include "engine/optim/task.h"
#include "engine/scene/scene_json.h"

using namespace adj;
using namespace adj::optim;

namespace {

const std::string kA1 = std::string(ADJ_SHARED_ROBOTS) + "/urdf/a1";

// the A1 crouched on a z-up ground; a task over `horizon` frames of its actuator targets
std::string a1_scene(int horizon, const std::string& loss) {
  std::string initial;
  for (const char* leg : {"FR", "FL", "RR", "RL"})
    initial += std::string(initial.empty() ? "" : ", ") + R"({"body": ")" + leg +
               R"(_upper", "q": [0.8]}, {"body": ")" + leg + R"(_lower", "q": [-1.5]})";
  return R"({"format": "adjoint-scene", "version": 1, "name": "a1 push",
  "settings": {"up": "z", "dt": 0.004166666666666667, "substeps": 8,
               "robot_contact": {"ke": 1e4, "kd": 100, "kf": 100, "mu": 0.8, "eps": 0.01}},
  "objects": [{"name": "ground", "type": "ground"},
    {"name": "a1", "type": "urdf", "file": "a1.urdf", "position": [0, 0, 0.3], "fixed_base": false,
     "actuator": {"type": "pd", "kp": 80, "kd": 2}, "initial": [)" +
         initial + R"(]}],
  "tasks": [{"name": "push", "horizon": )" +
         std::to_string(horizon) + R"(, "parameters": [{"kind": "actuator_control", "object": "a1"}],
    "loss": [)" +
         loss + R"(], "optimizer": {"kind": "adam", "lr": 0.01, "iterations": 5}}]})";
}

template <class S>
std::unique_ptr<TaskT<S>> make(const std::string& text, scene::CompiledSceneT<S>& cs, TaskOptions opt = {}) {
  auto doc = scene::parse_scene(text, kA1 + "/scene.json");
  INFO(doc.status().message());
  REQUIRE(doc.is_ok());
  auto c = scene::compile<S>(*doc, kA1);
  INFO(c.status().message());
  REQUIRE(c.is_ok());
  cs = std::move(c.value());
  auto t = make_task(cs, doc->tasks[0], opt);
  INFO(t.status().message());
  REQUIRE(t.is_ok());
  return std::move(t.value());
}

}  // namespace

TEST_CASE("robot file task: height and upright measure along a z-up scene's up axis", "[optim][robot][up]") {
  REQUIRE(std::filesystem::exists(kA1 + "/a1.urdf"));
  const int horizon = 12;
  scene::CompiledSceneT<double> cs;
  auto task = make<double>(a1_scene(horizon, R"({"kind": "height", "object": "a1", "body": "trunk", "value": 0.5},
      {"kind": "upright", "object": "a1", "body": "trunk", "axis": [0, 0, 1]})"),
                           cs, {.keep_frames = true});
  auto loss = task->evaluate(task->theta());
  INFO(loss.status().message());
  REQUIRE(loss.is_ok());
  // the same costs from the kept frames: the trunk's com height along z, its z axis against world z
  const RigidModelT<double>& m = cs.model.rigid;
  const std::vector<StateT<double>>& frames = task->frames();
  REQUIRE(int(frames.size()) == horizon + 1);
  double height = 0, upright = 0;
  for (int t = 1; t <= horizon; ++t) {
    const RigidBodyProbe<double> p = rigid_body_probe(m, frames[t].joint_q, frames[t].joint_qd, 0);
    CHECK(p.c.z > 0.15);  // standing on the ground, not fallen through it
    height += std::pow(std::max(0.0, 0.5 - p.c.z), 2);
    upright += 1 - p.R.m[2][2];
  }
  // held up by the ground: in free fall the com would drop 1.2 cm in these 12 frames
  const double z0 = rigid_body_probe(m, frames[0].joint_q, frames[0].joint_qd, 0).c.z;
  const double z1 = rigid_body_probe(m, frames[horizon].joint_q, frames[horizon].joint_qd, 0).c.z;
  INFO("trunk com height " << z0 << " -> " << z1);
  CHECK(z1 > z0 - 0.004);
  const double expected = (height + upright) / horizon;
  INFO("loss " << *loss << ", from the frames " << expected);
  CHECK(*loss == Approx(expected).epsilon(1e-9));
  CHECK(height > 0);  // crouched below 0.5 m: the height term is active
}

TEST_CASE("robot file task: the A1 pushing off the ground, check-grad in double within 1e-4",
          "[optim][robot][contact]") {
  REQUIRE(std::filesystem::exists(kA1 + "/a1.urdf"));
  scene::CompiledSceneT<double> cs;
  auto task = make<double>(a1_scene(10, R"({"kind": "height", "object": "a1", "body": "trunk", "value": 0.45},
      {"kind": "distance", "object": "a1", "body": "trunk", "axis": [1, 0, 0.5], "weight": 10})"),
                           cs);
  // push: knees straightening (theta moved off the hold so the feet press on the ground)
  std::vector<double> th = task->theta();
  for (size_t i = 0; i < th.size(); ++i) th[i] += 0.3 * std::sin(0.7 * double(i) + 0.3);
  task->set_theta(th);
  auto rep = task->check_grad(24, 1e-6, 5);
  INFO(rep.status().message());
  REQUIRE(rep.is_ok());
  INFO(rep->format());
  CHECK(rep->max_rel_err < 1e-4);
}

TEST_CASE("robot file task: the A1 optimizes like the project's own robots (the loss falls by 15% in 10 iterations)",
          "[optim][robot]") {
  REQUIRE(std::filesystem::exists(kA1 + "/a1.urdf"));
  scene::CompiledSceneT<float> cs;
  auto task =
      make<float>(a1_scene(24, R"({"kind": "height", "object": "a1", "body": "trunk", "value": 0.4, "weight": 100},
      {"kind": "upright", "object": "a1", "body": "trunk", "axis": [0, 0, 1]})"),
                  cs);
  std::vector<double> losses;
  for (int k = 0; k < 10; ++k) {
    auto it = task->iterate();
    INFO(it.status().message());
    REQUIRE(it.is_ok());
    losses.push_back(it->loss);
  }
  INFO("loss " << losses.front() << " -> " << losses.back());
  CHECK(losses.back() < 0.85 * losses.front());  // measured 0.92 -> 0.72: the PD targets lift the trunk
}
