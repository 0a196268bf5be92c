#include "engine/optim/rigid_policy.h"

#include <cmath>
#include <random>

namespace adj::optim {

template <class S>
Result<RigidPolicyT<S>> RigidPolicyT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                                MlpActivation hidden) {
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
  const RigidModelT<S>& m = cs.model.rigid;
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
  std::vector<int> sizes{inputs};
  for (int h : task.policy.hidden) sizes.push_back(h);
  sizes.push_back(r->actuator_end - r->actuator_begin);
  p.mlp_ = MlpT<S>(std::move(sizes), S(task.policy.output_scale), false, hidden);
  p.actuator_begin_ = r->actuator_begin;
  p.phases_ = task.policy.phases;
  p.phase_period_ = S(task.policy.phase_period);
  p.frame_dt_ = cs.frame_dt;
  return p;
}

template <class S>
void RigidPolicyT<S>::observe(int t, const StateT<S>& s, std::vector<S>& obs) const {
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
void RigidPolicyT<S>::observe_adjoint(const StateT<S>& s, const std::vector<S>& d, StateT<S>& adj) const {
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

template class RigidPolicyT<float>;
template class RigidPolicyT<double>;

}  // namespace adj::optim
