// the implicit particle integrator (engine/solver/implicit.h): it agrees with the explicit step at
// small steps, stays stable where the explicit one blows up, keeps pinned particles put and gives
// the same bits at any thread count; its adjoint (implicit differentiation of the converged
// Newton solve) against central differences in double on a hanging cloth, a soft block resting
// on the ground and particles in contact (positions, velocities, controls, model parameters); the
// Newton matrix GMRES multiplies, assembled in 3x3 blocks, against the forces' adjoint kernels and
// central differences of the forces
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "engine/grad/rollout.h"
#include "engine/solver/kernels.h"
#include "engine/solver/model_view.h"
#include "engine/solver/solver.h"
#include "tests/engine/scenes.h"
#include "tests/engine/test_util.h"

using namespace adj;
using namespace adj::test;

namespace {

template <class S>
ModelT<S> implicit(ModelT<S> m) {
  m.integrator = INTEGRATOR_IMPLICIT;
  return m;
}

// a 4x4 cloth hanging from one pinned edge, stiff (tri_ke 2e3 N/m at 2.5 g a particle), with
// aerodynamics (a non-symmetric Newton system)
ModelT<double> hanging_cloth() {
  ModelBuilderT<double> b;
  ClothMaterial<double> mat;
  mat.tri_ke = mat.tri_ka = 2e3;
  mat.tri_kd = 1;
  mat.edge_ke = 0.05;
  mat.edge_kd = 0.01;
  const mat33<double> vertical = mat33<double>::from_cols({1, 0, 0}, {0, 0.2, -1}, {0, 1, 0.2});
  b.add_cloth_grid({0, 1, 0}, vertical, 4, 4, 0.05, 0.0025, {0.05, 0, 0.1}, mat, true, 0.01);
  b.settings().tri_lift = 0.5;
  b.settings().tri_drag = 0.3;
  return must(b.finalize());
}

// a 2x2x2 soft block (8 cm, 27 particles) resting on the ground, its bottom 2 mm in
ModelT<double> resting_block(double mu = 4e3) {
  ModelBuilderT<double> b;
  const SoftMaterial<double> mat = soft_block_material(mu);
  b.add_soft_grid({0, 0.008, 0}, 2, 2, 2, 0.04, {0.05, -0.02, 0}, mat, false, 0.01);
  b.add_ground(0.0);
  b.settings().contact_ke = 2e3;
  b.settings().contact_kd = 5;
  b.settings().contact_kf = 20;
  b.settings().contact_mu = 0.5;
  return must(b.finalize());
}

// particles on actuated springs pressing on each other and on the ground
ModelT<double> particles_in_contact() {
  ModelBuilderT<double> b;
  const int p = b.add_particle({0, 0.045, 0}, {0.2, 0, 0.05}, 0.1, 0.05);
  const int q = b.add_particle({0.09, 0.05, 0.01}, {-0.1, 0, 0}, 0.1, 0.05);
  const int r = b.add_particle({0.05, 0.13, 0.0}, {0, -0.2, 0}, 0.1, 0.05);
  b.add_spring(p, r, 300, 1);
  b.add_spring(q, r, 300, 1);
  b.add_ground(0.0);
  b.settings().particle_contact = true;
  b.settings().contact_ke = 1e3;
  b.settings().contact_kd = 3;
  b.settings().contact_kf = 10;
  b.settings().contact_mu = 0.4;
  return must(b.finalize());
}

std::vector<ControlT<double>> controls(const ModelT<double>& m, int steps) {
  std::vector<ControlT<double>> c(std::size_t(steps), m.make_control());
  for (int t = 0; t < steps; ++t) {
    c[std::size_t(t)].particle_f.assign(std::size_t(m.particle_count()), vec3<double>(0.01 * t, 0.02, -0.01));
    for (std::size_t e = 0; e < c[std::size_t(t)].spring_act.size(); ++e)
      c[std::size_t(t)].spring_act[e] = 0.05 * double(e + 1);
    for (std::size_t e = 0; e < c[std::size_t(t)].tet_act.size(); ++e)
      c[std::size_t(t)].tet_act[e] = 0.02 * double(e % 3);
  }
  return c;
}

// |AD - FD| <= atol max(1, largest |FD|) + 1e-4 |FD|. eps 1e-6 for states, controls and parameters
// near 1; stiffnesses of 3e2..8e3 have gradients of 1e-8..1e-5 per N/m or Pa: atol 1e-11 and
// eps 1 (relative 1e-4..5e-4: below, the Newton tolerance's noise shows) or, where contact and
// springs bend the loss more (the particles), 1e-2
void check(const ModelT<double>& m, int steps, int substeps, const std::vector<Probe>& probes, double eps = 1e-6,
           double atol = 1e-7) {
  RolloutOptions<double> opt;
  opt.steps = steps;
  opt.substeps = substeps;
  opt.checkpoint_every = 1;
  E2EResult r = check_rollout(m, m.make_state(), controls(m, steps), opt, probes, eps, atol, 1e-4);
  INFO(r.report.message);
  if (std::getenv("ADJ_TEST_VERBOSE")) std::printf("%s\n", r.report.message.c_str());
  CHECK(r.report.ok);
}

// the forward kernels at a state (x, v) as the implicit step runs them (its hash grid built there):
// every particle's force
struct KernelProbe {
  const ModelT<double>& m;
  const ControlT<double>& c;
  int table;
  Array<int> cell_start, sorted, fill;
  Array<Idx3> cell;
  Array<vec3<double>> slot, total, q_out, qd_out;
  KernelProbe(const ModelT<double>& model, const ControlT<double>& control)
      : m(model), c(control), table(grid_table_size(model.particle_count())) {
    const std::size_t n = std::size_t(m.particle_count());
    cell_start.resize(std::size_t(table) + 1);
    fill.resize(std::size_t(table));
    sorted.resize(n);
    cell.resize(n);
    slot.resize(std::size_t(m.slot_count()));
    for (Array<vec3<double>>* a : {&total, &q_out, &qd_out}) a->resize(n);
  }
  KernelArgs<double> args(const Array<vec3<double>>& x, const Array<vec3<double>>& v) {
    if (m.particle_contact)
      build_hash_grid(x.data(), m.particle_count(), m.grid_cell, table, cell_start.data(), sorted.data(), cell.data(),
                      fill.data());
    KernelArgs<double> a{};
    a.m = make_view(m);
    a.dt = 1.0 / 60;
    a.control_f = data_or_null(c.particle_f);
    a.spring_act = data_or_null(c.spring_act);
    a.tet_act = data_or_null(c.tet_act);
    a.q = x.data();
    a.qd = v.data();
    a.f_slot = slot.data();
    a.f_total = total.data();
    a.q_out = q_out.data();
    a.qd_out = qd_out.data();
    a.grid = {table, cell_start.data(), sorted.data(), cell.data()};
    return a;
  }
  Array<vec3<double>> forces(const Array<vec3<double>>& x, const Array<vec3<double>>& v) {
    substep_forward(ElementExec{}, args(x, v));
    return total;
  }
};

double max_speed(const StateT<double>& s) {
  double v = 0;
  for (const vec3<double>& x : s.particle_qd) v = std::max(v, length(x));
  return v;
}

}  // namespace

TEST_CASE("implicit step agrees with the explicit step at small steps", "[solver][implicit]") {
  // the same trajectory to first order in h: 0.3 s of the spring cage and of the hanging cloth
  for (const ModelT<double>& m : {spring_cage_scene(), hanging_cloth()}) {
    SolverT<double> fine(SolverOptions{.substeps = 64});
    StateT<double> a = m.make_state(), b = a, next;
    const ModelT<double> mi = implicit(m);
    for (int t = 0; t < 18; ++t) {
      REQUIRE(fine.step(m, a, next, m.make_control(), 1.0 / 60));
      std::swap(a, next);
      REQUIRE(fine.step(mi, b, next, m.make_control(), 1.0 / 60));
      std::swap(b, next);
    }
    double err = 0, travel = 0;
    for (int p = 0; p < m.particle_count(); ++p) {
      err = std::max(err, length(a.particle_q[p] - b.particle_q[p]));
      travel = std::max(travel, length(a.particle_q[p] - m.particle_q[p]));
    }
    INFO("largest difference " << err << " m, largest travel " << travel << " m");
    CHECK(travel > 0.01);
    CHECK(err < 0.02 * travel);
    CHECK(fine.implicit_stats().unconverged == 0);
  }
}

TEST_CASE("implicit step is stable at one substep where the explicit one blows up", "[solver][implicit]") {
  // a stiff block (mu 3e5 Pa, 4 cm cells, 32 g particles) at dt 1/60 and one substep
  const ModelT<double> m = resting_block(3e5);
  SolverT<double> solver(SolverOptions{.substeps = 1});
  StateT<double> s = m.make_state(), next;
  bool exploded = false;
  for (int t = 0; t < 30 && !exploded; ++t) {
    exploded = !solver.step(m, s, next, m.make_control(), 1.0 / 60);
    std::swap(s, next);
  }
  CHECK(exploded);
  const ModelT<double> mi = implicit(m);
  s = mi.make_state();
  for (int t = 0; t < 120; ++t) {
    Status st = solver.step(mi, s, next, mi.make_control(), 1.0 / 60);
    INFO(st.message());
    REQUIRE(st);
    std::swap(s, next);
  }
  // at rest on the ground after 2 s, not sunk through it
  INFO("speed " << max_speed(s));
  CHECK(max_speed(s) < 1e-3);
  for (const vec3<double>& q : s.particle_q) CHECK(q.y > -0.01);
  CHECK(solver.implicit_stats().unconverged == 0);
}

TEST_CASE("implicit step keeps pinned particles put and is deterministic", "[solver][implicit]") {
  const ModelT<double> m = implicit(hanging_cloth());
  StateT<double> out[2];
  for (int k = 0; k < 2; ++k) {
    SolverT<double> solver(SolverOptions{.substeps = 1, .thread_count = k == 0 ? 1 : 4});
    StateT<double> s = m.make_state(), next;
    for (int t = 0; t < 30; ++t) {
      REQUIRE(solver.step(m, s, next, m.make_control(), 1.0 / 60));
      std::swap(s, next);
    }
    out[k] = s;
  }
  for (int p = 0; p < m.particle_count(); ++p) {
    CHECK(out[0].particle_q[p].x == out[1].particle_q[p].x);
    CHECK(out[0].particle_q[p].y == out[1].particle_q[p].y);
    CHECK(out[0].particle_qd[p].z == out[1].particle_qd[p].z);
    // pinned: moving with their initial velocity, as in the explicit step
    if (m.particle_mass[p] == 0) {
      CHECK(length(out[0].particle_qd[p] - m.particle_qd[p]) == 0);
      CHECK(length(out[0].particle_q[p] - (m.particle_q[p] + m.particle_qd[p] * 0.5)) < 1e-12);
    }
  }
}

TEST_CASE(
    "implicit step: J's pattern kept between steps gives the bits of one rebuilt, and is rebuilt when "
    "the elements change",
    "[solver][implicit]") {
  // one solver stepping the hanging cloth keeps J's block pattern and ILU(0)'s elimination list
  // from step to step: the same bits as a fresh solver (which builds them) at every step. Then the
  // same solver on six particles on five springs, and on the same particles on five other springs
  // (the same element counts, other pairs coupled): the pattern is rebuilt, a fresh solver's bits
  const int chain[5][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}},
            net[5][2] = {{0, 2}, {2, 4}, {1, 3}, {3, 5}, {0, 5}};
  auto springs = [](const int(*pairs)[2]) {
    ModelBuilderT<double> b;
    for (int i = 0; i < 6; ++i) b.add_particle({0.05 * i, 1, 0.01 * (i % 2)}, {}, i == 0 ? 0.0 : 0.01, 0.01);
    for (int e = 0; e < 5; ++e) b.add_spring(pairs[e][0], pairs[e][1], 1e4, 1);
    return implicit(must(b.finalize()));
  };
  const ModelT<double> models[3] = {implicit(hanging_cloth()), springs(chain), springs(net)};
  SolverT<double> kept(SolverOptions{.substeps = 2, .thread_count = 1});
  StateT<double> s, next, fresh_next;
  for (int t = 0; t < 8; ++t) {
    const int k = t < 4 ? 0 : t < 6 ? 1 : 2;
    const ModelT<double>& m = models[k];
    if (t == 0 || t == 4 || t == 6) s = m.make_state();
    SolverT<double> fresh(SolverOptions{.substeps = 2, .thread_count = 1});
    REQUIRE(kept.step(m, s, next, m.make_control(), 1.0 / 60));
    REQUIRE(fresh.step(m, s, fresh_next, m.make_control(), 1.0 / 60));
    INFO("step " << t << ", model " << k << " (0: the cloth, 1: the spring chain, 2: the other springs)");
    bool same = true;
    for (std::size_t p = 0; p < next.particle_q.size(); ++p)
      same = same && next.particle_q[p] == fresh_next.particle_q[p] && next.particle_qd[p] == fresh_next.particle_qd[p];
    CHECK(same);
    std::swap(s, next);
  }
}

TEST_CASE("implicit Newton matrix: the assembled blocks against the adjoint kernels and central differences",
          "[solver][implicit]") {
  // after 5 implicit frames (stretched cloth with aerodynamics; tets pressed on the ground) or one
  // (springs, particle pairs and the ground), the Newton matrix J = M (1 + c h) - h df/du at the last
  // iterate: its assembled J u and J^T l (what GMRES multiplies) against J^T l from the forces'
  // adjoint kernels (J u's rows from J^T e_i) to rounding, and its columns J e_i against central
  // differences of the forward kernels' forces along x + h e_i, v + e_i
  const double h = 1.0 / 60, eps = 1e-6;
  for (const ModelT<double>& m :
       {implicit(hanging_cloth()), implicit(resting_block()), implicit(particles_in_contact())}) {
    const ControlT<double> c = controls(m, 1)[0];
    const int frames = m.particle_contact ? 1 : 5;  // the particles still press on each other
    SolverT<double> solver(SolverOptions{.substeps = 1});
    StateT<double> s = m.make_state(), next;
    for (int t = 0; t < frames; ++t) {
      REQUIRE(solver.step(m, s, next, c, h));
      std::swap(s, next);
    }
    ImplicitSolverT<double>& implicit = solver.implicit_solver();
    const std::size_t n = std::size_t(m.particle_count());
    auto is_free = [&](std::size_t i) { return m.particle_mass[i] > 0; };
    Array<vec3<double>> u(n), l(n), ju(n), jtl(n), jtl_ref(n), col(n), unused(n), row(n);
    for (std::size_t i = 0; i < n; ++i) {
      u[i] = {std::sin(1.0 + double(i)), std::cos(2.0 * double(i)), 0.5 - 0.01 * double(i)};
      l[i] = is_free(i) ? vec3<double>(std::cos(3.0 + double(i)), 0.3, std::sin(0.7 * double(i))) : vec3<double>();
    }
    implicit.newton_products(u.data(), l.data(), ju.data(), jtl.data(), jtl_ref.data());
    double scale = 0, err_t = 0, err = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k) {
        scale = std::max({scale, std::fabs(jtl_ref[i][k]), std::fabs(ju[i][k])});
        err_t = std::max(err_t, std::fabs(jtl[i][k] - jtl_ref[i][k]));
      }
    // (J u)_i = (J^T e_i) . u on the free particles' velocities (J's rows and columns of pinned ones are zero)
    KernelProbe probe(m, c);
    std::vector<double> ad, fd;
    double fd_scale = 0;
    int touching = 0, pairs = 0;
    for (std::size_t p = 0; p < n; ++p) {
      touching += m.shape_count() > 0 && s.particle_q[p].y < m.particle_radius[p];
      for (std::size_t q = p + 1; q < n && m.particle_contact; ++q)
        pairs += length(s.particle_q[p] - s.particle_q[q]) < m.particle_radius[p] + m.particle_radius[q];
      for (int k = 0; k < 3; ++k) {
        Array<vec3<double>> e(n);
        e[p][k] = 1;
        implicit.newton_products(e.data(), e.data(), col.data(), unused.data(), row.data());
        double ref = 0;
        for (std::size_t q = 0; q < n; ++q)
          if (is_free(q)) ref += dot(row[q], u[q]);
        err = std::max(err, std::fabs(ju[p][k] - (is_free(p) ? ref : 0.0)));
        if (!is_free(p)) continue;
        // column (p, k) by central differences: M (1 + c h) e - h (f(+) - f(-)) / (2 eps)
        Array<vec3<double>> f[2];
        for (int side = 0; side < 2; ++side) {
          Array<vec3<double>> x = s.particle_q, v = s.particle_qd;
          x[p][k] += h * (side == 0 ? eps : -eps);
          v[p][k] += side == 0 ? eps : -eps;
          f[side] = probe.forces(x, v);
        }
        for (std::size_t q = 0; q < n; ++q) {
          if (!is_free(q)) continue;
          for (int r = 0; r < 3; ++r) {
            const double inertia = q == p && r == k ? m.particle_mass[q] * (1 + m.particle_damping * h) : 0.0;
            ad.push_back(col[q][r]);
            fd.push_back(inertia - h * (f[0][q][r] - f[1][q][r]) / (2 * eps));
            fd_scale = std::max(fd_scale, std::fabs(fd.back()));
          }
        }
      }
    }
    const FdReport rep = compare_gradients(ad, fd, 1e-7 * fd_scale, 1e-5);
    INFO(m.particle_count() << " particles, " << touching << " touching the ground, " << pairs
                            << " pairs; largest |J u|, |J^T l| " << scale << ": J^T l off by " << err_t << ", J u by "
                            << err << "; columns against central "
                            << "differences: " << rep.message);
    if (std::getenv("ADJ_TEST_VERBOSE"))
      std::printf("Newton matrix, %d particles: J^T l off by %.2g, J u by %.2g of %.2g\n", m.particle_count(), err_t,
                  err, scale);
    if (m.particle_contact) CHECK(pairs > 0);
    CHECK(err_t <= 1e-12 * scale);
    CHECK(err <= 1e-12 * scale);
    CHECK(rep.ok);
  }
}

// an element's V x V blocks from vertex_blocks' one eval on 3V tangents (or from triangle_blocks',
// bending_blocks' or tet_blocks' closed form: closed) against input_block's eval per seeded vertex (the contacts' way);
// the largest difference over the largest block entry
template <int V, class F>
double one_pass_error(const F& f, const double* in, double h, bool closed = false) {
  mat33<double> block[max_element_vertices * max_element_vertices];
  if constexpr (std::is_same_v<F, TriangleEval<double>>) {
    if (closed) triangle_blocks(f, in, h, block);
  }
  if constexpr (std::is_same_v<F, BendingEval<double>>) {
    if (closed) bending_blocks(f, in, h, block);
  }
  if constexpr (std::is_same_v<F, TetEval<double>>) {
    if (closed) tet_blocks(f, in, h, block);
  }
  if (!closed) vertex_blocks<V>(f, in, h, block);
  double err = 0, size = 0;
  for (int j = 0; j < V; ++j)
    for (int k = 0; k < V; ++k) {
      const mat33<double> ref = input_block(f, in, 3 * k, 3 * V + 3 * k, 3 * j, h);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
          size = std::max(size, std::fabs(ref.m[r][c]));
          err = std::max(err, std::fabs(block[max_element_vertices * j + k].m[r][c] - ref.m[r][c]));
        }
    }
  return size > 0 ? err / size : 1.0;
}

TEST_CASE("implicit Newton matrix: an element's blocks from one eval equal the per-vertex evals",
          "[solver][implicit]") {
  // a spring, a triangle (with aerodynamics), a bending edge and a tet, deformed and moving:
  // jacobian_blocks' one dual-number eval per element (3V tangents) and the closed forms of the
  // triangle, the bending edge and the tet against one eval per seeded vertex (3 tangents each), to
  // rounding
  const double h = 1.0 / 60;
  double in[27];
  for (int i = 0; i < 27; ++i) in[i] = 0.3 * std::sin(1.7 * i + 0.4) + (i % 3 == 0 ? 0.1 * (i / 3) : 0.0);
  in[24] = 3e3, in[25] = 5e3, in[26] = 0.2;  // the tet's mu, lambda, activation
  double spring[16];
  std::copy(in, in + 12, spring);
  spring[12] = 1e3, spring[13] = 2, spring[14] = 0.1, spring[15] = 0.3;  // ke, kd, rest, activation
  const mat22<double> pose{12, 1, -2, 9};
  const mat33<double> tet_pose = mat33<double>::from_cols({8, 1, 0}, {-1, 7, 2}, {0.5, 1, 9});
  const double errors[] = {
      one_pass_error<2>(SpringEval{}, spring, h),
      one_pass_error<3>(TriangleEval<double>{pose, 0.01, 2e3, 2e3, 1}, in, h),
      one_pass_error<3>(TriangleEval<double>{pose, 0.01, 2e3, 3e3, 1}, in, h, true),
      one_pass_error<3>(AeroEval<double>{0.5, 0.3}, in, h),
      one_pass_error<4>(BendingEval<double>{0.05, 0.01, 0.2}, in, h),
      one_pass_error<4>(BendingEval<double>{0.05, 0.01, 0.2}, in, h, true),
      one_pass_error<4>(TetEval<double>{tet_pose, 0.002, 1}, in, h),
      one_pass_error<4>(TetEval<double>{tet_pose, 0.002, 1}, in, h, true),
  };
  const char* names[] = {"spring",       "triangle",          "triangle in closed form",
                         "aerodynamics", "bending edge",      "bending edge in closed form",
                         "tet",          "tet in closed form"};
  for (int i = 0; i < 8; ++i) {
    INFO(names[i] << ": blocks off by " << errors[i] << " of the largest entry");
    CHECK(errors[i] <= 1e-13);
  }
}

TEST_CASE("implicit step adjoint: from the step's record as from the recompute, under each preconditioner",
          "[solver][implicit][grad]") {
  // the hanging cloth's fourth frame in 2 substeps: its adjoint from the step's record (each
  // substep's input and converged velocity) has the bits of the one that solves the substeps
  // again; the transposed Newton solve under block Jacobi and block ILU(0) (P^T on the right)
  // agrees with plain GMRES to its tolerance, block ILU(0) in the fewest products
  const ModelT<double> m = implicit(hanging_cloth());
  const double h = 1.0 / 60;
  const ControlT<double> c = controls(m, 1)[0];
  const std::size_t n = std::size_t(m.particle_count());
  struct Grad {
    Array<vec3<double>> q, qd;
    long long products;
  };
  auto grad = [&](ImplicitPreconditioner p, bool use_record) {
    SolverOptions o;
    o.substeps = 2;
    o.implicit.preconditioner = p;
    SolverT<double> solver(o);
    StateT<double> s = m.make_state(), next, adj_out = m.make_state(), adj_in;
    for (int t = 0; t < 3; ++t) {
      REQUIRE(solver.step(m, s, next, c, h));
      std::swap(s, next);
    }
    StepRecordT<double> record;
    REQUIRE(solver.step(m, s, next, c, h, nullptr, &record));
    for (std::size_t i = 0; i < n; ++i) {
      adj_out.particle_q[i] = {std::sin(1.0 + double(i)), 0.5, std::cos(0.3 * double(i))};
      adj_out.particle_qd[i] = {0.2, std::cos(2.0 * double(i)), -0.1 * double(i)};
    }
    ControlT<double> adj_c = m.make_control();
    ModelGradT<double> adj_m = m.make_grad();
    const long long before = solver.implicit_stats().krylov;
    REQUIRE(solver.step_adjoint(m, s, c, h, adj_out, adj_in, adj_c, adj_m, use_record ? &record : nullptr));
    return Grad{adj_in.particle_q, adj_in.particle_qd, solver.implicit_stats().krylov - before};
  };
  const Grad recorded = grad(ImplicitPreconditioner::block_ilu, true);
  const Grad again = grad(ImplicitPreconditioner::block_ilu, false);
  const Grad jacobi = grad(ImplicitPreconditioner::block_jacobi, true);
  const Grad plain = grad(ImplicitPreconditioner::none, true);
  double size = 0, err_ilu = 0, err_jacobi = 0;
  bool same_bits = true;
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      same_bits = same_bits && recorded.q[i][k] == again.q[i][k] && recorded.qd[i][k] == again.qd[i][k];
      size = std::max({size, std::fabs(plain.q[i][k]), std::fabs(plain.qd[i][k])});
      err_ilu = std::max(
          {err_ilu, std::fabs(recorded.q[i][k] - plain.q[i][k]), std::fabs(recorded.qd[i][k] - plain.qd[i][k])});
      err_jacobi = std::max(
          {err_jacobi, std::fabs(jacobi.q[i][k] - plain.q[i][k]), std::fabs(jacobi.qd[i][k] - plain.qd[i][k])});
    }
  INFO("adjoint GMRES products: plain " << plain.products << ", block Jacobi " << jacobi.products << ", block ILU "
                                        << recorded.products << "; off plain GMRES by " << err_jacobi << ", " << err_ilu
                                        << " of " << size);
  if (std::getenv("ADJ_TEST_VERBOSE"))
    std::printf("adjoint GMRES products: plain %lld, block Jacobi %lld, block ILU %lld; off by %.2g, %.2g of %.2g\n",
                plain.products, jacobi.products, recorded.products, err_jacobi, err_ilu, size);
  CHECK(same_bits);
  CHECK(err_ilu <= 1e-8 * size);
  CHECK(err_jacobi <= 1e-8 * size);
  CHECK(recorded.products < jacobi.products);
  CHECK(jacobi.products < plain.products);
}

TEST_CASE("implicit preconditioner: block ILU(0) is the exact LU on a chain of springs", "[solver][implicit]") {
  // a chain of 8 particles on springs hanging from a pinned end: its Newton matrix is block
  // tridiagonal, whose LU has no fill-in outside its pattern, so block ILU(0)'s factors are J's
  // exact LU and each GMRES solve (forward, and the adjoint's transposed one) converges at its
  // first product, then checks the true residual with a second
  ModelBuilderT<double> b;
  int prev = b.add_particle({0, 1, 0}, {0, 0, 0}, 0.0);
  for (int i = 1; i < 8; ++i) {
    const int p = b.add_particle({0.1 * i, 1, 0.01 * i}, {0, 0.1 * i, 0}, 0.01);
    b.add_spring(prev, p, 1e3, 1);
    prev = p;
  }
  const ModelT<double> m = implicit(must(b.finalize()));
  SolverT<double> solver(SolverOptions{.substeps = 1});
  StateT<double> s = m.make_state(), next, adj_out = m.make_state(), adj_in;
  const ControlT<double> c = m.make_control();
  for (int t = 0; t < 3; ++t) {
    REQUIRE(solver.step(m, s, next, c, 1.0 / 60));
    std::swap(s, next);
  }
  StepRecordT<double> record;
  REQUIRE(solver.step(m, s, next, c, 1.0 / 60, nullptr, &record));
  const ImplicitStats forward = solver.implicit_stats();
  ControlT<double> adj_c = m.make_control();
  ModelGradT<double> adj_m = m.make_grad();
  REQUIRE(solver.step_adjoint(m, s, c, 1.0 / 60, adj_out, adj_in, adj_c, adj_m, &record));
  const long long adjoint_products = solver.implicit_stats().krylov - forward.krylov;
  INFO("Newton iterations " << forward.newton << ", GMRES products " << forward.krylov << ", adjoint's "
                            << adjoint_products);
  CHECK(forward.newton >= 4);
  CHECK(forward.krylov <= 2 * forward.newton);
  CHECK(adjoint_products == 2);
}

TEST_CASE("implicit step adjoint: hanging cloth against central differences", "[solver][implicit][grad]") {
  const ModelT<double> m = implicit(hanging_cloth());
  check(
      m, 3, 1,
      {probe_q0(7, 1), probe_q0(12, 0), probe_qd0(8, 2), probe_qd0(24, 1), probe_force(0, 9, 1), probe_force(2, 23, 2),
       probe_tri_kd(5), probe_edge_ke(4), probe_lift(), probe_drag(), probe_mass(13), probe_gravity(1)});
  check(m, 3, 1, {probe_tri_ke(3), probe_tri_ke(9), probe_tri_ka(10)}, 1, 1e-11);
}

TEST_CASE("implicit step adjoint: soft block resting on the ground", "[solver][implicit][grad]") {
  const ModelT<double> m = implicit(resting_block());
  check(m, 3, 2,
        {probe_q0(0, 1), probe_q0(4, 0), probe_qd0(2, 1), probe_qd0(20, 0), probe_force(1, 3, 0), probe_tet_act(0, 5),
         probe_tet_act(2, 11), probe_contact_kd(), probe_contact_mu(), probe_mass(1)});
  check(m, 3, 2, {probe_tet_mu(7), probe_tet_mu(30), probe_tet_lambda(2), probe_contact_ke()}, 1, 1e-11);
}

TEST_CASE("implicit step adjoint: particles in contact with the ground and each other", "[solver][implicit][grad]") {
  const ModelT<double> m = implicit(particles_in_contact());
  check(m, 4, 1,
        {probe_q0(0, 0), probe_q0(1, 1), probe_q0(2, 1), probe_qd0(0, 0), probe_qd0(1, 2), probe_force(3, 1, 0),
         probe_spring_act(1, 0), probe_spring_act(3, 1), probe_spring_kd(1), probe_spring_rest(1), probe_contact_kd(),
         probe_contact_mu(), probe_gravity(1)});
  check(m, 4, 1, {probe_spring_ke(0), probe_spring_ke(1), probe_contact_ke()}, 1e-2, 1e-11);
}

// friction that holds: with the implicit step the friction law's stick region can be made stiff
// (kf 1e4 N s/m, eps 1e-5 m/s: a slope mu f_n / eps, far past the explicit step's kf h / m < 2),
// so a block on a 15 degree slope (gravity tilted; mu 0.5, friction angle 26.6 degrees) creeps
// by micrometres in a second, and on a 35 degree slope it slides
TEST_CASE("implicit step: a block below its friction angle does not creep", "[solver][implicit]") {
  auto creep = [](double degrees) {
    ModelT<double> m = implicit(resting_block(4e3));
    const double a = degrees * 3.14159265358979 / 180;
    m.gravity = {9.81 * std::sin(a), -9.81 * std::cos(a), 0};
    m.contact_kf = 1e4;
    m.contact_eps = 1e-5;
    SolverT<double> solver(SolverOptions{.substeps = 1});
    StateT<double> s = m.make_state(), next;
    s.particle_qd.assign(s.particle_qd.size(), vec3<double>());
    double x1 = 0;
    for (int t = 0; t < 120; ++t) {
      Status st = solver.step(m, s, next, m.make_control(), 1.0 / 60);
      INFO(st.message());
      REQUIRE(st);
      std::swap(s, next);
      if (t == 59) x1 = s.particle_q[0].x;
    }
    return s.particle_q[0].x - x1;  // travel down the slope in the second second [m]
  };
  const double hold = creep(15), slide = creep(35);
  INFO("creep at 15 degrees " << hold << " m/s, at 35 degrees " << slide << " m/s");
  if (std::getenv("ADJ_TEST_VERBOSE")) std::printf("creep 15 deg %.3g m/s, 35 deg %.3g m/s\n", hold, slide);
  CHECK(std::fabs(hold) < 1e-4);
  CHECK(slide > 0.5);
}
