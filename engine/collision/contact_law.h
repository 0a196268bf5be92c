// the contact law of every pair (particle-shape, particle-particle, body-body, body-collider,
// body-particle): penalty normal force (ke, kd) and Coulomb friction smoothed around zero
// slip, |f_t| = smooth-min(kf |v_t|, mu f_n) with |v_t| smoothed by eps. one set of defaults
// for every Model and scene; robot scenes that want stiffer contact state it (settings.robot_contact)
#pragma once

#include "engine/core/math.h"

namespace adj {

// the defaults, for particles and bodies alike (ModelT, RigidModelT, RigidBuilder, the scene's
// contact and robot_contact settings). the articulated bodies' old defaults (ke 1e4, kd 1e2,
// kf 1e2, mu 0.8) are now stated by the robots and scenes that rely on them
inline constexpr double kContactKe = 1e3;    // normal stiffness [N/m]
inline constexpr double kContactKd = 1.0;    // normal damping [N s/m]
inline constexpr double kContactKf = 1.0;    // friction slope [N s/m] (kf h/m < 2 for stability); 0 = off
inline constexpr double kContactMu = 0.5;    // Coulomb coefficient
inline constexpr double kContactEps = 1e-2;  // friction smoothing width around zero slip [m/s]

// which law a model's contact follows: the smooth one (contact_force, the default) or the
// depth-damped one (depth_damped_contact_force: dflex's, whose damping and friction bound grow
// with the depth, as in Hunt-Crossley)
enum ContactLaw : int { CONTACT_SMOOTH = 0, CONTACT_DEPTH_DAMPED = 1 };

// the law's parameters (a scene's, or a model's)
template <class S>
struct ContactParams {
  S ke = S(kContactKe), kd = S(kContactKd), kf = S(kContactKf), mu = S(kContactMu), eps = S(kContactEps);
};

// force on the body with signed gap c (< 0 = penetrating), normal n out of the other side and
// velocity relative to it vrel. T: a scalar, a Dual, or a host SIMD pack (several contacts, one
// per lane: the branches are any() and select(), math.h, so each lane equals the scalar)
template <class T, class S>
ADJ_HD inline vec3<T> contact_force(T c, const vec3<T>& n, const vec3<T>& vrel, T ke, T kd, S kf, T mu, S eps) {
  const auto touching = value(c) < 0;
  if (!any(touching)) return vec3<T>();
  T vn = dot(n, vrel);
  T lambda = -ke * c - kd * vn;
  const auto pushing = touching && value(lambda) > 0;
  if (!any(pushing)) return vec3<T>();
  vec3<T> f = n * lambda;
  const auto sliding = value(mu) > 0;
  if (kf > S(0) && any(sliding)) {
    vec3<T> vt = vrel - n * vn;
    T mul = mu * lambda;
    T denom = sqrt_(T(kf * kf) * (dot(vt, vt) + T(eps * eps)) + mul * mul);
    f = select(sliding, f - vt * (T(kf) * mul / denom), f);
  }
  return select(pushing, f, vec3<T>());
}

// adjoint: the reverse of contact_force by hand: given adj_f, adds to the
// adjoints of c, vrel, ke, kd and mu (nothing where the force is zero: apart, or pulling)
template <class S>
ADJ_HD inline void contact_force_adjoint(S c, const vec3<S>& n, const vec3<S>& vrel, S ke, S kd, S kf, S mu, S eps,
                                         const vec3<S>& adj_f, S& adj_c, vec3<S>& adj_vrel, S& adj_ke, S& adj_kd,
                                         S& adj_mu) {
  if (!(c < 0)) return;
  const S vn = dot(n, vrel), lambda = -ke * c - kd * vn;
  if (!(lambda > 0)) return;
  S adj_lambda = dot(n, adj_f), adj_vn = S(0);
  if (kf > S(0) && mu > S(0)) {
    // f -= vt k, k = kf mul / denom, denom = sqrt(kf^2 (vt.vt + eps^2) + mul^2), mul = mu lambda
    const vec3<S> vt = vrel - n * vn;
    const S mul = mu * lambda;
    const S denom = sqrt_(kf * kf * (dot(vt, vt) + eps * eps) + mul * mul);
    const S k = kf * mul / denom;
    vec3<S> adj_vt = adj_f * (-k);
    const S adj_k = -dot(vt, adj_f);
    S adj_mul = adj_k * kf / denom;
    const S adj_denom = -adj_k * k / denom;
    const S adj_Q = adj_denom / (S(2) * denom);
    adj_vt += vt * (S(2) * kf * kf * adj_Q);
    adj_mul += S(2) * mul * adj_Q;
    adj_mu += adj_mul * lambda;
    adj_lambda += adj_mul * mu;
    adj_vrel += adj_vt;
    adj_vn -= dot(n, adj_vt);
  }
  adj_ke -= c * adj_lambda;
  adj_kd -= vn * adj_lambda;
  adj_c -= ke * adj_lambda;
  adj_vn -= kd * adj_lambda;
  adj_vrel += n * adj_vn;
}

// the depth-damped law, per contact point with depth d = -c > 0, normal speed v_n = n.vrel and
// slip v_t: normal force ke d, damping -kd d min(v_n, 0) (zero at the surface, so a contact
// opens without a jump), friction -normalize(v_t) min(kf |v_t|, mu ke d): viscous below the
// Coulomb bound of the elastic part, Coulomb above it (no smoothing width: the viscous part
// makes it continuous at zero slip). scalars and duals (the rigid pairs), not SIMD packs
template <class T, class S>
ADJ_HD inline vec3<T> depth_damped_contact_force(T c, const vec3<T>& n, const vec3<T>& vrel, T ke, T kd, S kf, T mu) {
  if (!(value(c) < 0)) return vec3<T>();
  const T d = -c, vn = dot(n, vrel);
  T fn = ke * d;
  if (value(vn) < 0) fn -= kd * d * vn;
  vec3<T> f = n * fn;
  if (kf > S(0) && value(mu) > 0) {
    const vec3<T> vt = vrel - n * vn;
    const T fe = mu * ke * d, vt2 = dot(vt, vt);
    if (value(T(kf * kf) * vt2) <= value(fe * fe))
      f -= vt * T(kf);
    else
      f -= vt * (fe / sqrt_(vt2));
  }
  return f;
}

// adjoint: the reverse of depth_damped_contact_force by hand: given adj_f, adds to the
// adjoints of c, vrel, ke, kd and mu (nothing where apart)
template <class S>
ADJ_HD inline void depth_damped_contact_force_adjoint(S c, const vec3<S>& n, const vec3<S>& vrel, S ke, S kd, S kf,
                                                      S mu, const vec3<S>& adj_f, S& adj_c, vec3<S>& adj_vrel,
                                                      S& adj_ke, S& adj_kd, S& adj_mu) {
  if (!(c < 0)) return;
  const S d = -c, vn = dot(n, vrel), m = vn < 0 ? vn : S(0);
  S adj_d = S(0), adj_vn = S(0);
  if (kf > S(0) && mu > S(0)) {
    const vec3<S> vt = vrel - n * vn;
    const S fe = mu * ke * d, vt2 = dot(vt, vt);
    vec3<S> adj_vt;
    if (kf * kf * vt2 <= fe * fe) {
      adj_vt = adj_f * (-kf);
    } else {
      // f -= vt g, g = fe / L, L = |vt|
      const S L = sqrt_(vt2), g = fe / L;
      const S adj_g = -dot(vt, adj_f);
      const S adj_fe = adj_g / L, adj_L = -adj_g * g / L;
      adj_vt = adj_f * (-g) + vt * (adj_L / L);
      adj_mu += adj_fe * ke * d;
      adj_ke += adj_fe * mu * d;
      adj_d += adj_fe * mu * ke;
    }
    adj_vrel += adj_vt;
    adj_vn -= dot(n, adj_vt);
  }
  // fn = ke d - kd d m, m = min(vn, 0)
  const S adj_fn = dot(n, adj_f);
  adj_ke += adj_fn * d;
  adj_kd -= adj_fn * d * m;
  adj_d += adj_fn * (ke - kd * m);
  if (vn < 0) adj_vn -= adj_fn * kd * d;
  adj_c -= adj_d;
  adj_vrel += n * adj_vn;
}

// the force of a model's law (ContactLaw)
template <class T, class S>
ADJ_HD inline vec3<T> law_contact_force(int law, T c, const vec3<T>& n, const vec3<T>& vrel, T ke, T kd, S kf, T mu,
                                        S eps) {
  if (law == CONTACT_DEPTH_DAMPED) return depth_damped_contact_force(c, n, vrel, ke, kd, kf, mu);
  return contact_force(c, n, vrel, ke, kd, kf, mu, eps);
}

// adjoint of law_contact_force
template <class S>
ADJ_HD inline void law_contact_force_adjoint(int law, S c, const vec3<S>& n, const vec3<S>& vrel, S ke, S kd, S kf,
                                             S mu, S eps, const vec3<S>& adj_f, S& adj_c, vec3<S>& adj_vrel, S& adj_ke,
                                             S& adj_kd, S& adj_mu) {
  if (law == CONTACT_DEPTH_DAMPED)
    depth_damped_contact_force_adjoint(c, n, vrel, ke, kd, kf, mu, adj_f, adj_c, adj_vrel, adj_ke, adj_kd, adj_mu);
  else
    contact_force_adjoint(c, n, vrel, ke, kd, kf, mu, eps, adj_f, adj_c, adj_vrel, adj_ke, adj_kd, adj_mu);
}

}  // namespace adj
