// PODS: policy optimization via differentiable simulation (Mora, Peychev, Ha, Vechev, Coros,
// ICML 2021). No critic: each iteration rolls the deterministic policy out from a batch of
// start states (the task's policy env, reset with the task's seed), takes each episode's
// action sequence a (horizon x actions) and improves it on the open-loop problem
//   J(a) = mean frame cost of the episode from its start under the actions a,
// then regresses the policy onto the improved actions (minibatched MSE, Adam) at the
// observations of the improved trajectories.
//   order 1 (PODS-1): a <- a - alpha g / |g|, alpha from a backtracking line search
//   order 2 (PODS-2): a <- a + p, p ~ argmin g.p + p.(H + damping I).p / 2 within a trust
//                     region |p| <= radius (Steihaug's truncated conjugate gradients: a
//                     direction of negative curvature goes to the boundary, so a non-convex
//                     H is safe), backtracked until J decreases; the radius grows after a
//                     full step and shrinks after a backtracked one
// H v is exact, forward over reverse (ActionSequenceT::hvp, PolicyEnvT::action_hvp): the
// episode's frames and their reverse pass run once on tangent numbers Dual<S, 1> seeded with v
// on the actions, and the tangent of dJ/da is H v. An H v product is counted in sim_steps as a
// gradient is, one forward and one reverse pass of frames x substeps, though on tangent numbers
// it takes longer: 2.0-2.5x a gradient's wall time on one core (the payload, the cartpole and
// the two walkers; tests/engine/optim/pods_test.cpp's "[.bench]" case). Robot worlds
// and particle worlds step on SolverT's tangent step (engine/solver/particle_tangent.cpp; bodies
// only: its articulation stage's). A coupled world (robots and particles) has no tangent step:
// PODS-1 trains it, PODS-2 is refused by create().
// Deterministic for a seed at any thread count: each copy has its own start stream and its
// own slots, summed in copy order.
//
//   auto task = optim::make_task(compiled_double, spec).value();
//   auto pods = optim::PodsTrainerT<double>::create(*task, {.order = 2}).value();
//   for (int k = 0; k < 50; ++k) pods.step();       // {policy_cost, improved_cost, step_rms, ...}
//   double cost = pods.evaluate().value();           // mean frame cost from the task's start
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/dist/communicator.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/policy_env.h"
#include "engine/optim/task.h"

namespace adj::optim {

// the open-loop problem of one env copy from where it stands: `frames` frames under a given
// action sequence (frame-major: a[t * action_size + k]); the copy is rewound after each call
template <class S>
class ActionSequenceT {
 public:
  ActionSequenceT(PolicyEnvT<S>& env, int copy, int frames) : env_(&env), copy_(copy), frames_(frames) {}

  int size() const { return frames_ * env_->action_size(); }
  int frames() const { return frames_; }
  // J(a) = mean frame cost; grad (optional): dJ/da; obs (optional): the raw observation at
  // each frame before its action (frames); states (optional): the frames' states, 0..frames
  Result<S> cost(const std::vector<S>& a, std::vector<S>* grad = nullptr, std::vector<std::vector<S>>* obs = nullptr,
                 std::vector<StateT<S>>* states = nullptr);
  // out = H v, H = d^2 J / da^2 at a: exact, forward over reverse (PolicyEnvT::action_hvp);
  // counted in sim_steps() as one forward and one reverse pass (2 x frames x substeps)
  Status hvp(const std::vector<S>& a, const std::vector<S>& v, std::vector<S>& out);
  // solver substeps run so far, forward and adjoint alike
  long long sim_steps() const { return sim_steps_; }

 private:
  PolicyEnvT<S>* env_;
  int copy_, frames_;
  long long sim_steps_ = 0;
};

struct PodsOptions {
  int order = 1;        // 1: PODS-1 (gradient step); 2: PODS-2 (Newton step)
  int batch = 8;        // episodes per iteration (env copies, from randomized starts when the env randomizes)
  int line_search = 8;  // halvings of a step before the episode keeps its actions
  double step = 0.05;   // PODS-1: the first step's RMS per action entry
  // PODS-2: the trust region's first radius, RMS per action entry, and its bounds
  double radius = 0.05, radius_min = 1e-4, radius_max = 0.1;
  double damping = 1e-3;   // PODS-2: lambda of H + lambda I (relative to the action scale)
  int cg_iterations = 10;  // PODS-2: conjugate-gradient steps (H v products) per episode
  // regression passes over the iteration's samples (60: on the throw, PODS-1 and PODS-2 reached
  // the benchmark's target on 3 seeds instead of 2, in 3x and 1.8x fewer median steps than with 20)
  int epochs = 60;
  int minibatch = 64;    // samples per regression step
  double lr = 3e-3;      // Adam's step in the regression
  int thread_count = 0;  // copies improved in parallel; 0 = OpenMP's default
  // MPI ranks sharing the episodes (null: this process alone): each rank improves its block,
  // every episode's samples reach every rank in episode order and every rank regresses the
  // same batch the same way, so any number of ranks gives the same bits
  dist::Communicator* comm = nullptr;
  int fingerprint_every = 10;  // with ranks: iterations between comparisons of the ranks' weights
};

struct PodsStats {
  int iteration = 0;
  double policy_cost = 0;      // mean J of the batch's policy rollouts
  double improved_cost = 0;    // mean J of the improved action sequences
  double step_rms = 0;         // RMS per action entry of the improvement step (where the policy is pulled)
  double regression_loss = 0;  // mean 1/2 |policy(obs) - improved action|^2 of the last epoch
  long long sim_steps = 0;     // solver substeps so far (adjoint and H v passes counted, ActionSequenceT)
  long long hvps = 0;          // H v products so far
  // an episode that failed (a step that blew up) does not end the run: the iteration takes no
  // update (the policy and the step size stay), its reason named here ("PODS iteration K
  // skipped: episode E: ..."), and the next iteration draws new starts
  bool skipped = false;
  std::string skip_reason;
  int skipped_iterations = 0;  // so far in the run
};

template <class S>
class PodsTrainerT {
 public:
  // the copies: task.policy_env(env) with env.env_count = options.batch; evaluate() runs one
  // more copy from the task's start; the policy starts from the task's seed. Errors name the task
  // (order 2 on a coupled world: no H v products)
  static Result<PodsTrainerT> create(const TaskT<S>& task, PodsOptions options = {}, PolicyEnvOptions env = {});

  // one iteration: roll out, improve each episode's actions, regress the policy
  Result<PodsStats> step();
  // one episode of the eval copy from the task's start under the policy; the mean frame cost;
  // observe(t) after frame t
  Result<S> evaluate(const std::function<void(int t, const PolicyEnvT<S>& env)>& observe = {});

  const std::vector<S>& weights() const { return w_; }
  void set_weights(std::vector<S> w) { w_ = std::move(w); }
  std::uint64_t fingerprint() const { return dist::fnv1a(w_.data(), w_.size() * sizeof(S)); }  // FNV-1a of the weights
  long long sim_steps() const { return sim_steps_; }
  const PolicyEnvT<S>& env() const { return *env_; }
  const PolicyEnvT<S>& eval_env() const { return *eval_; }
  // the last iteration's trajectories of copy 0 (states 0..horizon), from the same start: the
  // policy's own, and the improved actions' (the ghost of where the policy is being pulled to)
  const std::vector<StateT<S>>& policy_states() const { return policy_states_; }
  const std::vector<StateT<S>>& improved_states() const { return improved_states_; }

 private:
  struct Episode {
    std::vector<S> a0, a;             // the policy's actions, the improved ones
    std::vector<std::vector<S>> obs;  // raw observations along the improved trajectory
    std::vector<StateT<S>> states0;   // copy 0 only: the policy's trajectory
    std::vector<StateT<S>> states;    // copy 0 only: the improved trajectory
    S cost0 = S(0), cost = S(0);
    long long steps = 0, hvps = 0;
    bool full_step = false;  // the first trial step was taken
    Status status;
  };
  Status run_episode(int i, Episode& e);
  Status improve(ActionSequenceT<S>& seq, Episode& e, const std::vector<S>& g);
  Status newton_step(ActionSequenceT<S>& seq, Episode& e, const std::vector<S>& g, std::vector<S>& p);
  double regress(const std::vector<Episode>& episodes);
  // the iteration's update from its episodes (all succeeded): s's costs and step, the step size,
  // the policy's regression onto the improved actions
  void update(std::vector<Episode>& episodes, PodsStats& s);
  Status gather_episodes(std::vector<Episode>& episodes);  // every rank's episodes on every rank

  PodsOptions options_;
  std::unique_ptr<PolicyEnvT<S>> env_, eval_;
  std::vector<S> w_;
  OptimizerT<S> adam_;
  std::vector<std::mt19937_64> rngs_;  // per copy (all copies'; a rank draws from its own): starts
  dist::Block mine_;                   // this rank's episodes [begin, end) of options_.batch
  std::mt19937_64 rng_;                // regression minibatches
  double radius_ = 0;                  // PODS-2's trust radius, RMS per action entry
  long long sim_steps_ = 0, hvps_ = 0;
  int iteration_ = 0, skipped_ = 0;
  std::vector<StateT<S>> policy_states_, improved_states_;
};

}  // namespace adj::optim
