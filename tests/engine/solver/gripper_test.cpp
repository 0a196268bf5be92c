// the gripper benchmark's scene (assets/scenes/gripper_lift_soft.json): a parallel gripper (a
// PD-driven lift and two PD-driven prismatic fingers) pinching a 100 g soft block (implicit, one
// substep of 1/60 s) and lifting it 20 cm with hand-set controls: the block rises with the
// fingers and, held for a second at the top, slips against them by less than 1 mm/s, every Newton
// solve converged; a short pinch's gradient against central differences; and the scene's task
// "lift", whose gradient steps take the block from the ground to 20 cm up, held; and its task
// "lift (policy)", an MLP trained through the closed loop that lifts the block a few cm, held
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

template <class S>
double block_y(const StateT<S>& s) {
  double y = 0;
  for (const vec3<S>& q : s.particle_q) y += double(q.y);
  return y / double(s.particle_q.size());
}

}  // namespace

TEST_CASE("gripper: a pinched soft block lifted 20 cm stays held", "[solver][implicit][gripper]") {
  const test::AssetScene<double> a("gripper_lift_soft.json", "lift");
  const ModelT<double>& m = a.cs.model;
  REQUIRE(m.integrator == INTEGRATOR_IMPLICIT);
  REQUIRE(a.cs.substeps == 1);
  double mass = 0;
  for (double x : m.particle_mass) mass += x;
  CHECK(std::fabs(mass - 0.1) < 0.002);
  SolverT<double> solver(SolverOptions{.substeps = a.cs.substeps});
  StateT<double> s = m.make_state(), next;
  ControlT<double> c = m.make_control();
  REQUIRE(c.joint_act.size() == 3);  // lift, left finger, right finger
  const double dt = a.cs.frame_dt, y0 = block_y(s);
  // settle the pinch for 0.5 s, raise the lift's target 20 cm over 1 s, hold it for 1 s
  double rel_start = 0, rel_end = 0;
  const int settle = 30, raise = 60, hold = 60;
  for (int t = 0; t < settle + raise + hold; ++t) {
    c.joint_act[0] = 0.2 * std::min(1.0, std::max(0.0, double(t - settle + 1) / raise));
    Status st = solver.step(m, s, next, c, dt);
    INFO("frame " << t << ": " << st.message());
    REQUIRE(st);
    std::swap(s, next);
    // the block's height against the lift's over the last half second of the hold
    if (t == settle + raise + hold / 2 - 1) rel_start = block_y(s) - s.joint_q[0];
    if (t == settle + raise + hold - 1) rel_end = block_y(s) - s.joint_q[0];
  }
  const double lifted = block_y(s) - y0, slip = std::fabs(rel_end - rel_start) / (hold / 2 * dt);
  INFO("lifted " << lifted << " m, slip while held " << slip * 1e3 << " mm/s");
  if (std::getenv("ADJ_TEST_VERBOSE"))
    std::printf(
        "gripper: lifted %.4f m (gripper %.4f m), slip while held %.4f mm/s, newton %lld in %lld substeps, "
        "unconverged %lld (stalled %lld, steepest %lld), worst residual %.2g\n",
        lifted, s.joint_q[0], slip * 1e3, solver.implicit_stats().newton, solver.implicit_stats().substeps,
        solver.implicit_stats().unconverged, solver.implicit_stats().stalled, solver.implicit_stats().steepest,
        solver.implicit_stats().worst_residual);
  // the gripper rose 20 cm (less its PD's sag under the load); the block with it, less what it
  // sank in the grip while the pinch took the load, and then held
  CHECK(s.joint_q[0] > 0.195);
  CHECK(lifted > s.joint_q[0] - 0.015);
  CHECK(slip < 1e-3);
  // every substep's Newton solve reached its tolerance: the pinch's friction (stick/slip within
  // um/s) and the contacts' onsets are passed by the energy line search
  CHECK(solver.implicit_stats().unconverged == 0);
}

TEST_CASE("gripper: the pinch's gradient wrt the per-frame controls against central differences",
          "[solver][implicit][gripper][grad]") {
  // 12 frames of the pinch closing on the block and the lift starting to rise: the fingers' and
  // the lift's per-frame targets, a trajectory loss on the block's particles
  const test::AssetScene<double> a("gripper_lift_soft.json", "lift");
  const ModelT<double>& m = a.cs.model;
  const double dt = a.cs.frame_dt;
  const int steps = 12;
  std::vector<ControlT<double>> ctl(std::size_t(steps), m.make_control());
  for (int t = 0; t < steps; ++t) ctl[std::size_t(t)].joint_act[0] = 0.002 * (t + 1);
  {
    // every substep's Newton solve on the path converged (the implicit function theorem's adjoint
    // is only the gradient of a converged solve)
    SolverT<double> solver(SolverOptions{.substeps = 1});
    StateT<double> s = m.make_state(), next;
    int pairs = 0;
    for (int t = 0; t < steps; ++t) {
      ContactsT<double> contacts;
      REQUIRE(solver.step(m, s, next, ctl[std::size_t(t)], dt, &contacts));
      pairs = std::max(pairs, contacts.body_particle.contact_count());
      std::swap(s, next);
    }
    const ImplicitStats& st = solver.implicit_stats();
    if (std::getenv("ADJ_TEST_VERBOSE"))
      std::printf("gripper pinch: %d touching pairs, newton %lld in %lld substeps, unconverged %lld, worst %.2g\n",
                  pairs, st.newton, st.substeps, st.unconverged, st.worst_residual);
    CHECK(pairs >= 8);
    CHECK(st.unconverged == 0);
  }
  auto act = [](int t, int j) -> test::Probe {
    return {"joint_act[" + std::to_string(t) + "][" + std::to_string(j) + "]",
            [=](ModelT<double>&, StateT<double>&, std::vector<ControlT<double>>& c) -> double& {
              return c[std::size_t(t)].joint_act[std::size_t(j)];
            },
            [=](const RolloutT<double>& r) { return r.grad_controls()[std::size_t(t)].joint_act[std::size_t(j)]; }};
  };
  RolloutOptions<double> opt;
  opt.steps = steps;
  opt.dt = dt;
  opt.substeps = 1;
  opt.checkpoint_every = 4;
  const test::E2EResult r =
      test::check_rollout(m, m.make_state(), ctl, opt,
                          {act(0, 1), act(3, 2), act(6, 1), act(9, 0), act(10, 2), act(8, 2)}, 1e-6, 1e-7, 1e-4);
  INFO(r.report.message);
  if (std::getenv("ADJ_TEST_VERBOSE")) std::printf("%s\n", r.report.message.c_str());
  CHECK(r.report.ok);
  // the fingers' targets reach the block through the contact
  CHECK(std::fabs(r.ad[0]) > 1e-3);
}

TEST_CASE("gripper: gradient steps on the lift task take the block from the ground to 20 cm up, held",
          "[solver][implicit][gripper][optim]") {
  // gripper_lift_soft.json's task "lift" (120 frames; the 360 per-frame PD targets of the lift and
  // both fingers; the block's centre to a target 20 cm up, every other frame from frame 10; SGD on
  // the gradient clipped to unit norm) from its stored start: the lift's targets raised 20 cm over
  // frames 10-69 and held, the fingers' a squeeze 0.1 mm short of holding the block, which slides
  // out of them and stays on the ground. Gradient steps close the fingers where the block slips
  // until it rises with them and stays held over the last half second. Held or dropped is nearly a
  // switch: at the task's lr (1e-4) the block is first lifted at iteration 18 and stays lifted; at
  // 3e-4, here, at iteration 6 (and the next step drops it again). The test stops at the first
  // iterate that lifts the block 19 cm and holds it
  const test::AssetScene<float> a("gripper_lift_soft.json", "lift");
  scene::Task task = a.task;
  task.optimizer.lr = 3e-4;
  task.optimizer.backtrack = false;  // plain steps (the next case backtracks)
  optim::TaskRunnerT<float> r = test::ok(optim::TaskRunnerT<float>::create(a.cs, task));
  CHECK(optim::start_from_stored(r, r.blocks(), task).empty());
  const int hold = 30;  // the last half second: the gripper has stopped, the block hangs in the grip
  auto measure = [&](double& rise, double& slip) {
    const std::vector<StateT<float>>& f = r.frames();
    const StateT<float>&s0 = f.front(), &s1 = f[f.size() - 1 - hold], &s2 = f.back();
    rise = block_y(s2) - block_y(s0);
    slip = std::fabs((block_y(s2) - s2.joint_q[0]) - (block_y(s1) - s1.joint_q[0])) / (hold * double(a.cs.frame_dt));
  };
  double start_loss = 0, start_rise = 0, rise = 0, slip = 0, loss = 0;
  int lifted_at = -1;
  while (r.iterations_left() > 0 && lifted_at < 0) {
    auto it = r.iterate();
    INFO(it.status().message());
    REQUIRE(it.is_ok());
    measure(rise, slip);
    loss = it->loss;
    if (it->iteration == 0) start_loss = loss, start_rise = rise;
    if (rise > 0.19 && slip < 1e-3) lifted_at = it->iteration;
    if (std::getenv("ADJ_TEST_VERBOSE"))
      std::printf("gripper lift: iteration %d loss %.4g |grad| %.3g block rise %.2f cm, slip %.3f mm/s, %.1f s\n",
                  it->iteration, loss, it->grad_norm, rise * 100, slip * 1e3, it->ms * 1e-3);
  }
  INFO("loss " << start_loss << " -> " << loss << ", block rise " << start_rise << " -> " << rise << " m, slip "
               << slip * 1e3 << " mm/s, lifted at iteration " << lifted_at);
  // the start: the gripper rises 20 cm without the block
  CHECK(start_rise < 0.005);
  // an iterate lifts it 19 cm and holds it (slipping less than 1 mm/s over the last half second)
  REQUIRE(lifted_at > 0);
  CHECK(loss < 0.5 * start_loss);
  CHECK(rise > 0.19);
  CHECK(slip < 1e-3);
  CHECK(r.frames().back().joint_q[0] > 0.195);
}

TEST_CASE("gripper: with backtracking the lift task's final parameters hold the block 19 cm up",
          "[solver][implicit][gripper][optim]") {
  // the task as the scene states it (lr 1e-4, 24 iterations, "backtrack": true): a step that
  // drops the block (the loss jumps from about 0.52 to 2.24) is rejected, so once an iterate
  // holds it every later accepted one does, and the run ends on one (TaskT::finish). Plain SGD at
  // this lr lifts it at iteration 18 and its final parameters hold it at 19.2 cm; at 3e-4 (the
  // case above) they drop it
  const test::AssetScene<float> a("gripper_lift_soft.json", "lift");
  REQUIRE(a.task.optimizer.backtrack);
  optim::TaskRunnerT<float> r = test::ok(optim::TaskRunnerT<float>::create(a.cs, a.task));
  CHECK(optim::start_from_stored(r, r.blocks(), a.task).empty());
  int rejected = 0, first_held = -1;
  double start_loss = 0;
  while (r.iterations_left() > 0) {
    auto it = r.iterate();
    INFO(it.status().message());
    REQUIRE(it.is_ok());
    if (it->iteration == 0) start_loss = it->loss;
    rejected += it->rejected;
    if (!it->rejected && it->loss < 0.6 && first_held < 0) first_held = it->iteration;
    if (std::getenv("ADJ_TEST_VERBOSE"))
      std::printf("gripper lift, backtracking: iteration %d loss %.4g%s\n", it->iteration, it->loss,
                  it->rejected ? " rejected" : "");
    if (it->stalled) break;
  }
  const double loss = double(test::ok(r.finish()));
  test::ok(r.evaluate(r.theta()));  // the final parameters' frames
  const int hold = 30;
  const std::vector<StateT<float>>& f = r.frames();
  const StateT<float>&s0 = f.front(), &s1 = f[f.size() - 1 - hold], &s2 = f.back();
  const double rise = block_y(s2) - block_y(s0);
  const double slip =
      std::fabs((block_y(s2) - s2.joint_q[0]) - (block_y(s1) - s1.joint_q[0])) / (hold * double(a.cs.frame_dt));
  INFO("loss " << start_loss << " -> " << loss << ", first held at iteration " << first_held << ", " << rejected
               << " rejected; block rise " << rise << " m, slip " << slip * 1e3 << " mm/s");
  if (std::getenv("ADJ_TEST_VERBOSE"))
    std::printf("gripper lift, backtracking: final loss %.5g, rise %.2f cm, slip %.3f mm/s, %d rejected\n", loss,
                rise * 100, slip * 1e3, rejected);
  // measured: held from iteration 3, 19 of 24 rejected, final loss 0.5096, rise 19.75 cm, slip 0.045 mm/s
  CHECK(first_held > 0);
  CHECK(rejected > 0);
  CHECK(loss < 0.53);
  CHECK(rise > 0.19);
  CHECK(slip < 1e-3);
}

TEST_CASE("gripper: a policy trained through the simulator pinches the block and lifts it",
          "[solver][implicit][gripper][optim][policy]") {
  // gripper_lift_soft.json's task "lift (policy)": an MLP observing the joints, the block's centre
  // of mass and velocity and a clock drives the three PD targets (action_scale and action_offset
  // map its actions to the lift's decimetres and the fingers' millimetres, the fingers' offset a
  // squeeze that holds the block); BPTT through the closed loop, Adam with backtracking, from the
  // task's seed. The policy learns to lift with the block held, but not to 20 cm: past about 9 cm
  // every step drops the block or lowers the lift and the run stalls (docs/benchmarks.md)
  const test::AssetScene<float> a("gripper_lift_soft.json", "lift (policy)");
  optim::TaskRunnerT<float> r = test::ok(optim::TaskRunnerT<float>::create(a.cs, a.task));
  const int hold = 30;
  auto measure = [&](double& rise, double& slip) {
    const std::vector<StateT<float>>& f = r.frames();
    const StateT<float>&s0 = f.front(), &s1 = f[f.size() - 1 - hold], &s2 = f.back();
    rise = block_y(s2) - block_y(s0);
    slip = std::fabs((block_y(s2) - s2.joint_q[0]) - (block_y(s1) - s1.joint_q[0])) / (hold * double(a.cs.frame_dt));
  };
  double start_loss = 0, rise = 0, slip = 0;
  while (r.iterations_left() > 0) {
    auto it = r.iterate();
    INFO(it.status().message());
    REQUIRE(it.is_ok());
    if (it->iteration == 0) start_loss = it->loss;
    measure(rise, slip);
    if (std::getenv("ADJ_TEST_VERBOSE"))
      std::printf("gripper policy: iteration %d loss %.4g%s rise %.2f cm slip %.3f mm/s lift %.2f cm\n", it->iteration,
                  it->loss, it->rejected ? " rejected" : "", rise * 100, slip * 1e3,
                  r.frames().back().joint_q[0] * 100);
    if (it->stalled) break;
  }
  const double loss = double(test::ok(r.finish()));
  test::ok(r.evaluate(r.theta()));
  measure(rise, slip);
  INFO("loss " << start_loss << " -> " << loss << ", block rise " << rise << " m, slip " << slip * 1e3 << " mm/s");
  if (std::getenv("ADJ_TEST_VERBOSE"))
    std::printf("gripper policy: final loss %.5g, rise %.2f cm, slip %.3f mm/s\n", loss, rise * 100, slip * 1e3);
  // measured (seed 0): 2.218 -> 0.7625, 22 of 44 points rejected, the block 7.33 cm up held in the
  // grip (the lift at 8.77 cm), slipping 0.65 mm/s over the last half second
  CHECK(loss < 0.5 * start_loss);
  CHECK(rise > 0.05);
  CHECK(slip < 1e-3);
}
