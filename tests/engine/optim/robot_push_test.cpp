// the contact-rich manipulation task: a 3-link arm (PD joint targets per frame) pushing a free
// box across the ground to a target (assets/scenes/robot_arm_push.json): the loss falls by a
// stated factor from the command line's optimizer, and the gradient through the arm-box and
// box-ground contacts holds against central differences in double
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/optim/task.h"
#include "engine/optim/trainer.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/solver.h"

using namespace adj;
using namespace adj::optim;

namespace {

const std::string kScenes = ADJ_ASSET_SCENES;

scene::Scene load_push() {
  auto s = scene::load_scene(kScenes + "/robot_arm_push.json");
  INFO(s.status().message());
  REQUIRE(s.is_ok());
  return s.value();
}

template <class S>
TaskRunnerT<S> make_runner(const scene::Scene& s, const scene::Task& task) {
  auto cs = scene::compile<S>(s, kScenes);
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  REQUIRE(std::string(make_task(cs.value(), task).value()->kind()) == "robot");
  auto r = TaskRunnerT<S>::create(cs.value(), task);
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  return std::move(r.value());
}

}  // namespace

TEST_CASE("robot push: the arm pushes the box toward the target, loss falls 10x in 60 iterations",
          "[optim][robot][push]") {
  scene::Scene s = load_push();
  TaskRunnerT<float> r = make_runner<float>(s, s.tasks[0]);
  double first = 0;
  for (int i = 0; i < 60; ++i) {
    auto it = r.iterate();
    INFO(it.status().message());
    REQUIRE(it.is_ok());
    if (i == 0) first = it->loss;
  }
  double last = double(r.evaluate(r.theta()).value());
  INFO("first " << first << " last " << last);
  // measured: 0.157 -> 3.4e-4 (the box ends within 2 cm of the target)
  CHECK(first > 0.15);  // the box starts 0.4 m from the target
  CHECK(last < first / 100);
  // the box moved by the arm's contact, not by itself: it slid ~0.4 m along x, upright, on the ground
  const RigidModelT<float>& m = r.model().rigid;
  int box = m.body_count() - 1;
  REQUIRE(m.body_name[box] == "box");
  std::vector<vec3<float>> pos;
  std::vector<mat33<float>> rot;
  rigid_forward_kinematics(m, r.final_state(), pos, rot);
  INFO("box ends at " << pos[box].x << " " << pos[box].y << " " << pos[box].z);
  CHECK(pos[box].x > 0.85f);
  CHECK(std::fabs(pos[box].y - 0.1f) < 0.005f);
  CHECK(rot[box].m[1][1] > 0.99f);
  int touching = 0;
  for (const StateT<float>& f : r.frames()) {
    RigidContactsT<float> c;
    REQUIRE(rigid_contacts(m, f, m.make_control(), c).is_ok());
    for (int k = 0; k < c.contact_count(); ++k)
      if (c.other_body[k] == box || (c.body[k] == box && c.other_body[k] >= 0)) {
        ++touching;
        break;
      }
  }
  INFO(touching << " of " << r.frames().size() << " frames with arm-box contact");
  CHECK(touching >= 3);  // a shove: contact over the first frames, then the box slides
}

TEST_CASE("robot push: gradients through arm-box and box-ground contact match central differences (double)",
          "[optim][robot][push][grad]") {
  scene::Scene s = load_push();
  scene::Task task = s.tasks[0];
  task.horizon = 30;
  TaskRunnerT<double> r = make_runner<double>(s, task);
  // optimizer steps first: the arm then stays on the box over many frames (at the start only
  // frame 0's overlap moves it)
  for (int i = 0; i < 30; ++i) REQUIRE(r.iterate().is_ok());
  auto rep = r.check_grad(24, 1e-6, 3);
  INFO(rep.status().message());
  REQUIRE(rep.is_ok());
  INFO(rep->format());
  CHECK(rep->max_rel_err < 1e-4);
  // the gradient beyond the effort term (2 w theta) is the contact's: not zero over several frames
  const double w = task.loss[1].weight;
  int frames_with_push = 0;
  for (int t = 0; t < task.horizon; ++t) {
    double g = 0;
    for (int e = 0; e < 3; ++e) g = std::max(g, std::fabs(r.grad()[3 * t + e] - 2 * w * r.theta()[3 * t + e]));
    if (g > 1e-6) ++frames_with_push;
  }
  INFO(frames_with_push << " frames whose targets move the box");
  CHECK(frames_with_push >= 10);  // measured: all 30
}

TEST_CASE("robot scenes: colliders and shape filters reach the rigid model, a box rests on a collider",
          "[optim][robot][scene][collider]") {
  auto s = scene::parse_scene(R"({
    "format": "adjoint-scene", "version": 1, "name": "collider test",
    "settings": {"dt": 0.016666666666666666, "substeps": 8,
                 "robot_contact": {"ke": 1e4, "kd": 100, "kf": 100, "mu": 0.8, "eps": 0.01}},
    "objects": [
      {"name": "floor", "type": "ground", "height": 0.5},
      {"name": "ball", "type": "sphere", "position": [2, 0, 0], "size": [0.3, 0.3, 0.3]},
      {"name": "crate", "type": "robot", "position": [0, 0.8, 0],
       "bodies": [{"name": "crate", "joint": "free",
                   "shapes": [{"type": "box", "size": [0.1, 0.1, 0.1], "density": 300, "group": 2, "mask": 5}]}]}
    ]})",
                              "collider test");
  INFO(s.status().message());
  REQUIRE(s.is_ok());
  REQUIRE(s->objects[2].robot.bodies[0].shapes[0].group == 2);
  auto again = scene::parse_scene(scene::to_json(s.value()), "saved");
  REQUIRE(again.is_ok());
  CHECK(again.value() == s.value());
  auto cs = scene::compile<double>(s.value(), "");
  INFO(cs.status().message());
  REQUIRE(cs.is_ok());
  const RigidModelT<double>& m = cs->model.rigid;
  CHECK_FALSE(m.ground);  // a ground above 0 is a plane collider
  REQUIRE(m.collider_count() == 2);
  CHECK(m.collider_type[0] == 0);
  CHECK(m.collider_pos[0].y == 0.5);
  CHECK(m.collider_type[1] == 1);
  CHECK(m.shape_group[0] == 2);
  CHECK(m.shape_mask[0] == 5);
  // the crate drops 0.2 m onto the raised ground and rests there
  SolverT<double> solver({.substeps = 8});
  StateT<double> st = cs->model.make_state(), next;
  for (int t = 0; t < 120; ++t) {
    REQUIRE(solver.step(cs->model, st, next, m.make_control(), 1.0 / 60.0).is_ok());
    st = next;
  }
  std::vector<vec3<double>> pos;
  std::vector<mat33<double>> rot;
  rigid_forward_kinematics(m, st, pos, rot);
  double rest = 0.5 + 0.1 - m.body_mass[0] * 9.81 / (4 * m.contact_ke);
  INFO("crate at " << pos[0].y << ", rest " << rest);
  CHECK(std::fabs(pos[0].y - rest) < 1e-3);
}
