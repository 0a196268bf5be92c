#include "engine/optim/policy.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <random>

#include "engine/optim/parameters.h"

namespace adj::optim {

template <class S>
Result<PolicyT<S>> PolicyT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                      MlpActivation hidden) {
  PolicyT p;
  Status st = task_names_robot(cs, task) ? p.create_bodies(cs, task, hidden) : p.create_particles(cs, task);
  if (!st) return st;
  return p;
}

template <class S>
Status PolicyT<S>::create_particles(const scene::CompiledSceneT<S>& cs, const scene::Task& task) {
  PolicyT& p = *this;
  std::string where = "task '" + task.name + "': policy";
  const scene::PolicySpec& spec = task.policy;
  std::string object;
  for (const scene::ParamSpec& s : task.parameters)
    if (s.kind == scene::ParamKind::policy) object = s.object;
  const scene::ObjectRange* obj = nullptr;
  if (!object.empty()) {
    obj = cs.find(object);
    if (!obj) return Status::error(where + ": no object named '" + object + "'");
    for (int i = obj->particle_begin; i < obj->particle_end; ++i) p.particles_.push_back(i);
  }
  for (int s : cs.actuated_springs)
    if (!obj || (s >= obj->spring_begin && s < obj->spring_end)) p.springs_.push_back(s);
  for (int t : cs.actuated_tets)
    if (!obj || (t >= obj->tet_begin && t < obj->tet_end)) p.tets_.push_back(t);
  if (p.springs_.empty() && p.tets_.empty()) return Status::error(where + ": no actuated springs or tets to drive");
  if (spec.phases < 0) return Status::error(where + ": phases must be >= 0");
  if (!(spec.phase_period > 0)) return Status::error(where + ": phase_period must be > 0");
  p.phases_ = spec.phases;
  p.phase_period_ = S(spec.phase_period);
  p.frame_dt_ = cs.frame_dt;
  int inputs = p.phases_ + 6 * int(p.particles_.size());
  if (inputs < 1) return Status::error(where + ": no observations (phases = 0 and no object)");
  std::vector<int> sizes{inputs};
  for (std::size_t l = 0; l < spec.hidden.size(); ++l) {
    if (spec.hidden[l] < 1) return Status::error(where + ": hidden[" + std::to_string(l) + "] must be >= 1");
    sizes.push_back(spec.hidden[l]);
  }
  sizes.push_back(int(p.springs_.size() + p.tets_.size()));
  p.mlp_ = MlpT<S>(std::move(sizes), S(spec.output_scale));
  return Status::ok();
}

template <class S>
void PolicyT<S>::set_normalizer(std::vector<S> mean, std::vector<S> std) {
  assert(mean.size() == std.size() && (mean.empty() || int(mean.size()) == input_size()) &&
         "normalizer sized for another policy");
  norm_mean_ = std::move(mean);
  norm_inv_std_.clear();
  for (S x : std) norm_inv_std_.push_back(S(1) / std::max(x, S(1e-6)));
}

template <class S>
void PolicyT<S>::observe(int t, const StateT<S>& s, std::vector<S>& obs, const std::vector<S>* prev_action) const {
  if (drives_bodies()) {
    observe_bodies(t, s, obs, prev_action);
    return;
  }
  observe_raw(t, s, obs);
  if (norm_mean_.empty()) return;
  for (int k = phases_; k < input_size(); ++k) obs[k] = (obs[k] - norm_mean_[k]) * norm_inv_std_[k];
}

template <class S>
void PolicyT<S>::observe_phases(int t, S* obs) const {
  const double two_pi = 6.283185307179586;
  double time = double(t) * double(frame_dt_);
  for (int k = 0; k < phases_; ++k) obs[k] = S(std::sin(two_pi * time / double(phase_period_) + two_pi * k / phases_));
}

template <class S>
void PolicyT<S>::observe_raw(int t, const StateT<S>& s, std::vector<S>& obs) const {
  if (drives_bodies()) {
    observe_bodies(t, s, obs, nullptr);
    return;
  }
  obs.assign(input_size(), S(0));
  observe_phases(t, obs.data());
  if (particles_.empty()) return;
  vec3<S> c, vc;
  for (int i : particles_) {
    c += s.particle_q[i];
    vc += s.particle_qd[i];
  }
  S inv = S(1) / S(particles_.size());
  c = c * inv;
  vc = vc * inv;
  S* o = obs.data() + phases_;
  for (std::size_t k = 0; k < particles_.size(); ++k) {
    vec3<S> x = s.particle_q[particles_[k]] - c, v = s.particle_qd[particles_[k]] - vc;
    for (int a = 0; a < 3; ++a) {
      o[6 * k + a] = x[a];
      o[6 * k + 3 + a] = v[a];
    }
  }
}

template <class S>
void PolicyT<S>::observe_adjoint(const std::vector<S>& d_obs, StateT<S>& adj) const {
  assert(!drives_bodies() && "a robot policy's observation adjoint reads the state");
  if (particles_.empty()) return;
  // obs_k = (x_k - mean(x) - m_k) / s_k: dL/dx_j = g_j / s_j - mean(g / s)
  std::vector<S> scaled;
  const S* g = d_obs.data() + phases_;
  if (!norm_inv_std_.empty()) {
    scaled.assign(d_obs.begin(), d_obs.end());
    for (int k = phases_; k < input_size(); ++k) scaled[k] *= norm_inv_std_[k];
    g = scaled.data() + phases_;
  }
  vec3<S> mq, mv;
  for (std::size_t k = 0; k < particles_.size(); ++k) {
    mq += vec3<S>(g[6 * k], g[6 * k + 1], g[6 * k + 2]);
    mv += vec3<S>(g[6 * k + 3], g[6 * k + 4], g[6 * k + 5]);
  }
  S inv = S(1) / S(particles_.size());
  mq = mq * inv;
  mv = mv * inv;
  for (std::size_t k = 0; k < particles_.size(); ++k) {
    adj.particle_q[particles_[k]] += vec3<S>(g[6 * k], g[6 * k + 1], g[6 * k + 2]) - mq;
    adj.particle_qd[particles_[k]] += vec3<S>(g[6 * k + 3], g[6 * k + 4], g[6 * k + 5]) - mv;
  }
}

template <class S>
PolicyRolloutT<S>::PolicyRolloutT(const ModelT<S>& model, const PolicyT<S>& policy, int steps, S dt, int substeps,
                                  int thread_count)
    : model_(&model), policy_(&policy), steps_(steps), dt_(dt), solver_(SolverOptions{substeps, thread_count, true}) {}

template <class S>
Status PolicyRolloutT<S>::forward(const StateT<S>& initial, const std::vector<ControlT<S>>& base, const S* w,
                                  const Observer& observe) {
  forward_done_ = false;
  const ModelT<S>& m = *model_;
  if (!base.empty() && int(base.size()) != steps_)
    return Status::error("policy rollout: expected 0 or " + std::to_string(steps_) + " base controls");
  Status st = check_state_finite(initial, "initial state");
  if (!st) return Status::error("policy rollout forward, step 0: " + st.message());
  states_.clear();
  states_.reserve(steps_ + 1);
  states_.push_back(initial);
  controls_.assign(steps_, m.make_control());
  obs_.assign(steps_, {});
  if (observe) observe(0, initial);
  std::vector<S> out;
  for (int t = 0; t < steps_; ++t) {
    if (!base.empty()) controls_[t] = base[t];
    policy_->observe(t0_ + t, states_[t], obs_[t]);
    policy_->forward(w, obs_[t], out);
    for (int k = 0; k < policy_->output_size(); ++k)
      if (!is_finite(out[k]))
        return Status::error("policy rollout forward, step " + std::to_string(t) + ": policy output " +
                             std::to_string(k) + " is not finite");
    policy_->apply_outputs(out, controls_[t]);
    states_.emplace_back();
    st = solver_.step(m, states_[t], states_[t + 1], controls_[t], dt_);
    if (!st) return Status::error("policy rollout forward, step " + std::to_string(t + 1) + ": " + st.message());
    if (observe) observe(t + 1, states_[t + 1]);
  }
  forward_done_ = true;
  return Status::ok();
}

template <class S>
static S adj_norm(const StateT<S>& s) {
  double sum = 0;
  for (const auto& v : s.particle_q) sum += double(dot(v, v));
  for (const auto& v : s.particle_qd) sum += double(dot(v, v));
  return S(std::sqrt(sum));
}

template <class S>
Status PolicyRolloutT<S>::backward(const S* w, const Seed& seed, S* d_w) {
  if (!forward_done_) return Status::error("policy rollout: backward() needs a successful forward() first");
  const ModelT<S>& m = *model_;
  for (int k = 0; k < policy_->weight_count(); ++k) d_w[k] = S(0);
  grad_model_ = m.make_grad();
  grad_controls_.assign(steps_, m.make_control());
  grad_norm_.assign(steps_ + 1, S(0));
  StateT<S> adj = m.make_state(), adj_prev;
  adj.zero();
  if (seed) seed(steps_, adj);
  Status st = check_state_finite(adj, "loss gradient");
  if (!st) return Status::error("policy rollout backward, step " + std::to_string(steps_) + ": " + st.message());
  grad_norm_[steps_] = adj_norm(adj);
  std::vector<S> d_out(policy_->output_size()), d_obs;
  for (int t = steps_ - 1; t >= 0; --t) {
    st = solver_.step_adjoint(m, states_[t], controls_[t], dt_, adj, adj_prev, grad_controls_[t], grad_model_);
    if (!st) return Status::error("policy rollout backward, step " + std::to_string(t) + ": " + st.message());
    std::swap(adj, adj_prev);
    // through the policy: activations -> weights and observations -> state
    policy_->output_grads(grad_controls_[t], d_out);
    policy_->backward(w, obs_[t], d_out, d_w, d_obs);
    policy_->observe_adjoint(d_obs, adj);
    if (seed) seed(t, adj);
    st = check_state_finite(adj, "loss gradient");
    if (!st) return Status::error("policy rollout backward, step " + std::to_string(t) + ": " + st.message());
    grad_norm_[t] = adj_norm(adj);
  }
  grad_initial_ = adj;
  return Status::ok();
}

template class PolicyT<float>;
template class PolicyT<double>;
template class PolicyRolloutT<float>;
template class PolicyRolloutT<double>;

}  // namespace adj::optim
