// CoupledTaskRunner: a task on a scene with robots AND particles (cloth, soft bodies, particle
// objects), stepped together with two-way contact by the one solver (engine/solver/solver.h), with the
// TaskRunner API (evaluate / iterate / check_grad). theta = the robot parameters
// (RigidParametersT: actuator_control, joint_q/qd, gains, masses, contact_*) followed by the
// particle parameters (ParametersT: initial_position/velocity, control_force, ...); the loss
// is the robot terms (RigidLossT) plus the particle terms (LossT, e.g. the position of a soft
// ball's centre of mass). A parameter or loss term goes to the robot side when its object is a
// robot or it names no object (contact_*), else to the particle side.
//
// Made by optim::make_task (engine/optim/task.h), which decides what kind a task is.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/optim/loss.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/parameters.h"
#include "engine/optim/rigid_loss.h"
#include "engine/optim/rigid_parameters.h"
#include "engine/optim/trainer.h"
#include "engine/grad/rollout.h"

namespace adj::optim {

template <class S>
class CoupledTaskRunnerT {
 public:
  // errors name the task and the entry (policies are not supported here yet)
  static Result<CoupledTaskRunnerT> create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                           int thread_count = 0);

  Result<S> evaluate(const std::vector<S>& theta, std::vector<S>* grad = nullptr);
  Result<IterationStats> iterate();
  Result<GradCheckReport> check_grad(int samples, double eps, std::uint64_t seed);

  std::string entry_name(int i) const;
  int iterations_left() const { return std::max(0, task_.optimizer.iterations - int(history_.size())); }
  const std::vector<S>& theta() const { return theta_; }
  void set_theta(std::vector<S> theta);
  const std::vector<S>& grad() const { return grad_; }
  // the states of the last evaluate(), t = 0..horizon
  const std::vector<StateT<S>>& frames() const { return frames_; }
  const std::vector<IterationStats>& history() const { return history_; }
  // every block of theta (the particle blocks' offsets moved past the robot ones)
  const std::vector<ParamBlock>& blocks() const { return blocks_; }
  int robot_size() const { return rparams_.size(); }
  const scene::Task& task() const { return task_; }

 private:
  void split(const std::vector<S>& theta, std::vector<S>& tr, std::vector<S>& tp) const;
  void clamp(std::vector<S>& theta) const;

  scene::Task task_;
  RigidParametersT<S> rparams_;
  ParametersT<S> pparams_;
  std::optional<RigidLossT<S>> rloss_;
  std::optional<LossT<S>> ploss_;
  OptimizerT<S> optimizer_;
  std::vector<ParamBlock> blocks_;
  RigidModelT<S> rbase_;
  std::unique_ptr<ModelT<S>> model_;  // the scene's model with theta applied
  std::unique_ptr<RolloutT<S>> rollout_;
  StateT<S> initial_;
  std::vector<ControlT<S>> controls_;
  std::vector<S> theta_, grad_;
  std::vector<StateT<S>> frames_;
  std::vector<IterationStats> history_;
};

using CoupledTaskRunner = CoupledTaskRunnerT<float>;

}  // namespace adj::optim
