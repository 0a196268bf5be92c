#include "engine/optim/rigid_task.h"

#include "engine/optim/check_grad.h"

#include <chrono>
#include <cmath>
#include <random>
#include <set>

namespace adj::optim {

template <class S>
Result<RigidTaskRunnerT<S>> RigidTaskRunnerT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task) {
  RigidTaskRunnerT r;
  r.task_ = task;
  const std::string where = "task '" + task.name + "'";
  if (!cs.has_robots()) return Status::error(where + ": the scene has no robots");
  const scene::OptimizerSpec& os = task.optimizer;
  if (!(os.lr > 0) || !std::isfinite(os.lr)) return Status::error(where + ": optimizer lr must be > 0");
  if (!(os.clip >= 0) || !std::isfinite(os.clip)) return Status::error(where + ": optimizer clip must be >= 0");
  int policy_size = 0;
  if (task.has_policy) {
    auto pol = RigidPolicyT<S>::create(cs, task);
    if (!pol) return pol.status();
    r.policy_ = std::make_unique<RigidPolicyT<S>>(std::move(pol.value()));
    policy_size = r.policy_->weight_count();
  }
  auto params = RigidParametersT<S>::create(cs, task, policy_size);
  if (!params) return params.status();
  r.params_ = std::move(params.value());
  if (r.params_.size() == 0) return Status::error(where + ": no parameters to optimize");
  auto loss = RigidLossT<S>::create(cs, task, r.params_);
  if (!loss) return loss.status();
  r.loss_ = std::move(loss.value());
  r.optimizer_ = OptimizerT<S>(os, r.params_.size());
  r.base_ = cs.model.rigid;
  r.model_ = std::make_unique<ModelT<S>>(cs.model);
  r.loss_.bind(&r.model_->rigid);
  RolloutOptions<S> ro;
  ro.steps = task.horizon;
  ro.dt = cs.frame_dt;
  ro.substeps = cs.substeps;
  ro.checkpoint_every = task.checkpoint_every;
  ro.body_param_grads = r.params_.has_model_params();
  r.rollout_ = std::make_unique<RolloutT<S>>(*r.model_, ro);
  r.initial_base_ = cs.model.make_state();
  r.cs_dt_ = cs.frame_dt;
  r.solver_ = SolverT<S>({.substeps = cs.substeps, .body_param_grads = r.params_.has_model_params()});
  r.theta_ = r.params_.initial(cs);
  if (const ParamBlock* pb = r.params_.policy_block()) r.policy_->init_weights(r.theta_.data() + pb->offset, task.seed);
  return r;
}

template <class S>
std::string RigidTaskRunnerT<S>::entry_name(int i) const {
  const ParamBlock* pb = params_.policy_block();
  if (pb && i >= pb->offset) return "policy." + policy_->weight_name(i - pb->offset);
  return params_.entry_name(i);
}

template <class S>
void RigidTaskRunnerT<S>::set_theta(std::vector<S> theta) {
  params_.clamp(theta);
  theta_ = std::move(theta);
}

template <class S>
Result<S> RigidTaskRunnerT<S>::evaluate(const std::vector<S>& theta, std::vector<S>* grad) {
  if (policy_) return evaluate_policy(theta, grad);
  const std::string where = "task '" + task_.name + "': ";
  initial_ = initial_base_;
  params_.apply(theta, base_, *model_, initial_, controls_);
  loss_.begin();
  frames_.assign(task_.horizon + 1, StateT<S>{});
  Status st = rollout_->forward(initial_, controls_, [&](int t, const StateT<S>& s) {
    loss_.observe(t, s);
    frames_[t] = s;
  });
  if (!st) return Status::error(where + st.message());
  S value = loss_.value(theta);
  if (!std::isfinite(double(value))) return Status::error(where + "the loss is not finite");
  if (!grad) return value;
  st = rollout_->backward([&](int t, const StateT<S>& s, StateT<S>& adj) { loss_.seed(t, s, adj); });
  if (!st) return Status::error(where + st.message());
  params_.gather(rollout_->grad_initial(), rollout_->grad_controls(), rollout_->grad_model(), *grad);
  loss_.add_effort(theta, *grad);
  for (int i = 0; i < int(grad->size()); ++i)
    if (!std::isfinite(double((*grad)[i])))
      return Status::error(where + "gradient entry " + entry_name(i) + " is not finite");
  return value;
}

template <class S>
Result<S> RigidTaskRunnerT<S>::evaluate_policy(const std::vector<S>& theta, std::vector<S>* grad) {
  const std::string where = "task '" + task_.name + "': ";
  const ParamBlock& pb = *params_.policy_block();
  const S* w = theta.data() + pb.offset;
  const int T = task_.horizon;
  initial_ = initial_base_;
  params_.apply(theta, base_, *model_, initial_, controls_);
  std::vector<ControlT<S>> applied(T, model_->make_control());
  std::vector<std::vector<S>> obs(T), outs(T);  // outs[t]: frame t's outputs (a previous_action term reads t - 1's)
  loss_.begin();
  frames_.assign(T + 1, StateT<S>{});
  frames_[0] = initial_;
  for (int t = 0; t < T; ++t) {
    loss_.observe(t, frames_[t]);
    if (!controls_.empty()) applied[t] = controls_[t];
    policy_->observe(t, frames_[t], obs[t], t > 0 ? &outs[t - 1] : nullptr);
    policy_->forward(w, obs[t], outs[t]);
    policy_->apply_outputs(outs[t], applied[t]);
    Status st = solver_.step(*model_, frames_[t], frames_[t + 1], applied[t], cs_dt_);
    if (!st) return Status::error(where + "frame " + std::to_string(t) + ": " + st.message());
  }
  loss_.observe(T, frames_[T]);
  S value = loss_.value(theta);
  const S effort = loss_.action_effort();  // sum over frames of effort x |outputs|^2
  for (const std::vector<S>& o : outs)
    for (S x : o) value += effort * x * x;
  if (!std::isfinite(double(value))) return Status::error(where + "the loss is not finite");
  if (!grad) return value;
  // backward: adj_t = loss seed + (step t)^T adj_{t+1} + policy's observation of state t
  StateT<S> adj = zero_like(frames_[T]);
  StateT<S> adj_in;
  loss_.seed(T, frames_[T], adj);
  std::vector<ControlT<S>> grad_controls(T, model_->make_control());
  ModelGradT<S> grads;  // the bodies' part is all the policy rollout has
  grads.rigid = model_->rigid.make_grad();
  // d_prev: frame t's observation's adjoint with respect to frame t - 1's outputs
  std::vector<S> d_w(pb.count, S(0)), d_out, d_obs, d_prev(std::size_t(policy_->output_size()), S(0));
  for (int t = T - 1; t >= 0; --t) {
    Status st = solver_.step_adjoint(*model_, frames_[t], applied[t], cs_dt_, adj, adj_in, grad_controls[t], grads);
    if (!st) return Status::error(where + "frame " + std::to_string(t) + " (backward): " + st.message());
    policy_->output_grads(grad_controls[t], d_out);
    for (std::size_t k = 0; k < d_out.size(); ++k) d_out[k] += d_prev[k] + S(2) * effort * outs[t][k], d_prev[k] = S(0);
    policy_->backward(w, obs[t], d_out, d_w.data(), d_obs);
    policy_->observe_adjoint(frames_[t], d_obs, adj_in, &d_prev);
    loss_.seed(t, frames_[t], adj_in);
    std::swap(adj, adj_in);
  }
  params_.gather(adj, grad_controls, grads, *grad);
  std::copy(d_w.begin(), d_w.end(), grad->begin() + pb.offset);
  loss_.add_effort(theta, *grad);
  for (int i = 0; i < int(grad->size()); ++i)
    if (!std::isfinite(double((*grad)[i])))
      return Status::error(where + "gradient entry " + entry_name(i) + " is not finite");
  return value;
}

template <class S>
Result<IterationStats> RigidTaskRunnerT<S>::iterate() {
  return iterate_step(
      theta_, grad_, optimizer_, history_, [&](const std::vector<S>& x, std::vector<S>* g) { return evaluate(x, g); },
      [&](std::vector<S>& x) { params_.clamp(x); });
}

template <class S>
Result<GradCheckReport> RigidTaskRunnerT<S>::check_grad(int samples, double eps, std::uint64_t seed) {
  return check_grad_at(
      theta_, grad_, params_.blocks(), samples, eps, seed,
      [&](const std::vector<S>& x, std::vector<S>* g) { return evaluate(x, g); }, [&](int i) { return entry_name(i); });
}

template class RigidTaskRunnerT<float>;
template class RigidTaskRunnerT<double>;

}  // namespace adj::optim
