#pragma once
// The editor's policy methods besides BPTT, with the shape of the task the worker drives
// (iterate, history, frames, theta): one iteration is one training step of the method,
// preceded by an episode of the deterministic policy from the task's start, whose mean frame
// cost is the iteration's loss and whose states are the iteration's rollout (ghosts, "show
// optimized result", recorded videos).
//   ShacRun (engine/optim/shac_task.h): a step is one window on every copy
//   PodsRun (engine/optim/pods.h): a step is one PODS iteration; the iteration's grad_norm is
//           the improvement step's RMS per action entry (how far the policy is pulled)
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/optim/pods.h"
#include "engine/optim/shac_task.h"
#include "engine/optim/trainer.h"

namespace adj::editor {

class PolicyRun {
 public:
  explicit PolicyRun(scene::Task task) : task_(std::move(task)) {}
  virtual ~PolicyRun() = default;

  Result<optim::IterationStats> iterate();
  const std::vector<optim::IterationStats>& history() const { return history_; }
  // per iteration, the training return (SHAC, AHAC: the mean summed reward of the last 100
  // training episodes that ended, as `adjoint optimize` prints it; NaN before one ends and for PODS)
  const std::vector<double>& train_returns() const { return train_returns_; }
  const std::vector<State>& frames() const { return frames_; }  // the last episode, t = 0..horizon
  const State& final_state() const { return frames_.back(); }
  virtual const std::vector<float>& theta() const = 0;      // the policy's weights
  const std::vector<float>& grad() const { return grad_; }  // (not kept: empty)
  std::string entry_name(int i) const { return "policy[" + std::to_string(i) + "]"; }
  const scene::Task& task() const { return task_; }
  // PODS: the last iteration's copy-0 rollout under the policy (0) and under the improved
  // actions (1); null for other methods
  virtual const std::vector<State>* pulled(int /*which*/) const { return nullptr; }

 protected:
  // the policy's episode from the task's start: its mean frame cost, every state after the first
  virtual Result<float> episode(std::vector<State>& frames) = 0;
  virtual const State& start() const = 0;
  // one training step: the value shown as the iteration's grad_norm, and the training return
  struct Trained {
    double shown = 0;
    double train_return = std::numeric_limits<double>::quiet_NaN();
  };
  virtual Result<Trained> train() = 0;

 private:
  scene::Task task_;
  std::vector<optim::IterationStats> history_;
  std::vector<double> train_returns_;
  std::vector<State> frames_;
  std::vector<float> grad_;
};

class ShacRun final : public PolicyRun {
 public:
  ShacRun(optim::BatchShacTrainerT<float> trainer, scene::Task task);
  const std::vector<float>& theta() const override { return trainer_.weights(); }
  optim::BatchShacTrainerT<float>& trainer() { return trainer_; }  // checkpoints: save(), load()

 private:
  Result<float> episode(std::vector<State>& frames) override;
  const State& start() const override { return initial_; }
  Result<Trained> train() override;

  optim::BatchShacTrainerT<float> trainer_;
  State initial_;
};

class PodsRun final : public PolicyRun {
 public:
  PodsRun(optim::PodsTrainerT<float> trainer, scene::Task task);
  const std::vector<float>& theta() const override { return trainer_.weights(); }
  const std::vector<State>* pulled(int which) const override {
    return which == 0 ? &trainer_.policy_states() : &trainer_.improved_states();
  }

 private:
  Result<float> episode(std::vector<State>& frames) override;
  const State& start() const override { return initial_; }
  Result<Trained> train() override;

  optim::PodsTrainerT<float> trainer_;
  State initial_;
};

}  // namespace adj::editor
