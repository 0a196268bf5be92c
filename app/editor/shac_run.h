#pragma once
// The editor's SHAC method for policy tasks (engine/optim/shac_task.h): one iteration
// is one training window on every copy, preceded by an episode of the deterministic policy
// from the task's start, whose mean frame cost is the iteration's loss and whose states are
// the iteration's rollout (ghosts, "show optimized result", recorded videos). The same shape
// as the task runners the worker drives (iterate, history, frames, theta).
#include <string>
#include <vector>

#include "engine/optim/shac_task.h"
#include "engine/optim/trainer.h"

namespace adj::editor {

class ShacRun {
 public:
  ShacRun(optim::BatchShacTrainerT<float> trainer, scene::Task task);

  Result<optim::IterationStats> iterate();
  const std::vector<optim::IterationStats>& history() const { return history_; }
  const std::vector<State>& frames() const { return frames_; }  // the last episode, t = 0..horizon
  const State& final_state() const { return frames_.back(); }
  const std::vector<float>& theta() const { return trainer_.weights(); }  // the policy's weights
  const std::vector<float>& grad() const { return grad_; }                // (not kept: empty)
  std::string entry_name(int i) const { return "policy[" + std::to_string(i) + "]"; }
  const scene::Task& task() const { return task_; }
  const optim::BatchShacStats& last() const { return last_; }

 private:
  optim::BatchShacTrainerT<float> trainer_;
  scene::Task task_;
  std::vector<optim::IterationStats> history_;
  State initial_;
  std::vector<State> frames_;
  std::vector<float> grad_;
  optim::BatchShacStats last_;
};

}  // namespace adj::editor
