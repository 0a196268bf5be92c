// the parallel gripper on cloth (assets/scenes/gripper_cloth_corner.json): a 20 x 20 cm cloth
// (11 x 11 particles of 1 g, stretch 1e4 N/m, implicit at one substep of 1/60 s) whose corner
// particle the fingers pinch. The pinch's gradient (the corner task's loss on a short horizon)
// against central differences in double; gradient steps on the corner task raise the corner
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/optim/trainer.h"
#include "engine/optim/write_back.h"
#include "engine/solver/solver.h"
#include "tests/engine/asset_scene.h"
#include "tests/engine/test_util.h"

using namespace adj;

namespace {

bool verbose() { return std::getenv("ADJ_TEST_VERBOSE") != nullptr; }

// a runner on the scene's task started from its stored per-frame targets
template <class S>
optim::TaskRunnerT<S> stored_runner(const test::AssetScene<S>& a, const scene::Task& task) {
  optim::TaskRunnerT<S> r = test::ok(optim::TaskRunnerT<S>::create(a.cs, task));
  CHECK(optim::start_from_stored(r, r.blocks(), task).empty());
  return r;
}

}  // namespace

TEST_CASE("gripper cloth: the corner pinch's gradient wrt the per-frame controls against central differences",
          "[solver][implicit][gripper][grad]") {
  // the corner task cut to 16 frames: the fingers close on the corner particle and the lift
  // starts to rise (frame 10); the loss, the corner against the task's goal at frames 8..16
  test::AssetScene<double> a("gripper_cloth_corner.json", "lift corner", 16);
  scene::Task task = a.task;
  task.values.at(0).values.resize(16 * 3);  // the stored targets of those frames
  task.loss.clear();
  for (int s = 8; s <= 16; s += 2) {
    scene::LossTerm l;
    l.object = "cloth";
    l.target = "goal";
    l.particles = {0};
    l.step = s;
    task.loss.push_back(l);
  }
  optim::TaskRunnerT<double> r = stored_runner(a, task);
  std::vector<double> theta = r.theta(), grad;
  const double loss = test::ok(r.evaluate(theta, &grad));
  // the corner rose with the fingers by frame 16: the pinch holds it
  const StateT<double>& end = r.frames().back();
  INFO("corner at frame 16: " << end.particle_q[0].y << " m, lift " << end.joint_q[0] << " m");
  CHECK(end.particle_q[0].y > 0.004 + 0.5 * end.joint_q[0]);
  // the lift's targets of frames 10 and 13, the fingers' of frames 2, 6 and 12 (3 per frame)
  const int entries[] = {3 * 10 + 0, 3 * 13 + 0, 3 * 2 + 1, 3 * 6 + 2, 3 * 12 + 1, 3 * 12 + 2};
  std::vector<double> ad, fd;
  const double eps = 1e-6;
  for (int i : entries) {
    std::vector<double> x = theta;
    x[std::size_t(i)] = theta[std::size_t(i)] + eps;
    const double lp = test::ok(r.evaluate(x));
    x[std::size_t(i)] = theta[std::size_t(i)] - eps;
    const double lm = test::ok(r.evaluate(x));
    ad.push_back(grad[std::size_t(i)]);
    fd.push_back((lp - lm) / (2 * eps));
    if (verbose()) std::printf("cloth pinch: %s ad %.9g fd %.9g\n", r.entry_name(i).c_str(), ad.back(), fd.back());
  }
  const FdReport rep = compare_gradients(ad, fd, 1e-6, 1e-4);
  INFO("loss " << loss << ": " << rep.message);
  CHECK(rep.ok);
  // the lift's targets reach the corner through the pinch's friction, the fingers' through its normal force
  CHECK(std::fabs(ad[0]) > 1e-3);
  CHECK(std::fabs(ad[4]) > 1e-6);
}

TEST_CASE("gripper cloth: gradient steps on the corner task raise the pinched corner",
          "[solver][implicit][gripper][optim]") {
  // gripper_cloth_corner.json's task "lift corner" cut to its first 50 frames (the corner against
  // the goal 12 cm up at frames 20..50), from its stored targets: the fingers squeeze the corner
  // particle, the lift rises 5 cm over frames 10-70 (at frame 50: 3.3 cm). Two SGD steps (the
  // task's lr and clip) raise the lift's targets; the corner, held, rises with them
  const int horizon = 50;
  test::AssetScene<float> a("gripper_cloth_corner.json", "lift corner", horizon);
  scene::Task task = a.task;
  task.values.at(0).values.resize(std::size_t(horizon) * 3);
  std::erase_if(task.loss, [&](const scene::LossTerm& l) { return l.step > horizon; });
  task.optimizer.iterations = 2;
  optim::TaskRunnerT<float> r = stored_runner(a, task);
  double start_loss = 0, start_y = 0;
  while (r.iterations_left() > 0) {
    auto it = r.iterate();
    INFO(it.status().message());
    REQUIRE(it.is_ok());
    if (it->iteration == 0) start_loss = it->loss, start_y = double(r.frames().back().particle_q[0].y);
    if (verbose())
      std::printf("cloth corner: iteration %d loss %.4g |grad| %.3g corner at %.2f cm, %.1f s\n", it->iteration,
                  it->loss, it->grad_norm, double(r.frames().back().particle_q[0].y) * 100, it->ms * 1e-3);
  }
  const double end_loss = double(test::ok(r.evaluate(r.theta())));
  const double y = double(r.frames().back().particle_q[0].y), lift = double(r.frames().back().joint_q[0]);
  if (verbose()) std::printf("cloth corner: after 2 steps loss %.4g corner at %.2f cm\n", end_loss, y * 100);
  INFO("loss " << start_loss << " -> " << end_loss << ", corner at frame 50 " << start_y << " -> " << y << " m (lift "
               << lift << " m)");
  // measured: 0.169 -> 0.145 (0.86x), the corner 3.41 -> 3.89 cm
  CHECK(end_loss < 0.92 * start_loss);
  CHECK(y > start_y + 0.003);
  // still pinched: the corner rises with the lift
  CHECK(y > lift - 0.005);
}
