// per-frame parameters through knots (engine/optim/parameters.h: knot_frame, knots_to_frames):
// the knot -> frame mapping against its definition, the gradient with respect to the knots
// against central differences in double (a particle's forces, a robot arm's inputs), knots at
// every frame giving the bits of no knots, stored values per frame, and bad knots refused
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/optim/receding_horizon.h"
#include "engine/optim/task.h"
#include "engine/optim/write_back.h"
#include "engine/scene/scene_json.h"
#include "tests/engine/optim/grad_check.h"

using namespace adj;
using namespace adj::optim;
using namespace adj::optim::test;

namespace {

// a knotted block by hand: `knots` knots over `frames` frames, 2 elements of width 3
ParamBlock knotted(int knots, int frames) {
  ParamBlock b;
  b.kind = ParamKind::control_force;
  b.elements = 2;
  b.width = 3;
  b.frames = frames;
  b.knots = knots;
  b.steps = knots;
  b.count = knots * 2 * 3;
  return b;
}

std::vector<double> wave(int n, double phase) {
  std::vector<double> x(std::size_t(n), 0.0);
  for (int i = 0; i < n; ++i) x[std::size_t(i)] = std::sin(1.3 * i + phase) + 0.1 * i;
  return x;
}

// theta_i = amp sin(freq i + phase) set on r, then its gradient against central differences
// (eps 1e-6): `entries` rows, each within 1e-5 relative
void check_knots_grad(TaskRunnerT<double>& r, double amp, double freq, double phase, std::size_t entries) {
  std::vector<double> theta(r.theta().size());
  for (int i = 0; i < int(theta.size()); ++i) theta[std::size_t(i)] = amp * std::sin(freq * i + phase);
  r.set_theta(theta);
  GradCheckReport rep = must_ok(r.check_grad(0, 1e-6, 1));
  INFO(rep.format());
  CHECK(rep.rows.size() == entries);
  CHECK(rep.max_rel_err < 1e-5);
}

}  // namespace

TEST_CASE("knots: knot frames and the frames between them against the definition", "[optim][parameters][knots]") {
  // frames 0, 3, 6, 9 of 10; 115 frames in 16 knots: round(k 114 / 15)
  CHECK(knot_frame(0, 4, 10) == 0);
  CHECK(knot_frame(1, 4, 10) == 3);
  CHECK(knot_frame(3, 4, 10) == 9);
  for (int k = 0; k < 16; ++k) CHECK(knot_frame(k, 16, 115) == int(std::lround(k * 114.0 / 15.0)));
  CHECK(knot_frame(15, 16, 115) == 114);

  for (auto [knots, frames] : {std::pair{4, 10}, std::pair{5, 23}, std::pair{7, 7}, std::pair{2, 2}}) {
    INFO(knots << " knots over " << frames << " frames");
    const ParamBlock b = knotted(knots, frames);
    const ParamBlock f = frame_block(b);
    REQUIRE(f.count == frames * 6);
    REQUIRE(f.knots == 0);
    const std::vector<double> x = wave(b.count, 0.2);
    std::vector<double> v(std::size_t(f.count));
    knots_to_frames(b, x.data(), v.data());
    // a frame on a knot equals it; a frame between knots k and k + 1 is their linear mix
    for (int k = 0; k + 1 < knots; ++k) {
      const int f0 = knot_frame(k, knots, frames), f1 = knot_frame(k + 1, knots, frames);
      REQUIRE(f1 > f0);
      for (int t = f0; t <= f1; ++t)
        for (int i = 0; i < 6; ++i) {
          const double w = double(t - f0) / double(f1 - f0);
          const double want = (1 - w) * x[std::size_t(k * 6 + i)] + w * x[std::size_t((k + 1) * 6 + i)];
          if (t == f0) CHECK(v[std::size_t(t * 6 + i)] == x[std::size_t(k * 6 + i)]);
          if (t == f1) CHECK(v[std::size_t(t * 6 + i)] == x[std::size_t((k + 1) * 6 + i)]);
          CHECK(v[std::size_t(t * 6 + i)] == Approx(want).epsilon(1e-14).margin(1e-14));
        }
    }
    // the knots read back from their frames
    std::vector<double> back(std::size_t(b.count));
    sample_knots(b, v.data(), back.data());
    CHECK(back == x);
    // the gradient map is the transpose: <J x, y> = <x, J^T y>
    const std::vector<double> y = wave(f.count, 1.1);
    std::vector<double> jty(std::size_t(b.count));
    frames_to_knots_grad(b, y.data(), jty.data());
    double a = 0, c = 0;
    for (int i = 0; i < f.count; ++i) a += v[std::size_t(i)] * y[std::size_t(i)];
    for (int i = 0; i < b.count; ++i) c += x[std::size_t(i)] * jty[std::size_t(i)];
    CHECK(a == Approx(c).epsilon(1e-13));
  }
}

TEST_CASE("knots: a particle's control forces, gradient against central differences", "[optim][parameters][knots]") {
  Task t = bounce_task(12);
  t.parameters = {{.kind = ParamKind::control_force, .object = "ball", .knots = 4}};
  auto cs = bounce_scene<double>();
  TaskRunnerT<double> r = must_ok(TaskRunnerT<double>::create(cs, t));
  REQUIRE(r.theta().size() == 4 * 3);  // 4 knots x 1 particle x xyz
  CHECK(r.entry_name(3 * 2 + 1) == "control_force[ball][knot 2, t=7][0].y");
  check_knots_grad(r, 3.0, 1.7, 0.0, 12);
}

TEST_CASE("knots: a robot arm's actuator inputs, gradient against central differences",
          "[optim][parameters][knots][robot]") {
  auto s = scene::load_scene(std::string(ADJ_ASSET_SCENES) + "/robot_arm_reach.json");
  REQUIRE(s.is_ok());
  auto cs = scene::compile<double>(s.value(), ADJ_ASSET_SCENES);
  REQUIRE(cs.is_ok());
  Task t = s->tasks[0];
  t.horizon = 10;
  t.loss.resize(1);  // the hand's position (effort measures frames, not knots: refused below)
  t.parameters[0].knots = 3;
  TaskRunnerT<double> r = must_ok(TaskRunnerT<double>::create(cs.value(), t));
  REQUIRE(r.theta().size() == 3 * 3);  // 3 knots x 3 actuators
  check_knots_grad(r, 1.0, 0.9, 0.3, 9);
}

TEST_CASE("knots: one knot a frame gives the bits of no knots, and stored values stay per frame",
          "[optim][parameters][knots]") {
  auto cs = cage_scene<double>(true);
  Task plain = cage_task(6);
  plain.parameters = {{.kind = ParamKind::spring_activation, .object = "cage"}};
  plain.loss = {{LossKind::position, "cage", "goal"}, {LossKind::velocity, "cage", "", 4}};
  Task every = plain;
  every.parameters[0].knots = 6;
  TaskRunnerT<double> a = must_ok(TaskRunnerT<double>::create(cs, plain));
  TaskRunnerT<double> b = must_ok(TaskRunnerT<double>::create(cs, every));
  std::vector<double> theta(a.theta().size());
  for (int i = 0; i < int(theta.size()); ++i) theta[std::size_t(i)] = 0.4 * std::sin(0.7 * i);
  std::vector<double> ga, gb;
  const double la = must_ok(a.evaluate(theta, &ga)), lb = must_ok(b.evaluate(theta, &gb));
  CHECK(la == lb);
  CHECK(ga == gb);
  CHECK(std::any_of(ga.begin(), ga.end(), [](double g) { return g != 0; }));

  // 3 knots over 6 frames: stored per frame (interpolated), read back at the knot frames
  Task three = plain;
  three.parameters[0].knots = 3;
  TaskRunnerT<float> c = must_ok(TaskRunnerT<float>::create(cage_scene<float>(true), three));
  const ParamBlock& blk = c.blocks()[0];
  REQUIRE(blk.count == 3 * 4);  // 3 knots x 4 actuated springs
  std::vector<float> x(std::size_t(blk.count));
  for (int i = 0; i < blk.count; ++i) x[std::size_t(i)] = 0.1f * float(i);
  c.set_theta(x);
  scene::Task saved = three;
  REQUIRE(store_values(c.blocks(), c.theta(), saved) == 1);
  REQUIRE(saved.values[0].values.size() == 6 * 4);
  const int f1 = knot_frame(1, 3, 6);  // frame 3 (round(2.5) rounds up)
  CHECK(f1 == 3);
  CHECK(saved.values[0].values[std::size_t(f1 * 4 + 2)] == double(x[4 + 2]));
  CHECK(saved.values[0].values[std::size_t(1 * 4 + 2)] == Approx((2.0 / 3.0) * x[2] + (1.0 / 3.0) * x[4 + 2]));
  TaskRunnerT<float> d = must_ok(TaskRunnerT<float>::create(cage_scene<float>(true), saved));
  start_from_stored(d, d.blocks(), saved);
  CHECK(d.theta() == x);
}

TEST_CASE("knots: bad knots are refused, naming the file and the JSON path", "[optim][parameters][knots]") {
  auto load = [](const std::string& params) {
    const std::string text = R"({"format": "adjoint-scene", "version": 1, "objects": [
      {"name": "ball", "type": "particles", "particles": [{"position": [0, 1, 0]}]}],
      "tasks": [{"name": "t", "horizon": 10, "parameters": [)" +
                             params + R"(], "loss": [{"kind": "velocity", "object": "ball"}]}]})";
    auto s = scene::parse_scene(text, "knots.json");
    REQUIRE(!s.is_ok());
    return s.status().message();
  };
  CHECK_THAT(
      load(R"({"kind": "control_force", "object": "ball", "knots": 11})"),
      Catch::Contains("knots.json") && Catch::Contains("tasks[0].parameters[0].knots") && Catch::Contains("2 .. 10"));
  CHECK_THAT(load(R"({"kind": "control_force", "object": "ball", "knots": 1})"),
             Catch::Contains("tasks[0].parameters[0].knots"));
  CHECK_THAT(load(R"({"kind": "control_force", "object": "ball", "knots": 2.5})"),
             Catch::Contains("tasks[0].parameters[0].knots") && Catch::Contains("integer"));
  CHECK_THAT(load(R"({"kind": "initial_velocity", "object": "ball", "knots": 4})"),
             Catch::Contains("tasks[0].parameters[0].knots") && Catch::Contains("per-frame"));

  // a task made in code (or whose horizon was shortened in the editor) is refused when it runs
  Task t = bounce_task(5);
  t.parameters = {{.kind = ParamKind::control_force, .object = "ball", .knots = 6}};
  auto p = ParametersT<double>::create(bounce_scene<double>(), t);
  REQUIRE(!p.is_ok());
  CHECK_THAT(p.status().message(), Catch::Contains("task 'bounce': parameters[0]") && Catch::Contains("2 .. 5"));
  t.parameters = {{.kind = ParamKind::initial_velocity, .object = "ball", .knots = 3}};
  CHECK_THAT(ParametersT<double>::create(bounce_scene<double>(), t).status().message(), Catch::Contains("per-frame"));
  // effort measures frames: refused on knots
  t.parameters = {{.kind = ParamKind::control_force, .object = "ball", .knots = 3}};
  t.loss.push_back({LossKind::effort, "ball", "", -1, {1, 0, 0}, 0.01});
  CHECK_THAT(TaskRunnerT<double>::create(bounce_scene<double>(), t).status().message(),
             Catch::Contains("effort") && Catch::Contains("knots"));
  // receding horizon plans one value a frame: refused on knots
  auto arm = scene::load_scene(std::string(ADJ_ASSET_SCENES) + "/robot_arm_reach.json");
  REQUIRE(arm.is_ok());
  auto arm_cs = scene::compile<float>(arm.value(), ADJ_ASSET_SCENES);
  REQUIRE(arm_cs.is_ok());
  Task reach = arm->tasks[0];
  reach.loss.resize(1);
  reach.parameters[0].knots = 4;
  auto task = make_task(arm_cs.value(), reach);
  REQUIRE(task);
  CHECK_THAT(RecedingHorizonT<float>::create(**task, {}).status().message(),
             Catch::Contains("task 'reach', receding horizon") && Catch::Contains("knots"));
}
