// steps per second of the reference robots: forward steps, and forward plus the step adjoint, by
// SolverT (the one step of every model) on models of bodies only; the "dual" rows time the
// reverse pass's reference instead (rigid_step_adjoint_dual: the dual-number step Jacobian)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include <omp.h>

#include "engine/articulation/rigid_queries.h"
#include "engine/articulation/robots.h"
#include "engine/cuda/cuda.h"
#include "engine/io/urdf.h"
#include "engine/solver/solver.h"

using namespace adj;

// the benchmark's label ("quadruped float reverse", "cartpole double x1024 2 threads"):
// a command-line argument runs only the benchmarks whose label contains it
static const char* g_filter = nullptr;
static bool selected(std::string label) { return !g_filter || label.find(g_filter) != std::string::npos; }

// a Model of these bodies alone
template <class S>
ModelT<S> bodies_only(const RigidModelT<S>& m) {
  ModelT<S> w;
  w.rigid = m;
  return w;
}

template <class S>
void bench(const char* name, const RigidBuilder& b, S height, int substeps, bool dual = false,
           double step = 1.0 / 60.0) {
  std::string label = name;
  label += sizeof(S) == 4 ? " float" : " double";
  label += dual ? " dual" : " reverse";
  if (!selected(label)) return;
  Result<RigidModelT<S>> r = b.finalize<S>();
  if (!r) {
    std::printf("%s: %s\n", name, r.status().message().c_str());
    return;
  }
  const RigidModelT<S>& m = r.value();
  const ModelT<S> w = bodies_only(m);
  StateT<S> s = m.make_state(), next, adj = m.make_state(), adj_in;
  if (m.joint_type[0] == RIGID_JOINT_FREE) s.joint_q[1] = height;
  ControlT<S> u = m.make_control(), adj_u = m.make_control();
  ModelGradT<S> adj_m = w.make_grad();
  SolverT<S> solver({.substeps = substeps});
  const S dt = S(step);
  using clock = std::chrono::steady_clock;
  int steps = 0;
  auto t0 = clock::now();
  while (std::chrono::duration<double>(clock::now() - t0).count() < 1.0) {
    for (int a = 0; a < m.actuator_count(); ++a) u.joint_act[a] = S(0.3) * S(std::sin(0.1 * steps + a));
    Status st = solver.step(w, s, next, u, dt);
    if (!st) {
      std::printf("%s: step %d failed: %s\n", name, steps, st.message().c_str());
      return;
    }
    std::swap(s, next);
    ++steps;
  }
  double fwd = steps / std::chrono::duration<double>(clock::now() - t0).count();
  int adj_steps = 0;
  t0 = clock::now();
  while (std::chrono::duration<double>(clock::now() - t0).count() < 1.0) {
    const Status st = dual ? rigid_step_adjoint_dual(m, s, u, dt, substeps, adj, adj_in, adj_u, adj_m.rigid)
                           : solver.step_adjoint(w, s, u, dt, adj, adj_in, adj_u, adj_m);
    if (!st) break;
    ++adj_steps;
  }
  double bwd = adj_steps / std::chrono::duration<double>(clock::now() - t0).count();
  std::printf(
      "%-10s %-6s dof %2d, %d substeps: %9.0f steps/s forward, %8.0f step adjoints/s (all params, %s), "
      "backward/forward time %.1fx\n",
      name, sizeof(S) == 4 ? "float" : "double", m.dof_count(), substeps, fwd, bwd, dual ? "dual Jacobian" : "reverse",
      fwd / bwd);
}

// `count` independent copies stepped together, one frame each per batch step, copies split
// over the threads in fixed chunks (each copy has its own solver and tape, so the result
// does not depend on the thread count); then the same with the step adjoint of every copy
template <class S>
void bench_batch(const char* name, const RigidBuilder& b, int count, int substeps, int threads) {
  std::string label = name;
  label += sizeof(S) == 4 ? " float" : " double";
  label += " x";
  label += std::to_string(count);
  label += " ";
  label += std::to_string(threads);
  label += " threads";
  if (!selected(label)) return;
  Result<RigidModelT<S>> r = b.finalize<S>();
  if (!r) return;
  const RigidModelT<S>& m = r.value();
  const ModelT<S> w = bodies_only(m);
  std::vector<StateT<S>> s(count, m.make_state()), next(count), adj(count, m.make_state()), adj_in(count);
  std::vector<ControlT<S>> u(count, m.make_control()), adj_u(count, m.make_control());
  std::vector<ModelGradT<S>> adj_m(count, w.make_grad());
  std::vector<SolverT<S>> solver;
  for (int i = 0; i < count; ++i) solver.emplace_back(SolverOptions{.substeps = substeps, .body_param_grads = false});
  for (int i = 0; i < count; ++i) s[i].joint_q[1] = S(3.0 - 0.001 * i);
  const S dt = S(1.0 / 60.0);
  using clock = std::chrono::steady_clock;
  int batches = 0;
  auto t0 = clock::now();
  while (std::chrono::duration<double>(clock::now() - t0).count() < 1.0) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int i = 0; i < count; ++i) {
      u[i].joint_act[0] = S(0.5) * S(std::sin(0.1 * batches + i));
      (void)solver[i].step(w, s[i], next[i], u[i], dt);
      std::swap(s[i], next[i]);
    }
    ++batches;
  }
  double fwd = double(batches) * count / std::chrono::duration<double>(clock::now() - t0).count();
  int adj_batches = 0;
  t0 = clock::now();
  while (std::chrono::duration<double>(clock::now() - t0).count() < 1.0) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int i = 0; i < count; ++i)
      (void)solver[i].step_adjoint(w, s[i], u[i], dt, adj[i], adj_in[i], adj_u[i], adj_m[i]);
    ++adj_batches;
  }
  double bwd = double(adj_batches) * count / std::chrono::duration<double>(clock::now() - t0).count();
  std::printf(
      "%-10s %-6s x%d batch, %d threads, %d substeps: %9.0f steps/s forward, %8.0f step adjoints/s, "
      "backward/forward time %.1fx\n",
      name, sizeof(S) == 4 ? "float" : "double", count, threads, substeps, fwd, bwd, fwd / bwd);
}

// `count` copies (worlds) stepped together on the GPU (CudaSolverT's worlds, engine/cuda/cuda.h:
// one launch, one thread per world), host copies of the states per call included; skipped
// without a CUDA device
template <class S>
void bench_cuda(const char* name, const RigidBuilder& b, S height, int count, int substeps) {
  std::string label = name;
  label += sizeof(S) == 4 ? " float" : " double";
  label += " x";
  label += std::to_string(count);
  label += " cuda";
  if (!selected(label)) return;
  std::string reason;
  if (!cuda_available(&reason)) {
    std::printf("%-10s %-6s x%d cuda: skipped (%s)\n", name, sizeof(S) == 4 ? "float" : "double", count,
                reason.c_str());
    return;
  }
  Result<RigidModelT<S>> r = b.finalize<S>();
  if (!r) return;
  ModelT<S> model;
  model.rigid = r.value();
  const RigidModelT<S>& m = model.rigid;
  const int na = m.actuator_count();
  StateT<S> s0 = model.make_state();
  if (m.joint_type[0] == RIGID_JOINT_FREE) s0.joint_q[1] = height;
  std::vector<StateT<S>> q(std::size_t(count), s0), q1;
  std::vector<ControlT<S>> act(std::size_t(count), model.make_control());
  CudaSolverT<S> gpu({.substeps = substeps});
  Status st = gpu.upload_worlds(model, count);
  if (!st) {
    std::printf("%s cuda: %s\n", name, st.message().c_str());
    return;
  }
  const S dt = S(1.0 / 60.0);
  using clock = std::chrono::steady_clock;
  int batches = 0;
  auto t0 = clock::now();
  while (std::chrono::duration<double>(clock::now() - t0).count() < 1.0) {
    for (int i = 0; i < count * na; ++i)
      act[std::size_t(i / na)].joint_act[i % na] = S(0.5) * S(std::sin(0.1 * batches + i));
    if (!(st = gpu.step_worlds(q, q1, act, dt))) break;
    std::swap(q, q1);
    ++batches;
  }
  double fwd = double(batches) * count / std::chrono::duration<double>(clock::now() - t0).count();
  StateT<S> a0 = zero_like(s0);
  for (S& v : a0.joint_qd) v = S(1);
  std::vector<StateT<S>> adj_out(std::size_t(count), a0), adj_in;
  std::vector<ControlT<S>> adj_act(std::size_t(count), model.make_control());
  std::vector<ModelGradT<S>> g(std::size_t(count), model.make_grad());
  int adj_batches = 0;
  t0 = clock::now();
  while (st && std::chrono::duration<double>(clock::now() - t0).count() < 1.0) {
    if (!(st = gpu.step_adjoint_worlds(q, act, dt, adj_out, adj_in, adj_act, g))) break;
    ++adj_batches;
  }
  double bwd = double(adj_batches) * count / std::chrono::duration<double>(clock::now() - t0).count();
  if (!st) std::printf("%s cuda: %s\n", name, st.message().c_str());
  std::printf(
      "%-10s %-6s x%d batch, cuda, %d substeps: %9.0f steps/s forward, %8.0f step adjoints/s, "
      "backward/forward time %.1fx (%zu MB on the device)\n",
      name, sizeof(S) == 4 ? "float" : "double", count, substeps, fwd, bwd, fwd / bwd, gpu.device_bytes() >> 20);
}

// a robot file of ../shared/robots, z-up, without actuators (as MuJoCo loads a URDF): fixed to
// the world with no contact at all, or free 0.5 m over a ground plane (its shapes touch it)
RigidBuilder shared_robot(const char* file, bool free_fall) {
  RigidBuilder b;
  b.gravity = {0, 0, -9.81};
  b.ground = false;  // the builder's ground is y-up
  b.body_contact = false;
  UrdfOptions o;
  o.fixed_base = !free_fall;
  o.default_actuators = false;
  if (free_fall) {
    o.position = {0, 0, 0.5};
    b.colliders.push_back({.type = GEOM_PLANE, .pos = {0, 0, 0}, .size = {0, 0, 1}});
  }
  auto r = rigid_import_urdf(std::string(ADJ_SHARED_ROBOTS) + "/" + file, b, o);
  if (!r) std::printf("%s: %s\n", file, r.status().message().c_str());
  return b;
}

int main(int argc, char** argv) {
  if (argc > 1) g_filter = argv[1];
  // beside MuJoCo (scripts/bench-mujoco.sh): one 1/240 s step (no substeps), as its timestep
  for (const auto& [name, file, fall] :
       {std::tuple{"kuka_iiwa (fixed, no contact, 1/240 s)", "urdf/kuka_iiwa/model.urdf", false},
        std::tuple{"a1 (fixed, no contact, 1/240 s)", "urdf/a1/a1.urdf", false},
        std::tuple{"a1 (free fall onto the ground, 1/240 s)", "urdf/a1/a1.urdf", true}}) {
    bench<float>(name, shared_robot(file, fall), 0.0f, 1, false, 1.0 / 240);
    bench<double>(name, shared_robot(file, fall), 0.0, 1, false, 1.0 / 240);
  }
  bench<float>("cartpole", rigid_cartpole(), 0.0f, 4);
  bench<double>("cartpole", rigid_cartpole(), 0.0, 4);
  bench<float>("arm3", rigid_arm3(), 0.0f, 4);
  bench<float>("quadruped", rigid_quadruped(), 0.46f, 8);
  bench<double>("quadruped", rigid_quadruped(), 0.46, 8);
  bench<double>("cartpole", rigid_cartpole(), 0.0, 4, true);
  bench<double>("quadruped", rigid_quadruped(), 0.46, 8, true);
  for (int threads : {1, 2}) {
    bench_batch<float>("cartpole", rigid_cartpole(), 1024, 4, threads);
    bench_batch<double>("cartpole", rigid_cartpole(), 1024, 4, threads);
  }
  bench_cuda<float>("cartpole", rigid_cartpole(), 0.0f, 1024, 4);
  bench_cuda<float>("quadruped", rigid_quadruped(), 0.46f, 1024, 8);
  return 0;
}
