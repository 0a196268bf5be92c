// the parallel gripper on cloth (assets/scenes/gripper_cloth_corner.json): a 20 x 20 cm cloth
// (11 x 11 particles of 1 g, stretch 1e4 N/m, implicit at one substep of 1/60 s) whose corner
// particle the fingers pinch. The pinch's gradient (the corner task's loss on a short horizon)
// against central differences in double; gradient steps on the corner task raise the corner
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <vector>

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

// the task's loss replaced by the corner particle (0) against the goal every other frame of [first, last]
void corner_loss(scene::Task& task, int first, int last) {
  task.loss.clear();
  for (int s = first; s <= last; s += 2) {
    scene::LossTerm l;
    l.object = "cloth";
    l.target = "goal";
    l.particles = {0};
    l.step = s;
    task.loss.push_back(l);
  }
}

// the gradient at theta (grad) on `entries` against central differences of step eps: appends
// to ad and fd, printing each pair under ADJ_TEST_VERBOSE with `label`
void central_differences(optim::TaskRunnerT<double>& r, const std::vector<double>& theta,
                         const std::vector<double>& grad, std::initializer_list<int> entries, double eps,
                         const char* label, std::vector<double>& ad, std::vector<double>& fd) {
  for (int i : entries) {
    std::vector<double> x = theta;
    x[std::size_t(i)] = theta[std::size_t(i)] + eps;
    const double lp = test::ok(r.evaluate(x));
    x[std::size_t(i)] = theta[std::size_t(i)] - eps;
    const double lm = test::ok(r.evaluate(x));
    ad.push_back(grad[std::size_t(i)]);
    fd.push_back((lp - lm) / (2 * eps));
    if (verbose()) std::printf("%s: %s ad %.9g fd %.9g\n", label, r.entry_name(i).c_str(), ad.back(), fd.back());
  }
}

}  // namespace

TEST_CASE("gripper cloth: the corner pinch's gradient wrt the per-frame controls against central differences",
          "[solver][implicit][gripper][grad]") {
  // the corner task cut to 16 frames: the fingers close on the corner particle and the lift
  // starts to rise (frame 10); the loss, the corner against the task's goal at frames 8..16
  test::AssetScene<double> a("gripper_cloth_corner.json", "lift corner", 16);
  scene::Task task = a.task;
  task.values.at(0).values.resize(16 * 3);  // the stored targets of those frames
  corner_loss(task, 8, 16);
  optim::TaskRunnerT<double> r = stored_runner(a, task);
  std::vector<double> theta = r.theta(), grad;
  const double loss = test::ok(r.evaluate(theta, &grad));
  // the corner rose with the fingers by frame 16: the pinch holds it
  const StateT<double>& end = r.frames().back();
  INFO("corner at frame 16: " << end.particle_q[0].y << " m, lift " << end.joint_q[0] << " m");
  CHECK(end.particle_q[0].y > 0.004 + 0.5 * end.joint_q[0]);
  // the lift's targets of frames 10 and 13, the fingers' of frames 2, 6 and 12 (3 per frame)
  std::vector<double> ad, fd;
  central_differences(r, theta, grad, {3 * 10 + 0, 3 * 13 + 0, 3 * 2 + 1, 3 * 6 + 2, 3 * 12 + 1, 3 * 12 + 2}, 1e-6,
                      "cloth pinch", ad, fd);
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

// cloth_fold.json: the same gripper on a carriage that slides along the cloth's diagonal, over a
// cloth of 0.1 g particles (12 g, 0.3 kg/m^2: a shirt's cloth). Its stored plan carries the pinched
// corner in an arc around the fold line (the anti-diagonal) and lays it down, the fingers holding
// it to the end. The arc's reach is 0.75 of the diagonal, so the corner lands short and the task's
// optimization has the rest to do. The task's targets: carry, lift, left, right per frame
namespace {

constexpr int k_fold_targets = 4;

// the stored plan with the carriage's targets scaled by `reach` (4/3: the whole diagonal)
template <class S>
optim::TaskRunnerT<S> fold_runner(const test::AssetScene<S>& a, scene::Task task, double reach) {
  std::vector<double>& v = task.values.at(0).values;
  for (std::size_t i = 0; i < v.size(); i += k_fold_targets) v[i] *= reach;
  return stored_runner(a, task);
}

}  // namespace

TEST_CASE(
    "gripper cloth fold: carried in an arc, the pinched corner lands on the opposite corner and the cloth "
    "stays put",
    "[solver][implicit][gripper]") {
  test::AssetScene<float> a("cloth_fold.json", "fold");
  optim::TaskRunnerT<float> r = fold_runner(a, a.task, 4.0 / 3.0);
  test::ok(r.evaluate(r.theta()));
  const auto& start = r.frames().front().particle_q;
  const auto& end = r.frames().back().particle_q;
  auto at = [](const vec3<float>& p) {
    return "(" + std::to_string(p.x) + ", " + std::to_string(p.y) + ", " + std::to_string(p.z) + ")";
  };
  // particles: 0 the pinched corner, 60 the centre, 120 the opposite corner (11 x 11 grid)
  INFO("corner " << at(end[0]) << ", opposite corner " << at(end[120]) << ", centre " << at(end[60]));
  // measured: the corner 0.9 mm from the opposite corner's start, that corner moved 1.6 mm, the centre 1.8 mm
  CHECK(std::hypot(double(end[0].x - start[120].x), double(end[0].z - start[120].z)) < 0.004);
  CHECK(double(end[0].y) < 0.006);  // laid on the ground (the fingers still hold it)
  CHECK(double(length(end[60] - start[60])) < 0.01);
  CHECK(double(length(end[120] - start[120])) < 0.01);
  // the corner was held through the carry: at the arc's top it is up with the fingers
  const auto& top = r.frames().at(50);
  INFO("frame 50: corner " << at(top.particle_q[0]) << ", lift " << top.joint_q[1] << " m");
  CHECK(double(top.particle_q[0].y) > double(top.joint_q[1]) - 0.005);
}

TEST_CASE("gripper cloth fold: the carriage's gradient through the pinch against central differences",
          "[solver][implicit][gripper][grad]") {
  // the fold task cut to 24 frames: the fingers close (frames 0-10) and the arc starts, the
  // carriage moving the pinched corner sideways by the pinch's friction; the loss, the corner
  // against the goal at frames 16..24. At 1 g a particle, as the corner's test: at the scene's 0.1 g
  // double's rounding floor on the pinch (about 5e-10 of the step's momentum) lies above the
  // default tolerance, each solve stops where it stalls, and central differences jitter with
  // where that is (at eps 1e-6 and 1e-5 in turn one entry of three was off by 25-4000%)
  const int horizon = 24;
  test::AssetScene<double> a("cloth_fold.json", "fold", horizon);
  for (scene::Object& o : a.doc.objects)
    if (o.kind == scene::ObjectKind::cloth) o.cloth.particle_mass = 1e-3;
  a.cs = test::ok(scene::compile<double>(a.doc, ADJ_ASSET_SCENES));
  scene::Task task = a.task;
  task.values.at(0).values.resize(std::size_t(horizon) * k_fold_targets);
  corner_loss(task, 16, horizon);
  optim::TaskRunnerT<double> r = fold_runner(a, task, 1.0);
  std::vector<double> theta = r.theta(), grad;
  const double loss = test::ok(r.evaluate(theta, &grad));
  // the carriage's targets of frames 20 and 22, the lift's of frame 18. Not frame 14's carriage
  // target, where the carriage starts to drag the pinched corner sideways: there the loss is not
  // smooth (its central differences at eps 1e-4, 1e-5, 1e-6 and 1e-7 read -0.69, +20.3, +0.44 and
  // -0.46 against the adjoint's -0.57: docs/benchmarks.md, "A cloth folded in half")
  std::vector<double> ad, fd;
  central_differences(r, theta, grad, {k_fold_targets * 20, k_fold_targets * 22, k_fold_targets * 18 + 1}, 1e-6,
                      "cloth fold", ad, fd);
  const FdReport rep = compare_gradients(ad, fd, 1e-6, 1e-4);
  INFO("loss " << loss << ": " << rep.message);
  CHECK(rep.ok);
  // the carriage reaches the corner sideways through the pinch: its targets move the loss
  CHECK(std::fabs(ad[0]) > 1e-4);
  CHECK(std::fabs(ad[1]) > 1e-4);
}

TEST_CASE(
    "gripper cloth fold: where block ILU(0) breaks down on the buckled cloth, the adjoint falls back to "
    "block Jacobi and stays finite",
    "[solver][implicit][gripper][grad]") {
  // the task "fold by knots" (16 knots a channel, the fingers held at a 1.5 mm squeeze) at the
  // iterate that its 14th SGD step (lr 0.02 on the gradient clipped to unit norm) reached, float.
  // Going backward, at frame 34 the cloth lies buckled under the carried corner: J is indefinite,
  // and block ILU(0)'s factors grew from a nearly singular pivot (det 1e-4 against blocks of 14)
  // to infinity, which made the transposed solve's adjoint non-finite and ended the optimization
  test::AssetScene<float> a("cloth_fold.json", "fold by knots");
  REQUIRE(a.task.parameters.at(0).knots == 16);
  optim::TaskRunnerT<float> r = test::ok(optim::TaskRunnerT<float>::create(a.cs, a.task));
  const std::vector<float> theta = {0.0123884697,   0.00289461599,
                                    0.00150000001,  -0.00150000001,
                                    0.00207278738,  0.000188307124,
                                    0.00150000001,  -0.00150000001,
                                    0.000102650352, 0.00397614716,
                                    0.00150000001,  -0.00150000001,
                                    0.00253277342,  0.0247099288,
                                    0.00150000001,  -0.00150000001,
                                    0.0140464529,   0.0520421527,
                                    0.00150000001,  -0.00150000001,
                                    0.0383544639,   0.0778735206,
                                    0.00150000001,  -0.00150000001,
                                    0.0659558997,   0.116572447,
                                    0.00150000001,  -0.00150000001,
                                    0.107923426,    0.136172101,
                                    0.00150000001,  -0.00150000001,
                                    0.153476506,    0.113958351,
                                    0.00150000001,  -0.00150000001,
                                    0.183837235,    0.0869859233,
                                    0.00150000001,  -0.00150000001,
                                    0.204164758,    0.0498843603,
                                    0.00150000001,  -0.00150000001,
                                    0.210017204,    0.0185510591,
                                    0.00150000001,  -0.00150000001,
                                    0.208007604,    0.00468595559,
                                    0.00150000001,  -0.00150000001,
                                    0.218154132,    0.000929373899,
                                    0.00150000001,  -0.00150000001,
                                    0.268017977,    0.00331140659,
                                    0.00150000001,  -0.00150000001,
                                    0.235780209,    0,
                                    0.00150000001,  -0.00150000001};
  REQUIRE(theta.size() == r.theta().size());
  std::vector<float> grad;
  const float loss = test::ok(r.evaluate(theta, &grad));
  REQUIRE(r.implicit_stats() != nullptr);
  INFO("loss " << loss << ", block ILU(0) fallbacks " << r.implicit_stats()->ilu_fallbacks);
  CHECK(r.implicit_stats()->ilu_fallbacks > 0);  // the breakdown is met, and passed
  CHECK(std::all_of(grad.begin(), grad.end(), [](float g) { return std::isfinite(g); }));
  CHECK(std::fabs(double(loss) - 0.00397) < 1e-4);  // the corner 3.2 cm from the goal, as the run read
}

TEST_CASE("gripper cloth fold: a rollout's loss and gradient depend on theta alone, not on what ran before",
          "[solver][implicit][gripper]") {
  // the fold by knots over its first 60 frames (the cloth buckles under the carried corner from
  // frame 34, where block ILU(0) falls back to block Jacobi): evaluate theta, then another theta,
  // then theta again: the same bits (optimizer.backtrack compares losses measured at different
  // times). Measured also over the whole 115 frames: the same bits
  const int horizon = 60;
  test::AssetScene<float> a("cloth_fold.json", "fold by knots", horizon);
  scene::Task task = a.task;
  corner_loss(task, 40, horizon);
  optim::TaskRunnerT<float> r = test::ok(optim::TaskRunnerT<float>::create(a.cs, task));
  std::vector<float> theta = r.theta(), g1, g2, g3;
  const float l1 = test::ok(r.evaluate(theta, &g1));
  std::vector<float> other = theta;
  for (std::size_t i = 0; i < other.size(); ++i) other[i] -= 0.02f * g1[i] / float(optim::global_norm(g1));
  r.set_theta(other);
  const float l2 = test::ok(r.evaluate(r.theta(), &g2));
  const float l3 = test::ok(r.evaluate(theta, &g3));
  INFO("loss " << l1 << ", at the other point " << l2 << ", again " << l3);
  CHECK(l2 != l1);
  CHECK(std::memcmp(&l1, &l3, sizeof(float)) == 0);
  CHECK(std::memcmp(g1.data(), g3.data(), g1.size() * sizeof(float)) == 0);
}
