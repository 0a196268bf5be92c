#include "engine/optim/rigid_policy.h"

#include <cmath>
#include <random>

namespace adj::optim {

template <class S>
Result<RigidPolicyT<S>> RigidPolicyT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task) {
  RigidPolicyT p;
  const std::string where = "task '" + task.name + "': policy";
  for (const scene::ParamSpec& ps : task.parameters)
    if (ps.kind == scene::ParamKind::policy && !ps.object.empty()) p.robot_ = ps.object;
  const scene::ObjectRange* r = nullptr;
  if (p.robot_.empty()) {
    for (const scene::ObjectRange& o : cs.objects)
      if (o.kind == scene::ObjectKind::robot) {
        r = &o;
        break;
      }
  } else {
    r = cs.find(p.robot_);
  }
  if (!r || r->kind != scene::ObjectKind::robot) return Status::error(where + ": no robot to drive");
  p.robot_ = r->name;
  if (r->actuator_end <= r->actuator_begin)
    return Status::error(where + ": robot \"" + r->name + "\" has no actuators");
  const RigidModelT<S>& m = cs.rigid;
  for (int j = r->body_begin; j < r->body_end; ++j) {
    int q0 = m.joint_q_start[j], nq = m.joint_q_start[j + 1] - q0;
    if (m.joint_type[j] == RIGID_JOINT_REVOLUTE)
      p.obs_.push_back({0, q0});
    else
      for (int k = 0; k < nq; ++k) p.obs_.push_back({1, q0 + k});
  }
  for (int d = r->dof_begin; d < r->dof_end; ++d) p.obs_.push_back({2, d});
  int inputs = task.policy.phases;
  for (const Obs& o : p.obs_) inputs += o.kind == 0 ? 2 : 1;
  p.sizes_.push_back(inputs);
  for (int h : task.policy.hidden) p.sizes_.push_back(h);
  p.sizes_.push_back(r->actuator_end - r->actuator_begin);
  for (size_t l = 0; l + 1 < p.sizes_.size(); ++l) {
    p.w_offset_.push_back(p.weight_count_);
    p.weight_count_ += p.sizes_[l + 1] * (p.sizes_[l] + 1);
  }
  p.actuator_begin_ = r->actuator_begin;
  p.phases_ = task.policy.phases;
  p.phase_period_ = S(task.policy.phase_period);
  p.frame_dt_ = cs.frame_dt;
  p.output_scale_ = S(task.policy.output_scale);
  return p;
}

template <class S>
std::string RigidPolicyT<S>::weight_name(int k) const {
  for (int l = int(w_offset_.size()) - 1; l >= 0; --l)
    if (k >= w_offset_[l]) {
      int i = k - w_offset_[l], in = sizes_[l], out = sizes_[l + 1];
      if (i < out * in)
        return "W" + std::to_string(l) + "[" + std::to_string(i / in) + "][" + std::to_string(i % in) + "]";
      (void)out;
      return "b" + std::to_string(l) + "[" + std::to_string(i - out * in) + "]";
    }
  return "?";
}

template <class S>
void RigidPolicyT<S>::init_weights(S* w, std::uint64_t seed) const {
  std::mt19937_64 rng(seed);
  for (size_t l = 0; l + 1 < sizes_.size(); ++l) {
    int in = sizes_[l], out = sizes_[l + 1];
    double a = std::sqrt(6.0 / (in + out)) * (l + 2 == sizes_.size() ? 0.1 : 1.0);
    std::uniform_real_distribution<double> u(-a, a);
    S* W = w + w_offset_[l];
    for (int i = 0; i < out * in; ++i) W[i] = S(u(rng));
    for (int i = 0; i < out; ++i) W[out * in + i] = S(0);
  }
}

template <class S>
void RigidPolicyT<S>::observe(int t, const RigidStateT<S>& s, std::vector<S>& obs) const {
  obs.clear();
  for (const Obs& o : obs_) {
    if (o.kind == 0) {
      obs.push_back(std::sin(s.joint_q[o.index]));
      obs.push_back(std::cos(s.joint_q[o.index]));
    } else {
      obs.push_back(o.kind == 1 ? s.joint_q[o.index] : s.joint_qd[o.index]);
    }
  }
  const double two_pi = 6.283185307179586;
  for (int k = 0; k < phases_; ++k)
    obs.push_back(S(std::sin(two_pi * double(t) * double(frame_dt_) / double(phase_period_) + two_pi * k / phases_)));
}

template <class S>
void RigidPolicyT<S>::observe_adjoint(const RigidStateT<S>& s, const std::vector<S>& d, RigidStateT<S>& adj) const {
  size_t i = 0;
  for (const Obs& o : obs_) {
    if (o.kind == 0) {
      S q = s.joint_q[o.index];
      adj.joint_q[o.index] += d[i] * std::cos(q) - d[i + 1] * std::sin(q);
      i += 2;
    } else {
      (o.kind == 1 ? adj.joint_q[o.index] : adj.joint_qd[o.index]) += d[i++];
    }
  }
}

template <class S>
void RigidPolicyT<S>::forward(const S* w, const std::vector<S>& obs, std::vector<S>& out) const {
  std::vector<S> x = obs, y;
  for (size_t l = 0; l + 1 < sizes_.size(); ++l) {
    int in = sizes_[l], n = sizes_[l + 1];
    const S* W = w + w_offset_[l];
    y.assign(n, S(0));
    for (int r = 0; r < n; ++r) {
      S z = W[n * in + r];
      for (int c = 0; c < in; ++c) z += W[r * in + c] * x[c];
      y[r] = std::tanh(z);
    }
    x.swap(y);
  }
  out.resize(x.size());
  for (size_t k = 0; k < x.size(); ++k) out[k] = output_scale_ * x[k];
}

template <class S>
void RigidPolicyT<S>::backward(const S* w, const std::vector<S>& obs, const std::vector<S>& d_out, S* d_w,
                               std::vector<S>& d_obs) const {
  // forward again, keeping each layer's input and tanh output
  const int L = int(sizes_.size()) - 1;
  std::vector<std::vector<S>> act(L + 1);
  act[0] = obs;
  for (int l = 0; l < L; ++l) {
    int in = sizes_[l], n = sizes_[l + 1];
    const S* W = w + w_offset_[l];
    act[l + 1].assign(n, S(0));
    for (int r = 0; r < n; ++r) {
      S z = W[n * in + r];
      for (int c = 0; c < in; ++c) z += W[r * in + c] * act[l][c];
      act[l + 1][r] = std::tanh(z);
    }
  }
  std::vector<S> g(d_out.size());
  for (size_t k = 0; k < g.size(); ++k) g[k] = d_out[k] * output_scale_;
  for (int l = L - 1; l >= 0; --l) {
    int in = sizes_[l], n = sizes_[l + 1];
    const S* W = w + w_offset_[l];
    S* dW = d_w + w_offset_[l];
    std::vector<S> dx(in, S(0));
    for (int r = 0; r < n; ++r) {
      S dz = g[r] * (S(1) - act[l + 1][r] * act[l + 1][r]);
      dW[n * in + r] += dz;
      for (int c = 0; c < in; ++c) {
        dW[r * in + c] += dz * act[l][c];
        dx[c] += dz * W[r * in + c];
      }
    }
    g.swap(dx);
  }
  d_obs = g;
}

template <class S>
void RigidPolicyT<S>::apply_outputs(const std::vector<S>& out, RigidControlT<S>& control) const {
  for (size_t k = 0; k < out.size(); ++k) control.act[actuator_begin_ + int(k)] += out[k];
}

template <class S>
void RigidPolicyT<S>::output_grads(const RigidControlT<S>& gc, std::vector<S>& d_out) const {
  d_out.resize(size_t(output_size()));
  for (int k = 0; k < output_size(); ++k) d_out[k] = gc.act[actuator_begin_ + k];
}

template class RigidPolicyT<float>;
template class RigidPolicyT<double>;

}  // namespace adj::optim
