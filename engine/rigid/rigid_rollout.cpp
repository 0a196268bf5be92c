#include "engine/rigid/rigid_rollout.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace adj {

template <class S>
RigidRolloutT<S>::RigidRolloutT(const RigidModelT<S>& model, RigidRolloutOptions<S> options)
    : model_(&model), options_(options) {
  options_.steps = std::max(1, options_.steps);
  RigidSolverOptions so;
  so.substeps = std::max(1, options_.substeps);
  so.param_grads = options_.param_grads;
  solver_ = RigidSolverT<S>(so);
  k_ = options_.checkpoint_every > 0 ? options_.checkpoint_every : int(std::ceil(std::sqrt(double(options_.steps))));
  k_ = std::min(k_, options_.steps);
  zero_control_ = model.make_control();
}

template <class S>
const RigidControlT<S>& RigidRolloutT<S>::control(int t) const {
  if (controls_.empty()) return zero_control_;
  return controls_.size() == 1 ? controls_[0] : controls_[std::size_t(t)];
}

template <class S>
Status RigidRolloutT<S>::forward(const RigidStateT<S>& initial, const std::vector<RigidControlT<S>>& controls,
                                 const Observer& observe) {
  const int T = options_.steps;
  forward_done_ = false;
  failed_step_ = -1;
  if (!controls.empty() && controls.size() != 1 && int(controls.size()) != T)
    return Status::error("rigid rollout: expected 0, 1 or " + std::to_string(T) + " controls, got " +
                         std::to_string(controls.size()));
  Status st = rigid_check_finite(*model_, initial, "initial state");
  if (!st) {
    failed_step_ = 0;
    return Status::error("rigid rollout forward, step 0: " + st.message());
  }
  controls_ = controls;
  checkpoints_.clear();
  contacts_.assign(options_.record_contacts ? std::size_t(T) : 0, RigidContactsT<S>());
  checkpoints_.push_back(initial);
  if (observe) observe(0, initial);
  RigidStateT<S> cur = initial, next;
  for (int t = 0; t < T; ++t) {
    st = solver_.step(*model_, cur, next, control(t), options_.dt, options_.record_contacts ? &contacts_[t] : nullptr);
    if (!st) {
      failed_step_ = t + 1;
      return Status::error("rigid rollout forward, step " + std::to_string(t + 1) + ": " + st.message());
    }
    std::swap(cur, next);
    if ((t + 1) % k_ == 0 && t + 1 < T) checkpoints_.push_back(cur);
    if (observe) observe(t + 1, cur);
  }
  final_ = cur;
  forward_done_ = true;
  return Status::ok();
}

template <class S>
Status RigidRolloutT<S>::backward(const Seed& seed) {
  if (!forward_done_) return Status::error("rigid rollout: backward() needs a successful forward() first");
  const int T = options_.steps;
  const RigidModelT<S>& m = *model_;
  failed_step_ = -1;
  grad_model_ = m.make_grad();
  grad_controls_.assign(std::size_t(T), m.make_control());
  RigidStateT<S> adj = m.make_state(), adj_prev;
  std::fill(adj.joint_q.begin(), adj.joint_q.end(), S(0));
  if (seed) seed(T, final_, adj);
  // segments from the last: recompute the states of [t0, t1) from the checkpoint
  std::vector<RigidStateT<S>> seg;
  for (int c = int(checkpoints_.size()) - 1; c >= 0; --c) {
    int t0 = c * k_, t1 = std::min(T, t0 + k_);
    seg.assign(1, checkpoints_[std::size_t(c)]);
    for (int t = t0; t + 1 < t1; ++t) {
      RigidStateT<S> next;
      Status st = solver_.step(m, seg.back(), next, control(t), options_.dt);
      if (!st) {
        failed_step_ = t + 1;
        return Status::error("rigid rollout backward (recompute), step " + std::to_string(t + 1) + ": " + st.message());
      }
      seg.push_back(std::move(next));
    }
    for (int t = t1 - 1; t >= t0; --t) {
      const RigidStateT<S>& in = seg[std::size_t(t - t0)];
      RigidControlT<S>& gc = grad_controls_[std::size_t(t)];
      Status st = solver_.step_adjoint(m, in, control(t), options_.dt, adj, adj_prev, gc, grad_model_);
      if (!st) {
        failed_step_ = t;
        return Status::error("rigid rollout backward, step " + std::to_string(t) + ": " + st.message());
      }
      std::swap(adj, adj_prev);
      if (seed) seed(t, in, adj);
      st = rigid_check_finite(m, adj, "gradient");
      if (!st) {
        failed_step_ = t;
        return Status::error("rigid rollout backward, step " + std::to_string(t) + ": " + st.message());
      }
    }
  }
  grad_initial_ = adj;
  return Status::ok();
}

template class RigidRolloutT<float>;
template class RigidRolloutT<double>;

}  // namespace adj
