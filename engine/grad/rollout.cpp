#include "engine/grad/rollout.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace adj {

template <class S>
RolloutT<S>::RolloutT(const ModelT<S>& model, RolloutOptions<S> options)
    : model_(&model),
      options_(options),
      solver_(SolverOptions{options.substeps, options.thread_count, true, options.body_param_grads}) {
  options_.steps = std::max(1, options_.steps);
  k_ = options_.checkpoint_every > 0 ? options_.checkpoint_every : int(std::ceil(std::sqrt(double(options_.steps))));
  k_ = std::min(k_, options_.steps);
  zero_control_ = model.make_control();
}

template <class S>
const ControlT<S>& RolloutT<S>::control(int t) const {
  if (controls_.empty()) return zero_control_;
  return controls_.size() == 1 ? controls_[0] : controls_[t];
}

template <class S>
void RolloutT<S>::note_bytes(std::size_t b) {
  peak_bytes_ = std::max(peak_bytes_, b);
}

template <class S>
Status RolloutT<S>::forward(const StateT<S>& initial, const std::vector<ControlT<S>>& controls,
                            const Observer& observe) {
  const int T = options_.steps;
  forward_done_ = false;
  failed_step_ = -1;
  peak_bytes_ = 0;
  if (initial.particle_count() != model_->particle_count() || initial.q_count() != model_->rigid.q_count() ||
      initial.dof_count() != model_->rigid.dof_count())
    return Status::error("rollout: initial state does not match the model");
  if (!controls.empty() && controls.size() != 1 && int(controls.size()) != T)
    return Status::error("rollout: expected 0, 1 or " + std::to_string(T) + " controls, got " +
                         std::to_string(controls.size()));
  Status st = check_state_finite(*model_, initial, "initial state");
  if (!st) {
    failed_step_ = 0;
    return Status::error("rollout forward, step 0: " + st.message());
  }
  controls_ = controls;
  checkpoints_.clear();
  contacts_.assign(options_.record_contacts ? T : 0, ContactsT<S>());
  checkpoints_.push_back(initial);
  if (observe) observe(0, initial);
  StateT<S> cur = initial, next;
  std::size_t state_bytes = initial.bytes();
  for (int t = 0; t < T; ++t) {
    st = solver_.step(*model_, cur, next, control(t), options_.dt, options_.record_contacts ? &contacts_[t] : nullptr);
    if (!st) {
      failed_step_ = t + 1;
      return Status::error("rollout forward, step " + std::to_string(t + 1) + ": " + st.message());
    }
    std::swap(cur, next);
    if ((t + 1) % k_ == 0 && t + 1 < T) checkpoints_.push_back(cur);
    if (observe) observe(t + 1, cur);
    note_bytes((checkpoints_.size() + 2) * state_bytes);
  }
  final_ = cur;
  forward_done_ = true;
  return Status::ok();
}

template <class S>
static S state_norm(const StateT<S>& s) {
  double sum = 0;
  for (const auto& v : s.particle_q) sum += double(dot(v, v));
  for (const auto& v : s.particle_qd) sum += double(dot(v, v));
  for (S v : s.joint_q) sum += double(v) * double(v);
  for (S v : s.joint_qd) sum += double(v) * double(v);
  return S(std::sqrt(sum));
}

template <class S>
Status RolloutT<S>::backward(const Seed& seed) {
  if (!forward_done_) return Status::error("rollout: backward() needs a successful forward() first");
  const int T = options_.steps;
  const ModelT<S>& m = *model_;
  failed_step_ = -1;
  grad_model_ = m.make_grad();
  grad_norm_.assign(T + 1, S(0));
  if (options_.control_grads)
    grad_controls_.assign(T, m.make_control());
  else
    grad_controls_.clear();
  scratch_control_grad_ = m.make_control();
  std::size_t state_bytes = final_.bytes();
  // adjoint of the final state
  StateT<S> adj = m.make_state(), adj_prev;
  adj.zero();
  if (seed) seed(T, final_, adj);
  Status st = check_state_finite(m, adj, "loss gradient");
  if (!st) {
    failed_step_ = T;
    return Status::error("rollout backward, step " + std::to_string(T) + ": " + st.message());
  }
  grad_norm_[T] = state_norm(adj);
  // segments, last first: recompute states [a, b) from the checkpoint at a
  std::vector<StateT<S>> segment;
  int last_start = ((T - 1) / k_) * k_;
  for (int a = last_start; a >= 0; a -= k_) {
    int b = std::min(a + k_, T);
    segment.resize(b - a);
    segment[0] = checkpoints_[a / k_];
    for (int t = a; t + 1 < b; ++t) {
      st = solver_.step(m, segment[t - a], segment[t - a + 1], control(t), options_.dt);
      if (!st) return Status::error("rollout recompute, step " + std::to_string(t + 1) + ": " + st.message());
    }
    note_bytes((checkpoints_.size() + segment.size() + 2) * state_bytes);
    for (int t = b - 1; t >= a; --t) {
      ControlT<S>& gc = options_.control_grads ? grad_controls_[t] : scratch_control_grad_;
      st = solver_.step_adjoint(m, segment[t - a], control(t), options_.dt, adj, adj_prev, gc, grad_model_);
      if (!st) {
        failed_step_ = t;
        return Status::error("rollout backward, step " + std::to_string(t) + ": " + st.message());
      }
      std::swap(adj, adj_prev);
      if (seed) seed(t, segment[t - a], adj);
      st = check_state_finite(m, adj, "loss gradient");
      if (!st) {
        failed_step_ = t;
        return Status::error("rollout backward, step " + std::to_string(t) + ": " + st.message());
      }
      grad_norm_[t] = state_norm(adj);
    }
  }
  grad_initial_ = adj;
  return Status::ok();
}

template class RolloutT<float>;
template class RolloutT<double>;

}  // namespace adj
