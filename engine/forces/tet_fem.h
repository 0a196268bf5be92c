// tetrahedral Neo-Hookean FEM (rest-stable form of Smith et al. 2018, as Warp):
// psi = mu/2 (tr(F^T F) - 3) + lambda/2 (J - alpha + act)^2, alpha = 1 + mu/lambda,
// plus strain-rate damping kd; act is the muscle activation (volumetric)
#pragma once

#include "engine/core/math.h"

namespace adj {

template <class T, class S>
ADJ_HD inline void tet_force(const vec3<T> x[4], const vec3<T> v[4], const mat33<S>& pose, S volume, T mu, T lambda,
                             T act, S kd, vec3<T> f[4]) {
  mat33<T> dm = lift<T>(pose);
  mat33<T> ds = mat33<T>::from_cols(x[1] - x[0], x[2] - x[0], x[3] - x[0]);
  mat33<T> dv = mat33<T>::from_cols(v[1] - v[0], v[2] - v[0], v[3] - v[0]);
  mat33<T> F = ds * dm;
  mat33<T> dFdt = dv * dm;
  vec3<T> c0 = F.col(0), c1 = F.col(1), c2 = F.col(2);
  // dJ/dF = cofactor matrix
  mat33<T> dJ = mat33<T>::from_cols(cross(c1, c2), cross(c2, c0), cross(c0, c1));
  T J = dot(c0, dJ.col(0));
  T alpha = T(1) + mu / lambda;
  T p_vol = lambda * (J - alpha + act);
  mat33<T> P;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) P.m[i][j] = mu * F.m[i][j] + p_vol * dJ.m[i][j] + T(kd) * dFdt.m[i][j];
  // forces = -volume P pose^T
  mat33<T> H = P * transpose(dm);
  f[0] = vec3<T>();
  for (int a = 1; a < 4; ++a) {
    f[a] = -H.col(a - 1) * T(volume);
    f[0] -= f[a];
  }
}

// packed form: in = x0..x3, v0..v3, mu, lambda, act; out = f0..f3
template <class S>
struct TetEval {
  static constexpr int in_count = 27, out_count = 12;
  mat33<S> pose;
  S volume, kd;
  template <class T>
  ADJ_HD void eval(const T* in, T* out) const {
    vec3<T> x[4], v[4], f[4];
    for (int a = 0; a < 4; ++a) {
      x[a] = load3(in + 3 * a);
      v[a] = load3(in + 12 + 3 * a);
    }
    tet_force(x, v, pose, volume, in[24], in[25], in[26], kd, f);
    for (int a = 0; a < 4; ++a) store3(out + 3 * a, f[a]);
  }
};

// tet_force's Jacobian in closed form: d f_a / d u_k along x_k + h u_k, v_k + u_k (h df_a/dx_k +
// df_a/dv_k) added to block[4 a + k], in = TetEval's packed input. With F = sum_a x_a b_a^T (b_a:
// row a - 1 of the pose for a = 1..3, b_0 = -(b_1 + b_2 + b_3)), f_a = -volume P b_a and
// P = mu F + p_vol cof(F) + kd dF/dt, p_vol = lambda (J - alpha + act), whose change along
// dF = dx_k b_k^T is mu dF + p_vol dcof + lambda (cof : dF) cof with dcof b_a = -[F (b_a x b_k)]x dx_k:
//   block (a, k) = -volume (h (mu (b_a . b_k) I - p_vol [F (b_a x b_k)]x + lambda cof b_a (cof b_k)^T)
//                  + kd (b_a . b_k) I)
// the same numbers as vertex_blocks' dual-number eval (engine/solver/kernels.h), to rounding
template <class S>
ADJ_HD inline void tet_blocks(const TetEval<S>& t, const S* in, S h, mat33<S>* block) {
  const vec3<S> x0 = load3(in);
  const mat33<S> ds = mat33<S>::from_cols(load3(in + 3) - x0, load3(in + 6) - x0, load3(in + 9) - x0);
  const mat33<S> F = ds * t.pose;
  const S mu = in[24], lambda = in[25], act = in[26];
  const vec3<S> c0 = F.col(0), c1 = F.col(1), c2 = F.col(2);
  const mat33<S> cof = mat33<S>::from_cols(cross(c1, c2), cross(c2, c0), cross(c0, c1));
  const S J = dot(c0, cof.col(0));
  const S p_vol = lambda * (J - (S(1) + mu / lambda) + act);
  vec3<S> b[4], cb[4];
  for (int a = 1; a < 4; ++a) {
    b[a] = {t.pose.m[a - 1][0], t.pose.m[a - 1][1], t.pose.m[a - 1][2]};
    b[0] -= b[a];
  }
  for (int a = 0; a < 4; ++a) cb[a] = cof * b[a];
  for (int a = 0; a < 4; ++a)
    for (int k = 0; k < 4; ++k) {
      const S bb = dot(b[a], b[k]);
      const vec3<S> w = F * cross(b[a], b[k]) * (h * p_vol * t.volume);
      const S diag = -t.volume * (h * mu + t.kd) * bb, outer = -t.volume * h * lambda;
      mat33<S>& out = block[4 * a + k];
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) out.m[r][c] += outer * cb[a][r] * cb[k][c];
      // + volume h p_vol [F (b_a x b_k)]x
      out.m[0][1] -= w.z, out.m[0][2] += w.y, out.m[1][0] += w.z;
      out.m[1][2] -= w.x, out.m[2][0] -= w.y, out.m[2][1] += w.x;
      for (int r = 0; r < 3; ++r) out.m[r][r] += diag;
    }
}

// adjoint (hand-written reverse of tet_force)
template <class S>
ADJ_HD inline void tet_adjoint(const TetEval<S>& e, const S* in, const S* adj_out, S* adj_in) {
  vec3<S> x0 = load3(in);
  mat33<S> ds = mat33<S>::from_cols(load3(in + 3) - x0, load3(in + 6) - x0, load3(in + 9) - x0);
  const mat33<S>& dm = e.pose;
  mat33<S> F = ds * dm;
  S mu = in[24], lambda = in[25], act = in[26];
  vec3<S> c0 = F.col(0), c1 = F.col(1), c2 = F.col(2);
  mat33<S> dJ = mat33<S>::from_cols(cross(c1, c2), cross(c2, c0), cross(c0, c1));
  S J = dot(c0, dJ.col(0));
  S p_vol = lambda * (J - (S(1) + mu / lambda) + act);
  // f_a = -V H col(a-1), f0 = -(f1 + f2 + f3), H = P dm^T
  vec3<S> g0 = load3(adj_out);
  mat33<S> adj_H = mat33<S>::from_cols((load3(adj_out + 3) - g0) * (-e.volume), (load3(adj_out + 6) - g0) * (-e.volume),
                                       (load3(adj_out + 9) - g0) * (-e.volume));
  mat33<S> adj_P = adj_H * dm;
  // P = mu F + p_vol dJ + kd dF/dt
  S adj_mu = 0, adj_pvol = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      adj_mu += adj_P.m[i][j] * F.m[i][j];
      adj_pvol += adj_P.m[i][j] * dJ.m[i][j];
    }
  // p_vol = lambda (J - 1 + act) - mu
  adj_mu -= adj_pvol;
  S adj_lambda = adj_pvol * (J - S(1) + act);
  S adj_J = adj_pvol * lambda;
  S adj_act = adj_pvol * lambda;
  mat33<S> adj_F;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) adj_F.m[i][j] = mu * adj_P.m[i][j] + adj_J * dJ.m[i][j];
  // dJ columns are cross products of F's columns
  vec3<S> k0 = adj_P.col(0) * p_vol, k1 = adj_P.col(1) * p_vol, k2 = adj_P.col(2) * p_vol;
  vec3<S> adj_c0 = cross(k1, c2) + cross(c1, k2);
  vec3<S> adj_c1 = cross(c2, k0) + cross(k2, c0);
  vec3<S> adj_c2 = cross(k0, c1) + cross(c0, k1);
  for (int i = 0; i < 3; ++i) {
    adj_F.m[i][0] += adj_c0[i];
    adj_F.m[i][1] += adj_c1[i];
    adj_F.m[i][2] += adj_c2[i];
  }
  // F = ds dm, dF/dt = dv dm
  mat33<S> dmT = transpose(dm);
  mat33<S> adj_ds = adj_F * dmT;
  mat33<S> adj_dv = adj_P * dmT;
  vec3<S> sx, sv;
  for (int a = 0; a < 3; ++a) {
    vec3<S> ax = adj_ds.col(a), av = adj_dv.col(a) * e.kd;
    store3(adj_in + 3 + 3 * a, ax);
    store3(adj_in + 15 + 3 * a, av);
    sx += ax;
    sv += av;
  }
  store3(adj_in, -sx);
  store3(adj_in + 12, -sv);
  adj_in[24] = adj_mu;
  adj_in[25] = adj_lambda;
  adj_in[26] = adj_act;
}

}  // namespace adj
