#include "engine/grad/rollout.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/engine/scenes.h"
#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

namespace {

std::vector<ControlT<double>> random_controls(const ModelT<double>& m, int T, unsigned seed, double force,
                                              double act) {
  std::mt19937 rng(seed);
  std::vector<ControlT<double>> c(T, m.make_control());
  std::uniform_real_distribution<double> u(-1, 1);
  for (int t = 0; t < T; ++t) {
    for (auto& f : c[t].particle_f) f = rand3(rng, -force, force);
    for (auto& a : c[t].spring_act) a = act * std::sin(0.2 * t + u(rng));
    for (auto& a : c[t].tet_act) a = act * u(rng);
  }
  return c;
}

// gradients with and without checkpointing, with kept or recomputed substeps, must be
// identical, bit for bit
void check_checkpoint_identical(const ModelT<double>& m, const std::vector<ControlT<double>>& controls,
                                RolloutOptions<double> opt) {
  TrajectoryLoss loss(opt.steps, m.particle_count(), 3);
  auto run = [&](int k, std::size_t substep_bytes_max = std::size_t(1) << 30) {
    RolloutOptions<double> o = opt;
    o.checkpoint_every = k;
    o.substep_bytes_max = substep_bytes_max;
    auto r = std::make_unique<RolloutT<double>>(m, o);
    REQUIRE(r->forward(m.make_state(), controls).is_ok());
    REQUIRE(r->backward([&](int t, const StateT<double>&, StateT<double>& a) { loss.seed(t, a); }).is_ok());
    return r;
  };
  auto all = run(1), ckpt = run(0), recomputed = run(1, 0);
  REQUIRE(ckpt->checkpoint_every() > 1);
  // a forward pass for a loss alone keeps no substeps, and a backward after it recomputes them,
  // even where an earlier pass (other controls: other substeps) kept its own
  {
    RolloutOptions<double> o = opt;
    o.checkpoint_every = 1;
    RolloutT<double> r(m, o);
    std::vector<ControlT<double>> other = controls;
    for (ControlT<double>& c : other)
      for (vec3<double>& f : c.particle_f) f = f * 2.0 + vec3<double>(0, 1, 0);
    REQUIRE(r.forward(m.make_state(), other).is_ok());
    REQUIRE(r.forward(m.make_state(), controls, {}, /*for_backward=*/false).is_ok());
    CHECK(r.peak_state_bytes() < all->peak_state_bytes());
    REQUIRE(r.backward([&](int t, const StateT<double>&, StateT<double>& a) { loss.seed(t, a); }).is_ok());
    CHECK(std::memcmp(all->grad_initial().particle_qd.data(), r.grad_initial().particle_qd.data(),
                      all->grad_initial().particle_qd.size() * sizeof(vec3<double>)) == 0);
    CHECK(all->grad_model().contact_ke == r.grad_model().contact_ke);
  }
  CHECK(std::memcmp(all->grad_initial().particle_qd.data(), recomputed->grad_initial().particle_qd.data(),
                    all->grad_initial().particle_qd.size() * sizeof(vec3<double>)) == 0);
  CHECK(all->grad_model().contact_ke == recomputed->grad_model().contact_ke);
  CHECK(recomputed->peak_state_bytes() < all->peak_state_bytes());
  auto same = [](const auto& a, const auto& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0);
  };
  CHECK(same(all->grad_initial().particle_q, ckpt->grad_initial().particle_q));
  CHECK(same(all->grad_initial().particle_qd, ckpt->grad_initial().particle_qd));
  CHECK(same(all->grad_model().particle_mass, ckpt->grad_model().particle_mass));
  CHECK(same(all->grad_model().spring_rest, ckpt->grad_model().spring_rest));
  CHECK(same(all->grad_model().tet_mu, ckpt->grad_model().tet_mu));
  CHECK(all->grad_model().contact_ke == ckpt->grad_model().contact_ke);
  CHECK(same(all->grad_model().tri_ke, ckpt->grad_model().tri_ke));
  CHECK(same(all->grad_model().edge_ke, ckpt->grad_model().edge_ke));
  CHECK(all->grad_model().tri_lift == ckpt->grad_model().tri_lift);
  CHECK(all->grad_model().gravity.y == ckpt->grad_model().gravity.y);
  for (int t = 0; t < opt.steps; ++t) REQUIRE(same(all->grad_controls()[t].particle_f, ckpt->grad_controls()[t].particle_f));
  CHECK(same(all->grad_norm(), ckpt->grad_norm()));
  CHECK(ckpt->peak_state_bytes() < all->peak_state_bytes());
}

void run_e2e(const ModelT<double>& m, const std::vector<ControlT<double>>& controls, RolloutOptions<double> opt,
             const std::vector<Probe>& probes, double rtol = 1e-4) {
  for (int k : {1, 0}) {
    opt.checkpoint_every = k;
    E2EResult r = check_rollout(m, m.make_state(), controls, opt, probes, 1e-6, 1e-6, rtol);
    INFO("checkpoint_every " << k << ": " << r.report.message);
    if (std::getenv("ADJ_TEST_VERBOSE")) std::printf("%s\n", r.report.message.c_str());
    CHECK(r.report.ok);
  }
  check_checkpoint_identical(m, controls, opt);
}

}  // namespace

TEST_CASE("e2e: bounce (wall and ground contact, friction)", "[grad][e2e]") {
  ModelT<double> m = bounce_scene();
  RolloutOptions<double> opt{.steps = 120, .dt = 1.0 / 240, .substeps = 2};
  auto c = random_controls(m, opt.steps, 1, 0.5, 0);
  run_e2e(m, c, opt,
          {probe_q0(0, 0), probe_q0(0, 1), probe_qd0(0, 0), probe_qd0(0, 1), probe_qd0(0, 2), probe_force(10, 0, 0),
           probe_force(100, 0, 1), probe_mass(0), probe_contact_ke(), probe_contact_kd(), probe_contact_mu()});
}

TEST_CASE("e2e: spring cage (rest lengths, ke, kd)", "[grad][e2e]") {
  ModelT<double> m = spring_cage_scene();
  RolloutOptions<double> opt{.steps = 30, .dt = 1.0 / 30};
  auto c = random_controls(m, opt.steps, 2, 0.5, 0.1);
  std::vector<Probe> probes = {probe_q0(0, 0), probe_qd0(0, 2), probe_mass(0), probe_spring_act(5, 3)};
  for (int e = 0; e < 8; ++e) probes.push_back(probe_spring_rest(e));
  probes.push_back(probe_spring_ke(1));
  probes.push_back(probe_spring_kd(2));
  run_e2e(m, c, opt, probes);
}

TEST_CASE("e2e: 6x6 cloth (membrane, bending, aero, ground)", "[grad][e2e]") {
  ModelT<double> m = cloth_scene();
  RolloutOptions<double> opt{.steps = 60, .dt = 1.0 / 120, .substeps = 4};
  auto c = random_controls(m, opt.steps, 3, 0.02, 0);
  run_e2e(m, c, opt,
          {probe_q0(10, 1), probe_q0(48, 0), probe_qd0(20, 1), probe_qd0(30, 2), probe_force(5, 24, 1),
           probe_force(40, 40, 0), probe_mass(12), probe_mass(47), probe_contact_ke(), probe_contact_mu()});
}

TEST_CASE("e2e: cloth material, aerodynamics and gravity (tri_ke/ka/kd, edge_ke, lift, drag)", "[grad][e2e][fields]") {
  ModelT<double> m = cloth_scene(4);
  RolloutOptions<double> opt{.steps = 40, .dt = 1.0 / 120, .substeps = 4};
  auto c = random_controls(m, opt.steps, 8, 0.02, 0);
  std::vector<Probe> probes = {probe_tri_ke(0),  probe_tri_ke(17),  probe_tri_ka(5), probe_tri_kd(9),
                               probe_edge_ke(0), probe_edge_ke(11), probe_lift(),    probe_drag(),
                               probe_gravity(0), probe_gravity(1),  probe_gravity(2)};
  run_e2e(m, c, opt, probes);
  // no aerodynamics: the coefficients' gradient is still there (cloth that starts without lift)
  m.tri_lift = m.tri_drag = 0;
  run_e2e(m, c, opt, {probe_lift(), probe_drag(), probe_tri_ke(3)});
}

TEST_CASE("e2e: 2x2x2 soft body (Neo-Hookean, activation, ground)", "[grad][e2e]") {
  ModelT<double> m = soft_scene();
  RolloutOptions<double> opt{.steps = 80, .dt = 1.0 / 200, .substeps = 2};
  auto c = random_controls(m, opt.steps, 4, 0.05, 0.05);
  run_e2e(m, c, opt,
          {probe_q0(0, 1), probe_qd0(13, 0), probe_tet_mu(0), probe_tet_mu(17), probe_tet_lambda(5),
           probe_tet_lambda(39), probe_tet_act(10, 3), probe_mass(26), probe_contact_ke(), probe_contact_kd(),
           probe_contact_mu()});
}

TEST_CASE("e2e: mass-spring robot (actuated springs, ground friction)", "[grad][e2e]") {
  ModelT<double> m = robot_scene();
  RolloutOptions<double> opt{.steps = 100, .dt = 1.0 / 250, .substeps = 1};
  auto c = random_controls(m, opt.steps, 5, 0.0, 0.15);
  run_e2e(m, c, opt,
          {probe_spring_act(10, 0), probe_spring_act(60, 7), probe_spring_act(90, 10), probe_spring_ke(3),
           probe_spring_kd(4), probe_spring_rest(9), probe_q0(0, 0), probe_contact_mu(), probe_contact_kd()});
}

TEST_CASE("e2e: particle pile (particle-particle contact via hash grid)", "[grad][e2e]") {
  ModelT<double> m = pile_scene();
  RolloutOptions<double> opt{.steps = 100, .dt = 1.0 / 200, .substeps = 2};
  auto c = random_controls(m, opt.steps, 6, 0.01, 0);
  run_e2e(m, c, opt,
          {probe_q0(0, 0), probe_q0(5, 1), probe_qd0(3, 2), probe_qd0(7, 0), probe_force(20, 4, 0), probe_mass(6),
           probe_contact_ke(), probe_contact_kd(), probe_contact_mu()});
}

TEST_CASE("e2e: sphere, box, capsule and mesh colliders", "[grad][e2e]") {
  ModelT<double> m = colliders_scene();
  RolloutOptions<double> opt{.steps = 80, .dt = 1.0 / 200, .substeps = 2};
  auto c = random_controls(m, opt.steps, 7, 0.01, 0);
  std::vector<Probe> probes = {probe_contact_ke(), probe_contact_kd(), probe_contact_mu()};
  for (int p = 0; p < 4; ++p) {
    probes.push_back(probe_q0(p, 0));
    probes.push_back(probe_qd0(p, 2));
  }
  run_e2e(m, c, opt, probes);
}

TEST_CASE("rollout: the particle pile really touches (contacts are reported)", "[grad]") {
  ModelT<double> m = pile_scene();
  RolloutT<double> r(m, {.steps = 100, .dt = 1.0 / 200, .substeps = 2, .record_contacts = true});
  REQUIRE(r.forward(m.make_state()).is_ok());
  int pairs = 0, ground = 0;
  for (const auto& c : r.contacts())
    for (int k = 0; k < c.contact_count(); ++k) (c.other[k] < 0 ? pairs : ground)++;
  CHECK(pairs > 0);
  CHECK(ground > 0);
}

TEST_CASE("rollout: non-finite guard names step, element and quantity", "[grad]") {
  ModelT<double> m = spring_cage_scene();
  m.spring_ke[3] = std::numeric_limits<double>::quiet_NaN();
  RolloutT<double> r(m, {.steps = 10, .dt = 1.0 / 30});
  Status st = r.forward(m.make_state());
  REQUIRE_FALSE(st.is_ok());
  CHECK(r.failed_step() == 1);
  CHECK_THAT(st.message(), Catch::Contains("step 1") && Catch::Contains("spring 3") && Catch::Contains("particle"));
  // a NaN injected by the loss gradient is caught in the backward pass
  ModelT<double> ok = spring_cage_scene();
  RolloutT<double> r2(ok, {.steps = 10, .dt = 1.0 / 30});
  REQUIRE(r2.forward(ok.make_state()).is_ok());
  st = r2.backward([](int t, const StateT<double>&, StateT<double>& adj) {
    if (t == 4) adj.particle_qd[2].y = std::numeric_limits<double>::infinity();
  });
  REQUIRE_FALSE(st.is_ok());
  CHECK(r2.failed_step() == 4);
  CHECK_THAT(st.message(), Catch::Contains("backward, step 4") && Catch::Contains("particle 2 velocity"));
  // a non-finite initial state is an error, not garbage
  StateT<double> bad = ok.make_state();
  bad.particle_q[1].x = std::nan("");
  st = r2.forward(bad);
  CHECK_FALSE(st.is_ok());
  CHECK_THAT(st.message(), Catch::Contains("particle 1 position"));
}

TEST_CASE("rollout: one finite check per step still names the element, with substeps", "[grad]") {
  // the solver checks a step's output once and, when it trips, reruns the substeps checking each
  ModelT<double> m = spring_cage_scene();
  m.spring_ke[3] = std::numeric_limits<double>::quiet_NaN();
  RolloutT<double> r(m, {.steps = 10, .dt = 1.0 / 30, .substeps = 4});
  Status st = r.forward(m.make_state());
  REQUIRE_FALSE(st.is_ok());
  CHECK(r.failed_step() == 1);
  CHECK_THAT(st.message(), Catch::Contains("step 1") && Catch::Contains("non-finite force from spring 3"));
  // a non-finite adjoint arising inside a step is named by the solver, recorded or recomputed
  ModelT<double> ok = spring_cage_scene();
  SolverT<double> solver({.substeps = 4});
  StateT<double> in = ok.make_state(), out, adj_out = ok.make_state(), adj_in;
  adj_out.zero();
  adj_out.particle_qd[2].y = std::numeric_limits<double>::infinity();
  ControlT<double> c = ok.make_control(), gc = ok.make_control();
  ModelGradT<double> g = ok.make_grad();
  StepRecordT<double> rec;
  REQUIRE(solver.step(ok, in, out, c, 1.0 / 30, nullptr, &rec).is_ok());
  const StepRecordT<double>* records[] = {&rec, nullptr};
  for (const StepRecordT<double>* p : records) {
    st = solver.step_adjoint(ok, in, c, 1.0 / 30, adj_out, adj_in, gc, g, p);
    REQUIRE_FALSE(st.is_ok());
    CHECK_THAT(st.message(), Catch::Contains("adjoint: particle") && Catch::Contains("is not finite"));
  }
}

TEST_CASE("rollout: gradient norm per step and memory with checkpoints", "[grad]") {
  ModelT<double> m = spring_cage_scene();
  TrajectoryLoss loss(400, m.particle_count(), 1);
  std::size_t bytes[2];
  for (int k : {1, 0}) {
    RolloutT<double> r(m, {.steps = 400, .dt = 1.0 / 60, .checkpoint_every = k, .control_grads = false});
    REQUIRE(r.forward(m.make_state()).is_ok());
    REQUIRE(r.backward([&](int t, const StateT<double>&, StateT<double>& a) { loss.seed(t, a); }).is_ok());
    REQUIRE(r.grad_norm().size() == 401);
    for (double g : r.grad_norm()) CHECK(g > 0);
    bytes[k == 1 ? 0 : 1] = r.peak_state_bytes();
    if (k == 0) CHECK(r.checkpoint_every() == 20);
  }
  // 401 states vs about 2 sqrt(T) + 2
  CHECK(bytes[1] * 8 < bytes[0]);
}
