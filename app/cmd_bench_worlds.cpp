// `adjoint bench worlds`: a scene's control steps per second over many worlds, forward and
// forward + backward of windows, and the memory each world holds (engine/solver/worlds.h).
// Each world runs its whole window on one thread (its states and each step's record kept for
// the reverse pass, or with --recompute only the states), then the window's reverse from a unit
// adjoint on the last state: the work of a SHAC window without the policy. Rows: one world on one thread (the
// per-thread anchor), then the requested worlds on 1 and on the requested threads, all in the same run.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "app/cmd_bench.h"
#include "engine/cuda/cuda.h"
#include "engine/cuda/rigid_cuda.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene_json.h"
#include "engine/solver/worlds.h"

namespace adj::app {

namespace {

struct Row {
  int worlds = 0, threads = 0;
  double forward = 0, both = 0;  // control steps per second
  double bytes_per_world = 0;
};

std::size_t heap_bytes() { return mallinfo2().uordblks; }

template <class S>
struct Bench {
  const scene::CompiledSceneT<S>& cs;
  const BenchWorldsOptions& o;
  std::uint64_t seed;

  // one row: worlds x threads; a window forward only, then forward + backward, `windows` times each
  Result<Row> row(int world_count, int threads) const {
    const std::size_t heap0 = heap_bytes();
    auto made = WorldsT<S>::create(cs.model, {.world_count = world_count,
                                              .thread_count = threads,
                                              .seed = seed,
                                              .randomize = cs.randomize,
                                              .solver = {.substeps = cs.substeps, .body_param_grads = false}});
    if (!made) return made.status();
    WorldsT<S>& worlds = *made;
    const int n = o.window;
    std::vector<std::vector<StateT<S>>> tape(std::size_t(world_count), std::vector<StateT<S>>(std::size_t(n + 1)));
    // each step's substeps, reversed without a recompute (--recompute: none kept)
    std::vector<std::vector<StepRecordT<S>>> records(std::size_t(world_count),
                                                     std::vector<StepRecordT<S>>(o.recompute ? 0 : std::size_t(n)));
    std::vector<ControlT<S>> control, adj_control;
    std::vector<ModelGradT<S>> adj_model;
    std::vector<StateT<S>> adj_a, adj_b;
    for (int w = 0; w < world_count; ++w) {
      control.push_back(worlds.model(w).make_hold_control());
      adj_control.push_back(worlds.model(w).make_control());
      adj_model.push_back(worlds.model(w).make_grad());
      adj_a.push_back(worlds.model(w).make_state());
      adj_b.push_back(worlds.model(w).make_state());
    }
    const S dt = cs.frame_dt;
    auto forward = [&](int w, SolverT<S>& solver) {
      auto& t = tape[std::size_t(w)];
      t[0] = worlds.state(w);
      auto& rec = records[std::size_t(w)];
      for (int k = 0; k < n; ++k)
        if (Status st = solver.step(worlds.model(w), t[k], t[k + 1], control[std::size_t(w)], dt, nullptr,
                                    rec.empty() ? nullptr : &rec[std::size_t(k)]);
            !st)
          return Status::error("step " + std::to_string(k) + ": " + st.message());
      return Status::ok();
    };
    auto backward = [&](int w, SolverT<S>& solver) {
      auto& t = tape[std::size_t(w)];
      StateT<S>* a = &adj_a[std::size_t(w)];
      StateT<S>* b = &adj_b[std::size_t(w)];
      a->zero();
      for (auto& q : a->particle_q) q = vec3<S>(S(1), S(1), S(1));
      for (auto& q : a->joint_q) q = S(1);
      for (int k = n - 1; k >= 0; --k) {
        const auto& rec = records[std::size_t(w)];
        if (Status st = solver.step_adjoint(worlds.model(w), t[k], control[std::size_t(w)], dt, *a, *b,
                                            adj_control[std::size_t(w)], adj_model[std::size_t(w)],
                                            rec.empty() ? nullptr : &rec[std::size_t(k)]);
            !st)
          return Status::error("step " + std::to_string(k) + " (reverse): " + st.message());
        std::swap(a, b);
      }
      return Status::ok();
    };
    auto both = [&](int w, SolverT<S>& s) {
      Status f = forward(w, s);
      return f ? backward(w, s) : f;
    };
    using clock = std::chrono::steady_clock;
    Row r{world_count, threads};
    // one untimed window of each (scratch sized, pages touched), then the timed ones
    if (Status st = worlds.run(both); !st) return st;
    r.bytes_per_world = double(heap_bytes() - std::min(heap_bytes(), heap0)) / world_count;
    auto t0 = clock::now();
    for (int i = 0; i < o.windows; ++i)
      if (Status st = worlds.run(forward); !st) return st;
    auto t1 = clock::now();
    for (int i = 0; i < o.windows; ++i)
      if (Status st = worlds.run(both); !st) return st;
    auto t2 = clock::now();
    const double steps = double(world_count) * n * o.windows;
    r.forward = steps / std::chrono::duration<double>(t1 - t0).count();
    r.both = steps / std::chrono::duration<double>(t2 - t1).count();
    return r;
  }
};

// --cuda: the worlds of a bodies-only scene as one CUDA thread each (engine/cuda/rigid_cuda.h); its
// API takes and returns the states on the host each step, so the row includes those copies
template <class S>
Result<Row> cuda_row(const scene::CompiledSceneT<S>& cs, const BenchWorldsOptions& o) {
  const RigidModelT<S>& m = cs.model.rigid;
  const int n = o.window, worlds = o.worlds, nq = m.q_count(), nv = m.dof_count(), na = m.actuator_count();
  RigidBatchCudaT<S> gpu;
  if (Status st = gpu.upload(m, worlds, cs.substeps); !st) return st;
  const StateT<S> s0 = cs.model.make_state();
  const ControlT<S> hold = cs.model.make_hold_control();
  std::vector<std::vector<S>> q(std::size_t(n + 1)), qd(std::size_t(n + 1));
  std::vector<S> act(std::size_t(worlds) * na);
  for (int w = 0; w < worlds; ++w) std::copy(hold.joint_act.begin(), hold.joint_act.end(), act.begin() + w * na);
  q[0].resize(std::size_t(worlds) * nq);
  qd[0].resize(std::size_t(worlds) * nv);
  for (int w = 0; w < worlds; ++w) {
    std::copy(s0.joint_q.begin(), s0.joint_q.end(), q[0].begin() + w * nq);
    std::copy(s0.joint_qd.begin(), s0.joint_qd.end(), qd[0].begin() + w * nv);
  }
  auto forward = [&]() -> Status {
    for (int k = 0; k < n; ++k)
      if (Status st = gpu.step(q[k], qd[k], act, cs.frame_dt, q[k + 1], qd[k + 1]); !st) return st;
    return Status::ok();
  };
  RigidModelGradT<S> g = m.make_grad();
  auto backward = [&]() -> Status {
    std::vector<S> aq(q[0].size(), S(1)), aqd(qd[0].size(), S(0)), aq_in, aqd_in, aact;
    for (int k = n - 1; k >= 0; --k) {
      if (Status st = gpu.step_adjoint(q[k], qd[k], act, cs.frame_dt, aq, aqd, aq_in, aqd_in, aact, g); !st) return st;
      std::swap(aq, aq_in);
      std::swap(aqd, aqd_in);
    }
    return Status::ok();
  };
  if (Status st = forward(); !st) return st;  // untimed: the device warmed up
  if (Status st = backward(); !st) return st;
  using clock = std::chrono::steady_clock;
  Row r{worlds, 0};
  auto t0 = clock::now();
  for (int i = 0; i < o.windows; ++i)
    if (Status st = forward(); !st) return st;
  auto t1 = clock::now();
  for (int i = 0; i < o.windows; ++i) {
    if (Status st = forward(); !st) return st;
    if (Status st = backward(); !st) return st;
  }
  auto t2 = clock::now();
  const double steps = double(worlds) * n * o.windows;
  r.forward = steps / std::chrono::duration<double>(t1 - t0).count();
  r.both = steps / std::chrono::duration<double>(t2 - t1).count();
  r.bytes_per_world = double(gpu.device_bytes()) / worlds;
  return r;
}

template <class S>
int bench(const BenchWorldsOptions& o) {
  auto doc = scene::load_scene(o.scene_path);
  if (!doc) {
    std::fprintf(stderr, "%s\n", doc.status().message().c_str());
    return 1;
  }
  auto cs = scene::compile<S>(*doc, std::filesystem::path(o.scene_path).parent_path().string());
  if (!cs) {
    std::fprintf(stderr, "%s: %s\n", o.scene_path.c_str(), cs.status().message().c_str());
    return 1;
  }
  const std::uint64_t seed = doc->tasks.empty() ? 0 : doc->tasks.front().seed;
  if (std::string why; o.cuda && !cuda_available(&why)) {
    std::printf("SKIPPED: --cuda: no CUDA device (%s)\n", why.c_str());
    return 77;
  }
  std::printf(
      "worlds benchmark: %s (%d particles, %d bodies), %d substeps a control step, windows of %d control "
      "steps, %s%s\n",
      doc->name.c_str(), cs->model.particle_count(), cs->model.body_count(), cs->substeps, o.window,
      sizeof(S) == 8 ? "double" : "float", cs->randomize.active() ? ", randomized worlds" : "");
  std::printf(
      "| worlds | threads | forward [control steps/s] | forward + backward [control steps/s] | memory per "
      "world [KiB] |\n|---:|---:|---:|---:|---:|\n");
  if (o.cuda) {
    if (cs->model.particle_count() > 0 || cs->randomize.active()) {
      std::fprintf(stderr,
                   "%s: --cuda runs bodies-only scenes with the scene's own parameters (the CUDA batch has "
                   "no particles and no per-world parameters yet)\n",
                   o.scene_path.c_str());
      return 1;
    }
    auto r = cuda_row(*cs, o);
    if (!r) {
      std::fprintf(stderr, "%s: --cuda: %s\n", o.scene_path.c_str(), r.status().message().c_str());
      return 1;
    }
    std::printf("| %d | CUDA | %.0f | %.0f | %.1f (device) |\n", r->worlds, r->forward, r->both,
                r->bytes_per_world / 1024.0);
    return 0;
  }
  Bench<S> b{*cs, o, seed};
  std::vector<std::pair<int, int>> rows = {{1, 1}, {o.worlds, 1}};
  if (o.threads > 1) rows.push_back({o.worlds, o.threads});
  for (auto [w, t] : rows) {
    auto r = b.row(w, t);
    if (!r) {
      std::fprintf(stderr, "%s: %d worlds, %d threads: %s\n", o.scene_path.c_str(), w, t, r.status().message().c_str());
      return 1;
    }
    std::printf("| %d | %d | %.0f | %.0f | %.1f |\n", r->worlds, r->threads, r->forward, r->both,
                r->bytes_per_world / 1024.0);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int run_bench_worlds(const BenchWorldsOptions& o) { return o.use_double ? bench<double>(o) : bench<float>(o); }

}  // namespace adj::app
