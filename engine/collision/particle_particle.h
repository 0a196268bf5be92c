// particle-particle contact: the contact law (contact_law.h) of two spheres, along the
// line between the centres. Each particle sums the forces of its own pairs (no scatter).
#pragma once

#include "engine/collision/contact_law.h"

namespace adj {

// force on particle i from particle j
template <class T, class S>
ADJ_HD inline vec3<T> particle_pair_force(const vec3<T>& xi, const vec3<T>& xj, const vec3<T>& vi, const vec3<T>& vj,
                                          S radius_sum, T ke, T kd, S kf, T mu, S eps) {
  vec3<T> d = xi - xj;
  T l = length(d);
  if (value(l) < 1e-9 || !(value(l) < radius_sum)) return vec3<T>();
  return contact_force(l - T(radius_sum), d / l, vi - vj, ke, kd, kf, mu, eps);
}

// packed form: in = xi, xj, vi, vj, ke, kd, mu; out = f on i
template <class S>
struct PairContactEval {
  static constexpr int in_count = 15, out_count = 3;
  S radius_sum, kf, eps;
  template <class T>
  ADJ_HD void eval(const T* in, T* out) const {
    store3(out, particle_pair_force(load3(in), load3(in + 3), load3(in + 6), load3(in + 9), radius_sum, in[12], in[13],
                                    kf, in[14], eps));
  }
};

// adjoint: dual-number vector-Jacobian product of PairContactEval (15 tangents), run only
// for pairs within contact distance
template <class S>
ADJ_HD inline void pair_contact_adjoint(const PairContactEval<S>& e, const S* in, const S* adj_out, S* adj_in) {
  vjp(e, in, adj_out, adj_in);
}

}  // namespace adj
