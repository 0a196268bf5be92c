// cloth membrane: StVK on the triangle's 2d deformation gradient, with strain-rate damping.
// mu = ke (stretch/shear), lambda = ka (area), both per unit rest area
#pragma once

#include "engine/core/math.h"

namespace adj {

template <class T, class S>
ADJ_HD inline void triangle_force(const vec3<T>& x0, const vec3<T>& x1, const vec3<T>& x2, const vec3<T>& v0,
                                  const vec3<T>& v1, const vec3<T>& v2, const mat22<S>& pose, S area, S ke, S ka,
                                  S kd, vec3<T>& f0, vec3<T>& f1, vec3<T>& f2) {
  // deformation gradient F = [x10 x20] pose (3x2, columns fa, fb) and its rate
  vec3<T> x10 = x1 - x0, x20 = x2 - x0;
  vec3<T> v10 = v1 - v0, v20 = v2 - v0;
  vec3<T> fa = x10 * T(pose.a) + x20 * T(pose.c);
  vec3<T> fb = x10 * T(pose.b) + x20 * T(pose.d);
  vec3<T> da = v10 * T(pose.a) + v20 * T(pose.c);
  vec3<T> db = v10 * T(pose.b) + v20 * T(pose.d);
  // green strain and the second Piola stress
  T e11 = T(0.5) * (dot(fa, fa) - T(1));
  T e22 = T(0.5) * (dot(fb, fb) - T(1));
  T e12 = T(0.5) * dot(fa, fb);
  T tr = e11 + e22;
  T s11 = T(2 * ke) * e11 + T(ka) * tr;
  T s22 = T(2 * ke) * e22 + T(ka) * tr;
  T s12 = T(2 * ke) * e12;
  // first Piola stress P = F S + kd dF/dt
  vec3<T> pa = fa * s11 + fb * s12 + da * T(kd);
  vec3<T> pb = fa * s12 + fb * s22 + db * T(kd);
  // forces = -area P pose^T
  f1 = -(pa * T(pose.a) + pb * T(pose.b)) * T(area);
  f2 = -(pa * T(pose.c) + pb * T(pose.d)) * T(area);
  f0 = -(f1 + f2);
}

// packed form: in = x0, x1, x2, v0, v1, v2; out = f0, f1, f2
template <class S>
struct TriangleEval {
  static constexpr int in_count = 18, out_count = 9;
  mat22<S> pose;
  S area, ke, ka, kd;
  template <class T>
  ADJ_HD void eval(const T* in, T* out) const {
    vec3<T> f0, f1, f2;
    triangle_force(load3(in), load3(in + 3), load3(in + 6), load3(in + 9), load3(in + 12), load3(in + 15), pose,
                   area, ke, ka, kd, f0, f1, f2);
    store3(out, f0);
    store3(out + 3, f1);
    store3(out + 6, f2);
  }
};

// adjoint (hand-written reverse of triangle_force) on the vertices' positions x, velocities v
// and dL/d forces g (three each): dL/dx into adj_x, dL/dv into adj_v; adj_mat (optional) gets
// dL/d(ke, ka, kd)
template <class S>
ADJ_HD inline void triangle_adjoint(const TriangleEval<S>& e, const vec3<S>* x, const vec3<S>* v, const vec3<S>* g,
                                    vec3<S>* adj_x, vec3<S>* adj_v, S* adj_mat = nullptr) {
  const S A = e.pose.a, B = e.pose.b, C = e.pose.c, D = e.pose.d;
  vec3<S> x10 = x[1] - x[0], x20 = x[2] - x[0];
  vec3<S> fa = x10 * A + x20 * C, fb = x10 * B + x20 * D;
  S e11 = S(0.5) * (dot(fa, fa) - S(1)), e22 = S(0.5) * (dot(fb, fb) - S(1)), e12 = S(0.5) * dot(fa, fb);
  S tr = e11 + e22;
  S s11 = S(2) * e.ke * e11 + e.ka * tr, s22 = S(2) * e.ke * e22 + e.ka * tr, s12 = S(2) * e.ke * e12;
  // f1, f2 (f0 = -f1 - f2) -> P columns
  vec3<S> g0 = g[0];
  vec3<S> adj_f1 = g[1] - g0, adj_f2 = g[2] - g0;
  vec3<S> adj_pa = (adj_f1 * A + adj_f2 * C) * (-e.area);
  vec3<S> adj_pb = (adj_f1 * B + adj_f2 * D) * (-e.area);
  // P = F S + kd dF/dt
  vec3<S> adj_fa = adj_pa * s11 + adj_pb * s12;
  vec3<S> adj_fb = adj_pa * s12 + adj_pb * s22;
  S adj_s11 = dot(adj_pa, fa), adj_s12 = dot(adj_pa, fb) + dot(adj_pb, fa), adj_s22 = dot(adj_pb, fb);
  vec3<S> adj_da = adj_pa * e.kd, adj_db = adj_pb * e.kd;
  // S(E), E(F)
  S adj_tr = e.ka * (adj_s11 + adj_s22);
  S adj_e11 = S(2) * e.ke * adj_s11 + adj_tr, adj_e22 = S(2) * e.ke * adj_s22 + adj_tr;
  S adj_e12 = S(2) * e.ke * adj_s12;
  if (adj_mat) {
    // S = 2 ke E + ka tr(E) I, P += kd dF/dt
    vec3<S> v10 = v[1] - v[0], v20 = v[2] - v[0];
    vec3<S> da = v10 * A + v20 * C, db = v10 * B + v20 * D;
    adj_mat[0] = S(2) * (adj_s11 * e11 + adj_s22 * e22 + adj_s12 * e12);
    adj_mat[1] = (adj_s11 + adj_s22) * tr;
    adj_mat[2] = dot(adj_pa, da) + dot(adj_pb, db);
  }
  adj_fa += fa * adj_e11 + fb * (S(0.5) * adj_e12);
  adj_fb += fb * adj_e22 + fa * (S(0.5) * adj_e12);
  // F = [x10 x20] pose, dF/dt = [v10 v20] pose
  vec3<S> adj_x10 = adj_fa * A + adj_fb * B, adj_x20 = adj_fa * C + adj_fb * D;
  vec3<S> adj_v10 = adj_da * A + adj_db * B, adj_v20 = adj_da * C + adj_db * D;
  adj_x[0] = -(adj_x10 + adj_x20), adj_x[1] = adj_x10, adj_x[2] = adj_x20;
  adj_v[0] = -(adj_v10 + adj_v20), adj_v[1] = adj_v10, adj_v[2] = adj_v20;
}

// packed form: in = x0, x1, x2, v0, v1, v2; adj_out = dL/d(f0, f1, f2); adj_in = dL/d in
template <class S>
ADJ_HD inline void triangle_adjoint(const TriangleEval<S>& e, const S* in, const S* adj_out, S* adj_in,
                                    S* adj_mat = nullptr) {
  packed_vertex_adjoint<3>(in, adj_out, adj_in,
                           [&](const vec3<S>* x, const vec3<S>* v, const vec3<S>* g, vec3<S>* adj_x, vec3<S>* adj_v) {
                             triangle_adjoint(e, x, v, g, adj_x, adj_v, adj_mat);
                           });
}

}  // namespace adj
