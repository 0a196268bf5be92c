// what the implicit particle integrator (engine/solver/implicit.h) buys on stiff soft bodies: a
// 10 cm rubber block (E = 1 MPa, nu 0.3, 2 cm cells, 216 particles) and a 9 cm soft block
// (3x3x3 cells, density 500, mu 2500, lambda 7500) resting on the ground for 2 s of 1/60 s
// frames, explicit against implicit at several substep counts, float, one thread. Prints one
// markdown table row per run: stable?, wall time, the largest particle speed at the end and
// the centre's sideways drift. Both rest on the ground (bottom particles, radius 1 cm, touching
// it) under the ground contact stated below. --smoke: the implicit rubber block for 0.1 s (ctest).
// --precond: GMRES without a preconditioner, with block Jacobi and with block ILU(0)
// (ImplicitOptions::preconditioner)
// on the gripper's cloth corner (assets/scenes/gripper_cloth_corner.json, its stored targets, at
// 1 g and 0.1 g a particle) and the rubber block, double, one thread: a row per run
// --accuracy: the cost of equal accuracy. Four scenes (the rubber and soft blocks and a 20 cm
// cloth of stretch stiffness 1e4 N/m dropped 2 cm onto the ground, the cloth also hanging from
// one edge) run 1 s in float at doubling substep counts, explicit and implicit; each final state
// is compared with an explicit run at 1000 substeps (double), and the fewest substeps within
// 1 mm of it are timed forward and forward + backward (CPU seconds, one thread): a row per run,
// then the ratio of the two integrators at their fewest substeps (--accuracy K: the K-th scene only)
// --settle: the soft block dropped 2 cm, its error against time (the reference still rings at 1 s;
// backward Euler's numerical damping has stopped the ringing, and both come to the same rest)
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

template <class S>
ModelT<S> finalized(ModelBuilderT<S>& b) {
  auto r = b.finalize();
  if (!r) std::fprintf(stderr, "%s\n", r.status().message().c_str()), std::exit(1);
  return r.value();
}

// lift: the block's start above resting on the ground
template <class S = float>
ModelT<S> rubber_block(S lift = 0) {
  ModelBuilderT<S> b;
  SoftMaterial<S> mat;
  const S E = S(1e6), nu = S(0.3);
  mat.density = 1000;
  mat.mu = E / (2 * (1 + nu));
  mat.lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
  mat.kd = 1;
  b.add_soft_grid({0, S(0.01) + lift, 0}, 5, 5, 5, S(0.02), {}, mat, false, S(0.01));
  b.add_ground(0);
  b.settings().contact_ke = S(1e4);
  b.settings().contact_kd = 10;
  b.settings().contact_kf = 100;
  b.settings().contact_mu = S(0.5);
  return finalized(b);
}

template <class S = float>
ModelT<S> soft_block(S lift = 0) {
  ModelBuilderT<S> b;
  SoftMaterial<S> mat;
  mat.density = 500;
  mat.mu = 2500;
  mat.lambda = 7500;
  mat.kd = 1;
  b.add_soft_grid({0, S(0.01) + lift, 0}, 3, 3, 3, S(0.03), {}, mat, false, S(0.01));
  b.add_ground(0);  // the default contact law (ke 1e3, kd 1, kf 1, mu 0.5)
  return finalized(b);
}

// a 20 cm square of cloth, 2 cm cells (121 particles of 0.1 g: 0.3 kg/m^2, a shirt's cloth),
// stretch and area stiffness 1e4 N/m, lying flat `height` above the ground (hanging: no ground,
// the edge x = 0 pinned, so it swings down)
template <class S>
ModelT<S> cloth_square(S height, bool hanging) {
  ModelBuilderT<S> b;
  ClothMaterial<S> mat;
  mat.tri_ke = S(1e4);
  mat.tri_ka = S(1e4);
  const mat33<S> flat = mat33<S>::from_cols({1, 0, 0}, {0, 0, 1}, {0, -1, 0});  // local y -> world z
  b.add_cloth_grid({S(-0.1), height, S(-0.1)}, flat, 10, 10, S(0.02), S(1e-4), {}, mat, hanging, S(0.005));
  if (!hanging) b.add_ground(0);
  return finalized(b);
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

constexpr ImplicitPreconditioner preconditioners[] = {
    ImplicitPreconditioner::none, ImplicitPreconditioner::block_jacobi, ImplicitPreconditioner::block_ilu};
const char* precond_name(ImplicitPreconditioner p) {
  return p == ImplicitPreconditioner::none           ? "none"
         : p == ImplicitPreconditioner::block_jacobi ? "block Jacobi"
                                                     : "block ILU(0)";
}

// one rollout forward (keeping every state) and backward from a loss on the first particle's height
// at the end, under preconditioner p: a row of the --precond table
void precond_row(const char* scene, const ModelT<double>& m, const std::vector<ControlT<double>>& ctl, double dt,
                 ImplicitPreconditioner p) {
  RolloutOptions<double> o;
  o.steps = int(ctl.size());
  o.dt = dt;
  o.checkpoint_every = 1;
  o.thread_count = 1;
  o.implicit.preconditioner = p;
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
              precond_name(p), fwd.unconverged, fwd.substeps, double(fwd.newton) / n, double(fwd.krylov) / n,
              double(all.krylov) / n, double(c1 - c0) * cpu, wall(t0, t1) * ms, double(c2 - c0) * cpu,
              wall(t0, t2) * ms, fwd.worst_residual);
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
  for (ImplicitPreconditioner p : preconditioners) precond_row(name, m, ctl, cs->frame_dt, p);
}

// one run of `frames` frames of 1/60 s through a rollout keeping every frame's state: the final
// positions (in double), and the CPU seconds of the forward pass and, when `backward`, of the
// forward and backward passes (the loss: every particle's final height)
struct Timed {
  bool ok = true;
  std::vector<vec3<double>> q;
  double forward = 0, both = -1;
  ImplicitStats stats;  // of the forward pass
};

template <class S>
Timed timed_run(ModelT<S> m, bool implicit, int substeps, int frames, bool backward, double tol = 0) {
  m.integrator = implicit ? INTEGRATOR_IMPLICIT : INTEGRATOR_EXPLICIT;
  RolloutOptions<S> o;
  o.steps = frames;
  o.dt = S(1.0 / 60.0);
  o.substeps = substeps;
  o.checkpoint_every = 1;
  o.thread_count = 1;
  o.implicit.tol = tol;
  RolloutT<S> r(m, o);
  Timed t;
  const std::clock_t c0 = std::clock();
  t.ok = bool(r.forward(m.make_state(), {}, {}, backward));
  const std::clock_t c1 = std::clock();
  t.forward = double(c1 - c0) / CLOCKS_PER_SEC;
  t.stats = r.implicit_stats();
  if (!t.ok) return t;
  for (const vec3<S>& q : r.final_state().particle_q) t.q.push_back(vec3<double>(q.x, q.y, q.z));
  for (const vec3<double>& q : t.q) t.ok = t.ok && std::isfinite(q.x + q.y + q.z);
  if (!backward || !t.ok) return t;
  t.ok = bool(r.backward([&](int k, const StateT<S>&, StateT<S>& adj) {
    if (k == frames)
      for (vec3<S>& a : adj.particle_q) a.y += 1;
  }));
  t.both = double(std::clock() - c0) / CLOCKS_PER_SEC;
  return t;
}

// the largest particle distance [m] between two final states
double state_error(const std::vector<vec3<double>>& a, const std::vector<vec3<double>>& b) {
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, length(a[i] - b[i]));
  return e;
}

// the fewest substeps (doubling from `first`, up to `last`) whose final state lies within 1 mm of
// the reference, a row per run tried (implicit rows: Newton iterations and GMRES products a
// substep, and how many substeps stopped above the tolerance); that run timed forward and
// backward. Returns it (or a failed Timed when none does)
template <class S>
Timed fewest_within(const char* scene, const ModelT<S>& m, bool implicit, int first, int last, int frames,
                    const std::vector<vec3<double>>& ref, double tol = 0) {
  char kind[64] = "explicit, float";
  if (implicit)
    std::snprintf(kind, sizeof kind, "implicit, %s, tol %.0e", sizeof(S) == 4 ? "float" : "double",
                  tol > 0          ? tol
                  : sizeof(S) == 4 ? 1e-5
                                   : 1e-11);
  for (int n = first; n <= last; n *= 2) {
    const Timed t = timed_run(m, implicit, n, frames, false, tol);
    const double err = t.ok ? state_error(t.q, ref) : 0;
    std::printf("| %s | %s | %d | ", scene, kind, n);
    if (!t.ok) {
      std::printf("blows up | - | - | - |\n");
      continue;
    }
    const ImplicitStats& st = t.stats;
    char its[96] = "-";
    if (st.substeps > 0)
      std::snprintf(its, sizeof its, "%.1f / %.0f / %lld (%lld at the rounding floor)",
                    double(st.newton) / double(st.substeps), double(st.krylov) / double(st.substeps), st.unconverged,
                    st.at_floor);
    if (err >= 1e-3) {
      std::printf("%.3g | %.3f | - | %s |\n", err * 1e3, t.forward, its);
      continue;
    }
    const Timed both = timed_run(m, implicit, n, frames, true, tol);
    std::printf("%.3g | %.3f | %.3f | %s |\n", err * 1e3, both.forward, both.both, its);
    std::fflush(stdout);
    return both;
  }
  return Timed{.ok = false};
}

// the --accuracy scenes: float and double models of each
struct Case {
  const char* name;
  ModelT<float> f;
  ModelT<double> d;
};
std::vector<Case> accuracy_cases() {
  return {
      {"rubber 10 cm, dropped 2 cm", rubber_block<float>(0.02f), rubber_block<double>(0.02)},
      {"soft 9 cm, dropped 2 cm", soft_block<float>(0.02f), soft_block<double>(0.02)},
      {"cloth 20 cm, dropped 2 cm", cloth_square<float>(0.025f, false), cloth_square<double>(0.025, false)},
      {"cloth 20 cm, hanging from an edge", cloth_square<float>(0.5f, true), cloth_square<double>(0.5, true)},
  };
}

void accuracy_profile(int k) {
  const std::vector<Case> cases = accuracy_cases();
  if (k < 0 || k >= int(cases.size())) {
    std::fprintf(stderr, "--profile K: K is an --accuracy scene, 0-%d\n", int(cases.size()) - 1);
    return;
  }
  const Case& c = cases[std::size_t(k)];
  const Timed t = timed_run(c.d, true, 1, 60, true, 1e-6);
  std::printf("%s: CPU s forward %.3f, forward + backward %.3f, Newton %.1f / GMRES %.0f a substep\n", c.name,
              t.forward, t.both, double(t.stats.newton) / double(t.stats.substeps),
              double(t.stats.krylov) / double(t.stats.substeps));
}

// only: the case to run (0-3), -1: all
void accuracy_rows(int only) {
  std::printf(
      "| scene | integrator | substeps | final-state error [mm] | CPU s forward | CPU s forward + backward | Newton "
      "its / GMRES products a substep / substeps above tolerance (of them at the rounding floor) |\n"
      "|---|---|---|---|---|---|---|\n");
  const std::vector<Case> cases = accuracy_cases();
  const int frames = 60;
  std::vector<std::string> ratios;
  for (const Case& c : cases) {
    if (only >= 0 && &c != &cases[std::size_t(only)]) continue;
    const Timed ref = timed_run(c.d, false, 1000, frames, false);
    if (!ref.ok) std::fprintf(stderr, "%s: the 1000-substep reference failed\n", c.name), std::exit(1);
    const Timed ex = fewest_within(c.name, c.f, false, 16, 1024, frames, ref.q);
    // the implicit step at its default tolerance of the step's momentum (float 1e-5, double
    // 1e-11: ImplicitOptions::tol) and at looser ones that still hold 1 mm
    struct Config {
      bool dbl;
      double tol;
    };
    for (const Config k : {Config{false, 0}, Config{false, 1e-4}, Config{true, 0}, Config{true, 1e-6}}) {
      const Timed im = k.dbl ? fewest_within(c.name, c.d, true, 1, 256, frames, ref.q, k.tol)
                             : fewest_within(c.name, c.f, true, 1, 256, frames, ref.q, k.tol);
      char line[256];
      const double tol = k.tol > 0 ? k.tol : k.dbl ? 1e-11 : 1e-5;
      const char* p = k.dbl ? "double" : "float";
      if (ex.ok && im.ok)
        std::snprintf(line, sizeof line, "| %s | %s, tol %.0e | %.3gx | %.3gx |", c.name, p, tol,
                      ex.forward / im.forward, ex.both / im.both);
      else
        std::snprintf(line, sizeof line, "| %s | %s, tol %.0e | %s | |", c.name, p, tol,
                      ex.ok ? "never within 1 mm at 256 substeps" : "explicit never within 1 mm");
      ratios.push_back(line);
    }
  }
  std::printf(
      "\n| scene | implicit in | explicit / implicit CPU time, forward | forward + backward |\n|---|---|---:|---:|\n");
  for (const std::string& l : ratios) std::printf("%s\n", l.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--settle") == 0) {
    // the soft block's error against time: the 1000-substep explicit reference and the implicit
    // step at one substep (double, tol 1e-6) after F frames
    const Case c = accuracy_cases()[1];
    std::printf(
        "| frames | reference com height [mm] | implicit com height [mm] | difference [mm] | largest particle distance "
        "[mm] |\n"
        "|---:|---:|---:|---:|---:|\n");
    for (int f : {30, 45, 55, 60, 65, 90, 120, 180}) {
      const Timed e = timed_run(c.d, false, 1000, f, false);
      const Timed i = timed_run(c.d, true, 1, f, false, 1e-6);
      double ye = 0, yi = 0;
      for (const vec3<double>& q : e.q) ye += q.y / double(e.q.size());
      for (const vec3<double>& q : i.q) yi += q.y / double(i.q.size());
      std::printf("| %d | %.3f | %.3f | %.3f | %.3f |\n", f, ye * 1e3, yi * 1e3, (yi - ye) * 1e3,
                  state_error(e.q, i.q) * 1e3);
    }
    return 0;
  }
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
    for (ImplicitPreconditioner p : preconditioners) precond_row("rubber 10 cm, E = 1 MPa", rubber, rest, 1.0 / 60, p);
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[1], "--profile") == 0) {
    // the K-th --accuracy scene's implicit run in double at one substep and tolerance 1e-6, forward
    // and backward, alone (for a profiler)
    accuracy_profile(std::atoi(argv[2]));
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--accuracy") == 0) {
    accuracy_rows(argc > 2 ? std::atoi(argv[2]) : -1);
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
