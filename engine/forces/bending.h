// dihedral-angle bending over an edge shared by two triangles (Bridson et al., as Warp):
// x0, x1 the opposite vertices, x2, x3 the shared edge. The angle uses atan2, smooth at flat.
#pragma once

#include "engine/core/math.h"

namespace adj {

// signed dihedral angle (also used to set rest angles)
template <class T>
ADJ_HD inline T dihedral_angle(const vec3<T>& x0, const vec3<T>& x1, const vec3<T>& x2, const vec3<T>& x3) {
  vec3<T> n1 = cross(x2 - x0, x3 - x0);
  vec3<T> n2 = cross(x3 - x1, x2 - x1);
  vec3<T> e = x3 - x2;
  T e_len = length(e);
  return atan2_(dot(cross(n2, n1), e) / e_len, dot(n1, n2));
}

template <class T, class S>
ADJ_HD inline void bending_force(const vec3<T>& x0, const vec3<T>& x1, const vec3<T>& x2, const vec3<T>& x3,
                                 const vec3<T>& v0, const vec3<T>& v1, const vec3<T>& v2, const vec3<T>& v3, S ke, S kd,
                                 S rest, vec3<T>& f0, vec3<T>& f1, vec3<T>& f2, vec3<T>& f3) {
  f0 = f1 = f2 = f3 = vec3<T>();
  vec3<T> n1 = cross(x2 - x0, x3 - x0);
  vec3<T> n2 = cross(x3 - x1, x2 - x1);
  vec3<T> e = x3 - x2;
  T n1_sq = length_sq(n1), n2_sq = length_sq(n2);
  T e_len = length(e);
  // a degenerate hinge (collapsed triangle or edge) has no force
  const auto ok = !(value(n1_sq) < 1e-20 || value(n2_sq) < 1e-20 || value(e_len) < 1e-9);
  if (!any(ok)) return;
  vec3<T> e_hat = e / e_len;
  T angle = atan2_(dot(cross(n2, n1), e_hat), dot(n1, n2));
  // gradients of the angle (up to sign convention) for each vertex
  vec3<T> g1 = n1 / n1_sq, g2 = n2 / n2_sq;
  vec3<T> d0 = g1 * e_len;
  vec3<T> d1 = g2 * e_len;
  vec3<T> d2 = g1 * dot(x0 - x3, e_hat) + g2 * dot(x1 - x3, e_hat);
  vec3<T> d3 = g1 * dot(x2 - x0, e_hat) + g2 * dot(x2 - x1, e_hat);
  T f_elastic = T(ke) * (angle - T(rest));
  T f_damp = T(kd) * (dot(d0, v0) + dot(d1, v1) + dot(d2, v2) + dot(d3, v3));
  T f_total = -e_len * (f_elastic + f_damp);
  f0 = select(ok, d0 * f_total, f0);
  f1 = select(ok, d1 * f_total, f1);
  f2 = select(ok, d2 * f_total, f2);
  f3 = select(ok, d3 * f_total, f3);
}

// packed form: in = x0..x3, v0..v3; out = f0..f3
template <class S>
struct BendingEval {
  static constexpr int in_count = 24, out_count = 12;
  S ke, kd, rest;
  template <class T>
  ADJ_HD void eval(const T* in, T* out) const {
    vec3<T> f[4];
    bending_force(load3(in), load3(in + 3), load3(in + 6), load3(in + 9), load3(in + 12), load3(in + 15),
                  load3(in + 18), load3(in + 21), ke, kd, rest, f[0], f[1], f[2], f[3]);
    for (int a = 0; a < 4; ++a) store3(out + 3 * a, f[a]);
  }
};

// bending_force's Jacobian in closed form: d f_j / d u_k along x_k + h u_k, v_k + u_k (h df_j/dx_k +
// df_j/dv_k) added to block[4 j + k], in = BendingEval's packed input. With the angle's gradient
// d_j = alpha_j g1 + beta_j g2 (g = n / |n|^2; alpha = (L, 0, s2, t2), beta = (0, L, s3, t3), the
// projections on e_hat) and f_j = F d_j, F = -L (ke (angle - rest) + kd sum_m d_m . v_m):
//   d f_j / d x_k = F (g1 dalpha_j^T + g2 dbeta_j^T + alpha_j G1 N1_k + beta_j G2 N2_k) + d_j dF^T
// where dg/dx_k = G N_k, G = I / |n|^2 - 2 g g^T, N_k = dn/dx_k = [w_k]x (n1 = (x2 - x0) x (x3 - x0),
// n2 = (x3 - x1) x (x2 - x1)), the angle's gradient d_k, and d f_j / d v_k = -L kd d_j d_k^T. The
// same numbers as vertex_blocks' dual-number eval (engine/solver/kernels.h), to rounding, at a
// fraction of its arithmetic; a degenerate hinge adds nothing
template <class S>
ADJ_HD inline void bending_blocks(const BendingEval<S>& be, const S* in, S h, mat33<S>* block) {
  vec3<S> x[4], v[4];
  for (int k = 0; k < 4; ++k) {
    x[k] = load3(in + 3 * k);
    v[k] = load3(in + 12 + 3 * k);
  }
  const vec3<S> a = x[2] - x[0], b = x[3] - x[0], c = x[3] - x[1], q = x[2] - x[1], e = x[3] - x[2];
  const vec3<S> n1 = cross(a, b), n2 = cross(c, q);
  const S n1_sq = length_sq(n1), n2_sq = length_sq(n2), e_len = length(e);
  if (n1_sq < 1e-20 || n2_sq < 1e-20 || e_len < 1e-9) return;  // bending_force's degenerate hinge
  const vec3<S> e_hat = e / e_len;
  const S angle = atan2_(dot(cross(n2, n1), e_hat), dot(n1, n2));
  const vec3<S> g1 = n1 / n1_sq, g2 = n2 / n2_sq;
  const vec3<S> r03 = x[0] - x[3], r13 = x[1] - x[3], r20 = x[2] - x[0], r21 = x[2] - x[1];
  const S alpha[4] = {e_len, S(0), dot(r03, e_hat), dot(r20, e_hat)};
  const S beta[4] = {S(0), e_len, dot(r13, e_hat), dot(r21, e_hat)};
  vec3<S> d[4];
  S d_dot_v = 0;
  for (int j = 0; j < 4; ++j) {
    d[j] = g1 * alpha[j] + g2 * beta[j];
    d_dot_v += dot(d[j], v[j]);
  }
  const S f_sum = be.ke * (angle - be.rest) + be.kd * d_dot_v, F = -e_len * f_sum;
  // dalpha_j / dx_k, dbeta_j / dx_k: L's gradient -+e_hat at x2, x3; a projection (p - r) . e_hat's
  // e_hat at p, -e_hat at r and its e-part (I - e_hat e_hat^T) (p - r) / L at x3, negated at x2
  auto across = [&](const vec3<S>& r) { return (r - e_hat * dot(e_hat, r)) / e_len; };
  const vec3<S> p03 = across(r03), p13 = across(r13), p20 = across(r20), p21 = across(r21), zero;
  const vec3<S> da[4][4] = {{zero, zero, -e_hat, e_hat},
                            {zero, zero, zero, zero},
                            {e_hat, zero, -p03, p03 - e_hat},
                            {-e_hat, zero, e_hat - p20, p20}};
  const vec3<S> db[4][4] = {{zero, zero, zero, zero},
                            {zero, zero, -e_hat, e_hat},
                            {zero, e_hat, -p13, p13 - e_hat},
                            {zero, -e_hat, e_hat - p21, p21}};
  // G N_k = [w_k]x / |n|^2 - 2 g (g x w_k)^T, and its transpose on y: (y x w_k) / |n|^2 - 2 (g . y) g x w_k
  const vec3<S> w1[4] = {e, zero, -b, a}, w2[4] = {zero, -e, c, -q};
  vec3<S> va, vb;  // sum_m alpha_m v_m, sum_m beta_m v_m
  S g1v[4], g2v[4];
  for (int m = 0; m < 4; ++m) {
    va += v[m] * alpha[m];
    vb += v[m] * beta[m];
    g1v[m] = dot(g1, v[m]);
    g2v[m] = dot(g2, v[m]);
  }
  const S g1va = dot(g1, va), g2vb = dot(g2, vb);
  mat33<S> GN1[4], GN2[4];
  vec3<S> z[4];  // h dF/dx_k - L kd d_k: block (j, k) = ... + d_j z_k^T
  for (int k = 0; k < 4; ++k) {
    const vec3<S> gw1 = cross(g1, w1[k]), gw2 = cross(g2, w2[k]);
    // d (sum_m d_m . v_m) / dx_k
    vec3<S> dd = cross(va, w1[k]) / n1_sq - gw1 * (S(2) * g1va) + cross(vb, w2[k]) / n2_sq - gw2 * (S(2) * g2vb);
    for (int m = 0; m < 4; ++m) dd += da[m][k] * g1v[m] + db[m][k] * g2v[m];
    const vec3<S> dF = da[0][k] * (-f_sum) - (d[k] * be.ke + dd * be.kd) * e_len;
    z[k] = dF * h - d[k] * (e_len * be.kd);
    const vec3<S> s1 = w1[k] / n1_sq, s2 = w2[k] / n2_sq;
    const S skew1[3][3] = {{0, -s1.z, s1.y}, {s1.z, 0, -s1.x}, {-s1.y, s1.x, 0}};
    const S skew2[3][3] = {{0, -s2.z, s2.y}, {s2.z, 0, -s2.x}, {-s2.y, s2.x, 0}};
    for (int r = 0; r < 3; ++r)
      for (int col = 0; col < 3; ++col) {
        GN1[k].m[r][col] = skew1[r][col] - S(2) * g1[r] * gw1[col];
        GN2[k].m[r][col] = skew2[r][col] - S(2) * g2[r] * gw2[col];
      }
  }
  const S hF = h * F;
  for (int j = 0; j < 4; ++j)
    for (int k = 0; k < 4; ++k) {
      const vec3<S> u1 = da[j][k] * hF, u2 = db[j][k] * hF;
      const S c1 = hF * alpha[j], c2 = hF * beta[j];
      mat33<S>& out = block[4 * j + k];
      for (int r = 0; r < 3; ++r)
        for (int col = 0; col < 3; ++col)
          out.m[r][col] +=
              g1[r] * u1[col] + g2[r] * u2[col] + d[j][r] * z[k][col] + c1 * GN1[k].m[r][col] + c2 * GN2[k].m[r][col];
    }
}

// adjoint (hand-written reverse of bending_force) on the vertices' positions x, velocities v and
// dL/d forces g (four each): dL/dx into adj_x, dL/dv into adj_v; adj_coef (optional) gets
// dL/d(ke, kd)
template <class S>
ADJ_HD inline void bending_adjoint(const BendingEval<S>& be, const vec3<S>* x, const vec3<S>* v, const vec3<S>* g,
                                   vec3<S>* adj_x, vec3<S>* adj_v, S* adj_coef = nullptr) {
  for (int k = 0; k < 4; ++k) adj_x[k] = adj_v[k] = vec3<S>();
  if (adj_coef) adj_coef[0] = adj_coef[1] = S(0);
  const vec3<S> x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
  vec3<S> n1 = cross(x2 - x0, x3 - x0);
  vec3<S> n2 = cross(x3 - x1, x2 - x1);
  vec3<S> e = x3 - x2;
  S n1_sq = length_sq(n1), n2_sq = length_sq(n2);
  S e_len = length(e);
  const auto ok = !(n1_sq < S(1e-20) || n2_sq < S(1e-20) || e_len < S(1e-9));
  if (!any(ok)) return;
  // forward intermediates
  vec3<S> e_hat = e / e_len;
  vec3<S> w = cross(n2, n1);
  S ay = dot(w, e_hat), ax = dot(n1, n2);
  S angle = atan2_(ay, ax);
  vec3<S> g1 = n1 / n1_sq, g2 = n2 / n2_sq;
  S s2 = dot(x0 - x3, e_hat), s3 = dot(x1 - x3, e_hat);
  S t2 = dot(x2 - x0, e_hat), t3 = dot(x2 - x1, e_hat);
  vec3<S> d[4] = {g1 * e_len, g2 * e_len, g1 * s2 + g2 * s3, g1 * t2 + g2 * t3};
  S f_el = be.ke * (angle - be.rest);
  S f_damp = be.kd * (dot(d[0], v[0]) + dot(d[1], v[1]) + dot(d[2], v[2]) + dot(d[3], v[3]));
  S f_total = -e_len * (f_el + f_damp);
  // f_i = d_i f_total
  vec3<S> adj_d[4];
  S adj_ftot = 0;
  for (int i = 0; i < 4; ++i) {
    vec3<S> G = g[i];
    adj_d[i] = G * f_total;
    adj_ftot += dot(G, d[i]);
  }
  S adj_elen = -adj_ftot * (f_el + f_damp);
  S adj_f = -adj_ftot * e_len;  // of f_el and of f_damp
  S adj_angle = adj_f * be.ke;
  if (adj_coef) {
    adj_coef[0] = adj_f * (angle - be.rest);
    adj_coef[1] = adj_f * (dot(d[0], v[0]) + dot(d[1], v[1]) + dot(d[2], v[2]) + dot(d[3], v[3]));
  }
  for (int i = 0; i < 4; ++i) {
    adj_d[i] += v[i] * (adj_f * be.kd);
    adj_v[i] = select(ok, d[i] * (adj_f * be.kd), vec3<S>());
  }
  // d0..d3 from g1, g2, e_len and the projections
  vec3<S> adj_g1 = adj_d[0] * e_len + adj_d[2] * s2 + adj_d[3] * t2;
  vec3<S> adj_g2 = adj_d[1] * e_len + adj_d[2] * s3 + adj_d[3] * t3;
  adj_elen += dot(adj_d[0], g1) + dot(adj_d[1], g2);
  S adj_s2 = dot(adj_d[2], g1), adj_s3 = dot(adj_d[2], g2);
  S adj_t2 = dot(adj_d[3], g1), adj_t3 = dot(adj_d[3], g2);
  vec3<S> ax0 = e_hat * (adj_s2 - adj_t2);
  vec3<S> ax1 = e_hat * (adj_s3 - adj_t3);
  vec3<S> ax2 = e_hat * (adj_t2 + adj_t3);
  vec3<S> ax3 = e_hat * (-adj_s2 - adj_s3);
  vec3<S> adj_ehat = (x0 - x3) * adj_s2 + (x1 - x3) * adj_s3 + (x2 - x0) * adj_t2 + (x2 - x1) * adj_t3;
  // g = n / |n|^2
  vec3<S> adj_n1 = adj_g1 / n1_sq - n1 * (S(2) * dot(adj_g1, n1) / (n1_sq * n1_sq));
  vec3<S> adj_n2 = adj_g2 / n2_sq - n2 * (S(2) * dot(adj_g2, n2) / (n2_sq * n2_sq));
  // angle = atan2(w . e_hat, n1 . n2), w = n2 x n1
  S r2 = ax * ax + ay * ay;
  S adj_ay = adj_angle * ax / r2, adj_ax = -adj_angle * ay / r2;
  adj_n1 += n2 * adj_ax;
  adj_n2 += n1 * adj_ax;
  vec3<S> adj_w = e_hat * adj_ay;
  adj_ehat += w * adj_ay;
  adj_n2 += cross(n1, adj_w);
  adj_n1 += cross(adj_w, n2);
  // e_hat = e / |e|
  vec3<S> adj_e = (adj_ehat - e_hat * dot(e_hat, adj_ehat)) / e_len + e_hat * adj_elen;
  ax3 += adj_e;
  ax2 -= adj_e;
  // n1 = (x2 - x0) x (x3 - x0), n2 = (x3 - x1) x (x2 - x1)
  vec3<S> a1 = cross(x3 - x0, adj_n1), b1 = cross(adj_n1, x2 - x0);
  ax2 += a1;
  ax3 += b1;
  ax0 -= a1 + b1;
  vec3<S> a2 = cross(x2 - x1, adj_n2), b2 = cross(adj_n2, x3 - x1);
  ax3 += a2;
  ax2 += b2;
  ax1 -= a2 + b2;
  const vec3<S> zero = vec3<S>();
  adj_x[0] = select(ok, ax0, zero), adj_x[1] = select(ok, ax1, zero);
  adj_x[2] = select(ok, ax2, zero), adj_x[3] = select(ok, ax3, zero);
  if (adj_coef)
    for (int k = 0; k < 2; ++k) adj_coef[k] = select(ok, adj_coef[k], S(0));
}

// packed form: in = x0..x3, v0..v3; adj_out = dL/d(f0..f3); adj_in = dL/d in
template <class S>
ADJ_HD inline void bending_adjoint(const BendingEval<S>& be, const S* in, const S* adj_out, S* adj_in,
                                   S* adj_coef = nullptr) {
  packed_vertex_adjoint<4>(in, adj_out, adj_in,
                           [&](const vec3<S>* x, const vec3<S>* v, const vec3<S>* g, vec3<S>* adj_x, vec3<S>* adj_v) {
                             bending_adjoint(be, x, v, g, adj_x, adj_v, adj_coef);
                           });
}

}  // namespace adj
