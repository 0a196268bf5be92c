// SHAC-style policy training (Xu et al. 2022, without the critic): the episode is cut into
// short windows (16-32 frames); each window runs the closed-loop policy from where the
// last one stopped, evaluates the task's loss over the window alone (its terms read the
// window's last frame; a distance term measures the progress made in the window) and
// backpropagates through those frames only. The gradient is clipped to a global norm and
// applied with Adam at once, so one episode gives episode / window updates. Observations
// are normalized with a running mean and standard deviation, frozen inside a window so
// that the window's gradient is exact.
//
//   auto shac = optim::ShacTrainerT<double>::create(compiled, task, {.window = 24});
//   for (int k = 0; k < 200; ++k) shac->step_window();   // {loss, grad_norm, frame, ...}
//   double loss = shac->evaluate().value();             // the task's loss over a whole episode
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/status.h"
#include "engine/optim/loss.h"
#include "engine/optim/optimizer.h"
#include "engine/optim/parameters.h"
#include "engine/optim/policy.h"
#include "engine/scene/compile.h"
#include "engine/scene/scene.h"

namespace adj::optim {

struct ShacOptions {
  int window = 24;                // frames per window
  double lr = 0;                  // Adam step; 0 = the task's optimizer lr
  double clip = 1.0;              // global gradient-norm clip (SHAC's 1.0); 0 = none
  bool normalize_observations = true;
  int thread_count = 0;
};

struct ShacWindowStats {
  int window = 0;         // 0-based count of windows trained so far
  int frame = 0;          // episode frame the window started at
  double loss = 0;        // the window's loss before the step
  double grad_norm = 0;   // before clipping
  long long sim_steps = 0;  // solver substeps run so far (forward; the adjoint runs as many again)
};

// running mean and variance of each observation entry (Welford, in double)
struct RunningStats {
  std::vector<double> mean, m2;
  long long count = 0;
  void add(const double* x, int n);
  template <class S>
  void add(const std::vector<S>& x);
  double stddev(int k) const;
};

template <class S>
class ShacTrainerT {
 public:
  ShacTrainerT();
  ~ShacTrainerT();
  ShacTrainerT(ShacTrainerT&&) noexcept;
  ShacTrainerT& operator=(ShacTrainerT&&) noexcept;

  // the task needs a policy; its other parameters must be policy weights only; errors
  // name the task (window < 1 or longer than the horizon, effort terms, no policy)
  static Result<ShacTrainerT> create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                     ShacOptions options = {});

  // train on the next window (a new episode starts when the last one is used up)
  Result<ShacWindowStats> step_window();
  // the current window's loss at weights w (and dL/dw) without stepping (for gradient checks)
  Result<S> window_loss(const std::vector<S>& w, std::vector<S>* grad);
  // the task's loss over a whole episode with the current weights (forward only; not counted)
  Result<S> evaluate();

  const std::vector<S>& weights() const { return w_; }
  void set_weights(std::vector<S> w) { w_ = std::move(w); }
  const PolicyT<S>& policy() const { return *policy_; }
  long long sim_steps() const { return sim_steps_; }
  int windows_per_episode() const { return task_.horizon / options_.window; }

 private:
  scene::Task task_;
  ShacOptions options_;
  std::unique_ptr<PolicyT<S>> policy_;  // the rollouts point at it: kept in place across moves
  LossT<S> window_loss_, episode_loss_;
  OptimizerT<S> optimizer_;
  std::unique_ptr<ModelT<S>> model_;
  std::unique_ptr<PolicyRolloutT<S>> window_rollout_;
  StateT<S> initial_, state_;
  RunningStats stats_;
  std::vector<S> w_;
  int frame_ = 0, windows_ = 0;
  long long sim_steps_ = 0;
};

}  // namespace adj::optim
