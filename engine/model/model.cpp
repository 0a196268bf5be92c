#include "engine/model/model.h"

namespace adj {

template <class S>
void StateT<S>::zero() {
  for (auto& v : particle_q) v = vec3<S>();
  for (auto& v : particle_qd) v = vec3<S>();
}

template <class S>
void ControlT<S>::zero() {
  for (auto& v : particle_f) v = vec3<S>();
  for (auto& v : spring_act) v = S(0);
  for (auto& v : tet_act) v = S(0);
}

template <class S>
void ModelGradT<S>::zero() {
  for (Array<S>* a : {&particle_mass, &spring_ke, &spring_kd, &spring_rest, &tet_mu, &tet_lambda})
    for (auto& v : *a) v = S(0);
  contact_ke = contact_kd = contact_mu = S(0);
}

template <class S>
void ContactsT<S>::clear() {
  point.clear();
  normal.clear();
  force.clear();
  particle.clear();
  other.clear();
}

template <class S>
StateT<S> ModelT<S>::make_state() const {
  StateT<S> s;
  s.particle_q = particle_q;
  s.particle_qd = particle_qd;
  return s;
}

template <class S>
ControlT<S> ModelT<S>::make_control() const {
  ControlT<S> c;
  c.particle_f.assign(particle_count(), vec3<S>());
  c.spring_act.assign(spring_count(), S(0));
  c.tet_act.assign(tet_count(), S(0));
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
