// the implicit solve's preconditioners, block Jacobi and block ILU(0) (engine/solver/implicit.h,
// ImplicitOptions::preconditioner) on the gripper's cloth corner (assets/scenes/gripper_cloth_corner.json,
// its stored targets: the fingers squeeze the corner particle, the lift rises 5 cm over frames
// 10-69). At a shirt's 0.1 g a particle (stretch 1e4 N/m, one substep of 1/60 s) every substep
// converges with it, where plain GMRES runs out of products; at the stored 1 g, where both converge,
// both give the same trajectory within the solve's tolerance. And the Newton matrix GMRES multiplies,
// assembled in 3x3 blocks, beside the fingers' bodies (the pinch's pair forces in its diagonal)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/solver/solver.h"
#include "tests/engine/asset_scene.h"

using namespace adj;

namespace {

// the corner scene with its cloth's particles of `mass` kg, and its stored per-frame targets
struct Corner {
  scene::Scene doc;
  scene::CompiledSceneT<double> cs;
  std::vector<ControlT<double>> controls;
  explicit Corner(double mass) {
    const std::string dir = ADJ_ASSET_SCENES;
    doc = test::ok(scene::load_scene(dir + "/gripper_cloth_corner.json"));
    for (scene::Object& o : doc.objects)
      if (o.kind == scene::ObjectKind::cloth) o.cloth.particle_mass = mass;
    cs = test::ok(scene::compile<double>(doc, dir));
    const std::vector<double>& v = doc.tasks.at(0).values.at(0).values;  // lift, left, right per frame
    controls.assign(v.size() / 3, cs.model.make_control());
    for (std::size_t t = 0; t < controls.size(); ++t)
      for (std::size_t j = 0; j < 3; ++j) controls[t].joint_act[j] = v[3 * t + j];
  }
};

const char* name(ImplicitPreconditioner p) {
  return p == ImplicitPreconditioner::none           ? "plain GMRES"
         : p == ImplicitPreconditioner::block_jacobi ? "block Jacobi"
                                                     : "block ILU(0)";
}

// frames [0, frames) from the scene's start under preconditioner p: the states of every frame
// and the solver's counts
std::vector<StateT<double>> run(const Corner& c, int frames, ImplicitPreconditioner p, ImplicitStats& stats,
                                double tol = 0) {
  SolverOptions o;
  o.substeps = c.cs.substeps;
  o.implicit.preconditioner = p;
  o.implicit.tol = tol;
  SolverT<double> solver(o);
  std::vector<StateT<double>> s(1, c.cs.model.make_state());
  for (int t = 0; t < frames; ++t) {
    StateT<double> next;
    const Status st = solver.step(c.cs.model, s.back(), next, c.controls[std::size_t(t)], c.cs.frame_dt);
    INFO("frame " << t << ": " << st.message());
    REQUIRE(st);
    s.push_back(next);
  }
  stats = solver.implicit_stats();
  if (std::getenv("ADJ_TEST_VERBOSE"))
    std::printf(
        "cloth corner, %s: %lld substeps, %lld unconverged, newton %lld, products %lld, worst %.2g, corner "
        "at %.2f cm\n",
        name(p), stats.substeps, stats.unconverged, stats.newton, stats.krylov, stats.worst_residual,
        s.back().particle_q[0].y * 100);
  return s;
}

}  // namespace

TEST_CASE("implicit preconditioner: the cloth corner at 0.1 g a particle converges on every substep",
          "[solver][implicit][gripper]") {
  // tol 1e-9 of the step's momentum: double's rounding floor on this cloth at 0.1 g is about
  // 5e-10 (its elastic forces cancel to a net force 10x smaller than at 1 g; at the default 1e-11
  // the solves end there, 4.6e-10 at worst, with or without a preconditioner)
  const Corner c(1e-4);
  ImplicitStats stats;
  const std::vector<StateT<double>> s = run(c, 120, ImplicitPreconditioner::block_jacobi, stats, 1e-9);
  // measured: 0 of 120 above it (worst 9e-10), 6.8 Newton iterations and 777 GMRES products a
  // substep; plain GMRES converges here too, in 9.0 and 3,856 (docs/benchmarks.md)
  CHECK(stats.unconverged == 0);
  CHECK(stats.worst_residual <= 1e-9);
  CHECK(stats.krylov < 1500 * stats.substeps);
  // held: the corner rose with the lift (5 cm)
  INFO("corner at " << s.back().particle_q[0].y << " m, lift " << s.back().joint_q[0] << " m");
  CHECK(s.back().particle_q[0].y > s.back().joint_q[0] - 0.005);
}

TEST_CASE("implicit preconditioner: the same trajectory as plain GMRES where both converge",
          "[solver][implicit][gripper]") {
  // the stored 1 g cloth over the fingers' closing and the lift's start (frames 0-29), plain GMRES
  // against block Jacobi and block ILU(0): right preconditioning keeps GMRES's residual the true
  // one, so each Newton solve stops at the same |g| <= 1e-11 of the step's momentum, or within 2x
  // of it at double's rounding floor (the fingers' pinch): the runs differ by that share of a
  // frame's travel, carried through the frames
  const Corner c(1e-3);
  ImplicitStats plain, block, ilu;
  const std::vector<StateT<double>> a = run(c, 30, ImplicitPreconditioner::none, plain);
  const std::vector<StateT<double>> b = run(c, 30, ImplicitPreconditioner::block_jacobi, block);
  const std::vector<StateT<double>> l = run(c, 30, ImplicitPreconditioner::block_ilu, ilu);
  CHECK(plain.worst_residual <= 2e-11);
  CHECK(block.worst_residual <= 2e-11);
  CHECK(ilu.worst_residual <= 2e-11);
  for (const std::vector<StateT<double>>* other : {&b, &l}) {
    double dq = 0, dv = 0, dj = 0, travel = 0;
    for (std::size_t t = 0; t < a.size(); ++t) {
      for (std::size_t p = 0; p < a[t].particle_q.size(); ++p) {
        dq = std::max(dq, length(a[t].particle_q[p] - (*other)[t].particle_q[p]));
        dv = std::max(dv, length(a[t].particle_qd[p] - (*other)[t].particle_qd[p]));
        travel = std::max(travel, length(a[t].particle_q[p] - a[0].particle_q[p]));
      }
      for (std::size_t j = 0; j < a[t].joint_q.size(); ++j)
        dj = std::max(dj, std::fabs(a[t].joint_q[j] - (*other)[t].joint_q[j]));
    }
    const char* which = other == &b ? "block Jacobi" : "block ILU(0)";
    INFO("plain vs " << which << ": positions " << dq << " m, velocities " << dv << " m/s, joints " << dj
                     << " m; travel " << travel << " m");
    if (std::getenv("ADJ_TEST_VERBOSE"))
      std::printf("plain vs %s: positions %.2g m, velocities %.2g m/s, joints %.2g m, travel %.2g m\n", which, dq, dv,
                  dj, travel);
    // measured (block Jacobi): positions 6.5e-14 m, velocities 3.2e-12 m/s, joints 1e-15 m (travel 1.4 cm)
    CHECK(travel > 0.005);
    CHECK(dq < 1e-11);
    CHECK(dv < 1e-10);
    CHECK(dj < 1e-12);
  }
  // fewer products with a preconditioner, fewest with the one that sees the coupling
  CHECK(block.krylov < plain.krylov);
  CHECK(ilu.krylov < block.krylov);
}

TEST_CASE("implicit Newton matrix: the assembled blocks in the pinch against the adjoint kernels",
          "[solver][implicit][gripper]") {
  // the stored 1 g cloth pinched by the fingers (frame 16: the corner rides the lift), the Newton
  // matrix at the last substep's iterate: its assembled J u and J^T l against J^T l from the
  // forces' and the body pairs' adjoint kernels (J u's rows from J^T e_i), to rounding
  const Corner c(1e-3);
  SolverOptions o;
  o.substeps = c.cs.substeps;
  SolverT<double> solver(o);
  StateT<double> s = c.cs.model.make_state(), next;
  for (int t = 0; t < 16; ++t) {
    REQUIRE(solver.step(c.cs.model, s, next, c.controls[std::size_t(t)], c.cs.frame_dt));
    std::swap(s, next);
  }
  ImplicitSolverT<double>& implicit = solver.implicit_solver();
  const std::size_t n = s.particle_q.size();
  auto is_free = [&](std::size_t i) { return c.cs.model.particle_mass[i] > 0; };
  Array<vec3<double>> u(n), l(n), ju(n), jtl(n), jtl_ref(n), unused(n), row(n);
  for (std::size_t i = 0; i < n; ++i) {
    u[i] = {std::sin(1.0 + double(i)), std::cos(2.0 * double(i)), 0.5 - 0.01 * double(i)};
    l[i] = {std::cos(3.0 + double(i)), 0.3, std::sin(0.7 * double(i))};
  }
  implicit.newton_products(u.data(), l.data(), ju.data(), jtl.data(), jtl_ref.data());
  double scale = 0, err_t = 0, err = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      scale = std::max({scale, std::fabs(jtl_ref[i][k]), std::fabs(ju[i][k])});
      err_t = std::max(err_t, std::fabs(jtl[i][k] - jtl_ref[i][k]));
      Array<vec3<double>> e(n);
      e[i][k] = 1;
      implicit.newton_products(e.data(), e.data(), unused.data(), unused.data(), row.data());
      double ref = 0;
      for (std::size_t q = 0; q < n; ++q)
        if (is_free(q)) ref += dot(row[q], u[q]);
      err = std::max(err, std::fabs(ju[i][k] - (is_free(i) ? ref : 0.0)));
    }
  INFO("largest |J u|, |J^T l| " << scale << ": J^T l off by " << err_t << ", J u by " << err);
  if (std::getenv("ADJ_TEST_VERBOSE"))
    std::printf("Newton matrix in the pinch: J^T l off by %.2g, J u by %.2g of %.2g\n", err_t, err, scale);
  // pinched: the corner rose with the lift (as gripper_cloth_test.cpp's frame 16)
  CHECK(s.particle_q[0].y > 0.004 + 0.5 * s.joint_q[0]);
  CHECK(err_t <= 1e-12 * scale);
  CHECK(err <= 1e-12 * scale);
}
