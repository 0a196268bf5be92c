// Worlds: a scene simulated as many independent copies ("worlds", as Newton calls them; MJX
// vmaps mjData), each with its own state and, under domain randomization, its own parameters
// (engine/model/randomize.h: world w's factors depend on the seed and w alone). The worlds share
// nothing that a step writes, so they run on a team of threads, one world per thread at a time:
// the worlds' results do not depend on the thread count, and a world equals the same scene
// stepped alone, bit for bit (nothing crosses worlds: not contact, not a reduction).
//
//   WorldsT<double> worlds = WorldsT<double>::create(model, {.world_count = 256, .thread_count = 2,
//                                                           .seed = 7, .randomize = r}).value();
//   worlds.run([&](int w, SolverT<double>& solver) {        // every world, on the team
//     return solver.step(worlds.model(w), worlds.state(w), next[w], control, dt);
//   });
//
// A caller runs a whole window of steps (and its reverse) per world inside one run(): no barrier a
// step. An error names the first failing world (the lowest index: the same message at any thread
// count).
#pragma once

#include <omp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/model.h"
#include "engine/model/randomize.h"
#include "engine/solver/solver.h"

namespace adj {

struct WorldsOptions {
  int world_count = 1;
  int thread_count = 1;     // threads over the worlds (each world steps on one thread)
  std::uint64_t seed = 0;   // the randomization's seed
  Randomization randomize;  // per-world factors; none active: every world is the scene itself
  SolverOptions solver;     // each world's solver; its thread_count (threads inside one world's
                            // step) counts only when thread_count is 1
};

template <class S>
class WorldsT {
 public:
  WorldsT() = default;  // no worlds (create() makes them)
  // errors: world_count < 1, thread_count < 1. The scene's model must outlive the worlds
  static Result<WorldsT> create(const ModelT<S>& model, WorldsOptions options);

  int world_count() const { return int(states_.size()); }
  int thread_count() const { return options_.thread_count; }
  const WorldsOptions& options() const { return options_; }
  bool randomized() const { return !models_.empty(); }
  // world w's model: its randomized copy, or the scene's
  const ModelT<S>& model(int w) const { return models_.empty() ? *scene_ : models_[std::size_t(w)]; }
  StateT<S>& state(int w) { return states_[std::size_t(w)]; }
  const StateT<S>& state(int w) const { return states_[std::size_t(w)]; }
  // every world's state back to its model's initial state
  void reset();

  // f(w, solver) for every world on the team (w's solver is the running thread's; it holds only
  // scratch); returns the first failing world's status (lowest w), prefixed "world w: "
  template <class F>
  Status run(const F& f) {
    const int n = world_count();
    std::vector<Status> st(static_cast<std::size_t>(n));
    if (options_.thread_count == 1) {
      for (int w = 0; w < n; ++w) st[std::size_t(w)] = f(w, solvers_[0]);
    } else {
#pragma omp parallel for num_threads(options_.thread_count) schedule(static)
      for (int w = 0; w < n; ++w) st[std::size_t(w)] = f(w, solvers_[std::size_t(omp_get_thread_num())]);
    }
    for (int w = 0; w < n; ++w)
      if (!st[std::size_t(w)]) return Status::error("world " + std::to_string(w) + ": " + st[std::size_t(w)].message());
    return Status::ok();
  }

 private:
  explicit WorldsT(const ModelT<S>& model) : scene_(&model) {}
  const ModelT<S>* scene_ = nullptr;
  WorldsOptions options_;
  std::vector<ModelT<S>> models_;  // randomized worlds' own models (empty: all share the scene's)
  std::vector<StateT<S>> states_;
  std::vector<SolverT<S>> solvers_;  // one per thread
};

using Worlds = WorldsT<float>;

}  // namespace adj
