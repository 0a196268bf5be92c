// implicit particles beside articulated bodies (engine/solver/implicit.h, coupled.cpp): a PD-driven
// pusher drives a stiff soft block at one substep of 1/60 s where the explicit coupled step blows
// up, the same bits at 1 and 2 threads, and a coupled rollout's gradients (the pusher's controls,
// gain and initial state, the block's states and material, the contact law) against central
// differences in double
#include <cmath>
#include <cstdlib>

#include "engine/grad/rollout.h"
#include "engine/solver/solver.h"
#include "tests/engine/articulation/rigid_test_util.h"
#include "tests/engine/scenes.h"
#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

namespace {

// a soft block of cells x cells x cells cells (cell [m], shear modulus mu [Pa]) on the ground and a
// box pusher on a prismatic joint along x (PD-driven: joint_act is its target [m]), its face
// `gap` from the block's particles' surfaces; optionally a wall on the block's far side
ModelT<double> pusher_and_block(int cells, double cell, double mu, double gap, bool implicit, bool wall = false) {
  RigidBuilder rb;
  rb.ground = false;
  const double half = 0.01;
  const double height = 0.008 + cells * cell * 0.5, depth = cells * cell * 0.5;
  const double radius = 0.01;
  int pusher = rb.add_body(
      "pusher", {.type = RIGID_JOINT_PRISMATIC, .pos = {-radius - half - gap, height, depth}, .axis = {1, 0, 0}});
  // its face covers the block's side (every particle of it)
  const double face = cells * cell * 0.5 + 0.005;
  rb.add_shape(pusher, {.type = GEOM_BOX, .size = {half, face, face}, .density = 1000});
  rb.add_actuator(pusher, {.type = RIGID_ACTUATOR_PD, .kp = 300, .kd = 10});
  RigidModelT<double> rm = finalize(rb);
  ModelBuilderT<double> b;
  const SoftMaterial<double> mat = soft_block_material(mu);
  b.add_soft_grid({0, 0.008, 0}, cells, cells, cells, cell, {0, 0, 0}, mat, false, radius);
  b.add_ground(0.0);
  // a wall on the far side, touching the block: it stays squeezed against the pusher
  if (wall) b.add_box({cells * cell + radius + 0.0195, 0.05, depth}, {0.02, 0.1, 0.1});
  b.settings().contact_ke = 5e3;
  b.settings().contact_kd = 5;
  b.settings().contact_kf = 20;
  b.settings().contact_mu = 0.5;
  ModelT<double> pm = must(b.finalize());
  pm.integrator = implicit ? INTEGRATOR_IMPLICIT : INTEGRATOR_EXPLICIT;
  return world(rm, pm);
}

// the pusher's target moving into the block at `speed` [m/s]
std::vector<ControlT<double>> push(const ModelT<double>& m, int steps, double speed, double dt) {
  std::vector<ControlT<double>> c(std::size_t(steps), m.make_control());
  for (int t = 0; t < steps; ++t) c[std::size_t(t)].joint_act[0] = speed * dt * (t + 1);
  return c;
}

double mean_x(const StateT<double>& s) {
  double x = 0;
  for (const vec3<double>& q : s.particle_q) x += q.x;
  return x / double(s.particle_q.size());
}

}  // namespace

TEST_CASE("implicit coupled: a PD pusher drives a stiff block at one substep where explicit blows up",
          "[solver][implicit][coupling]") {
  // an 8 cm block (shear modulus 3e5 Pa, 4 cm cells, 32 g particles), the pusher's target moving
  // at 6 cm/s for 1 s
  const double dt = 1.0 / 60;
  const int steps = 60;
  const ModelT<double> explicit_world = pusher_and_block(2, 0.04, 3e5, 0.002, false);
  const std::vector<ControlT<double>> ctl = push(explicit_world, steps, 0.06, dt);
  {
    SolverT<double> solver(SolverOptions{.substeps = 1});
    StateT<double> s = explicit_world.make_state(), next;
    bool exploded = false;
    for (int t = 0; t < steps && !exploded; ++t) {
      exploded = !solver.step(explicit_world, s, next, ctl[std::size_t(t)], dt);
      std::swap(s, next);
    }
    CHECK(exploded);
  }
  const ModelT<double> m = pusher_and_block(2, 0.04, 3e5, 0.002, true);
  StateT<double> finals[2];
  for (int threads : {1, 2}) {
    SolverT<double> solver(SolverOptions{.substeps = 1, .thread_count = threads});
    StateT<double> s = m.make_state(), next;
    int touching = 0;
    for (int t = 0; t < steps; ++t) {
      ContactsT<double> contacts;
      Status st = solver.step(m, s, next, ctl[std::size_t(t)], dt, &contacts);
      INFO("frame " << t << ": " << st.message());
      REQUIRE(st);
      touching = std::max(touching, contacts.body_particle.contact_count());
      std::swap(s, next);
    }
    finals[threads - 1] = s;
    // the block pushed along: its particles moved with the pusher (target 6 cm; the pusher lags
    // its PD target by the block's friction on the ground), nothing sunk into the ground
    const double moved = mean_x(s) - mean_x(m.make_state());
    INFO("block moved " << moved << " m, pusher at " << s.joint_q[0] << " m, touching pairs " << touching);
    if (std::getenv("ADJ_TEST_VERBOSE"))
      std::printf("block moved %.4f m, pusher %.4f m, newton %lld, unconverged %lld\n", moved, s.joint_q[0],
                  solver.implicit_stats().newton, solver.implicit_stats().unconverged);
    CHECK(touching >= 4);
    CHECK(moved > 0.02);
    CHECK(s.joint_q[0] > 0.02);
    for (const vec3<double>& q : s.particle_q) CHECK(q.y > -0.005);
  }
  // the same bits at one and two threads
  for (int p = 0; p < m.particle_count(); ++p) {
    CHECK(finals[0].particle_q[p].x == finals[1].particle_q[p].x);
    CHECK(finals[0].particle_qd[p].y == finals[1].particle_qd[p].y);
  }
  CHECK(finals[0].joint_q[0] == finals[1].joint_q[0]);
  CHECK(finals[0].joint_qd[0] == finals[1].joint_qd[0]);
}

TEST_CASE("implicit coupled: rollout gradients against central differences (pusher and block)",
          "[solver][implicit][coupling][grad]") {
  // a 1-cell block (6 cm, 8 particles) between the pusher, already pressing it, and a wall, 6 frames
  // of one substep
  const double dt = 1.0 / 60;
  const int steps = 6;
  const ModelT<double> m = pusher_and_block(1, 0.06, 2e4, -0.001, true, true);
  std::vector<ControlT<double>> ctl = push(m, steps, 0.1, dt);
  auto act = [](int t) -> Probe {
    return {"joint_act[" + std::to_string(t) + "]",
            [=](ModelT<double>&, StateT<double>&, std::vector<ControlT<double>>& c) -> double& {
              return c[std::size_t(t)].joint_act[0];
            },
            [=](const RolloutT<double>& r) { return r.grad_controls()[std::size_t(t)].joint_act[0]; }};
  };
  const Probe joint_q0{
      "joint_q0",
      [](ModelT<double>&, StateT<double>& s, std::vector<ControlT<double>>&) -> double& { return s.joint_q[0]; },
      [](const RolloutT<double>& r) { return r.grad_initial().joint_q[0]; }};
  const Probe joint_qd0{
      "joint_qd0",
      [](ModelT<double>&, StateT<double>& s, std::vector<ControlT<double>>&) -> double& { return s.joint_qd[0]; },
      [](const RolloutT<double>& r) { return r.grad_initial().joint_qd[0]; }};
  const Probe kp{"actuator_kp",
                 [](ModelT<double>& w, StateT<double>&, std::vector<ControlT<double>>&) -> double& {
                   return w.rigid.actuator_kp[0];
                 },
                 [](const RolloutT<double>& r) { return r.grad_model().rigid.actuator_kp[0]; }};
  RolloutOptions<double> opt;
  opt.steps = steps;
  opt.dt = dt;
  opt.substeps = 1;
  opt.checkpoint_every = 2;
  auto run = [&](const std::vector<Probe>& probes, double eps, double atol) {
    E2EResult r = check_rollout(m, m.make_state(), ctl, opt, probes, eps, atol, 1e-4);
    INFO(r.report.message);
    if (std::getenv("ADJ_TEST_VERBOSE")) std::printf("%s\n", r.report.message.c_str());
    CHECK(r.report.ok);
    return r;
  };
  const E2EResult r = run({act(0), act(2), joint_q0, joint_qd0, probe_q0(0, 0), probe_q0(5, 1), probe_qd0(2, 0),
                           probe_qd0(7, 2), probe_contact_kd(), probe_contact_mu(), probe_mass(3), kp},
                          1e-6, 1e-7);
  // the pusher's controls reach the block through the contact
  CHECK(std::fabs(r.ad[0]) > 1e-3);
  run({probe_tet_mu(0), probe_tet_lambda(2), probe_contact_ke()}, 1, 1e-11);
  {
    // the pusher leaves the block and meets it again (contact on and off), every substep's
    // Newton solve converged (where one stalls at a contact's kink the gradient is of another map)
    SolverT<double> solver(SolverOptions{.substeps = 1});
    StateT<double> s = m.make_state(), next;
    int touching = 0;
    for (int t = 0; t < steps; ++t) {
      ContactsT<double> contacts;
      REQUIRE(solver.step(m, s, next, ctl[std::size_t(t)], dt, &contacts));
      if (std::getenv("ADJ_TEST_VERBOSE"))
        std::printf("frame %d: pairs %d, unconverged %lld, last residual %.3g, worst %.3g, newton %lld\n", t,
                    contacts.body_particle.contact_count(), solver.implicit_stats().unconverged,
                    solver.implicit_stats().last_residual, solver.implicit_stats().worst_residual,
                    solver.implicit_stats().newton);
      touching += contacts.body_particle.contact_count() >= 2;
      std::swap(s, next);
    }
    CHECK(touching >= 3);
    CHECK(touching < steps);
    CHECK(solver.implicit_stats().unconverged == 0);
  }
}
