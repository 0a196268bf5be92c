// optimizer.backtrack (iterate_step in check_grad.h): a point that raised the loss, or whose
// rollout failed, is rejected and the step to it halved; the final theta is never worse than
// the last accepted point (finish()); the key round-trips through scene files.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "engine/optim/check_grad.h"
#include "engine/optim/task.h"
#include "engine/scene/scene_json.h"
#include "tests/engine/optim/optim_scenes.h"

using namespace adj;
using namespace adj::optim;
using namespace adj::optim::test;

namespace {

struct Run {
  std::vector<IterationStats> history;
  double final_loss = 0;
};

Run run(const CompiledSceneT<double>& cs, Task t, int iterations, std::vector<double> start = {}) {
  TaskRunnerT<double> r = must_ok(TaskRunnerT<double>::create(cs, t));
  if (!start.empty()) r.set_theta(start);
  for (int k = 0; k < iterations; ++k) {
    auto it = r.iterate();
    INFO(it.status().message());
    REQUIRE(it.is_ok());
    if (std::getenv("ADJ_TEST_VERBOSE"))
      std::printf("%s it %2d loss %.6g |g| %.4g scale %g%s %s\n", t.name.c_str(), it->iteration, it->loss,
                  it->grad_norm, it->step_scale, it->rejected ? " rejected" : "", it->failure.c_str());
  }
  auto f = r.finish();
  INFO(f.status().message());
  REQUIRE(f.is_ok());
  return {r.history(), double(*f)};
}

}  // namespace

// the rule itself on f(x) = (x - 3)^2, whose evaluation fails past x = 3.5 (a rollout that blew
// up): SGD at lr 2 from 0 jumps to 12, which fails; the steps halve until one lands inside
TEST_CASE("backtrack: a point whose evaluation failed is rejected, the step halved, and the run goes on",
          "[optim][backtrack]") {
  scene::OptimizerSpec spec{scene::OptimizerKind::sgd, 2.0, 0.0, 10, true};
  OptimizerT<double> opt(spec, 1);
  std::vector<double> x{0.0}, grad;
  std::vector<IterationStats> history;
  auto f = [](const std::vector<double>& v, std::vector<double>* g) -> Result<double> {
    if (v[0] > 3.5) return Status::error("the rollout blew up at x = " + std::to_string(v[0]));
    if (g) *g = {2 * (v[0] - 3)};
    return (v[0] - 3) * (v[0] - 3);
  };
  auto clamp = [](std::vector<double>&) {};
  auto it = iterate_step(x, grad, opt, history, f, clamp);  // accepted: 9, the step to 12
  REQUIRE(it.is_ok());
  CHECK(x[0] == 12.0);
  it = iterate_step(x, grad, opt, history, f, clamp);  // 12 fails: rejected, back to 0 + 6
  REQUIRE(it.is_ok());
  CHECK(it->rejected);
  CHECK_THAT(it->failure, Catch::Contains("blew up at x = 12"));
  CHECK(it->step_scale == 0.5);
  CHECK(x[0] == 6.0);
  it = iterate_step(x, grad, opt, history, f, clamp);  // 6 fails too: 3
  CHECK(it->rejected);
  CHECK(x[0] == 3.0);
  it = iterate_step(x, grad, opt, history, f, clamp);  // 3 is the minimum: accepted (a retreat: the scale stays)
  CHECK_FALSE(it->rejected);
  CHECK(it->loss == 0.0);
  CHECK(it->step_scale == 0.25);
  // without backtracking the same failure ends the run with the evaluation's message
  spec.backtrack = false;
  OptimizerT<double> plain(spec, 1);
  std::vector<double> y{0.0};
  std::vector<IterationStats> h2;
  REQUIRE(iterate_step(y, grad, plain, h2, f, clamp).is_ok());
  auto e = iterate_step(y, grad, plain, h2, f, clamp);
  REQUIRE_FALSE(e.is_ok());
  CHECK_THAT(e.status().message(), Catch::Contains("blew up") && Catch::Contains("iteration 1"));
}

// a cliff at the accepted point: f(x) = -x up to 0 and 10 past it, from x = 0, so every step the
// gradient asks for (up) crosses it: the steps halve to min_scale, then the run has stalled
TEST_CASE("backtrack: where no step lowers the loss the run stalls at the accepted point", "[optim][backtrack]") {
  OptimizerT<double> opt({scene::OptimizerKind::sgd, 1.0, 0.0, 100, true}, 1);
  std::vector<double> x{0.0}, grad;
  std::vector<IterationStats> history;
  auto f = [](const std::vector<double>& v, std::vector<double>* g) -> Result<double> {
    if (g) *g = {-1.0};
    return v[0] > 0 ? 10.0 : -v[0];
  };
  auto clamp = [](std::vector<double>&) {};
  REQUIRE(iterate_step(x, grad, opt, history, f, clamp).is_ok());
  int rejected = 0;
  IterationStats last;
  do {
    auto it = iterate_step(x, grad, opt, history, f, clamp);
    REQUIRE(it.is_ok());
    REQUIRE(it->rejected);
    last = *it;
    ++rejected;
  } while (!last.stalled && rejected < 100);
  CHECK(last.stalled);
  CHECK(rejected == 21);  // the whole step and 1/2 .. 1/2^20 of it rejected
  CHECK(x[0] == 0.0);     // the accepted point, exactly
  // going on starts again from the whole step
  auto again = iterate_step(x, grad, opt, history, f, clamp);
  REQUIRE(again.is_ok());
  CHECK_FALSE(again->rejected);
  CHECK(x[0] == 1.0);
}

TEST_CASE("backtrack: finish() undoes a last step that raised the loss", "[optim][backtrack]") {
  scene::OptimizerSpec spec{scene::OptimizerKind::sgd, 0.9, 0.0, 10, true};
  OptimizerT<double> opt(spec, 1);
  std::vector<double> x{0.0}, grad;
  std::vector<IterationStats> history;
  auto f = [](const std::vector<double>& v, std::vector<double>* g) -> Result<double> {
    if (g) *g = {2 * (v[0] - 1)};
    return (v[0] - 1) * (v[0] - 1);
  };
  // lr 0.9 on (x - 1)^2 from 0 overshoots to 1.8 (loss 0.64 < 1, accepted), then to 0.36 (0.41)
  REQUIRE(iterate_step(x, grad, opt, history, f, [](std::vector<double>&) {}).is_ok());
  CHECK(x[0] == Approx(1.8));
  auto last = finish_step(x, opt, f);
  REQUIRE(last.is_ok());
  CHECK(*last == Approx(0.64));  // 1.8 lowered the loss: kept
  CHECK(x[0] == Approx(1.8));
  // a step that raises it: lr 1.5 from 0 goes to 3 (loss 4 > 1): finish() goes back to 0
  spec.lr = 1.5;
  OptimizerT<double> far(spec, 1);
  std::vector<double> z{0.0};
  REQUIRE(iterate_step(z, grad, far, history, f, [](std::vector<double>&) {}).is_ok());
  CHECK(z[0] == Approx(3.0));
  last = finish_step(z, far, f);
  REQUIRE(last.is_ok());
  CHECK(*last == 1.0);
  CHECK(z[0] == 0.0);
}

// the bounce (a ball's initial velocity towards a target, off the ground): SGD at lr 1
// overshoots; measured: plain 9.34 -> 0.0046 with rises on the way, backtracking 9.34 ->
// 1.3e-7 after 20 iterations (5 of them rejected)
TEST_CASE("backtrack: on the bounce the accepted points never raise the loss and end far lower", "[optim][backtrack]") {
  Task t = bounce_task();
  t.optimizer = {scene::OptimizerKind::sgd, 1.0, 0.0, 20};
  Run plain = run(bounce_scene<double>(), t, 20);
  bool plain_rose = false;
  for (std::size_t k = 1; k < plain.history.size(); ++k)
    plain_rose |= plain.history[k].loss > plain.history[k - 1].loss;
  CHECK(plain_rose);  // the case needs an overshooting step
  t.optimizer.backtrack = true;
  Run back = run(bounce_scene<double>(), t, 20);
  int rejected = 0;
  double accepted = std::numeric_limits<double>::infinity();
  for (const IterationStats& h : back.history) {
    if (h.rejected) {
      ++rejected;
      CHECK(h.loss > accepted);  // rejected only when it rose
      CHECK(h.grad_norm == 0.0);
      continue;
    }
    CHECK(h.loss <= accepted);
    accepted = h.loss;
  }
  CHECK(rejected >= 1);
  CHECK(back.final_loss <= accepted);
  INFO("plain " << plain.final_loss << " backtracking " << back.final_loss);
  CHECK(back.final_loss < plain.final_loss / 100);
  // the first iterations are the plain run's until a point rises: the same bits
  CHECK(back.history[0].loss == plain.history[0].loss);
  CHECK(back.history[1].loss == plain.history[1].loss);
}

TEST_CASE("backtrack: the optimizer key round-trips and a bad value is named", "[optim][backtrack][scene]") {
  auto text = [](const std::string& value) {
    return R"({"format": "adjoint-scene", "version": 1, "objects": [
      {"name": "ball", "type": "particles", "particles": [{"position": [0, 1, 0]}]}],
      "tasks": [{"name": "t", "horizon": 10, "parameters": [{"kind": "initial_velocity", "object": "ball"}],
      "loss": [{"kind": "velocity", "object": "ball"}], "optimizer": {"kind": "sgd", "backtrack": )" +
           value + "}}]}";
  };
  auto s = scene::parse_scene(text("true"), "bt.json");
  INFO(s.status().message());
  REQUIRE(s.is_ok());
  CHECK(s->tasks[0].optimizer.backtrack);
  const std::string saved = scene::to_json(*s);
  CHECK_THAT(saved, Catch::Contains("\"backtrack\": true"));
  auto again = scene::parse_scene(saved, "bt.json");
  REQUIRE(again.is_ok());
  CHECK(again->tasks[0].optimizer == s->tasks[0].optimizer);
  auto off = scene::parse_scene(text("false"), "bt.json");
  REQUIRE(off.is_ok());
  CHECK_THAT(scene::to_json(*off), !Catch::Contains("backtrack"));  // the default is not written
  auto bad = scene::parse_scene(text("1"), "bt.json");
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("bt.json") && Catch::Contains("tasks[0].optimizer.backtrack"));
}
