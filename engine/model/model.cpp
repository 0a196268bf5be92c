#include "engine/model/model.h"

namespace adj {

template <class S>
void StateT<S>::zero() {
  for (auto& v : particle_q) v = vec3<S>();
  for (auto& v : particle_qd) v = vec3<S>();
  for (auto& v : joint_q) v = S(0);
  for (auto& v : joint_qd) v = S(0);
}

template <class S>
void ControlT<S>::zero() {
  for (auto& v : particle_f) v = vec3<S>();
  for (auto& v : spring_act) v = S(0);
  for (auto& v : tet_act) v = S(0);
  for (auto& v : joint_act) v = S(0);
}

template <class S>
void ModelGradT<S>::zero() {
  for (Array<S>* a : {&particle_mass, &spring_ke, &spring_kd, &spring_rest, &tet_mu, &tet_lambda})
    for (auto& v : *a) v = S(0);
  contact_ke = contact_kd = contact_mu = S(0);
  for (Array<S>* a :
       {&rigid.body_mass, &rigid.actuator_kp, &rigid.actuator_kd, &rigid.dof_damping, &rigid.dof_armature})
    for (auto& v : *a) v = S(0);
  rigid.contact_ke = rigid.contact_kd = rigid.contact_mu = S(0);
}

template <class S>
void ContactsT<S>::clear() {
  point.clear();
  normal.clear();
  force.clear();
  particle.clear();
  other.clear();
  bodies = RigidContactsT<S>();
  body_particle = rigid::CouplingContactsT<S>();
}

template <class S>
StateT<S> ModelT<S>::make_state() const {
  StateT<S> s;
  s.particle_q = particle_q;
  s.particle_qd = particle_qd;
  if (!joint_q.empty() || !joint_qd.empty()) {
    s.joint_q = joint_q;
    s.joint_qd = joint_qd;
  } else {  // no initial joint state given: the rest configuration
    StateT<S> r = rigid.make_state();
    s.joint_q = std::move(r.joint_q);
    s.joint_qd = std::move(r.joint_qd);
  }
  return s;
}

template <class S>
ControlT<S> ModelT<S>::make_control() const {
  ControlT<S> c;
  c.particle_f.assign(particle_count(), vec3<S>());
  c.spring_act.assign(spring_count(), S(0));
  c.tet_act.assign(tet_count(), S(0));
  c.joint_act.assign(std::size_t(rigid.actuator_count()), S(0));
  return c;
}

template <class S>
ControlT<S> ModelT<S>::make_hold_control() const {
  ControlT<S> c = make_control();
  const RigidModelT<S>& m = rigid;
  for (int a = 0; a < m.actuator_count(); ++a) {
    if (m.actuator_type[a] != RIGID_ACTUATOR_PD) continue;
    const int j = m.dof_joint[m.actuator_dof[a]];
    if (m.joint_type[j] != RIGID_JOINT_REVOLUTE && m.joint_type[j] != RIGID_JOINT_PRISMATIC) continue;
    const std::size_t q = std::size_t(m.joint_q_start[j]);
    if (q < joint_q.size()) c.joint_act[std::size_t(a)] = joint_q[q];
  }
  return c;
}

template <class S>
ModelGradT<S> ModelT<S>::make_grad() const {
  ModelGradT<S> g;
  g.particle_mass.assign(particle_count(), S(0));
  g.spring_ke.assign(spring_count(), S(0));
  g.spring_kd.assign(spring_count(), S(0));
  g.spring_rest.assign(spring_count(), S(0));
  g.tet_mu.assign(tet_count(), S(0));
  g.tet_lambda.assign(tet_count(), S(0));
  g.rigid = rigid.make_grad();
  return g;
}

template struct StateT<float>;
template struct StateT<double>;
template struct ControlT<float>;
template struct ControlT<double>;
template struct ModelGradT<float>;
template struct ModelGradT<double>;
template struct ContactsT<float>;
template struct ContactsT<double>;
template struct ModelT<float>;
template struct ModelT<double>;

}  // namespace adj
