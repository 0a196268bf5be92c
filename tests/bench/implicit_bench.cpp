// what the implicit particle integrator (engine/solver/implicit.h) buys on stiff soft bodies: a
// 10 cm rubber block (E = 1 MPa, nu 0.3, 2 cm cells, 216 particles) and a 9 cm soft block
// (3x3x3 cells, density 500, mu 2500, lambda 7500) resting on the ground for 2 s of 1/60 s
// frames, explicit against implicit at several substep counts, float, one thread. Prints one
// markdown table row per run: stable?, wall time, the largest particle speed at the end and
// the centre's sideways drift. Both rest on the ground (bottom particles, radius 1 cm, touching
// it) under the ground contact stated below. --smoke: the implicit rubber block for 0.1 s (ctest).
// --precond: GMRES without and with its block-Jacobi preconditioner (ImplicitOptions::precondition)
// on the gripper's cloth corner (assets/scenes/gripper_cloth_corner.json, its stored targets, at
// 1 g and 0.1 g a particle) and the rubber block, double, one thread: a row per run
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "engine/grad/rollout.h"
#include "engine/model/builder.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/solver.h"

using namespace adj;

namespace {

template <class S = float>
ModelT<S> rubber_block() {
  ModelBuilderT<S> b;
  SoftMaterial<S> mat;
  const S E = S(1e6), nu = S(0.3);
  mat.density = 1000;
  mat.mu = E / (2 * (1 + nu));
  mat.lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
  mat.kd = 1;
  b.add_soft_grid({0, S(0.01), 0}, 5, 5, 5, S(0.02), {}, mat, false, S(0.01));
  b.add_ground(0);
  b.settings().contact_ke = S(1e4);
  b.settings().contact_kd = 10;
  b.settings().contact_kf = 100;
  b.settings().contact_mu = S(0.5);
  auto r = b.finalize();
  if (!r) std::fprintf(stderr, "%s\n", r.status().message().c_str()), std::exit(1);
  return r.value();
}

ModelT<float> soft_block() {
  ModelBuilderT<float> b;
  SoftMaterial<float> mat;
  mat.density = 500;
  mat.mu = 2500;
  mat.lambda = 7500;
  mat.kd = 1;
  b.add_soft_grid({0, 0.01f, 0}, 3, 3, 3, 0.03f, {}, mat, false, 0.01f);
  b.add_ground(0);  // the default contact law (ke 1e3, kd 1, kf 1, mu 0.5)
  auto r = b.finalize();
  if (!r) std::fprintf(stderr, "%s\n", r.status().message().c_str()), std::exit(1);
  return r.value();
}

struct Run {
  bool stable = true;
  double wall = 0, speed = 0, drift = 0, newton = 0, krylov = 0, worst = 0;
};

vec3<double> centre(const StateT<float>& s) {
  vec3<double> c;
  for (const vec3<float>& q : s.particle_q) c += vec3<double>(q.x, q.y, q.z);
  return c * (1.0 / double(s.particle_q.size()));
}

Run run(ModelT<float> m, bool implicit, int substeps, double seconds) {
  m.integrator = implicit ? INTEGRATOR_IMPLICIT : INTEGRATOR_EXPLICIT;
  SolverT<float> solver(SolverOptions{.substeps = substeps, .thread_count = 1});
  StateT<float> s = m.make_state(), next;
  const ControlT<float> c = m.make_control();
  const vec3<double> c0 = centre(s);
  const int frames = int(std::lround(seconds * 60));
  Run r;
  const auto t0 = std::chrono::steady_clock::now();
  for (int f = 0; f < frames && r.stable; ++f) {
    r.stable = bool(solver.step(m, s, next, c, 1.0f / 60, nullptr));
    std::swap(s, next);
  }
  r.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.stable) return r;
  for (const vec3<float>& v : s.particle_qd) r.speed = std::max(r.speed, double(length(v)));
  const vec3<double> d = centre(s) - c0;
  r.drift = std::sqrt(d.x * d.x + d.z * d.z);
  r.stable = r.speed < 10;
  const ImplicitStats& st = solver.implicit_stats();
  if (st.substeps > 0) {
    r.newton = double(st.newton) / double(st.substeps);
    r.krylov = double(st.krylov) / double(st.substeps);
    r.worst = st.worst_residual;
  }
  return r;
}

void row(const char* scene, const ModelT<float>& m, bool implicit, int substeps, double seconds) {
  const Run r = run(m, implicit, substeps, seconds);
  std::printf("| %s | %s | %d | ", scene, implicit ? "implicit" : "explicit", substeps);
  if (!r.stable)
    std::printf("blows up | %.2f | - | - | - |\n", r.wall);
  else if (!implicit)
    std::printf("yes | %.2f | %.2g | %.2g | - |\n", r.wall, r.speed, r.drift * 100);
  else
    std::printf("yes | %.2f | %.2g | %.2g | %.1f / %.0f / %.1e |\n", r.wall, r.speed, r.drift * 100, r.newton, r.krylov,
                r.worst);
  std::fflush(stdout);
}

// one rollout forward (keeping every state) and backward from a loss on the first particle's height
// at the end, without or with the preconditioner: a row of the --precond table
void precond_row(const char* scene, const ModelT<double>& m, const std::vector<ControlT<double>>& ctl, double dt,
                 bool precondition) {
  RolloutOptions<double> o;
  o.steps = int(ctl.size());
  o.dt = dt;
  o.checkpoint_every = 1;
  o.thread_count = 1;
  o.implicit.precondition = precondition;
  RolloutT<double> r(m, o);
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  Status st = r.forward(m.make_state(), ctl);
  const auto t1 = std::chrono::steady_clock::now();
  const std::clock_t c1 = std::clock();
  const ImplicitStats fwd = r.implicit_stats();
  if (st)
    st = r.backward([&](int t, const StateT<double>&, StateT<double>& adj) {
      if (t == o.steps) adj.particle_q[0].y += 1;
    });
  const auto t2 = std::chrono::steady_clock::now();
  const std::clock_t c2 = std::clock();
  if (!st) std::fprintf(stderr, "%s: %s\n", scene, st.message().c_str()), std::exit(1);
  const ImplicitStats& all = r.implicit_stats();
  const double n = double(fwd.substeps), ms = 1e3 / n, cpu = 1e3 / n / CLOCKS_PER_SEC;
  auto wall = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::printf("| %s | %s | %lld / %lld | %.1f | %.0f | %.0f | %.1f (%.1f) | %.1f (%.1f) | %.1e |\n", scene,
              precondition ? "block Jacobi" : "none", fwd.unconverged, fwd.substeps, double(fwd.newton) / n,
              double(fwd.krylov) / n, double(all.krylov) / n, double(c1 - c0) * cpu, wall(t0, t1) * ms,
              double(c2 - c0) * cpu, wall(t0, t2) * ms, fwd.worst_residual);
  std::fflush(stdout);
}

// assets/scenes/gripper_cloth_corner.json (its cloth's particles of `mass` kg), its task's stored
// per-frame targets as controls
void corner_rows(const char* name, double mass, int frames) {
  const std::string path = std::string(ADJ_ASSET_SCENES) + "/gripper_cloth_corner.json";
  Result<scene::Scene> doc = scene::load_scene(path);
  if (!doc) std::fprintf(stderr, "%s\n", doc.status().message().c_str()), std::exit(1);
  for (scene::Object& obj : doc->objects)
    if (obj.kind == scene::ObjectKind::cloth) obj.cloth.particle_mass = mass;
  Result<scene::CompiledSceneT<double>> cs = scene::compile<double>(*doc, ADJ_ASSET_SCENES);
  if (!cs) std::fprintf(stderr, "%s\n", cs.status().message().c_str()), std::exit(1);
  const ModelT<double>& m = cs->model;
  const std::vector<double>& v = doc->tasks.at(0).values.at(0).values;
  std::vector<ControlT<double>> ctl(std::min(v.size() / 3, std::size_t(frames)), m.make_control());
  for (std::size_t t = 0; t < ctl.size(); ++t)
    for (std::size_t j = 0; j < 3; ++j) ctl[t].joint_act[j] = v[3 * t + j];
  for (bool p : {false, true}) precond_row(name, m, ctl, cs->frame_dt, p);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--smoke") == 0) {
    const Run r = run(rubber_block(), true, 1, 0.1);
    std::printf("implicit rubber block, 0.1 s: %s, %.3f s\n", r.stable ? "stable" : "unstable", r.wall);
    return r.stable ? 0 : 1;
  }
  if (argc > 1 && std::strcmp(argv[1], "--precond") == 0) {
    std::printf(
        "| scene | preconditioner | substeps above tolerance | Newton its a substep | GMRES products a substep, "
        "forward | forward + backward | CPU (wall) ms a substep, forward | forward + backward | largest final "
        "residual |\n"
        "|---|---|---|---|---|---|---|---|---|\n");
    // frames: 120 unless given (the corner task's horizon; 2 s of the rubber block)
    const int frames = argc > 2 ? std::atoi(argv[2]) : 120;
    corner_rows("cloth corner, 0.1 g", 1e-4, frames);
    corner_rows("cloth corner, 1 g", 1e-3, frames);
    ModelT<double> rubber = rubber_block<double>();
    rubber.integrator = INTEGRATOR_IMPLICIT;
    const std::vector<ControlT<double>> rest(std::size_t(frames), rubber.make_control());
    for (bool p : {false, true}) precond_row("rubber 10 cm, E = 1 MPa", rubber, rest, 1.0 / 60, p);
    return 0;
  }
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::printf(
      "| scene | integrator | substeps | stable | wall [s] for 2 s | largest speed at 2 s [m/s] | "
      "sideways drift [cm] | Newton its / GMRES products a substep / largest final residual |\n"
      "|---|---|---|---|---|---|---|---|\n");
  const ModelT<float> rubber = rubber_block(), soft = soft_block();
  for (int n : {1, 2, 4}) row("rubber 10 cm", rubber, true, n, 2);
  for (int n : quick ? std::vector<int>{256} : std::vector<int>{256, 512, 1024})
    row("rubber 10 cm", rubber, false, n, 2);
  for (int n : {1, 4, 16}) row("soft 9 cm", soft, true, n, 2);
  for (int n : {16, 64}) row("soft 9 cm", soft, false, n, 2);
  return 0;
}
