// every reference problem in assets/scenes: load, compile in double, run a few iterations
// on a (possibly shortened) horizon and hold the loss to a stated reduction factor, then
// check the gradient against central differences. Full-length numbers are in docs/benchmarks.md.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/scene/scene_json.h"
#include "tests/engine/optim/grad_check.h"

namespace adj::optim::test {
namespace {

struct Reference {
  const char* file;
  int horizon;      // frames to run (0 = the scene's)
  int substeps;     // solver substeps per frame (0 = the scene's)
  int iterations;
  double factor;    // loss_last <= loss_first / factor (positive losses)
  double distance;  // or, for distance losses (negative), loss_last <= loss_first - distance
  int grad_samples;
  double grad_tol;
};

void run_reference(const Reference& ref) {
  std::string path = std::string(ADJ_ASSET_SCENES) + "/" + ref.file;
  INFO(path);
  scene::Scene sc = must_ok(scene::load_scene(path));
  if (ref.substeps > 0) sc.settings.substeps = ref.substeps;
  Task task = *sc.find_task("");
  if (ref.horizon > 0) {
    // terms that read a frame past the shortened horizon read its last frame instead
    for (scene::LossTerm& l : task.loss)
      if (l.step > ref.horizon) l.step = -1;
    task.horizon = ref.horizon;
  }
  auto cs = must_ok(scene::compile<double>(sc, ADJ_ASSET_SCENES));
  TaskRunnerT<double> r = must_ok(TaskRunnerT<double>::create(cs, task));
  double first = 0, last = 0;
  for (int k = 0; k < ref.iterations; ++k) {
    auto it = r.iterate();
    INFO(it.status().message());
    REQUIRE(it.is_ok());
    if (k == 0) first = it->loss;
  }
  last = must_ok(r.evaluate(r.theta()));
  if (std::getenv("ADJ_TEST_VERBOSE")) std::printf("%s: loss %.6g -> %.6g\n", ref.file, first, last);
  INFO(ref.file << ": loss " << first << " -> " << last);
  if (ref.factor > 0) CHECK(last <= first / ref.factor);
  if (ref.distance > 0) CHECK(last <= first - ref.distance);
  check_task_grad(cs, task, ref.grad_samples, ref.grad_tol);
}

}  // namespace

// measured in double with these settings (loss first -> after the iterations; worst
// check_grad relative error): the asserted factors leave room below them
TEST_CASE("reference scene: bounce", "[optim][reference]") {
  // 9.34 -> 3.67 (2.5x); 5e-10
  run_reference({"bounce.json", 0, 0, 20, 2.0, 0, 3, 1e-4});
}

TEST_CASE("reference scene: spring cage", "[optim][reference]") {
  // 0.875 -> 4.7e-4 (1800x); 2e-10
  run_reference({"spring_cage.json", 0, 0, 10, 100.0, 0, 8, 1e-4});
}

TEST_CASE("reference scene: cloth throw (30 frames)", "[optim][reference]") {
  // 57.49 -> 52.25 (1.10x in 6 SGD steps of the full run's lr); 3e-6
  run_reference({"cloth_throw.json", 30, 0, 6, 1.08, 0, 4, 1e-3});
}

TEST_CASE("reference scene: soft-body material identification (20 frames)", "[optim][reference]") {
  // 7.01 -> 1.87 (3.7x); 7e-5
  run_reference({"material_id.json", 20, 0, 15, 3.0, 0, 6, 1e-3});
}

TEST_CASE("reference scene: mass-spring walker (120 frames)", "[optim][reference]") {
  // 0.0004 -> -0.147 (walked 0.147 m further); 2e-5
  run_reference({"walker.json", 120, 0, 15, 0, 0.1, 6, 1e-3});
}

TEST_CASE("reference scene: soft tet walker (60 frames x 10 substeps, checkpointed)", "[optim][reference]") {
  // -3.7e-5 -> -0.0114 (0.011 m further); 1.3e-6
  run_reference({"soft_walker.json", 60, 10, 5, 0, 0.008, 4, 1e-3});
}

TEST_CASE("reference scene: hand pushes a soft block onto a target (45 frames)", "[optim][reference]") {
  // 1.54 -> 0.554 (2.8x); 6e-7
  run_reference({"push_block.json", 45, 0, 10, 2.0, 0, 6, 1e-3});
}

}  // namespace adj::optim::test
