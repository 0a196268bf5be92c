// Rollout: runs T steps of the one solver (particles, bodies, or both), keeps checkpoints
// every K steps (K = 1 keeps all states) and runs the backward pass, recomputing each segment
// from its checkpoint. The substeps of each step are kept too (StepRecordT: with K = 1 from the
// forward pass, else from the segment's recompute), so step_adjoint never recomputes them.
// Returns gradients with respect to the initial state, every per-step Control and the model
// parameters. A non-finite state or adjoint stops a pass with a message naming the step and the
// element (particle, or joint and body) and sets failed_step().
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "engine/core/status.h"
#include "engine/model/model.h"
#include "engine/solver/solver.h"

namespace adj {

template <class S>
struct RolloutOptions {
  int steps = 1;                 // T
  S dt = S(1.0 / 60.0);          // step length [s]
  int substeps = 1;              // solver substeps per step
  int checkpoint_every = 0;      // K; 0 = ceil(sqrt(T)), 1 = keep every state
  int thread_count = 0;          // OpenMP threads, 0 = default
  bool control_grads = true;     // keep dL/dControl for every step (T controls of memory)
  bool record_contacts = false;  // keep the contacts of every step (for drawing)
  bool body_param_grads = true;  // also dL/d body parameters (SolverOptions::body_param_grads)
  ImplicitOptions implicit;      // the implicit integrator's (SolverOptions::implicit)
  // memory for kept substeps (K or T step records of (3 substeps - 2) x particle_count vec3s);
  // past it step_adjoint recomputes them instead (the same numbers, one more forward pass)
  std::size_t substep_bytes_max = std::size_t(1) << 30;
};

template <class S>
class RolloutT {
 public:
  // called with each state t = 0..T in the forward pass (to evaluate a loss)
  using Observer = std::function<void(int t, const StateT<S>& state)>;
  // called with t = T..0 in the backward pass: add dLoss/d state_t into adj
  using Seed = std::function<void(int t, const StateT<S>& state, StateT<S>& adj)>;

  // the model must outlive the rollout
  RolloutT(const ModelT<S>& model, RolloutOptions<S> options);

  // controls: one per step, one for all steps, or none (zero inputs); for_backward false: no
  // backward() will read this pass (a loss alone), so it keeps no substeps (what only the adjoint
  // reads; a backward() after it still works, recomputing them as with K > 1)
  Status forward(const StateT<S>& initial, const std::vector<ControlT<S>>& controls = {}, const Observer& observe = {},
                 bool for_backward = true);
  Status backward(const Seed& seed);

  const StateT<S>& final_state() const { return final_; }
  const StateT<S>& grad_initial() const { return grad_initial_; }                   // dL/d(q0, qd0)
  const std::vector<ControlT<S>>& grad_controls() const { return grad_controls_; }  // (T)
  const ModelGradT<S>& grad_model() const { return grad_model_; }
  const std::vector<S>& grad_norm() const { return grad_norm_; }           // |dL/d state_t|, (T + 1)
  const std::vector<ContactsT<S>>& contacts() const { return contacts_; }  // (T) when recorded
  int checkpoint_every() const { return k_; }
  std::size_t peak_state_bytes() const { return peak_bytes_; }  // states held at once, at most
  int failed_step() const { return failed_step_; }              // -1 unless a pass stopped on non-finite values
  const RolloutOptions<S>& options() const { return options_; }
  const ImplicitStats& implicit_stats() const { return solver_.implicit_stats(); }  // forward and backward

 private:
  const ControlT<S>& control(int t) const;
  // step records to keep (T with K = 1, else K), 0 where they would pass substep_bytes_max
  int record_count() const;
  void note_bytes(std::size_t b);

  const ModelT<S>* model_;
  RolloutOptions<S> options_;
  int k_ = 1;
  SolverT<S> solver_;
  std::vector<StateT<S>> checkpoints_;   // states 0, K, 2K, ...
  std::vector<StepRecordT<S>> records_;  // substeps of every step (K = 1) or of a segment; may be empty
  bool records_kept_ = false;            // records_ hold the last forward pass's steps (K = 1)
  StateT<S> segment_end_;                // the end state of a segment's recompute
  std::vector<ControlT<S>> controls_;
  ControlT<S> zero_control_;
  StateT<S> final_;
  StateT<S> grad_initial_;
  std::vector<ControlT<S>> grad_controls_;
  ControlT<S> scratch_control_grad_;
  ModelGradT<S> grad_model_;
  std::vector<S> grad_norm_;
  std::vector<ContactsT<S>> contacts_;
  std::size_t peak_bytes_ = 0;
  int failed_step_ = -1;
  bool forward_done_ = false;
};

using Rollout = RolloutT<float>;

}  // namespace adj
