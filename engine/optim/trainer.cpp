#include "engine/optim/trainer.h"

#include "engine/optim/check_grad.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>

namespace adj::optim {

std::string GradCheckReport::format() const {
  std::string s;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-44s %14s %14s %11s %11s\n", "entry", "analytic", "fd", "abs err", "rel err");
  s += buf;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const GradCheckRow& r = rows[k];
    std::snprintf(buf, sizeof buf, "%-44s %14.6e %14.6e %11.3e %11.3e%s\n", r.name.c_str(), r.analytic, r.fd, r.abs_err,
                  r.rel_err, int(k) == worst ? "  <- worst" : "");
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "loss %.9g, eps %g, %zu entries, max rel err %.3e\n", loss, eps, rows.size(),
                max_rel_err);
  s += buf;
  return s;
}

template <class S>
TaskRunnerT<S>::TaskRunnerT() = default;
template <class S>
TaskRunnerT<S>::~TaskRunnerT() = default;
template <class S>
TaskRunnerT<S>::TaskRunnerT(TaskRunnerT&&) noexcept = default;
template <class S>
TaskRunnerT<S>& TaskRunnerT<S>::operator=(TaskRunnerT&&) noexcept = default;

template <class S>
Result<TaskRunnerT<S>> TaskRunnerT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                              RunnerOptions options) {
  TaskRunnerT r;
  r.task_ = task;
  const std::string where = "task '" + task.name + "'";
  const scene::OptimizerSpec& os = task.optimizer;
  if (!(os.lr > 0) || !std::isfinite(os.lr)) return Status::error(where + ": optimizer lr must be > 0");
  if (!(os.clip >= 0) || !std::isfinite(os.clip)) return Status::error(where + ": optimizer clip must be >= 0");
  if (!(cs.frame_dt > S(0)) || cs.substeps < 1)
    return Status::error(where + ": frame dt and substeps must be positive");
  const bool robots = task_names_robot(cs, task);
  r.kind_ = !robots ? "particles" : cs.has_particles() ? "robot + particles, coupled" : "robot";
  int policy_size = 0;
  if (task.has_policy) {
    Result<PolicyT<S>> p = PolicyT<S>::create(cs, task);
    if (!p) return p.status();
    r.policy_ = std::make_unique<PolicyT<S>>(std::move(p.value()));
    policy_size = r.policy_->weight_count();
  }
  Result<ParametersT<S>> params = ParametersT<S>::create(cs, task, policy_size);
  if (!params) return params.status();
  r.params_ = std::move(params.value());
  if (r.params_.size() == 0) return Status::error(where + ": no parameters to optimize");
  if (r.policy_ && !r.policy_->drives_bodies())
    for (const ParamBlock& b : r.params_.blocks())
      if (b.kind == scene::ParamKind::spring_activation || b.kind == scene::ParamKind::tet_activation)
        return Status::error(where + ": " + scene::to_string(b.kind) +
                             " parameters and a policy both drive the actuated springs/tets");
  // the loss: each side's terms
  if (task.loss.empty()) return Status::error(where + ": no loss terms");
  auto loss = LossT<S>::create(cs, task, r.params_);
  if (!loss) return loss.status();
  r.loss_ = std::move(loss.value());
  r.optimizer_ = OptimizerT<S>(os, r.params_.size());
  r.model_ = std::make_unique<ModelT<S>>(cs.model);
  r.loss_->bind(&r.model_->rigid);
  if (r.policy_) r.policy_->bind(&r.model_->rigid);
  RolloutOptions<S> ro;
  ro.steps = task.horizon;
  ro.dt = cs.frame_dt;
  ro.substeps = cs.substeps;
  ro.checkpoint_every = task.checkpoint_every;
  ro.thread_count = options.thread_count;
  ro.control_grads = r.params_.has_controls();
  if (r.policy_ && !r.policy_->observes_state()) ro.control_grads = true;  // open loop: dL/d outputs
  ro.body_param_grads = r.params_.has_model_params();
  r.rollout_options_ = ro;
  r.keep_frames_ = options.keep_frames || robots;
  if (r.policy_ && r.policy_->observes_state())
    r.solver_ = std::make_unique<SolverT<S>>(SolverOptions{.substeps = cs.substeps,
                                                           .thread_count = options.thread_count,
                                                           .body_param_grads = r.params_.has_model_params()});
  else
    r.rollout_ = std::make_unique<RolloutT<S>>(*r.model_, ro);
  r.theta_ = r.params_.initial(cs);
  if (const ParamBlock* pb = r.params_.policy_block()) r.policy_->init_weights(r.theta_.data() + pb->offset, task.seed);
  r.clamp(r.theta_);
  return r;
}

template <class S>
const char* TaskRunnerT<S>::kind() const {
  return kind_;
}

template <class S>
void TaskRunnerT<S>::set_theta(std::vector<S> theta) {
  assert(int(theta.size()) == params_.size() && "theta does not match the parameters");
  clamp(theta);
  theta_ = std::move(theta);
  optimizer_.backtrack() = {};  // a point from outside: nothing to go back to
}

template <class S>
std::string TaskRunnerT<S>::entry_name(int i) const {
  const ParamBlock& b = block_of(i);
  if (b.kind == scene::ParamKind::policy && policy_) return "policy." + policy_->weight_name(i - b.offset);
  return params_.entry_name(i);
}

template <class S>
std::string TaskRunnerT<S>::term_name(int k) const {
  return loss_->term_name(k);
}

template <class S>
const StateT<S>& TaskRunnerT<S>::final_state() const {
  if (rollout_) return rollout_->final_state();
  return frames_.back();
}

template <class S>
Status TaskRunnerT<S>::check_grad_finite(const std::vector<S>& grad) const {
  for (int i = 0; i < int(grad.size()); ++i)
    if (!is_finite(grad[i])) return Status::error("gradient entry " + entry_name(i) + " is not finite");
  return Status::ok();
}

template <class S>
S TaskRunnerT<S>::loss_value(const std::vector<S>& theta) {
  const S value = loss_->value(theta);
  term_values_ = loss_->term_values();
  return value;
}

template <class S>
void TaskRunnerT<S>::gather(const std::vector<S>& theta, const StateT<S>& grad_initial,
                            const std::vector<ControlT<S>>& grad_controls, const ModelGradT<S>& grad_model,
                            std::vector<S>& grad) const {
  params_.gather(grad_initial, grad_controls, grad_model, grad);
  loss_->add_effort(theta, grad);
}

template <class S>
Result<S> TaskRunnerT<S>::evaluate(const std::vector<S>& theta, std::vector<S>* grad) {
  assert(int(theta.size()) == params_.size() && "theta does not match the parameters");
  Result<S> r = solver_ ? evaluate_closed_loop(theta, grad) : evaluate_open_loop(theta, grad);
  if (!r) return Status::error("task '" + task_.name + "': " + r.status().message());
  return r;
}

template <class S>
Result<S> TaskRunnerT<S>::evaluate_open_loop(const std::vector<S>& theta, std::vector<S>* grad) {
  apply(theta);
  // a phases-only policy: its outputs do not depend on the state, so they are computed up front
  const ParamBlock* pb = policy_ ? params_.policy_block() : nullptr;
  const S* w = pb ? theta.data() + pb->offset : nullptr;
  std::vector<S> obs, out;
  if (pb) {
    if (controls_.empty()) controls_.assign(task_.horizon, model_->make_control());
    for (int t = 0; t < task_.horizon; ++t) {
      policy_->observe(t, initial_, obs);
      policy_->forward(w, obs, out);
      for (int k = 0; k < policy_->output_size(); ++k)
        if (!is_finite(out[k]))
          return Status::error("policy output " + std::to_string(k) + " at step " + std::to_string(t) +
                               " is not finite");
      policy_->apply_outputs(out, controls_[t]);
    }
  }
  loss_->begin();
  if (keep_frames_) frames_.assign(std::size_t(task_.horizon + 1), StateT<S>{});
  Status st = rollout_->forward(
      initial_, controls_,
      [&](int t, const StateT<S>& s) {
        loss_->observe(t, s);
        if (keep_frames_) frames_[std::size_t(t)] = s;
      },
      /*for_backward=*/grad != nullptr);
  if (!st) return st;
  S value = loss_value(theta);
  if (!is_finite(value)) return Status::error("the loss is not finite");
  if (!grad) return value;
  st = rollout_->backward([&](int t, const StateT<S>& s, StateT<S>& adj) { loss_->seed(t, s, adj); });
  if (!st) return st;
  gather(theta, rollout_->grad_initial(), rollout_->grad_controls(), rollout_->grad_model(), *grad);
  if (pb) {
    std::vector<S> d_out(policy_->output_size()), d_obs;
    S* d_w = grad->data() + pb->offset;
    for (int t = 0; t < task_.horizon; ++t) {
      policy_->output_grads(rollout_->grad_controls()[t], d_out);
      policy_->observe(t, initial_, obs);
      policy_->backward(w, obs, d_out, d_w, d_obs);
    }
  }
  step_grad_norms_ = rollout_->grad_norm();
  st = check_grad_finite(*grad);
  if (!st) return st;
  return value;
}

// A policy that observes the state, for every model (particles, robots, both): every frame
// kept, stepped here. Forward: frame t's observation (with frame t - 1's outputs for a
// previous_action term), the outputs on top of the task's controls, one step. Backward:
// adj_t = loss seed + (step t)^T adj_{t+1} + the policy's observation of frame t.
template <class S>
Result<S> TaskRunnerT<S>::evaluate_closed_loop(const std::vector<S>& theta, std::vector<S>* grad) {
  const ParamBlock& pb = *params_.policy_block();
  const S* w = theta.data() + pb.offset;
  const int T = task_.horizon;
  const S dt = rollout_options_.dt;
  apply(theta);
  Status st = check_state_finite(initial_, "initial state");
  if (!st) return Status::error("frame 0: " + st.message());
  std::vector<ControlT<S>> applied(T, model_->make_control());
  std::vector<std::vector<S>> obs(T), outs(T);  // outs[t]: frame t's outputs (a previous_action term reads t - 1's)
  loss_->begin();
  frames_.assign(T + 1, StateT<S>{});
  frames_[0] = initial_;
  for (int t = 0; t < T; ++t) {
    loss_->observe(t, frames_[t]);
    if (!controls_.empty()) applied[t] = controls_[t];
    policy_->observe(t, frames_[t], obs[t], t > 0 ? &outs[t - 1] : nullptr);
    policy_->forward(w, obs[t], outs[t]);
    for (int k = 0; k < policy_->output_size(); ++k)
      if (!is_finite(outs[t][k]))
        return Status::error("frame " + std::to_string(t) + ": policy output " + std::to_string(k) + " is not finite");
    policy_->apply_outputs(outs[t], applied[t]);
    st = solver_->step(*model_, frames_[t], frames_[t + 1], applied[t], dt);
    if (!st) return Status::error("frame " + std::to_string(t) + ": " + st.message());
  }
  loss_->observe(T, frames_[T]);
  S value = loss_value(theta);
  const S effort = loss_->action_effort();  // sum over frames of effort x |outputs|^2
  for (const std::vector<S>& o : outs)
    for (S x : o) value += effort * x * x;
  if (!is_finite(value)) return Status::error("the loss is not finite");
  if (!grad) return value;
  StateT<S> adj = zero_like(frames_[T]);
  StateT<S> adj_in;
  loss_->seed(T, frames_[T], adj);
  step_grad_norms_.assign(std::size_t(T + 1), S(0));
  step_grad_norms_[std::size_t(T)] = state_norm(adj);
  std::vector<ControlT<S>> grad_controls(T, model_->make_control());
  ModelGradT<S> grad_model = model_->make_grad();
  // d_prev: frame t's observation's adjoint with respect to frame t - 1's outputs
  std::vector<S> d_w(pb.count, S(0)), d_out, d_obs, d_prev(std::size_t(policy_->output_size()), S(0));
  for (int t = T - 1; t >= 0; --t) {
    st = solver_->step_adjoint(*model_, frames_[t], applied[t], dt, adj, adj_in, grad_controls[t], grad_model);
    if (!st) return Status::error("frame " + std::to_string(t) + " (backward): " + st.message());
    policy_->output_grads(grad_controls[t], d_out);
    for (std::size_t k = 0; k < d_out.size(); ++k) d_out[k] += d_prev[k] + S(2) * effort * outs[t][k], d_prev[k] = S(0);
    policy_->backward(w, obs[t], d_out, d_w.data(), d_obs);
    policy_->observe_adjoint(frames_[t], d_obs, adj_in, &d_prev);
    loss_->seed(t, frames_[t], adj_in);
    st = check_state_finite(adj_in, "loss gradient");
    if (!st) return Status::error("frame " + std::to_string(t) + " (backward): " + st.message());
    std::swap(adj, adj_in);
    step_grad_norms_[std::size_t(t)] = state_norm(adj);
  }
  gather(theta, adj, grad_controls, grad_model, *grad);
  std::copy(d_w.begin(), d_w.end(), grad->begin() + pb.offset);
  st = check_grad_finite(*grad);
  if (!st) return st;
  return value;
}

template <class S>
Result<S> TaskRunnerT<S>::trajectory_loss(const std::vector<StateT<S>>& frames, const std::vector<S>& theta) const {
  if (int(frames.size()) != task_.horizon + 1)
    return Status::error("task '" + task_.name + "': a trajectory of " + std::to_string(frames.size()) +
                         " frames, the horizon needs " + std::to_string(task_.horizon + 1));
  // a copy of the loss: what it observes is this trajectory's, not the last evaluate's
  LossT<S> l = *loss_;
  l.begin();
  for (std::size_t t = 0; t < frames.size(); ++t) l.observe(int(t), frames[t]);
  return l.value(theta);
}

template <class S>
Result<IterationStats> TaskRunnerT<S>::iterate() {
  return iterate_step(
      theta_, grad_, optimizer_, history_, [&](const std::vector<S>& x, std::vector<S>* g) { return evaluate(x, g); },
      [&](std::vector<S>& x) { clamp(x); });
}

template <class S>
Result<S> TaskRunnerT<S>::finish() {
  return finish_step(theta_, optimizer_, [&](const std::vector<S>& x, std::vector<S>* g) { return evaluate(x, g); });
}

template <class S>
Result<GradCheckReport> TaskRunnerT<S>::check_grad(int samples, double eps, std::uint64_t seed) {
  return check_grad_at(
      theta_, grad_, params_.blocks(), samples, eps, seed,
      [&](const std::vector<S>& x, std::vector<S>* g) { return evaluate(x, g); }, [&](int i) { return entry_name(i); });
}

template class TaskRunnerT<float>;
template class TaskRunnerT<double>;

}  // namespace adj::optim
