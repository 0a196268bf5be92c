// RigidTaskRunner: a robot task made into something to optimize, with the TaskRunner API
// (evaluate / iterate / check_grad). It runs the scene's robots (CompiledScene::rigid)
// through the one Rollout (checkpointed, exact reverse-mode gradients), or, when the task has
// a policy, a closed loop of SolverT steps with an MLP (rigid_policy.h) that keeps every
// state; the particle model is not stepped. Made by optim::make_task (engine/optim/task.h),
// which decides what kind a task is.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/grad/rollout.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/rigid_loss.h"
#include "engine/optim/rigid_parameters.h"
#include "engine/optim/rigid_policy.h"
#include "engine/optim/trainer.h"
#include "engine/solver/solver.h"

namespace adj::optim {

template <class S>
class RigidTaskRunnerT {
 public:
  // errors name the task and the entry (non-robot parameters, unknown bodies, ...)
  static Result<RigidTaskRunnerT> create(const scene::CompiledSceneT<S>& cs, const scene::Task& task);

  Result<S> evaluate(const std::vector<S>& theta, std::vector<S>* grad = nullptr);
  Result<IterationStats> iterate();
  Result<GradCheckReport> check_grad(int samples, double eps, std::uint64_t seed);

  std::string entry_name(int i) const;
  int iterations_left() const { return std::max(0, task_.optimizer.iterations - int(history_.size())); }
  const std::vector<S>& theta() const { return theta_; }
  void set_theta(std::vector<S> theta);
  const std::vector<S>& grad() const { return grad_; }
  const std::vector<S>& term_values() const { return loss_.term_values(); }
  // the states of the last evaluate(), t = 0..horizon
  const std::vector<StateT<S>>& frames() const { return frames_; }
  const StateT<S>& final_state() const { return frames_.back(); }
  const std::vector<IterationStats>& history() const { return history_; }
  const RigidParametersT<S>& parameters() const { return params_; }
  const RigidLossT<S>& loss() const { return loss_; }
  const scene::Task& task() const { return task_; }
  const RigidModelT<S>& model() const { return model_->rigid; }  // with the last theta applied
  const RigidPolicyT<S>* policy() const { return policy_ ? policy_.get() : nullptr; }

 private:
  // closed loop: the policy observes each state; every state is kept
  Result<S> evaluate_policy(const std::vector<S>& theta, std::vector<S>* grad);

  scene::Task task_;
  RigidParametersT<S> params_;
  RigidLossT<S> loss_;
  OptimizerT<S> optimizer_;
  RigidModelT<S> base_;
  std::unique_ptr<ModelT<S>> model_;  // the scene's model (no particles), bodies with theta applied
  std::unique_ptr<RolloutT<S>> rollout_;
  std::unique_ptr<RigidPolicyT<S>> policy_;
  SolverT<S> solver_;
  S cs_dt_ = S(1.0 / 60.0);
  StateT<S> initial_base_, initial_;
  std::vector<ControlT<S>> controls_;
  std::vector<S> theta_, grad_;
  std::vector<StateT<S>> frames_;
  std::vector<IterationStats> history_;
};

using RigidTaskRunner = RigidTaskRunnerT<float>;

}  // namespace adj::optim
