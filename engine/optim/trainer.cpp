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

namespace {

// the task's entries on each side (engine/optim/trainer.h's rule), each side's copy of the task
// holding its own; the policy goes with the side the task names (the robots, when it names one)
struct SidesT {
  bool robots = false;  // the task names a robot object
  scene::Task robot, particles;
};

template <class S>
SidesT split_task(const scene::CompiledSceneT<S>& cs, const scene::Task& task) {
  auto is_robot = [&](const std::string& name) {
    const scene::ObjectRange* r = cs.find(name);
    return r && r->kind == scene::ObjectKind::robot;
  };
  SidesT s;
  s.robots = task_names_robot(cs, task);
  s.robot = s.particles = task;
  s.robot.parameters.clear();
  s.robot.loss.clear();
  s.particles.parameters.clear();
  s.particles.loss.clear();
  s.robot.has_policy = task.has_policy && s.robots;
  s.particles.has_policy = task.has_policy && !s.robots;
  // in a scene of robots alone, every entry of a robot task is the robots'
  const bool all = s.robots && !cs.has_particles();
  auto robot_param = [&](const scene::ParamSpec& p) {
    if (!s.robots) return false;
    if (all || p.object.empty())
      return all || p.kind == scene::ParamKind::policy || field_of(p.kind, FieldSide::robot) != nullptr;
    return is_robot(p.object);
  };
  auto robot_term = [&](const scene::LossTerm& l) {
    return s.robots && (all || l.object.empty() || is_robot(l.object));
  };
  for (const scene::ParamSpec& p : task.parameters) (robot_param(p) ? s.robot : s.particles).parameters.push_back(p);
  for (const scene::LossTerm& l : task.loss) (robot_term(l) ? s.robot : s.particles).loss.push_back(l);
  return s;
}

}  // namespace

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
  const SidesT sides = split_task(cs, task);
  r.kind_ = !sides.robots ? "particles" : cs.has_particles() ? "robot + particles, coupled" : "robot";
  if (sides.robots && task.has_policy && cs.has_particles())
    return Status::error(where + ": policies are not supported with robot-particle coupling yet");
  // the robot side
  int robot_policy_size = 0;
  if (sides.robot.has_policy) {
    auto pol = RigidPolicyT<S>::create(cs, task);
    if (!pol) return pol.status();
    r.rpolicy_ = std::make_unique<RigidPolicyT<S>>(std::move(pol.value()));
    robot_policy_size = r.rpolicy_->weight_count();
  }
  if (sides.robots) {
    auto rp = RigidParametersT<S>::create(cs, sides.robot, robot_policy_size);
    if (!rp) return rp.status();
    r.rparams_ = std::move(rp.value());
  }
  // the particle side
  int policy_size = 0;
  if (sides.particles.has_policy) {
    Result<PolicyT<S>> p = PolicyT<S>::create(cs, task);
    if (!p) return p.status();
    r.policy_ = std::make_unique<PolicyT<S>>(std::move(p.value()));
    policy_size = r.policy_->weight_count();
  }
  if (!sides.robots || !sides.particles.parameters.empty()) {
    Result<ParametersT<S>> params = ParametersT<S>::create(cs, sides.particles, policy_size);
    if (!params) return params.status();
    r.pparams_ = std::move(params.value());
  }
  if (r.rparams_.size() + r.pparams_.size() == 0) return Status::error(where + ": no parameters to optimize");
  if (r.policy_)
    for (const ParamBlock& b : r.pparams_.blocks())
      if (b.kind == scene::ParamKind::spring_activation || b.kind == scene::ParamKind::tet_activation)
        return Status::error(where + ": " + scene::to_string(b.kind) +
                             " parameters and a policy both drive the actuated springs/tets");
  // the loss: each side's terms
  if (task.loss.empty()) return Status::error(where + ": no loss terms");
  if (!sides.robot.loss.empty()) {
    auto rl = RigidLossT<S>::create(cs, sides.robot, r.rparams_);
    if (!rl) return rl.status();
    r.rloss_ = std::move(rl.value());
  }
  if (!sides.particles.loss.empty()) {
    auto pl = LossT<S>::create(cs, sides.particles, r.pparams_);
    if (!pl) return pl.status();
    r.ploss_ = std::move(pl.value());
  }
  r.blocks_ = r.rparams_.blocks();
  for (ParamBlock b : r.pparams_.blocks()) {
    b.offset += r.rparams_.size();
    r.blocks_.push_back(b);
  }
  r.optimizer_ = OptimizerT<S>(os, r.rparams_.size() + r.pparams_.size());
  r.rbase_ = cs.model.rigid;
  r.model_ = std::make_unique<ModelT<S>>(cs.model);
  if (r.rloss_) r.rloss_->bind(&r.model_->rigid);
  if (r.rpolicy_) r.rpolicy_->bind(&r.model_->rigid);
  RolloutOptions<S> ro;
  ro.steps = task.horizon;
  ro.dt = cs.frame_dt;
  ro.substeps = cs.substeps;
  ro.checkpoint_every = task.checkpoint_every;
  ro.thread_count = options.thread_count;
  ro.control_grads = r.pparams_.has_controls() || r.rparams_.has_controls();
  if (r.policy_ && !r.policy_->observes_state()) ro.control_grads = true;  // open loop: dL/d outputs
  ro.body_param_grads = r.rparams_.has_model_params();
  r.rollout_options_ = ro;
  r.keep_frames_ = options.keep_frames || sides.robots;
  if (r.rpolicy_)
    r.solver_ = std::make_unique<SolverT<S>>(SolverOptions{.substeps = cs.substeps,
                                                           .thread_count = options.thread_count,
                                                           .body_param_grads = r.rparams_.has_model_params()});
  else if (r.policy_ && r.policy_->observes_state())
    r.policy_rollout_ =
        std::make_unique<PolicyRolloutT<S>>(*r.model_, *r.policy_, ro.steps, ro.dt, ro.substeps, ro.thread_count);
  else
    r.rollout_ = std::make_unique<RolloutT<S>>(*r.model_, ro);
  r.theta_ = r.rparams_.initial(cs);
  const std::vector<S> tp = r.pparams_.initial(cs);
  r.theta_.insert(r.theta_.end(), tp.begin(), tp.end());
  if (const ParamBlock* pb = r.rparams_.policy_block())
    r.rpolicy_->init_weights(r.theta_.data() + pb->offset, task.seed);
  if (const ParamBlock* pb = r.pparams_.policy_block())
    r.policy_->init_weights(r.theta_.data() + r.rparams_.size() + pb->offset, task.seed);
  r.clamp(r.theta_);
  return r;
}

template <class S>
const char* TaskRunnerT<S>::kind() const {
  return kind_;
}

template <class S>
void TaskRunnerT<S>::split(const std::vector<S>& theta, std::vector<S>& tr, std::vector<S>& tp) const {
  tr.assign(theta.begin(), theta.begin() + rparams_.size());
  tp.assign(theta.begin() + rparams_.size(), theta.end());
}

template <class S>
void TaskRunnerT<S>::clamp(std::vector<S>& theta) const {
  assert(int(theta.size()) == rparams_.size() + pparams_.size() && "theta does not match the parameters");
  std::vector<S> tr, tp;
  split(theta, tr, tp);
  rparams_.clamp(tr);
  pparams_.clamp(tp);
  std::copy(tr.begin(), tr.end(), theta.begin());
  std::copy(tp.begin(), tp.end(), theta.begin() + rparams_.size());
}

template <class S>
void TaskRunnerT<S>::set_theta(std::vector<S> theta) {
  clamp(theta);
  theta_ = std::move(theta);
}

template <class S>
const ParamBlock& TaskRunnerT<S>::block_of(int i) const {
  for (const ParamBlock& b : blocks_)
    if (i >= b.offset && i < b.offset + b.count) return b;
  assert(false && "entry outside theta");
  return blocks_.back();
}

template <class S>
std::string TaskRunnerT<S>::entry_name(int i) const {
  const ParamBlock& b = block_of(i);
  if (b.kind == scene::ParamKind::policy && (policy_ || rpolicy_))
    return "policy." + (rpolicy_ ? rpolicy_->weight_name(i - b.offset) : policy_->weight_name(i - b.offset));
  return i < rparams_.size() ? rparams_.entry_name(i) : pparams_.entry_name(i - rparams_.size());
}

template <class S>
std::string TaskRunnerT<S>::term_name(int k) const {
  const int nr = rloss_ ? rloss_->term_count() : 0;
  return k < nr ? rloss_->term_name(k) : ploss_->term_name(k - nr);
}

template <class S>
const StateT<S>& TaskRunnerT<S>::final_state() const {
  if (policy_rollout_) return policy_rollout_->final_state();
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
void TaskRunnerT<S>::apply(const std::vector<S>& tr, const std::vector<S>& tp) {
  // the particle side first: it starts from the model's initial state, joints included
  std::vector<ControlT<S>> rc;
  pparams_.apply(tp, *model_, initial_, controls_);
  rparams_.apply(tr, rbase_, *model_, initial_, rc);
  if (rc.empty()) return;
  if (controls_.empty()) {
    controls_ = std::move(rc);
    return;
  }
  for (std::size_t t = 0; t < controls_.size(); ++t) controls_[t].joint_act = rc[t].joint_act;
}

template <class S>
void TaskRunnerT<S>::loss_begin() {
  if (rloss_) rloss_->begin();
  if (ploss_) ploss_->begin();
}

template <class S>
void TaskRunnerT<S>::loss_observe(int t, const StateT<S>& s) {
  if (rloss_) rloss_->observe(t, s);
  if (ploss_) ploss_->observe(t, s);
}

template <class S>
S TaskRunnerT<S>::loss_value(const std::vector<S>& tr, const std::vector<S>& tp) {
  term_values_.clear();
  S value = S(0);
  if (rloss_) {
    value = rloss_->value(tr);
    term_values_ = rloss_->term_values();
  }
  if (ploss_) {
    value = rloss_ ? value + ploss_->value(tp) : ploss_->value(tp);
    term_values_.insert(term_values_.end(), ploss_->term_values().begin(), ploss_->term_values().end());
  }
  return value;
}

template <class S>
void TaskRunnerT<S>::loss_seed(int t, const StateT<S>& s, StateT<S>& adj) const {
  if (rloss_) rloss_->seed(t, s, adj);
  if (ploss_) ploss_->seed(t, adj);
}

template <class S>
void TaskRunnerT<S>::gather(const std::vector<S>& tr, const std::vector<S>& tp, const StateT<S>& grad_initial,
                            const std::vector<ControlT<S>>& grad_controls, const ModelGradT<S>& grad_model,
                            std::vector<S>& grad) const {
  std::vector<S> gp;
  rparams_.gather(grad_initial, grad_controls, grad_model, grad);
  pparams_.gather(grad_initial, grad_controls, grad_model, gp);
  if (rloss_) rloss_->add_effort(tr, grad);
  if (ploss_) ploss_->add_effort(tp, gp);
  grad.insert(grad.end(), gp.begin(), gp.end());
}

template <class S>
Result<S> TaskRunnerT<S>::evaluate(const std::vector<S>& theta, std::vector<S>* grad) {
  assert(int(theta.size()) == rparams_.size() + pparams_.size() && "theta does not match the parameters");
  Result<S> r = rpolicy_          ? evaluate_robot_policy(theta, grad)
                : policy_rollout_ ? evaluate_policy(theta, grad)
                                  : evaluate_open_loop(theta, grad);
  if (!r) return Status::error("task '" + task_.name + "': " + r.status().message());
  return r;
}

template <class S>
Result<S> TaskRunnerT<S>::evaluate_open_loop(const std::vector<S>& theta, std::vector<S>* grad) {
  std::vector<S> tr, tp;
  split(theta, tr, tp);
  apply(tr, tp);
  // a phases-only policy: its outputs do not depend on the state, so they are computed up front
  const ParamBlock* pb = policy_ ? pparams_.policy_block() : nullptr;
  const S* w = pb ? tp.data() + pb->offset : nullptr;
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
  loss_begin();
  if (keep_frames_) frames_.assign(std::size_t(task_.horizon + 1), StateT<S>{});
  Status st = rollout_->forward(
      initial_, controls_,
      [&](int t, const StateT<S>& s) {
        loss_observe(t, s);
        if (keep_frames_) frames_[std::size_t(t)] = s;
      },
      /*for_backward=*/grad != nullptr);
  if (!st) return st;
  S value = loss_value(tr, tp);
  if (!is_finite(value)) return Status::error("the loss is not finite");
  if (!grad) return value;
  st = rollout_->backward([&](int t, const StateT<S>& s, StateT<S>& adj) { loss_seed(t, s, adj); });
  if (!st) return st;
  gather(tr, tp, rollout_->grad_initial(), rollout_->grad_controls(), rollout_->grad_model(), *grad);
  if (pb) {
    std::vector<S> d_out(policy_->output_size()), d_obs;
    S* d_w = grad->data() + rparams_.size() + pb->offset;
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

template <class S>
Result<S> TaskRunnerT<S>::evaluate_policy(const std::vector<S>& theta, std::vector<S>* grad) {
  std::vector<S> tr, tp;
  split(theta, tr, tp);
  const ParamBlock& pb = *pparams_.policy_block();
  apply(tr, tp);
  loss_begin();
  Status st = policy_rollout_->forward(initial_, controls_, tp.data() + pb.offset,
                                       [&](int t, const StateT<S>& s) { loss_observe(t, s); });
  if (!st) return st;
  if (keep_frames_) {
    frames_.resize(std::size_t(task_.horizon + 1));
    for (int t = 0; t <= task_.horizon; ++t) frames_[std::size_t(t)] = policy_rollout_->state(t);
  }
  S value = loss_value(tr, tp);
  if (!is_finite(value)) return Status::error("the loss is not finite");
  if (!grad) return value;
  std::vector<S> d_w(pb.count);
  st = policy_rollout_->backward(
      tp.data() + pb.offset, [&](int t, StateT<S>& adj) { loss_seed(t, policy_rollout_->state(t), adj); }, d_w.data());
  if (!st) return st;
  gather(tr, tp, policy_rollout_->grad_initial(), policy_rollout_->grad_controls(), policy_rollout_->grad_model(),
         *grad);
  std::copy(d_w.begin(), d_w.end(), grad->begin() + rparams_.size() + pb.offset);
  step_grad_norms_ = policy_rollout_->grad_norm();
  st = check_grad_finite(*grad);
  if (!st) return st;
  return value;
}

template <class S>
Result<S> TaskRunnerT<S>::evaluate_robot_policy(const std::vector<S>& theta, std::vector<S>* grad) {
  std::vector<S> tr, tp;
  split(theta, tr, tp);
  const ParamBlock& pb = *rparams_.policy_block();
  const S* w = tr.data() + pb.offset;
  const int T = task_.horizon;
  const S dt = rollout_options_.dt;
  apply(tr, tp);
  std::vector<ControlT<S>> applied(T, model_->make_control());
  std::vector<std::vector<S>> obs(T), outs(T);  // outs[t]: frame t's outputs (a previous_action term reads t - 1's)
  loss_begin();
  frames_.assign(T + 1, StateT<S>{});
  frames_[0] = initial_;
  for (int t = 0; t < T; ++t) {
    loss_observe(t, frames_[t]);
    if (!controls_.empty()) applied[t] = controls_[t];
    rpolicy_->observe(t, frames_[t], obs[t], t > 0 ? &outs[t - 1] : nullptr);
    rpolicy_->forward(w, obs[t], outs[t]);
    rpolicy_->apply_outputs(outs[t], applied[t]);
    Status st = solver_->step(*model_, frames_[t], frames_[t + 1], applied[t], dt);
    if (!st) return Status::error("frame " + std::to_string(t) + ": " + st.message());
  }
  loss_observe(T, frames_[T]);
  S value = loss_value(tr, tp);
  const S effort = rloss_ ? rloss_->action_effort() : S(0);  // sum over frames of effort x |outputs|^2
  for (const std::vector<S>& o : outs)
    for (S x : o) value += effort * x * x;
  if (!is_finite(value)) return Status::error("the loss is not finite");
  step_grad_norms_.clear();
  if (!grad) return value;
  // backward: adj_t = loss seed + (step t)^T adj_{t+1} + policy's observation of state t
  StateT<S> adj = zero_like(frames_[T]);
  StateT<S> adj_in;
  loss_seed(T, frames_[T], adj);
  std::vector<ControlT<S>> grad_controls(T, model_->make_control());
  ModelGradT<S> grad_model = model_->make_grad();
  // d_prev: frame t's observation's adjoint with respect to frame t - 1's outputs
  std::vector<S> d_w(pb.count, S(0)), d_out, d_obs, d_prev(std::size_t(rpolicy_->output_size()), S(0));
  for (int t = T - 1; t >= 0; --t) {
    Status st = solver_->step_adjoint(*model_, frames_[t], applied[t], dt, adj, adj_in, grad_controls[t], grad_model);
    if (!st) return Status::error("frame " + std::to_string(t) + " (backward): " + st.message());
    rpolicy_->output_grads(grad_controls[t], d_out);
    for (std::size_t k = 0; k < d_out.size(); ++k) d_out[k] += d_prev[k] + S(2) * effort * outs[t][k], d_prev[k] = S(0);
    rpolicy_->backward(w, obs[t], d_out, d_w.data(), d_obs);
    rpolicy_->observe_adjoint(frames_[t], d_obs, adj_in, &d_prev);
    loss_seed(t, frames_[t], adj_in);
    std::swap(adj, adj_in);
  }
  gather(tr, tp, adj, grad_controls, grad_model, *grad);
  std::copy(d_w.begin(), d_w.end(), grad->begin() + pb.offset);
  Status st = check_grad_finite(*grad);
  if (!st) return st;
  return value;
}

template <class S>
Result<S> TaskRunnerT<S>::trajectory_loss(const std::vector<StateT<S>>& frames, const std::vector<S>& theta) const {
  if (int(frames.size()) != task_.horizon + 1)
    return Status::error("task '" + task_.name + "': a trajectory of " + std::to_string(frames.size()) +
                         " frames, the horizon needs " + std::to_string(task_.horizon + 1));
  std::vector<S> tr, tp;
  split(theta, tr, tp);
  // copies of the losses: what they observe is this trajectory's, not the last evaluate's
  std::optional<RigidLossT<S>> rl = rloss_;
  std::optional<LossT<S>> pl = ploss_;
  if (rl) rl->begin();
  if (pl) pl->begin();
  for (std::size_t t = 0; t < frames.size(); ++t) {
    if (rl) rl->observe(int(t), frames[t]);
    if (pl) pl->observe(int(t), frames[t]);
  }
  S value = S(0);
  if (rl) value = rl->value(tr);
  if (pl) value = rl ? value + pl->value(tp) : pl->value(tp);
  return value;
}

template <class S>
Result<IterationStats> TaskRunnerT<S>::iterate() {
  return iterate_step(
      theta_, grad_, optimizer_, history_, [&](const std::vector<S>& x, std::vector<S>* g) { return evaluate(x, g); },
      [&](std::vector<S>& x) { clamp(x); });
}

template <class S>
Result<GradCheckReport> TaskRunnerT<S>::check_grad(int samples, double eps, std::uint64_t seed) {
  return check_grad_at(
      theta_, grad_, blocks_, samples, eps, seed,
      [&](const std::vector<S>& x, std::vector<S>* g) { return evaluate(x, g); }, [&](int i) { return entry_name(i); });
}

template class TaskRunnerT<float>;
template class TaskRunnerT<double>;

}  // namespace adj::optim
