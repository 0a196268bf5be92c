#include "engine/model/rigid_model.h"

namespace adj {

template <class S>
StateT<S> RigidModelT<S>::make_state() const {
  StateT<S> s;
  s.joint_q.assign(std::size_t(q_count()), S(0));
  s.joint_qd.assign(std::size_t(dof_count()), S(0));
  for (int j = 0; j < body_count(); ++j) {
    int at = joint_q_start[j];
    if (joint_type[j] == RIGID_JOINT_BALL) s.joint_q[at] = S(1);
    if (joint_type[j] == RIGID_JOINT_FREE) s.joint_q[at + 3] = S(1);
  }
  return s;
}

template <class S>
RigidModelGradT<S> RigidModelT<S>::make_grad() const {
  RigidModelGradT<S> g;
  g.body_mass.assign(body_mass.size(), S(0));
  g.actuator_kp.assign(actuator_kp.size(), S(0));
  g.actuator_kd.assign(actuator_kd.size(), S(0));
  g.dof_damping.assign(dof_damping.size(), S(0));
  g.dof_armature.assign(dof_armature.size(), S(0));
  return g;
}

template <class S>
std::string RigidModelT<S>::joint_label(int joint) const {
  std::string s = "joint " + std::to_string(joint);
  if (joint >= 0 && joint < body_count() && !body_name[joint].empty()) s += " (body " + body_name[joint] + ")";
  return s;
}

template struct RigidModelT<float>;
template struct RigidModelT<double>;

}  // namespace adj
