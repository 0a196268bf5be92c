#include "engine/solver/solver.h"

#include <cmath>
#include <cstring>

#include "engine/core/parallel.h"
#include "engine/grad/rollout.h"
#include "tests/engine/scenes.h"
#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

TEST_CASE("free fall matches the closed form", "[solver][physics]") {
  ModelBuilderT<double> b;
  b.add_particle({0, 10, 0}, {1, 2, 0}, 1.0);
  ModelT<double> m = must(b.finalize());
  SolverT<double> solver({.substeps = 4});
  StateT<double> s = m.make_state(), next;
  ControlT<double> c = m.make_control();
  double dt = 0.01, h = dt / 4, g = 9.81;
  int steps = 100, n = steps * 4;
  for (int t = 0; t < steps; ++t) {
    REQUIRE(solver.step(m, s, next, c, dt).is_ok());
    std::swap(s, next);
  }
  double T = steps * dt;
  // semi-implicit Euler exactly: y_n = y0 + n h v0 - g h^2 n (n + 1) / 2
  CHECK(s.particle_q[0].y == Approx(10 + n * h * 2 - g * h * h * n * (n + 1) / 2.0).epsilon(1e-12));
  CHECK(s.particle_qd[0].y == Approx(2 - g * T).epsilon(1e-12));
  CHECK(s.particle_q[0].x == Approx(1 * T).epsilon(1e-12));
  // and the continuous closed form to O(h)
  CHECK(std::fabs(s.particle_q[0].y - (10 + 2 * T - 0.5 * g * T * T)) <= 0.5 * g * h * T + 1e-9);
}

TEST_CASE("spring oscillator has period 2 pi sqrt(m/k)", "[solver][physics]") {
  ModelBuilderT<double> b;
  b.add_particle({0, 0, 0}, {}, 0.0);  // pinned anchor
  b.add_particle({1.1, 0, 0}, {}, 0.5);
  b.add_spring(0, 1, 50.0, 0.0, 1.0);
  b.settings().gravity = {0, 0, 0};
  ModelT<double> m = must(b.finalize());
  SolverT<double> solver;
  StateT<double> s = m.make_state(), next;
  ControlT<double> c = m.make_control();
  double dt = 1e-4, prev = s.particle_q[1].x - 1.0;
  std::vector<double> crossings;
  for (int t = 1; t < 40000 && crossings.size() < 7; ++t) {
    REQUIRE(solver.step(m, s, next, c, dt).is_ok());
    std::swap(s, next);
    double x = s.particle_q[1].x - 1.0;
    if (prev > 0 && x <= 0) crossings.push_back(t * dt);
    if (prev < 0 && x >= 0) crossings.push_back(t * dt);
    prev = x;
  }
  REQUIRE(crossings.size() == 7);
  double period = (crossings[6] - crossings[0]) / 3.0;
  CHECK(period == Approx(2 * M_PI * std::sqrt(0.5 / 50.0)).epsilon(2e-3));
}

TEST_CASE("cloth resting on the ground stays at rest", "[solver][physics]") {
  ModelBuilderT<double> b;
  ClothMaterial<double> mat;
  mat.tri_ke = mat.tri_ka = 50;
  mat.tri_kd = 0.1;
  mat.edge_ke = 0.01;
  double m_p = 0.01, r = 0.01, ke = 1e3;
  // rotate the grid's local y onto world z: a horizontal sheet, resting at its contact equilibrium
  mat33<double> rot = mat33<double>::from_cols({1, 0, 0}, {0, 0, 1}, {0, -1, 0});
  b.add_cloth_grid({0, r - m_p * 9.81 / ke, 0}, rot, 8, 8, 0.1, m_p, {}, mat, false, r);
  b.add_ground();
  b.settings().contact_ke = ke;
  b.settings().contact_kd = 1;
  ModelT<double> m = must(b.finalize());
  RolloutT<double> roll(m, {.steps = 300, .dt = 1.0 / 120, .substeps = 4});
  double max_speed = 0, max_drift = 0;
  Status st = roll.forward(m.make_state(), {}, [&](int, const StateT<double>& s) {
    for (int p = 0; p < m.particle_count(); ++p) {
      max_speed = std::max(max_speed, length(s.particle_qd[p]));
      max_drift = std::max(max_drift, length(s.particle_q[p] - m.particle_q[p]));
    }
  });
  INFO(st.message());
  REQUIRE(st.is_ok());
  CHECK(max_speed < 1e-6);
  CHECK(max_drift < 1e-6);
}

static double spring_energy(const ModelT<double>& m, const StateT<double>& s) {
  double e = 0;
  for (int p = 0; p < m.particle_count(); ++p) e += 0.5 * m.particle_mass[p] * dot(s.particle_qd[p], s.particle_qd[p]);
  for (int k = 0; k < m.spring_count(); ++k) {
    double l = length(s.particle_q[m.spring_indices[k].i] - s.particle_q[m.spring_indices[k].j]) - m.spring_rest[k];
    e += 0.5 * m.spring_ke[k] * l * l;
  }
  return e;
}

TEST_CASE("energy does not grow without input", "[solver][physics]") {
  // undamped: symplectic Euler keeps the energy bounded; damped: it decays
  for (double kd : {0.0, 1.0}) {
    ModelT<double> m = spring_cage_scene();
    for (auto& d : m.spring_kd) d = kd;
    SolverT<double> solver;
    StateT<double> s = m.make_state(), next;
    ControlT<double> c = m.make_control();
    double e0 = spring_energy(m, s), emax = e0;
    for (int t = 0; t < 2000; ++t) {
      REQUIRE(solver.step(m, s, next, c, 1e-3).is_ok());
      std::swap(s, next);
      emax = std::max(emax, spring_energy(m, s));
    }
    INFO("kd " << kd);
    CHECK(emax <= e0 * 1.02);
    if (kd > 0) CHECK(spring_energy(m, s) < 0.5 * e0);
  }
}

// float scene big enough for the parallel loops: cloth over a sphere, particle contact on
// (sphere = false: a tilted plane instead, which the cloth meets a part at a time)
// a cloth of cells x cells over a sphere (or a tilted plane) and the ground, particle contact on
static ModelT<float> determinism_scene(bool sphere = true, int cells = 24) {
  ModelBuilderT<float> b;
  ClothMaterial<float> mat;
  mat.tri_ke = mat.tri_ka = 100;
  mat.tri_kd = 0.1f;
  mat33<float> rot = mat33<float>::from_cols({1, 0, 0}, {0, 0, 1}, {0, -1, 0});
  b.add_cloth_grid({-0.8f, 0.5f, -0.8f}, rot, cells, cells, 1.6f / float(cells), 0.01f, {}, mat, false, 0.02f);
  if (sphere)
    b.add_sphere({0, 0.2f, 0}, 0.25f);
  else
    b.add_plane({0, 0.2f, 0}, {0.3f, 1.0f, 0.1f});  // normalized by the builder
  b.add_ground();
  b.settings().particle_contact = true;
  b.settings().tri_drag = 0.5f;
  b.settings().tri_lift = 0.5f;
  return must<float>(b.finalize());
}

struct RunBytes {
  std::vector<vec3<float>> q, gq, gv;
  std::vector<float> gm;
  std::vector<float> gp;  // the cloth's and contact's parameter gradients (run_lanes)
};

// the same bytes
template <class V>
static bool same(const V& x, const V& y) {
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0);
}

static RunBytes run_threads(const ModelT<float>& m, int threads) {
  RolloutT<float> r(m, {.steps = 40, .dt = 1.0f / 60, .substeps = 8, .thread_count = threads});
  Status st = r.forward(m.make_state());
  INFO(st.message());
  REQUIRE(st.is_ok());
  REQUIRE(r.backward([&](int t, const StateT<float>&, StateT<float>& a) {
             if (t == 40)
               for (auto& v : a.particle_q) v.y += 1.0f;
           }).is_ok());
  return {r.final_state().particle_q, r.grad_initial().particle_q, r.grad_initial().particle_qd,
          r.grad_model().particle_mass};
}

TEST_CASE("determinism: identical bytes across runs and for 1 vs 2 threads", "[solver][determinism]") {
  // 48 x 48 cells: particles + elements past k_team_min, so that two threads run the team's
  // substeps (a step in one parallel region, the grid built by one thread between its loops)
  ModelT<float> m = determinism_scene(true, 48);
  REQUIRE(m.particle_count() + m.tri_count() + m.edge_count() >= k_team_min);
  RunBytes a = run_threads(m, 1), b = run_threads(m, 2), c = run_threads(m, 2);
  CHECK(same(a.q, b.q));
  CHECK(same(a.gq, b.gq));
  CHECK(same(a.gv, b.gv));
  CHECK(same(a.gm, b.gm));
  CHECK(same(b.q, c.q));
  CHECK(same(b.gq, c.gq));
  // the cloth really moved and touched the sphere
  CHECK(a.q[24 * 49 + 24].y < 0.5f);
}

// 30 steps of the determinism scene, then the adjoint of each step back from the last (each
// seeded with the one before), on SIMD packs of at most max_bytes (16: SSE2's; 32: AVX2's and
// 64: AVX-512's where the CPU has them; 1: none, the scalar functors)
static RunBytes run_lanes(const ModelT<float>& m, int max_bytes) {
  SolverT<float> solver({.substeps = 8, .thread_count = 1, .max_lane_bytes = max_bytes});
  const float dt = 1.0f / 60;
  std::vector<StateT<float>> s(31, m.make_state());
  ControlT<float> control = m.make_control();
  for (int t = 0; t < 30; ++t) REQUIRE(solver.step(m, s[t], s[t + 1], control, dt).is_ok());
  StateT<float> adj = m.make_state(), adj_in = m.make_state();
  for (auto& v : adj.particle_q) v = {0.0f, 0.0f, 0.0f};
  for (auto& v : adj.particle_qd) v = {0.0f, 0.0f, 0.0f};
  for (auto& v : adj.particle_q) v.y = 1.0f;
  ControlT<float> adj_control = m.make_control();
  ModelGradT<float> g = m.make_grad();
  for (int t = 29; t >= 20; --t) {
    REQUIRE(solver.step_adjoint(m, s[t], control, dt, adj, adj_in, adj_control, g).is_ok());
    std::swap(adj, adj_in);
  }
  std::vector<float> gp;
  for (const auto* f : {&g.tri_ke, &g.tri_ka, &g.tri_kd, &g.edge_ke}) gp.insert(gp.end(), f->begin(), f->end());
  gp.insert(gp.end(), {g.tri_lift, g.tri_drag, g.contact_ke, g.contact_kd, g.contact_mu});
  return {s[30].particle_q, adj.particle_q, adj.particle_qd, g.particle_mass, gp};
}

TEST_CASE("determinism: SSE2, AVX2 and AVX-512 lanes equal the scalar kernels bit for bit",
          "[solver][determinism][simd]") {
  // without particle contact and with planes alone the adjoint's particle stage runs on lanes,
  // dual numbers included (kernels_simd.h's gather_adjoint_planes)
  for (bool sphere : {true, false}) {
    ModelT<float> m = determinism_scene(sphere);
    m.particle_contact = sphere;
    RunBytes a = run_lanes(m, 1);
    for (int bytes : {16, 32, 64}) {
      INFO("packs of at most " << bytes << " bytes, sphere and particle contact " << sphere);
      RunBytes b = run_lanes(m, bytes);
      CHECK(same(a.q, b.q));
      CHECK(same(a.gq, b.gq));
      CHECK(same(a.gv, b.gv));
      CHECK(same(a.gm, b.gm));
      CHECK(same(a.gp, b.gp));
    }
    CHECK(a.q[12 * 25 + 12].y < 0.5f);  // it moved
  }
}

#if defined(__SSE2__)
TEST_CASE("a step flushes subnormals on every thread and restores the caller's mode", "[solver][float_env]") {
  // free particles at the origin moving at 1e-37 m/s: a step of 0.01 s moves them 1e-39 m, a
  // subnormal, which the step flushes to zero (engine/core/float_env.h). Past k_team_min
  // particles, so that on two threads the team's second thread runs half of them
  // the OpenMP pool forked here, outside a step, in this thread's mode (a thread starts in its
  // creator's): the steps' team must take the flush itself, and leave the pool's mode as it was
  auto pool_keeps_subnormals = [] {
    int kept = 0;
#pragma omp parallel num_threads(2) reduction(+ : kept)
    {
      volatile float a = 1e-37f, h = 0.01f;
      kept += std::fpclassify(a * h) == FP_SUBNORMAL;
    }
    return kept;
  };
  REQUIRE(pool_keeps_subnormals() == 2);
  ModelBuilderT<float> b;
  const int n = k_team_min + 64;
  for (int i = 0; i < n; ++i) b.add_particle({0, 0, 0}, {1e-37f, 0, 0}, 1.0f);
  b.settings().gravity = {0, 0, 0};
  const ModelT<float> m = must<float>(b.finalize());
  for (int threads : {1, 2}) {
    SolverT<float> solver({.substeps = 1, .thread_count = threads});
    StateT<float> s = m.make_state(), next;
    ControlT<float> c = m.make_control();
    // four steps: TeamChoice runs one thread and the team two times each first
    for (int step = 0; step < 4; ++step) {
      REQUIRE(solver.step(m, s, next, c, 0.01f).is_ok());
      int subnormal = 0;
      for (const vec3<float>& q : next.particle_q) subnormal += std::fpclassify(q.x) != FP_ZERO;
      INFO("threads " << threads << ", step " << step);
      CHECK(subnormal == 0);
      CHECK(next.particle_qd[n - 1].x == 1e-37f);
    }
  }
  volatile float a = 1e-37f, h = 0.01f;  // the caller's mode: subnormals kept
  CHECK(std::fpclassify(a * h) == FP_SUBNORMAL);
  CHECK(pool_keeps_subnormals() == 2);
}
#endif

TEST_CASE("step reports contacts (points, normals, forces) for drawing", "[solver]") {
  ModelT<double> m = colliders_scene();
  SolverT<double> solver({.substeps = 2});
  StateT<double> out;
  ContactsT<double> contacts;
  REQUIRE(solver.step(m, m.make_state(), out, m.make_control(), 0.01, &contacts).is_ok());
  REQUIRE(contacts.contact_count() >= 3);
  for (int k = 0; k < contacts.contact_count(); ++k) {
    CHECK(length(contacts.normal[k]) == Approx(1));
    CHECK(dot(contacts.force[k], contacts.normal[k]) > 0);  // pushes out
  }
}

TEST_CASE("step rejects mismatched states and controls with a message", "[solver]") {
  ModelT<double> m = spring_cage_scene();
  SolverT<double> solver;
  StateT<double> in, out;
  Status st = solver.step(m, in, out, m.make_control(), 0.01);
  CHECK_FALSE(st.is_ok());
  CHECK_THAT(st.message(), Catch::Contains("state does not match"));
  ControlT<double> c = m.make_control();
  c.spring_act.resize(3);
  st = solver.step(m, m.make_state(), out, c, 0.01);
  CHECK_THAT(st.message(), Catch::Contains("control does not match"));
  StateT<double> s = m.make_state();
  st = solver.step(m, s, s, m.make_control(), 0.01);
  CHECK_THAT(st.message(), Catch::Contains("in place"));
}

// a step too long for a stiff spring: the message names the spring and the substeps it needs,
// and with that many substeps the same spring stays finite
TEST_CASE("a blow-up names the element too stiff for the substep and the substeps it needs", "[solver][physics]") {
  auto run = [](int substeps, int frames) {
    ModelBuilderT<double> b;
    b.add_particle({0, 0, 0}, {}, 0.0);  // pinned anchor
    b.add_particle({1.1, 0, 0}, {}, 0.01);
    b.add_spring(0, 1, 1e5, 0.0, 1.0);
    b.settings().gravity = {0, 0, 0};
    ModelT<double> m = must(b.finalize());
    SolverT<double> solver({.substeps = substeps});
    StateT<double> s = m.make_state(), next;
    ControlT<double> c = m.make_control();
    for (int t = 0; t < frames; ++t) {
      Status st = solver.step(m, s, next, c, 1.0 / 60);
      if (!st) return st;
      std::swap(s, next);
    }
    return Status::ok();
  };
  Status blew = run(2, 60);
  REQUIRE_FALSE(blew.is_ok());
  INFO(blew.message());
  CHECK_THAT(blew.message(), Catch::Contains("the substep (0.00833 s) is longer than the explicit step's stable limit "
                                             "for spring 0 (ke 100000 N/m, kd 0 N s/m): about 0.000632 s or less, 27 "
                                             "substeps a frame or more"));
  CHECK(run(27, 120).is_ok());
}
