// the gripper benchmark's scene (assets/scenes/gripper_lift_soft.json): a parallel gripper (a
// PD-driven lift and two PD-driven prismatic fingers) pinching a 100 g soft block (implicit, one
// substep of 1/60 s) and lifting it 20 cm with hand-set controls: the block rises with the
// fingers and, held for a second at the top, slips against them by less than 1 mm/s
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/solver/solver.h"
#include "tests/engine/asset_scene.h"

using namespace adj;

namespace {

double block_y(const StateT<double>& s) {
  double y = 0;
  for (const vec3<double>& q : s.particle_q) y += q.y;
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
        "unconverged %lld, worst residual %.2g\n",
        lifted, s.joint_q[0], slip * 1e3, solver.implicit_stats().newton, solver.implicit_stats().substeps,
        solver.implicit_stats().unconverged, solver.implicit_stats().worst_residual);
  // the gripper rose 20 cm (less its PD's sag under the load); the block with it, less what it
  // sank in the grip while the pinch took the load, and then held
  CHECK(s.joint_q[0] > 0.195);
  CHECK(lifted > s.joint_q[0] - 0.015);
  CHECK(slip < 1e-3);
}
