// RigidRollout: runs T rigid steps, keeps checkpoints every K steps (K = 1 keeps all
// states) and runs the backward pass, recomputing each segment from its checkpoint (as
// engine/grad/rollout.h does for particles). Returns gradients with respect to the initial
// q/qd, every per-step control and the differentiable parameters (masses, PD gains, contact
// ke/kd/mu), through RigidSolver::step_adjoint (the reverse pass of rigid_adjoint.h).
#pragma once

#include <functional>
#include <vector>

#include "engine/core/status.h"
#include "engine/rigid/rigid_solver.h"

namespace adj {

template <class S>
struct RigidRolloutOptions {
  int steps = 1;                 // T
  S dt = S(1.0 / 60.0);          // step length [s]
  int substeps = 1;              // solver substeps per step
  int checkpoint_every = 0;      // K; 0 = ceil(sqrt(T)), 1 = keep every state
  bool param_grads = true;       // also dL/d params (costs more dual chunks per step)
  bool record_contacts = false;  // keep the contacts and joint forces of every step (for drawing)
};

template <class S>
class RigidRolloutT {
 public:
  // called with each state t = 0..T in the forward pass (to evaluate a loss)
  using Observer = std::function<void(int t, const RigidStateT<S>& state)>;
  // called with t = T..0 in the backward pass: add dLoss/d state_t into adj
  using Seed = std::function<void(int t, const RigidStateT<S>& state, RigidStateT<S>& adj)>;

  // the model must outlive the rollout
  RigidRolloutT(const RigidModelT<S>& model, RigidRolloutOptions<S> options);

  // controls: one per step, one for all steps, or none (zero inputs)
  Status forward(const RigidStateT<S>& initial, const std::vector<RigidControlT<S>>& controls = {},
                 const Observer& observe = {});
  Status backward(const Seed& seed);

  const RigidStateT<S>& final_state() const { return final_; }
  const RigidStateT<S>& grad_initial() const { return grad_initial_; }                   // dL/d(q0, qd0)
  const std::vector<RigidControlT<S>>& grad_controls() const { return grad_controls_; }  // (T)
  const RigidModelGradT<S>& grad_model() const { return grad_model_; }
  const std::vector<RigidContactsT<S>>& contacts() const { return contacts_; }  // (T) when recorded
  int checkpoint_every() const { return k_; }
  int failed_step() const { return failed_step_; }  // -1 unless a pass stopped on non-finite values

 private:
  const RigidControlT<S>& control(int t) const;

  const RigidModelT<S>* model_;
  RigidRolloutOptions<S> options_;
  int k_ = 1;
  RigidSolverT<S> solver_;
  std::vector<RigidStateT<S>> checkpoints_;  // states 0, K, 2K, ...
  std::vector<RigidControlT<S>> controls_;
  RigidControlT<S> zero_control_;
  RigidStateT<S> final_;
  RigidStateT<S> grad_initial_;
  std::vector<RigidControlT<S>> grad_controls_;
  RigidModelGradT<S> grad_model_;
  std::vector<RigidContactsT<S>> contacts_;
  int failed_step_ = -1;
  bool forward_done_ = false;
};

using RigidRollout = RigidRolloutT<float>;

}  // namespace adj
