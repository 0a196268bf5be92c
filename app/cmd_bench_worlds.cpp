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

// --cuda: the worlds on CudaSolverT (engine/cuda/cuda.h): a bodies-only scene's worlds in one
// launch a step (one CUDA thread per world), any other scene's (particles, randomized worlds) one
// world after another; its API takes and returns the states on the host each step, so the row
// includes those copies. Device memory is counted for the one-launch batch only.
template <class S>
Result<Row> cuda_row(const scene::CompiledSceneT<S>& cs, const BenchWorldsOptions& o, std::uint64_t seed) {
  const int n = o.window, world_count = o.worlds;
  auto made = WorldsT<S>::create(cs.model, {.world_count = world_count, .seed = seed, .randomize = cs.randomize});
  if (!made) return made.status();
  const WorldsT<S>& worlds = *made;
  std::vector<const ModelT<S>*> models;
  for (int w = 0; w < world_count; ++w) models.push_back(&worlds.model(w));
  CudaSolverT<S> gpu({.substeps = cs.substeps, .body_param_grads = false});
  if (Status st = gpu.upload_worlds(models); !st) return st;
  std::vector<std::vector<StateT<S>>> tape(std::size_t(n + 1));
  std::vector<ControlT<S>> control, adj_control;
  std::vector<ModelGradT<S>> adj_model;
  std::vector<StateT<S>> seed_adj;
  for (int w = 0; w < world_count; ++w) {
    tape[0].push_back(worlds.state(w));
    control.push_back(worlds.model(w).make_hold_control());
    adj_control.push_back(worlds.model(w).make_control());
    adj_model.push_back(worlds.model(w).make_grad());
    StateT<S> a = worlds.model(w).make_state();
    a.zero();
    for (auto& q : a.particle_q) q = vec3<S>(S(1), S(1), S(1));
    for (auto& q : a.joint_q) q = S(1);
    seed_adj.push_back(a);
  }
  auto forward = [&]() -> Status {
    for (int k = 0; k < n; ++k)
      if (Status st = gpu.step_worlds(tape[std::size_t(k)], tape[std::size_t(k + 1)], control, cs.frame_dt); !st)
        return Status::error("step " + std::to_string(k) + ": " + st.message());
    return Status::ok();
  };
  auto backward = [&]() -> Status {
    std::vector<StateT<S>> a = seed_adj, b;
    for (int k = n - 1; k >= 0; --k) {
      if (Status st = gpu.step_adjoint_worlds(tape[std::size_t(k)], control, cs.frame_dt, a, b, adj_control, adj_model);
          !st)
        return Status::error("step " + std::to_string(k) + " (reverse): " + st.message());
      std::swap(a, b);
    }
    return Status::ok();
  };
  if (Status st = forward(); !st) return st;  // untimed: the device warmed up
  if (Status st = backward(); !st) return st;
  using clock = std::chrono::steady_clock;
  Row r{world_count, 0};
  auto t0 = clock::now();
  for (int i = 0; i < o.windows; ++i)
    if (Status st = forward(); !st) return st;
  auto t1 = clock::now();
  for (int i = 0; i < o.windows; ++i) {
    if (Status st = forward(); !st) return st;
    if (Status st = backward(); !st) return st;
  }
  auto t2 = clock::now();
  const double steps = double(world_count) * n * o.windows;
  r.forward = steps / std::chrono::duration<double>(t1 - t0).count();
  r.both = steps / std::chrono::duration<double>(t2 - t1).count();
  r.bytes_per_world = gpu.worlds_batched() ? double(gpu.device_bytes()) / world_count : -1;
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
    auto r = cuda_row(*cs, o, seed);
    if (!r) {
      std::fprintf(stderr, "%s: --cuda: %s\n", o.scene_path.c_str(), r.status().message().c_str());
      return 1;
    }
    if (r->bytes_per_world >= 0)
      std::printf("| %d | CUDA, one launch | %.0f | %.0f | %.1f (device) |\n", r->worlds, r->forward, r->both,
                  r->bytes_per_world / 1024.0);
    else
      std::printf("| %d | CUDA, a launch per world | %.0f | %.0f | not counted |\n", r->worlds, r->forward, r->both);
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
