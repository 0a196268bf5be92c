// First-order optimizers over a flat parameter vector: SGD and Adam (Kingma & Ba, with
// bias correction), after global-norm gradient clipping. Plain sequential loops in a
// fixed order: the same gradients give bit-identical parameters on every run.
#pragma once

#include <vector>

#include "engine/scene/scene.h"

namespace adj::optim {

// spec.backtrack's memory (iterate_step in check_grad.h): the last accepted point, its loss
// and the step proposed from it, of which `scale` is taken
template <class S>
struct BacktrackT {
  std::vector<S> from, delta;
  double from_loss = 0;
  double scale = 1;
  bool pending = false;  // theta is a step from `from`, not yet measured
  // theta = from + scale delta (the step taken at `scale` of its length)
  void place(std::vector<S>& theta) const {
    for (std::size_t i = 0; i < theta.size(); ++i) theta[i] = S(double(from[i]) + scale * double(delta[i]));
  }
  // shorter than this fraction of the optimizer's step, no step is tried: the run has stalled
  // (converged, or at a cliff of the loss: a step of any length crosses it)
  static constexpr double min_scale = 1.0 / (1 << 20);
};

template <class S>
class OptimizerT {
 public:
  OptimizerT() = default;
  OptimizerT(const scene::OptimizerSpec& spec, int size);

  // theta -= update(clip(grad)); returns the gradient norm before clipping
  double step(std::vector<S>& theta, const std::vector<S>& grad);
  // forget the moments, the step count and the backtracking memory
  void reset();
  // spec().backtrack's memory; cleared by reset() and when theta is set from outside
  BacktrackT<S>& backtrack() { return backtrack_; }
  // a new step size for the next steps (schedules); the moments stay
  void set_lr(double lr) { spec_.lr = lr; }

  int iteration() const { return t_; }
  // Adam's moments (empty before the first step), for checkpoints; restore() puts them back
  const std::vector<double>& first_moment() const { return m_; }
  const std::vector<double>& second_moment() const { return v_; }
  void restore(std::vector<double> m, std::vector<double> v, int t) { m_ = std::move(m), v_ = std::move(v), t_ = t; }
  const scene::OptimizerSpec& spec() const { return spec_; }

  // Adam's constants (Kingma & Ba's defaults)
  static constexpr double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;

 private:
  scene::OptimizerSpec spec_;
  std::vector<double> m_, v_;  // Adam moments, kept in double for every S
  int t_ = 0;
  BacktrackT<S> backtrack_;
};

// |g| (accumulated in double)
template <class S>
double global_norm(const std::vector<S>& g);

using Optimizer = OptimizerT<float>;

}  // namespace adj::optim
