#include "engine/grad/rollout.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace adj {

template <class S>
RolloutT<S>::RolloutT(const ModelT<S>& model, RolloutOptions<S> options)
    : model_(&model),
      options_(options),
      solver_(SolverOptions{.substeps = options.substeps,
                            .thread_count = options.thread_count,
                            .check_finite = true,
                            .body_param_grads = options.body_param_grads,
                            .implicit = options.implicit}) {
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
int RolloutT<S>::record_count() const {
  const ModelT<S>& m = *model_;
  if (m.body_count() > 0 || m.particle_count() == 0) return 0;  // the coupled solver records nothing
  int count = k_ == 1 ? options_.steps : k_;
  std::size_t per_step =
      std::size_t(3 * std::max(1, options_.substeps) - 2) * std::size_t(m.particle_count()) * sizeof(vec3<S>);
  return per_step * std::size_t(count) <= options_.substep_bytes_max ? count : 0;
}

template <class S>
void RolloutT<S>::note_bytes(std::size_t b) {
  peak_bytes_ = std::max(peak_bytes_, b);
}

template <class S>
Status RolloutT<S>::forward(const StateT<S>& initial, const std::vector<ControlT<S>>& controls, const Observer& observe,
                            bool for_backward) {
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
  // the checkpoints overwrite the last pass's in place (no allocation a step when the sizes
  // repeat); the count is trimmed at the end
  std::size_t kept_states = 0;
  auto checkpoint = [&](const StateT<S>& s) {
    if (kept_states < checkpoints_.size())
      checkpoints_[kept_states] = s;
    else
      checkpoints_.push_back(s);
    ++kept_states;
  };
  contacts_.assign(options_.record_contacts ? T : 0, ContactsT<S>());
  checkpoint(initial);
  if (observe) observe(0, initial);
  StateT<S> cur = initial, next;
  std::size_t state_bytes = initial.bytes();
  // the records stay allocated when a pass does not keep them: the next gradient's forward
  // reuses their memory instead of touching it afresh
  const bool keep = for_backward && k_ == 1 && record_count() > 0;
  records_kept_ = keep;
  if (keep || k_ != 1) records_.resize(keep ? std::size_t(T) : 0);
  std::size_t record_bytes = 0;
  for (int t = 0; t < T; ++t) {
    st = solver_.step(*model_, cur, next, control(t), options_.dt, options_.record_contacts ? &contacts_[t] : nullptr,
                      keep ? &records_[t] : nullptr);
    if (keep) record_bytes += records_[t].bytes();
    if (!st) {
      failed_step_ = t + 1;
      checkpoints_.resize(kept_states);
      return Status::error("rollout forward, step " + std::to_string(t + 1) + ": " + st.message());
    }
    std::swap(cur, next);
    if ((t + 1) % k_ == 0 && t + 1 < T) checkpoint(cur);
    if (observe) observe(t + 1, cur);
    note_bytes((kept_states + 2) * state_bytes + record_bytes);
  }
  checkpoints_.resize(kept_states);
  final_ = cur;
  forward_done_ = true;
  return Status::ok();
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
  // with K = 1 the forward pass kept every step's substeps; else each segment's recompute keeps
  // them, running its last step too (what step_adjoint would otherwise recompute)
  const bool kept = records_kept_ && int(records_.size()) == T;
  const bool record_segment = !kept && record_count() > 0;
  if (record_segment) {
    records_.resize(std::size_t(k_));
    records_kept_ = false;
  }
  for (int a = last_start; a >= 0; a -= k_) {
    int b = std::min(a + k_, T);
    segment.resize(b - a);  // segment[0] unused: the checkpoint itself is read
    auto state = [&](int t) -> const StateT<S>& { return t == a ? checkpoints_[a / k_] : segment[t - a]; };
    std::size_t record_bytes = 0;
    for (int t = a; t < b; ++t) {
      if (t + 1 == b && !record_segment) break;
      StateT<S>& out = t + 1 < b ? segment[t - a + 1] : segment_end_;
      st =
          solver_.step(m, state(t), out, control(t), options_.dt, nullptr, record_segment ? &records_[t - a] : nullptr);
      if (!st) return Status::error("rollout recompute, step " + std::to_string(t + 1) + ": " + st.message());
      if (record_segment) record_bytes += records_[t - a].bytes();
    }
    if (kept)
      for (int t = a; t < b; ++t) record_bytes += records_[t].bytes();
    note_bytes((checkpoints_.size() + segment.size() + 2) * state_bytes + record_bytes);
    for (int t = b - 1; t >= a; --t) {
      ControlT<S>& gc = options_.control_grads ? grad_controls_[t] : scratch_control_grad_;
      const StepRecordT<S>* rec = kept ? &records_[t] : record_segment ? &records_[t - a] : nullptr;
      st = solver_.step_adjoint(m, state(t), control(t), options_.dt, adj, adj_prev, gc, grad_model_, rec);
      if (!st) {
        failed_step_ = t;
        return Status::error("rollout backward, step " + std::to_string(t) + ": " + st.message());
      }
      std::swap(adj, adj_prev);
      if (seed) seed(t, state(t), adj);
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
