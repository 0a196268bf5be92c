// TaskRunner: a compiled scene and a task made into something to optimize, for every scene
// (particles, robots, or both acting on each other through the one solver). evaluate(theta)
// runs the rollout forward (the loss observes each frame) and backward (the loss seeds each
// frame) and returns the loss and dLoss/dtheta; iterate() takes one optimizer step;
// check_grad() holds sampled gradient entries against central differences.
//
// theta, the loss and the policy are one ParametersT, one LossT and one PolicyT for every
// scene: theta holds the robot entries (actuator_control, joint_q/qd, gains, masses, the
// robots' contact) followed by the particle entries (initial_position/velocity, control_force,
// activations, the particle model fields), each bound to its side by its object (split_task,
// parameters.h); the loss holds the robot terms then the particle terms (loss.h).
//
// The rollout: open loop (parameters and per-step inputs; a phases-only particle policy's
// controls computed up front) runs the checkpointed RolloutT; a policy that observes the state
// (of particles, robots or both) runs the runner's closed loop over SolverT, every state kept.
//
// Driving it (the CLI and the editor's worker take it through TaskT, task.h):
//   auto runner = optim::TaskRunnerT<float>::create(compiled, *scene.find_task(name));
//   if (!runner) report(runner.status());
//   while (runner->iterations_left() > 0) {
//     auto it = runner->iterate();            // {iteration, loss, grad_norm, ms}
//     if (!it) { report(it.status()); break; }  // names the step and element that went non-finite
//     publish(runner->theta(), runner->step_grad_norms(), runner->final_state());
//   }
//   // `adjoint check-grad`: compile in double (compile<double>), then
//   auto table = runner_d->check_grad(16, 1e-6, seed);  // rows + max relative error
//   print(table->format());  // float runners: eps ~1e-2; near-zero entries then show ~5e-2
//
// A runner owns its model copy, rollout and optimizer state: one runner per worker thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/grad/rollout.h"
#include "engine/optim/loss.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/parameters.h"
#include "engine/optim/policy.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"
#include "engine/solver/solver.h"

namespace adj::optim {

struct IterationStats {
  int iteration = 0;     // 0-based index of the step just taken
  double loss = 0;       // loss at theta before the step
  double grad_norm = 0;  // |dLoss/dtheta| before clipping
  double ms = 0;         // wall time of evaluate + step [ms]
  // optimizer.backtrack: the point measured raised the loss (or its rollout failed: `failure`
  // says how), so no step was taken from it; theta went back toward the last accepted point
  bool rejected = false;
  // ... and no step down to BacktrackT::min_scale of the optimizer's lowered it: theta is the
  // last accepted point again (the run can stop: converged, or at a cliff)
  bool stalled = false;
  double step_scale = 1;  // the fraction of the optimizer's step taken to the next point
  std::string failure;
};

struct GradCheckRow {
  int entry = 0;     // index in theta
  std::string name;  // e.g. "initial_velocity[ball][0].x"
  double analytic = 0, fd = 0;
  double abs_err = 0;  // |analytic - fd|
  double rel_err = 0;  // abs_err / max(|analytic|, |fd|, floor)
};

struct GradCheckReport {
  std::vector<GradCheckRow> rows;  // in theta order
  double loss = 0;                 // at the theta checked
  double eps = 0;                  // central-difference step
  double floor = 0;                // rel_err denominator floor: 1e-4 * max |fd| of the rows
  double max_rel_err = 0;
  int worst = -1;              // row with max_rel_err
  std::string format() const;  // the table, one row a line, for `adjoint check-grad`
};

struct RunnerOptions {
  int thread_count = 0;      // OpenMP threads for the solver, 0 = default
  bool keep_frames = false;  // keep every state of the last evaluate() (frames()); tasks with robots always do
};

template <class S>
class TaskRunnerT {
 public:
  TaskRunnerT();
  ~TaskRunnerT();
  TaskRunnerT(TaskRunnerT&&) noexcept;
  TaskRunnerT& operator=(TaskRunnerT&&) noexcept;

  // copies what it needs from the compiled scene; errors name the task and the entry
  static Result<TaskRunnerT> create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                    RunnerOptions options = {});

  // what the task drives, for messages: "particles", "robot", "robot + particles, coupled"
  const char* kind() const;

  // loss at theta and, when grad is given, dLoss/dtheta. A non-finite state, adjoint,
  // loss or gradient is an error that names the step and the element (or the entry).
  Result<S> evaluate(const std::vector<S>& theta, std::vector<S>* grad = nullptr);
  // one optimizer step from theta(): evaluate, step, clamp to the bounds (with the task's
  // optimizer.backtrack: a point that raised the loss is rejected and the step shortened)
  Result<IterationStats> iterate();
  // the loss at the final theta; with optimizer.backtrack, a last step that raised the loss (or
  // failed) is undone first, so the final theta is the last accepted point
  Result<S> finish();
  // central differences (theta_i +- eps max(1, |theta_i|)) on `samples` entries chosen with `seed` (at least one
  // per block when samples >= blocks; every entry when samples <= 0 or >= size)
  Result<GradCheckReport> check_grad(int samples, double eps, std::uint64_t seed);
  // the loss of frames t = 0..horizon flown elsewhere, under inputs theta (the effort terms)
  Result<S> trajectory_loss(const std::vector<StateT<S>>& frames, const std::vector<S>& theta) const;

  // theta entry i's name; policy weights as "policy.W0[r][c]" / "policy.b0[r]"
  std::string entry_name(int i) const;
  // iterations the task asks for that have not run yet
  int iterations_left() const { return std::max(0, task_.optimizer.iterations - int(history_.size())); }

  // current parameters (after the last step); set_theta clamps and keeps the optimizer's moments
  const std::vector<S>& theta() const { return theta_; }
  void set_theta(std::vector<S> theta);
  // results of the last evaluate(): gradient, |dL/d state_t| for t = 0..steps (for plotting),
  // per-loss-term values (the robot terms, then the particle terms), the final state
  const std::vector<S>& grad() const { return grad_; }
  const std::vector<S>& step_grad_norms() const { return step_grad_norms_; }
  const std::vector<S>& term_values() const { return term_values_; }
  std::string term_name(int k) const;
  const StateT<S>& final_state() const;
  // the states of the last evaluate(), t = 0..horizon (RunnerOptions::keep_frames, robots or a
  // closed-loop policy; else empty)
  const std::vector<StateT<S>>& frames() const { return frames_; }
  // every iterate() so far
  const std::vector<IterationStats>& history() const { return history_; }
  // the implicit step's counters over every evaluate() so far (null: the task has no plain rollout)
  const ImplicitStats* implicit_stats() const { return rollout_ ? &rollout_->implicit_stats() : nullptr; }

  // theta's blocks, in theta order (the robot blocks, then the particle blocks)
  const std::vector<ParamBlock>& blocks() const { return params_.blocks(); }
  const ParamBlock& block_of(int i) const { return params_.block_of(i); }
  // the two sides of theta: robot entries [0, robot_size()), particle entries after them
  int robot_size() const { return params_.robot_size(); }
  const ParametersT<S>& parameters() const { return params_; }
  const OptimizerT<S>& optimizer() const { return optimizer_; }
  const scene::Task& task() const { return task_; }
  const ModelT<S>& model() const { return *model_; }  // with the last theta applied
  bool has_policy() const { return bool(policy_); }

 private:
  void clamp(std::vector<S>& theta) const { params_.clamp(theta); }
  // theta into the model copy, initial_ and controls_
  void apply(const std::vector<S>& theta) { params_.apply(theta, *model_, initial_, controls_); }
  // dL/dtheta from the pieces of a backward pass, the effort terms added
  void gather(const std::vector<S>& theta, const StateT<S>& grad_initial, const std::vector<ControlT<S>>& grad_controls,
              const ModelGradT<S>& grad_model, std::vector<S>& grad) const;
  S loss_value(const std::vector<S>& theta);
  Result<S> evaluate_open_loop(const std::vector<S>& theta, std::vector<S>* grad);
  // a policy that observes the state: the closed loop, every state kept, stepped here
  Result<S> evaluate_closed_loop(const std::vector<S>& theta, std::vector<S>* grad);
  Status check_grad_finite(const std::vector<S>& grad) const;

  scene::Task task_;
  const char* kind_ = "particles";
  ParametersT<S> params_;
  std::optional<LossT<S>> loss_;
  OptimizerT<S> optimizer_;
  RolloutOptions<S> rollout_options_;
  std::unique_ptr<ModelT<S>> model_;      // the compiled model with theta applied
  std::unique_ptr<RolloutT<S>> rollout_;  // bound to *model_
  std::unique_ptr<PolicyT<S>> policy_;
  std::unique_ptr<SolverT<S>> solver_;  // a closed-loop policy's steps
  std::vector<S> theta_, grad_;
  std::vector<S> step_grad_norms_, term_values_;
  bool keep_frames_ = false;
  std::vector<StateT<S>> frames_;
  std::vector<IterationStats> history_;
  StateT<S> initial_;
  std::vector<ControlT<S>> controls_;
};

using TaskRunner = TaskRunnerT<float>;

}  // namespace adj::optim
