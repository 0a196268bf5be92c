#include "engine/optim/trainer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "tests/engine/optim/grad_check.h"
#include "tests/engine/optim/optim_scenes.h"

using namespace adj;
using namespace adj::optim;
using namespace adj::optim::test;

namespace {

template <class S>
std::vector<IterationStats> train(const CompiledSceneT<S>& cs, const Task& task, int iterations,
                                  std::vector<S>* theta = nullptr) {
  TaskRunnerT<S> r = must_ok(TaskRunnerT<S>::create(cs, task));
  for (int k = 0; k < iterations; ++k) {
    auto it = r.iterate();
    INFO(it.status().message());
    REQUIRE(it.is_ok());
    if (std::getenv("ADJ_TEST_VERBOSE"))
      std::printf("%s it %2d loss %.6g |g| %.4g %.2f ms\n", task.name.c_str(), it->iteration, it->loss, it->grad_norm,
                  it->ms);
  }
  REQUIRE(int(r.history().size()) == iterations);
  if (theta) *theta = r.theta();
  return r.history();
}

}  // namespace

TEST_CASE("trainer: bounce task, initial velocity to reach the target", "[optim][trainer]") {
  // SGD as in the notes (Newton uses lr 0.02 for 250 iterations; 0.1 gets there in 20):
  // measured 9.34 -> 0.136 (x69) after 20 steps
  Task t = bounce_task();
  t.optimizer = {scene::OptimizerKind::sgd, 0.1, 0.0, 20};
  auto h = train(bounce_scene<double>(), t, 21);
  double first = h.front().loss, last = h.back().loss;  // loss before step 0 and after step 19
  INFO("bounce loss " << first << " -> " << last);
  CHECK(last < first / 20.0);
}

TEST_CASE("trainer: spring cage task, rest lengths to move the centre", "[optim][trainer]") {
  // SGD lr 0.5 as in the notes: measured 0.0469 -> 1.7e-9 after 20 steps
  Task t = cage_task();
  auto h = train(cage_scene<double>(), t, 21);
  double first = h.front().loss, last = h.back().loss;
  INFO("cage loss " << first << " -> " << last);
  CHECK(last < first / 1e4);
  for (std::size_t k = 1; k < h.size(); ++k) CHECK(h[k].loss < h[k - 1].loss);  // strictly falling
}

TEST_CASE("trainer: the same task twice gives identical losses and parameters, bit for bit", "[optim][trainer]") {
  Task t = bounce_task();
  t.optimizer = {scene::OptimizerKind::adam, 0.05, 10.0, 5};
  std::vector<float> ta, tb;
  auto a = train(bounce_scene<float>(), t, 5, &ta);
  auto b = train(bounce_scene<float>(), t, 5, &tb);
  for (int k = 0; k < 5; ++k) {
    CHECK(std::memcmp(&a[k].loss, &b[k].loss, sizeof(double)) == 0);
    CHECK(std::memcmp(&a[k].grad_norm, &b[k].grad_norm, sizeof(double)) == 0);
  }
  CHECK(std::memcmp(ta.data(), tb.data(), ta.size() * sizeof(float)) == 0);
  CHECK(a.back().loss < a.front().loss);
  // and on any thread count (the engine gathers per element, no float atomics)
  auto cs = cage_scene<float>();
  Task tc = cage_task();
  tc.parameters = {{ParamKind::spring_rest, "cage"}, {ParamKind::control_force, "cage"}};
  std::vector<float> g[2];
  float l[2];
  for (int k : {0, 1}) {
    auto r = must_ok(TaskRunnerT<float>::create(cs, tc, RunnerOptions{k + 1}));
    auto v = r.evaluate(r.theta(), &g[k]);
    REQUIRE(v.is_ok());
    l[k] = v.value();
  }
  CHECK(std::memcmp(&l[0], &l[1], sizeof(float)) == 0);
  CHECK(std::memcmp(g[0].data(), g[1].data(), g[0].size() * sizeof(float)) == 0);
}

TEST_CASE("trainer: checkpointing does not change the gradient", "[optim][trainer]") {
  Task t = cage_task();
  t.parameters = {{ParamKind::spring_rest, "cage"}, {ParamKind::control_force, "cage"}};
  auto cs = cage_scene<double>();
  std::vector<double> g[2];
  for (int k : {0, 1}) {
    t.checkpoint_every = k;
    TaskRunnerT<double> r = must_ok(TaskRunnerT<double>::create(cs, t));
    REQUIRE(r.evaluate(r.theta(), &g[k]).is_ok());
    CHECK(int(r.step_grad_norms().size()) == t.horizon + 1);
  }
  CHECK(std::memcmp(g[0].data(), g[1].data(), g[0].size() * sizeof(double)) == 0);
}

TEST_CASE("trainer: non-finite results come back as errors naming the step", "[optim][trainer]") {
  auto cs = cage_scene<double>();
  Task t = cage_task();
  t.parameters = {{ParamKind::spring_ke, "cage"}};
  TaskRunnerT<double> r = must_ok(TaskRunnerT<double>::create(cs, t));
  // absurdly stiff springs explode the explicit integrator
  r.set_theta(std::vector<double>(8, 1e9));
  auto e = r.iterate();
  REQUIRE(!e.is_ok());
  INFO(e.status().message());
  CHECK_THAT(e.status().message(), Catch::Contains("task 'cage'") && Catch::Contains("step") &&
                                       Catch::Contains("iteration 0"));
  // a NaN parameter: the initial state is reported (clamping keeps NaN as NaN)
  Task tb = bounce_task(5);
  TaskRunnerT<double> rb = must_ok(TaskRunnerT<double>::create(bounce_scene<double>(), tb));
  rb.set_theta({std::numeric_limits<double>::quiet_NaN(), 0, 0});
  auto e2 = rb.iterate();
  REQUIRE(!e2.is_ok());
  INFO(e2.status().message());
  CHECK_THAT(e2.status().message(), Catch::Contains("step 0"));
}

TEST_CASE("trainer: check_grad samples every block and prints a table", "[optim][trainer]") {
  Task t = cage_task(10);
  t.parameters = {{ParamKind::spring_rest, "cage"}, {ParamKind::initial_velocity, "cage"},
                  {ParamKind::control_force, "cage"}};
  auto cs = cage_scene<double>();
  TaskRunnerT<double> r = must_ok(TaskRunnerT<double>::create(cs, t));
  GradCheckReport rep = must_ok(r.check_grad(5, 1e-6, 42));
  REQUIRE(rep.rows.size() == 5);
  int per_block[3] = {0, 0, 0};
  for (const auto& row : rep.rows) {
    const ParamBlock& b = r.block_of(row.entry);
    per_block[&b - r.blocks().data()]++;
    CHECK(row.name == r.entry_name(row.entry));
  }
  for (int n : per_block) CHECK(n >= 1);
  CHECK(rep.max_rel_err < 1e-5);
  std::string table = rep.format();
  CHECK_THAT(table, Catch::Contains("analytic") && Catch::Contains("spring_rest[cage]") &&
                        Catch::Contains("max rel err"));
  // the same seed picks the same entries
  GradCheckReport again = must_ok(r.check_grad(5, 1e-6, 42));
  for (std::size_t k = 0; k < rep.rows.size(); ++k) CHECK(again.rows[k].entry == rep.rows[k].entry);
}

TEST_CASE("trainer: task errors", "[optim][trainer]") {
  auto cs = cage_scene<double>();
  Task t = cage_task();
  t.parameters.clear();
  auto r = TaskRunnerT<double>::create(cs, t);
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("no parameters"));
  t = cage_task();
  t.optimizer.lr = 0;
  r = TaskRunnerT<double>::create(cs, t);
  REQUIRE(!r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("lr"));
}

TEST_CASE("trainer: a scene document through compile() gives the hand-built bounce, bit for bit", "[optim][trainer]") {
  scene::Scene doc;
  doc.name = "bounce";
  doc.settings.dt = 1.0 / 60.0;
  doc.settings.substeps = 8;
  doc.settings.contact = {1e4, 10.0, 0.0, 0.2, 1e-2, false};
  scene::Object ball;
  ball.name = "ball";
  ball.particles.particles = {{{-0.5, 1.0, 0.0}, {5.0, -5.0, 0.0}, 1.0, 0.1}};
  scene::Object ground;
  ground.name = "ground";
  ground.kind = ObjectKind::collider;
  scene::Object wall = ground;
  wall.name = "wall";
  wall.collider.kind = scene::ColliderKind::plane;
  wall.collider.position = {1.75, 0, 0};
  wall.collider.normal = {-1, 0, 0};
  scene::Object goal;
  goal.name = "goal";
  goal.kind = ObjectKind::target;
  goal.target.position = {-2.0, 1.5, 0.0};
  doc.objects = {ball, ground, wall, goal};
  Task t = bounce_task();
  t.optimizer = {scene::OptimizerKind::sgd, 0.1, 0.0, 3};
  doc.tasks = {t};

  auto compiled = must_ok(scene::compile<double>(doc, ""));
  std::vector<double> ta, tb;
  auto a = train(compiled, *doc.find_task(""), 3, &ta);
  auto b = train(bounce_scene<double>(), t, 3, &tb);
  for (int k = 0; k < 3; ++k) CHECK(a[k].loss == b[k].loss);
  CHECK(ta == tb);
}

TEST_CASE("trainer: float and double runners agree on the gradient", "[optim][trainer]") {
  Task t = cage_task();
  t.parameters = {{ParamKind::spring_rest, "cage"}, {ParamKind::initial_velocity, "cage"}};
  auto rf = must_ok(TaskRunnerT<float>::create(cage_scene<float>(), t));
  auto rd = must_ok(TaskRunnerT<double>::create(cage_scene<double>(), t));
  std::vector<float> gf;
  std::vector<double> gd;
  auto lf = rf.evaluate(rf.theta(), &gf);
  auto ld = rd.evaluate(rd.theta(), &gd);
  REQUIRE(lf.is_ok());
  REQUIRE(ld.is_ok());
  CHECK(double(lf.value()) == Approx(ld.value()).epsilon(1e-4));
  double scale = global_norm(gd);
  for (std::size_t i = 0; i < gd.size(); ++i) CHECK(double(gf[i]) == Approx(gd[i]).margin(1e-4 * scale));
}

TEST_CASE("trainer: check_grad in float (the run-time default) with a coarser step", "[optim][trainer]") {
  Task t = cage_task();
  t.parameters = {{ParamKind::spring_rest, "cage"}, {ParamKind::initial_velocity, "cage"}};
  auto r = must_ok(TaskRunnerT<float>::create(cage_scene<float>(), t));
  GradCheckReport rep = must_ok(r.check_grad(0, 1e-2, 1));
  INFO(rep.format());
  if (std::getenv("ADJ_TEST_VERBOSE")) std::printf("%s", rep.format().c_str());
  CHECK(rep.rows.size() == 8 + 27);
  // measured: 1e-5..5e-4 on real entries, 4.7e-2 on the centre's ~0 velocity entries (float noise
  // against the floor 1e-4 max |fd|)
  CHECK(rep.max_rel_err < 0.1);
}
