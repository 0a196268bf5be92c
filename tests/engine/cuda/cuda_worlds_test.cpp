// CudaSolverT's worlds (engine/cuda/cuda.h) against SolverT over WorldsT on the CPU, one world
// at a time.
// - bodies-only worlds of one model: ONE launch of the rigid batch kernel a step (on the host its
//   functors equal SolverT bit for bit: tests/engine/articulation/batch_test.cpp): cartpole x1024
//   (4 substeps) and the walker on the ground x64 (8 substeps), 20 steps forward from perturbed
//   states under varying controls, then every step's adjoint; states within 1e-4 and adjoints
//   (state, control, each world's body-mass gradient) within 1e-3 of the largest magnitude
//   (float; nvcc contracts into FMAs, so not bit-equal), and the device adjoint run twice
//   bit-identical (no atomics); the locomotion Ant's scene over 256 worlds the same way.
// - randomized worlds of a coupled scene (assets/scenes/worlds_push_soft.json, 3 worlds: the arm
//   pushing the soft ball, each world its own masses and contact): the per-world path, states
//   within 2e-3 and adjoints within 2e-2 per array (cuda_coupled_test.cpp's float tolerances).
// - states or controls that do not match the worlds or the model: an error that says so.
// Exits 77 (ctest: Skipped) without a device.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/articulation/robots.h"
#include "engine/cuda/cuda.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/worlds.h"

using namespace adj;

namespace {

constexpr int kSkip = 77;

// max |a - b| / max(|a|, tiny)
double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 1e30;
  double num = 0, den = 1e-12;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(double(a[i]) - double(b[i])));
    den = std::max(den, std::fabs(double(a[i])));
  }
  return num / den;
}

// one array of every world, concatenated in world order
template <class T, class F>
std::vector<float> packed(const std::vector<T>& worlds, F field) {
  std::vector<float> v;
  for (const T& x : worlds)
    for (const auto& e : field(x)) {
      if constexpr (std::is_same_v<std::decay_t<decltype(e)>, vec3<float>>)
        v.insert(v.end(), {e.x, e.y, e.z});
      else
        v.push_back(float(e));
    }
  return v;
}

// envs identical worlds of a bodies-only scene from s0 (velocities perturbed per world)
bool run_model(const char* name, const ModelT<float>& scene, const StateT<float>& s0, int envs, int substeps, int steps,
               float dt = 1.0f / 60.0f) {
  const RigidModelT<float>& m = scene.rigid;
  const int na = m.actuator_count();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<StateT<float>> qc(std::size_t(envs), s0);  // the CPU's own trajectory
  for (StateT<float>& s : qc)
    for (float& v : s.joint_qd) v = 0.3f * u(rng);
  CudaSolverT<float> gpu({.substeps = substeps});
  Status st = gpu.upload_worlds(scene, envs);
  if (!st) return std::printf("%s: %s\n", name, st.message().c_str()), false;
  if (!gpu.worlds_batched() || gpu.world_count() != envs)
    return std::printf("%s: bodies-only worlds did not take the one-launch batch\n", name), false;
  Result<WorldsT<float>> made = WorldsT<float>::create(scene, {.world_count = envs, .solver = {.substeps = substeps}});
  if (!made) return std::printf("%s: %s\n", name, made.status().message().c_str()), false;
  WorldsT<float>& cpu = made.value();
  double worst_fwd = 0, worst_adj = 0;
  bool ok = true;
  std::vector<ControlT<float>> control(std::size_t(envs), m.make_control());
  for (int t = 0; t < steps && ok; ++t) {
    for (int e = 0; e < envs; ++e)
      for (int a = 0; a < na; ++a)
        control[std::size_t(e)].joint_act[a] = 0.5f * std::sin(0.1f * t + 0.7f * a + 0.01f * e);
    std::vector<StateT<float>> out_gpu, out_cpu(qc.size()), adj_out(qc.size()), ag, ag2, ac(qc.size());
    st = gpu.step_worlds(qc, out_gpu, control, dt);
    if (!st) return std::printf("%s step %d: %s\n", name, t, st.message().c_str()), false;
    for (std::size_t e = 0; e < qc.size(); ++e) {
      adj_out[e] = zero_like(qc[e]);
      for (float& x : adj_out[e].joint_q) x = u(rng);
      for (float& x : adj_out[e].joint_qd) x = u(rng);
    }
    // fresh accumulators each call: the adjoints of this step alone
    std::vector<ControlT<float>> cg(qc.size(), m.make_control()), cg2 = cg, cc = cg;
    std::vector<ModelGradT<float>> gg(qc.size(), scene.make_grad()), gg2 = gg, gc = gg;
    st = gpu.step_adjoint_worlds(qc, control, dt, adj_out, ag, cg, gg);
    if (!st) return std::printf("%s adjoint %d: %s\n", name, t, st.message().c_str()), false;
    st = gpu.step_adjoint_worlds(qc, control, dt, adj_out, ag2, cg2, gg2);
    if (!st) return std::printf("%s adjoint %d: %s\n", name, t, st.message().c_str()), false;
    auto jq = [](const StateT<float>& s) { return s.joint_q; };
    auto jqd = [](const StateT<float>& s) { return s.joint_qd; };
    auto act = [](const ControlT<float>& c) { return c.joint_act; };
    auto mass = [](const ModelGradT<float>& g) { return g.rigid.body_mass; };
    if (packed(ag, jq) != packed(ag2, jq) || packed(ag, jqd) != packed(ag2, jqd) ||
        packed(cg, act) != packed(cg2, act) || packed(gg, mass) != packed(gg2, mass)) {
      std::printf("%s step %d: two device runs of the adjoint differ\n", name, t);
      ok = false;
    }
    st = cpu.run([&](int e, SolverT<float>& solver) {
      const std::size_t w = std::size_t(e);
      if (Status s1 = solver.step(cpu.model(e), qc[w], out_cpu[w], control[w], dt); !s1) return s1;
      return solver.step_adjoint(cpu.model(e), qc[w], control[w], dt, adj_out[w], ac[w], cc[w], gc[w]);
    });
    if (!st) return std::printf("%s: cpu step %d: %s\n", name, t, st.message().c_str()), false;
    const double fwd = std::max(rel_diff(packed(out_cpu, jq), packed(out_gpu, jq)),
                                rel_diff(packed(out_cpu, jqd), packed(out_gpu, jqd)));
    const double adj =
        std::max({rel_diff(packed(ac, jq), packed(ag, jq)), rel_diff(packed(ac, jqd), packed(ag, jqd)),
                  rel_diff(packed(cc, act), packed(cg, act)), rel_diff(packed(gc, mass), packed(gg, mass))});
    worst_fwd = std::max(worst_fwd, fwd);
    worst_adj = std::max(worst_adj, adj);
    if (!(fwd < 1e-4) || !(adj < 1e-3)) {
      std::printf("%s step %d: CPU/CUDA differ: states %.3g, adjoints %.3g\n", name, t, fwd, adj);
      ok = false;
    }
    qc = out_cpu;  // both continue from the CPU's states (one step's error at a time)
  }
  std::printf("%s x%d: %d steps, worst relative difference: states %.3g, adjoints %.3g; %s\n", name, envs, steps,
              worst_fwd, worst_adj, ok ? "ok" : "FAILED");
  return ok;
}

bool run(const char* name, const RigidBuilder& b, float height, int envs, int substeps, int steps) {
  Result<RigidModelT<float>> r = b.finalize<float>();
  if (!r) return std::printf("%s: %s\n", name, r.status().message().c_str()), false;
  ModelT<float> scene;
  scene.rigid = r.value();
  StateT<float> s0 = scene.make_state();
  if (r->joint_type[0] == RIGID_JOINT_FREE) s0.joint_q[1] = height;
  return run_model(name, scene, s0, envs, substeps, steps);
}

Result<scene::CompiledSceneT<float>> asset(const std::string& file) {
  const std::string path = std::string(ADJ_ASSET_SCENES) + "/" + file;
  auto doc = scene::load_scene(path);
  if (!doc) return doc.status();
  return scene::compile<float>(*doc, path.substr(0, path.find_last_of('/')));
}

// the locomotion benchmark's Ant (assets/scenes/locomotion/ant.json: 16 substeps, the depth-damped
// ground) over 256 worlds, as adjoint bench worlds --cuda runs it
bool run_ant(int envs, int steps) {
  auto cs = asset("locomotion/ant.json");
  if (!cs) return std::printf("ant: %s\n", cs.status().message().c_str()), false;
  return run_model("ant (locomotion/ant.json) worlds", cs->model, cs->model.make_state(), envs, cs->substeps, steps,
                   cs->frame_dt);
}

// one array of every world within tol (max |a - b| / max |a|); the worst difference kept
bool within(const char* what, const std::vector<float>& a, const std::vector<float>& b, double tol, double& worst) {
  const double d = rel_diff(a, b);
  worst = std::max(worst, d);
  if (d < tol) return true;
  std::printf("  %s: relative difference %.3g (tolerance %.3g)\n", what, d, tol);
  return false;
}

// randomized worlds of the coupled push scene through the per-world path, against WorldsT
bool run_randomized_coupled(int envs, int steps) {
  const char* name = "worlds_push_soft.json (randomized, per-world path)";
  auto cs = asset("worlds_push_soft.json");
  if (!cs) return std::printf("%s: %s\n", name, cs.status().message().c_str()), false;
  if (!cs->randomize.active()) return std::printf("%s: the scene no longer randomizes its worlds\n", name), false;
  Result<WorldsT<float>> made = WorldsT<float>::create(
      cs->model, {.world_count = envs, .seed = 7, .randomize = cs->randomize, .solver = {.substeps = cs->substeps}});
  if (!made) return std::printf("%s: %s\n", name, made.status().message().c_str()), false;
  WorldsT<float>& cpu = made.value();
  std::vector<const ModelT<float>*> models;
  for (int w = 0; w < envs; ++w) models.push_back(&cpu.model(w));
  CudaSolverT<float> gpu({.substeps = cs->substeps});
  if (Status st = gpu.upload_worlds(models); !st) return std::printf("%s: %s\n", name, st.message().c_str()), false;
  if (gpu.worlds_batched() || gpu.world_count() != envs)
    return std::printf("%s: particle worlds must take the per-world path\n", name), false;
  const float dt = cs->frame_dt;
  std::vector<StateT<float>> s(static_cast<std::size_t>(envs));
  std::vector<ControlT<float>> control(static_cast<std::size_t>(envs));
  for (int w = 0; w < envs; ++w) s[std::size_t(w)] = cpu.model(w).make_state();
  auto pq = [](const StateT<float>& x) { return x.particle_q; };
  auto pqd = [](const StateT<float>& x) { return x.particle_qd; };
  auto jq = [](const StateT<float>& x) { return x.joint_q; };
  auto jqd = [](const StateT<float>& x) { return x.joint_qd; };
  auto act = [](const ControlT<float>& c) { return c.joint_act; };
  auto pmass = [](const ModelGradT<float>& g) { return g.particle_mass; };
  auto bmass = [](const ModelGradT<float>& g) { return g.rigid.body_mass; };
  double worst_fwd = 0, worst_adj = 0;
  bool ok = true;
  for (int t = 0; t < steps && ok; ++t) {
    for (int w = 0; w < envs; ++w) {  // the arm's PD targets swept toward the ball
      ControlT<float>& c = control[std::size_t(w)];
      c = cpu.model(w).make_hold_control();
      for (std::size_t k = 0; k < c.joint_act.size(); ++k) c.joint_act[k] += 0.02f * float(t) * (k == 0 ? -1.0f : 1.0f);
    }
    std::vector<StateT<float>> out_gpu, out_cpu(s.size()), adj_out(s.size()), ag, ac(s.size());
    std::vector<ControlT<float>> cg, cc(s.size());
    std::vector<ModelGradT<float>> gg, gc(s.size());
    for (int w = 0; w < envs; ++w) {
      const std::size_t i = std::size_t(w);
      cg.push_back(cpu.model(w).make_control());
      cc[i] = cpu.model(w).make_control();
      gg.push_back(cpu.model(w).make_grad());
      gc[i] = cpu.model(w).make_grad();
      adj_out[i] = zero_like(s[i]);
      for (auto& p : adj_out[i].particle_q) p = {1.0f, 0.5f, -0.25f};
      for (float& v : adj_out[i].joint_qd) v = 0.3f;
    }
    Status st = gpu.step_worlds(s, out_gpu, control, dt);
    if (st) st = gpu.step_adjoint_worlds(s, control, dt, adj_out, ag, cg, gg);
    if (!st) return std::printf("%s step %d: %s\n", name, t, st.message().c_str()), false;
    st = cpu.run([&](int e, SolverT<float>& solver) {
      const std::size_t w = std::size_t(e);
      if (Status s1 = solver.step(cpu.model(e), s[w], out_cpu[w], control[w], dt); !s1) return s1;
      return solver.step_adjoint(cpu.model(e), s[w], control[w], dt, adj_out[w], ac[w], cc[w], gc[w]);
    });
    if (!st) return std::printf("%s: cpu step %d: %s\n", name, t, st.message().c_str()), false;
    bool step_ok = within("particle_q", packed(out_cpu, pq), packed(out_gpu, pq), 2e-3, worst_fwd);
    step_ok = within("particle_qd", packed(out_cpu, pqd), packed(out_gpu, pqd), 2e-3, worst_fwd) && step_ok;
    step_ok = within("joint_q", packed(out_cpu, jq), packed(out_gpu, jq), 2e-3, worst_fwd) && step_ok;
    step_ok = within("joint_qd", packed(out_cpu, jqd), packed(out_gpu, jqd), 2e-3, worst_fwd) && step_ok;
    step_ok = within("adj particle_q", packed(ac, pq), packed(ag, pq), 2e-2, worst_adj) && step_ok;
    step_ok = within("adj joint_qd", packed(ac, jqd), packed(ag, jqd), 2e-2, worst_adj) && step_ok;
    step_ok = within("adj joint_act", packed(cc, act), packed(cg, act), 2e-2, worst_adj) && step_ok;
    step_ok = within("adj particle_mass", packed(gc, pmass), packed(gg, pmass), 2e-2, worst_adj) && step_ok;
    step_ok = within("adj body_mass", packed(gc, bmass), packed(gg, bmass), 2e-2, worst_adj) && step_ok;
    if (!step_ok) {
      std::printf("%s step %d: CPU/CUDA differ\n", name, t);
      ok = false;
    }
    s = out_cpu;
  }
  std::printf("%s x%d: %d steps, worst relative difference: states %.3g, adjoints %.3g; %s\n", name, envs, steps,
              worst_fwd, worst_adj, ok ? "ok" : "FAILED");
  return ok;
}

// states or controls that do not match the worlds or the model: an error that says so
bool bad_sizes() {
  Result<RigidModelT<float>> r = rigid_cartpole().finalize<float>();
  if (!r) return std::printf("bad sizes: %s\n", r.status().message().c_str()), false;
  ModelT<float> scene;
  scene.rigid = r.value();
  CudaSolverT<float> gpu({.substeps = 4});
  if (!gpu.upload_worlds(scene, 2)) return std::printf("bad sizes: upload failed\n"), false;
  std::vector<StateT<float>> s(2, scene.make_state()), out;
  std::vector<ControlT<float>> c(2, scene.make_control());
  c[1].joint_act.clear();  // world 1's control misses its actuator
  const Status st1 = gpu.step_worlds(s, out, c, 1.0f / 60.0f);
  const bool ok1 = !st1.is_ok() && st1.message().find("world 1") != std::string::npos &&
                   st1.message().find("do not match") != std::string::npos;
  c.pop_back();  // one control for two worlds
  const Status st2 = gpu.step_worlds(s, out, c, 1.0f / 60.0f);
  const bool ok2 = !st2.is_ok() && st2.message().find("for 2 worlds") != std::string::npos;
  std::printf("bad sizes: \"%s\", \"%s\"; %s\n", st1.message().c_str(), st2.message().c_str(),
              ok1 && ok2 ? "ok" : "FAILED");
  return ok1 && ok2;
}

}  // namespace

int main() {
  std::string reason;
  if (!cuda_available(&reason)) {
    std::printf("SKIPPED: no CUDA device (%s)\n", reason.c_str());
    return kSkip;
  }
  bool ok = run("cartpole", rigid_cartpole(), 0.0f, 1024, 4, 20);
  ok = run("walker", rigid_quadruped(), 0.42f, 64, 8, 20) && ok;
  ok = run_ant(256, 20) && ok;
  ok = run_randomized_coupled(3, 20) && ok;
  ok = bad_sizes() && ok;
  return ok ? 0 : 1;
}
