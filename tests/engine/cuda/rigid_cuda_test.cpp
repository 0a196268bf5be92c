// the rigid CUDA batch (engine/cuda/rigid_cuda.h) against SolverT over WorldsT on the CPU (the one
// step, one world at a time; on the host the batch's functors equal it bit for bit:
// tests/engine/articulation/batch_test.cpp): cartpole x1024
// (4 substeps) and the walker on the ground x64 (8 substeps), 20 steps forward from perturbed
// states under varying controls, then every step's adjoint; states within 1e-4 and gradients
// within 1e-3 of the largest magnitude (float; nvcc contracts into FMAs, so not bit-equal), and
// the device run twice bit-identical (no atomics); the locomotion Ant's scene over 256 worlds the
// same way; packed inputs of the wrong size are an error that says so. Exits 77 (ctest: skipped)
// without a device.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "engine/articulation/robots.h"
#include "engine/cuda/cuda.h"
#include "engine/cuda/rigid_cuda.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/worlds.h"

using namespace adj;

namespace {

constexpr int kSkip = 77;

// max |a - b| / max(|a|, tiny)
double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 1e-12;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(double(a[i]) - double(b[i])));
    den = std::max(den, std::fabs(double(a[i])));
  }
  return num / den;
}

// envs worlds of model m from s0 (velocities perturbed per world)
bool run_model(const char* name, const RigidModelT<float>& m, const StateT<float>& s0, int envs, int substeps,
               int steps, float dt = 1.0f / 60.0f) {
  const int nq = m.q_count(), nv = m.dof_count(), na = m.actuator_count();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> q(std::size_t(envs) * nq), qd(std::size_t(envs) * nv), act(std::size_t(envs) * na);
  for (int e = 0; e < envs; ++e) {
    for (int i = 0; i < nq; ++i) q[std::size_t(e) * nq + i] = s0.joint_q[i];
    for (int i = 0; i < nv; ++i) qd[std::size_t(e) * nv + i] = 0.3f * u(rng);
  }
  RigidBatchCuda gpu;
  Status st = gpu.upload(m, envs, substeps);
  if (!st) {
    std::printf("%s: %s\n", name, st.message().c_str());
    return false;
  }
  ModelT<float> scene;
  scene.rigid = m;
  Result<WorldsT<float>> made = WorldsT<float>::create(scene, {.world_count = envs, .solver = {.substeps = substeps}});
  if (!made) return std::printf("%s: %s\n", name, made.status().message().c_str()), false;
  WorldsT<float>& cpu = made.value();
  double worst_fwd = 0, worst_adj = 0;
  bool ok = true;
  std::vector<float> qc = q, qdc = qd;  // the CPU's own trajectory
  for (int t = 0; t < steps && ok; ++t) {
    for (int e = 0; e < envs; ++e)
      for (int a = 0; a < na; ++a) act[std::size_t(e) * na + a] = 0.5f * std::sin(0.1f * t + 0.7f * a + 0.01f * e);
    std::vector<float> q1, qd1, q1c(qc.size()), qd1c(qdc.size());
    st = gpu.step(qc, qdc, act, dt, q1, qd1);
    if (!st) return std::printf("%s step %d: %s\n", name, t, st.message().c_str()), false;
    std::vector<float> aq_out(q.size()), aqd_out(qd.size()), aq, aqd, aact, aq2, aqd2, aact2;
    for (float& x : aq_out) x = u(rng);
    for (float& x : aqd_out) x = u(rng);
    RigidModelGradT<float> g_gpu = m.make_grad(), g_gpu2 = m.make_grad();
    st = gpu.step_adjoint(qc, qdc, act, dt, aq_out, aqd_out, aq, aqd, aact, g_gpu);
    if (!st) return std::printf("%s adjoint %d: %s\n", name, t, st.message().c_str()), false;
    st = gpu.step_adjoint(qc, qdc, act, dt, aq_out, aqd_out, aq2, aqd2, aact2, g_gpu2);
    if (!st) return std::printf("%s adjoint %d: %s\n", name, t, st.message().c_str()), false;
    if (aq != aq2 || aqd != aqd2 || aact != aact2 || g_gpu.body_mass != g_gpu2.body_mass) {
      std::printf("%s step %d: two device runs of the adjoint differ\n", name, t);
      ok = false;
    }
    std::vector<float> aqc(aq.size()), aqdc(aqd.size()), aactc(aact.size());
    st = cpu.run([&](int e, SolverT<float>& solver) {
      StateT<float>& in = cpu.state(e);
      StateT<float> out, adj_out, adj_in;
      ControlT<float> c, adj_c = m.make_control();
      ModelGradT<float> adj_m = scene.make_grad();
      in.joint_q.assign(qc.begin() + e * nq, qc.begin() + (e + 1) * nq);
      in.joint_qd.assign(qdc.begin() + e * nv, qdc.begin() + (e + 1) * nv);
      c.joint_act.assign(act.begin() + e * na, act.begin() + (e + 1) * na);
      if (Status s1 = solver.step(cpu.model(e), in, out, c, dt); !s1) return s1;
      std::copy(out.joint_q.begin(), out.joint_q.end(), q1c.begin() + e * nq);
      std::copy(out.joint_qd.begin(), out.joint_qd.end(), qd1c.begin() + e * nv);
      adj_out.joint_q.assign(aq_out.begin() + e * nq, aq_out.begin() + (e + 1) * nq);
      adj_out.joint_qd.assign(aqd_out.begin() + e * nv, aqd_out.begin() + (e + 1) * nv);
      if (Status s1 = solver.step_adjoint(cpu.model(e), in, c, dt, adj_out, adj_in, adj_c, adj_m); !s1) return s1;
      std::copy(adj_in.joint_q.begin(), adj_in.joint_q.end(), aqc.begin() + e * nq);
      std::copy(adj_in.joint_qd.begin(), adj_in.joint_qd.end(), aqdc.begin() + e * nv);
      std::copy(adj_c.joint_act.begin(), adj_c.joint_act.end(), aactc.begin() + e * na);
      return Status::ok();
    });
    if (!st) return std::printf("%s: cpu step %d: %s\n", name, t, st.message().c_str()), false;
    const double fwd = std::max(rel_diff(q1c, q1), rel_diff(qd1c, qd1));
    const double adj = std::max({rel_diff(aqc, aq), rel_diff(aqdc, aqd), rel_diff(aactc, aact)});
    worst_fwd = std::max(worst_fwd, fwd);
    worst_adj = std::max(worst_adj, adj);
    if (!(fwd < 1e-4) || !(adj < 1e-3)) {
      std::printf("%s step %d: CPU/CUDA differ: states %.3g, adjoints %.3g\n", name, t, fwd, adj);
      ok = false;
    }
    qc = q1c;  // both continue from the CPU's states (one step's error at a time)
    qdc = qd1c;
  }
  std::printf("%s x%d: %d steps, worst relative difference: states %.3g, adjoints %.3g; %s\n", name, envs, steps,
              worst_fwd, worst_adj, ok ? "ok" : "FAILED");
  return ok;
}

bool run(const char* name, const RigidBuilder& b, float height, int envs, int substeps, int steps) {
  Result<RigidModelT<float>> r = b.finalize<float>();
  if (!r) {
    std::printf("%s: %s\n", name, r.status().message().c_str());
    return false;
  }
  StateT<float> s0 = r->make_state();
  if (r->joint_type[0] == RIGID_JOINT_FREE) s0.joint_q[1] = height;
  return run_model(name, r.value(), s0, envs, substeps, steps);
}

// the locomotion benchmark's Ant (assets/scenes/locomotion/ant.json: 16 substeps, the depth-damped
// ground) over 256 worlds, as adjoint bench worlds --cuda runs it
bool run_ant(int envs, int steps) {
  const std::string path = std::string(ADJ_ASSET_SCENES) + "/locomotion/ant.json";
  auto doc = scene::load_scene(path);
  if (!doc) return std::printf("ant: %s\n", doc.status().message().c_str()), false;
  auto cs = scene::compile<float>(*doc, std::string(ADJ_ASSET_SCENES) + "/locomotion");
  if (!cs) return std::printf("ant: %s\n", cs.status().message().c_str()), false;
  return run_model("ant (locomotion/ant.json) worlds", cs->model.rigid, cs->model.make_state(), envs, cs->substeps,
                   steps, cs->frame_dt);
}

// packed inputs that do not match world count x the model's counts: an error that says so
bool bad_sizes() {
  Result<RigidModelT<float>> m = rigid_cartpole().finalize<float>();
  RigidBatchCuda gpu;
  if (!m || !gpu.upload(m.value(), 2, 4)) return std::printf("bad sizes: no model or upload\n"), false;
  std::vector<float> q(4, 0.0f), qd(4, 0.0f), act(1, 0.0f), q1, qd1;  // act should hold 2
  const Status st = gpu.step(q, qd, act, 1.0f / 60.0f, q1, qd1);
  const bool ok = !st.is_ok() && st.message().find("sizes") != std::string::npos;
  std::printf("bad sizes: %s; %s\n", st.message().c_str(), ok ? "ok" : "FAILED");
  return ok;
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
  ok = bad_sizes() && ok;
  return ok ? 0 : 1;
}
