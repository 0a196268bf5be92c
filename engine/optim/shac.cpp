#include "engine/optim/shac.h"

#include <cmath>

namespace adj::optim {

void RunningStats::add(const double* x, int n) {
  if (mean.empty()) mean.assign(n, 0.0), m2.assign(n, 0.0);
  ++count;
  for (int k = 0; k < n; ++k) {
    double d = x[k] - mean[k];
    mean[k] += d / double(count);
    m2[k] += d * (x[k] - mean[k]);
  }
}

template <class S>
void RunningStats::add(const std::vector<S>& x) {
  std::vector<double> d(x.begin(), x.end());
  add(d.data(), int(d.size()));
}

double RunningStats::stddev(int k) const {
  return count > 1 ? std::sqrt(m2[k] / double(count - 1)) : 1.0;
}

template <class S>
ShacTrainerT<S>::ShacTrainerT() = default;
template <class S>
ShacTrainerT<S>::~ShacTrainerT() = default;
template <class S>
ShacTrainerT<S>::ShacTrainerT(ShacTrainerT&&) noexcept = default;
template <class S>
ShacTrainerT<S>& ShacTrainerT<S>::operator=(ShacTrainerT&&) noexcept = default;

template <class S>
Result<ShacTrainerT<S>> ShacTrainerT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                                ShacOptions options) {
  const std::string where = "task '" + task.name + "' (SHAC)";
  if (!task.has_policy) return Status::error(where + ": the task has no policy to train");
  if (options.window < 1 || options.window > task.horizon)
    return Status::error(where + ": window " + std::to_string(options.window) + " must lie in 1.." +
                         std::to_string(task.horizon) + " (the horizon)");
  for (const scene::ParamSpec& p : task.parameters)
    if (p.kind != scene::ParamKind::policy)
      return Status::error(where + ": only policy weights can be trained by windows, not " +
                           scene::to_string(p.kind));
  for (const scene::LossTerm& l : task.loss)
    if (l.kind == scene::LossKind::effort || l.step >= 0)
      return Status::error(where + ": window losses need terms that read the last frame (step -1), without effort");
  ShacTrainerT r;
  r.task_ = task;
  r.options_ = options;
  if (!(r.options_.lr > 0)) r.options_.lr = task.optimizer.lr;
  Result<PolicyT<S>> p = PolicyT<S>::create(cs, task);
  if (!p) return p.status();
  r.policy_ = std::make_unique<PolicyT<S>>(std::move(p.value()));
  Result<ParametersT<S>> params = ParametersT<S>::create(cs, task, r.policy_->weight_count());
  if (!params) return params.status();
  scene::Task window_task = task;
  window_task.horizon = options.window;
  Result<LossT<S>> wl = LossT<S>::create(cs, window_task, params.value());
  if (!wl) return wl.status();
  r.window_loss_ = std::move(wl.value());
  Result<LossT<S>> el = LossT<S>::create(cs, task, params.value());
  if (!el) return el.status();
  r.episode_loss_ = std::move(el.value());
  scene::OptimizerSpec os{scene::OptimizerKind::adam, r.options_.lr, options.clip, 0};
  r.optimizer_ = OptimizerT<S>(os, r.policy_->weight_count());
  r.model_ = std::make_unique<ModelT<S>>(cs.model);
  r.window_rollout_ = std::make_unique<PolicyRolloutT<S>>(*r.model_, *r.policy_, options.window, cs.frame_dt,
                                                          cs.substeps, options.thread_count);
  r.initial_ = r.model_->make_state();
  r.state_ = r.initial_;
  r.w_.assign(r.policy_->weight_count(), S(0));
  r.policy_->init_weights(r.w_.data(), task.seed);
  return r;
}

template <class S>
Result<S> ShacTrainerT<S>::window_loss(const std::vector<S>& w, std::vector<S>* grad) {
  if (frame_ + options_.window > task_.horizon) {  // a new episode
    state_ = initial_;
    frame_ = 0;
  }
  if (options_.normalize_observations && stats_.count > 1) {
    std::vector<S> mean(stats_.mean.begin(), stats_.mean.end()), sd;
    for (int k = 0; k < int(mean.size()); ++k) sd.push_back(S(stats_.stddev(k)));
    policy_->set_normalizer(std::move(mean), std::move(sd));
  }
  window_rollout_->set_frame_offset(frame_);
  window_loss_.begin();
  Status st = window_rollout_->forward(state_, {}, w.data(),
                                       [&](int t, const StateT<S>& s) { window_loss_.observe(t, s); });
  if (!st) return Status::error("SHAC window at frame " + std::to_string(frame_) + ": " + st.message());
  S value = window_loss_.value({});
  if (!is_finite(value)) return Status::error("SHAC window at frame " + std::to_string(frame_) + ": loss not finite");
  if (!grad) return value;
  grad->assign(w.size(), S(0));
  st = window_rollout_->backward(w.data(), [&](int t, StateT<S>& adj) { window_loss_.seed(t, adj); }, grad->data());
  if (!st) return Status::error("SHAC window at frame " + std::to_string(frame_) + ": " + st.message());
  return value;
}

template <class S>
Result<ShacWindowStats> ShacTrainerT<S>::step_window() {
  std::vector<S> g;
  Result<S> loss = window_loss(w_, &g);
  if (!loss) return loss.status();
  ShacWindowStats s;
  s.window = windows_;
  s.frame = frame_;
  s.loss = double(loss.value());
  for (S x : g)
    if (!is_finite(x)) return Status::error("SHAC window at frame " + std::to_string(frame_) + ": gradient not finite");
  s.grad_norm = optimizer_.step(w_, g);
  // the window's observations join the running statistics, then the episode goes on
  std::vector<S> obs;
  for (int t = 0; t < options_.window; ++t) {
    policy_->observe_raw(frame_ + t, window_rollout_->state(t), obs);
    stats_.add(obs);
  }
  state_ = window_rollout_->final_state();
  frame_ += options_.window;
  sim_steps_ += (long long)options_.window * window_rollout_->substeps();
  s.sim_steps = sim_steps_;
  ++windows_;
  return s;
}

template <class S>
Result<S> ShacTrainerT<S>::evaluate() {
  PolicyRolloutT<S> roll(*model_, *policy_, task_.horizon, window_rollout_->dt(), window_rollout_->substeps(),
                         options_.thread_count);
  episode_loss_.begin();
  Status st = roll.forward(initial_, {}, w_.data(), [&](int t, const StateT<S>& s) { episode_loss_.observe(t, s); });
  if (!st) return Status::error("SHAC evaluation: " + st.message());
  return episode_loss_.value({});
}

template void RunningStats::add(const std::vector<float>&);
template void RunningStats::add(const std::vector<double>&);
template class ShacTrainerT<float>;
template class ShacTrainerT<double>;

}  // namespace adj::optim
