#include "engine/model/model.h"

#include "engine/model/fields.h"

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

namespace {

// a gradient slot of engine/model/field_table.h: per-element values or one value
template <class S>
void zero_value(Array<S>& a) {
  for (auto& v : a) v = S(0);
}
template <class S>
void zero_value(S& x) {
  x = S(0);
}
template <class S>
void zero_value(vec3<S>& v) {
  v = vec3<S>();
}
template <class S>
void size_value(Array<S>& a, int n) {
  a.assign(std::size_t(n), S(0));
}
template <class S>
void size_value(S& x, int) {
  x = S(0);
}
template <class S>
void size_value(vec3<S>& v, int) {
  v = vec3<S>();
}

}  // namespace

template <class S>
void ModelGradT<S>::zero() {
#define ADJ_X(decl, kind, field, side, domain, slots, width, select, model, grad, ...) zero_value(grad);
  ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
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
#define ADJ_X(decl, kind, field, side, domain, slots, width, select, model, grad, ...) \
  size_value(g.grad, domain_count(*this, FieldDomain::domain));
  ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
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
