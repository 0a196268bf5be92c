// the reverse-mode adjoint of one rigid substep, written by hand stage by stage in the order
// opposite to rigid_dynamics.h: integration -> Cholesky solve -> the implicit system -> CRBA
// -> RNEA -> joint forces -> contact -> kinematics. the recursions over the tree (CRBA's composite inertias and
// columns, RNEA's two sweeps, the kinematic chain) and the linear algebra are adjointed by
// hand, as is one body's Newton-Euler force; the small per-element kernels (one body's
// kinematics, one contact point, one joint's quaternion update) take their vector-Jacobian
// products from dual numbers run through the same functions the forward pass runs, as
// engine/forces does.
#pragma once

#include <vector>

#include "engine/articulation/rigid_dynamics.h"
#include "engine/core/rigid_dual.h"

namespace adj::rigid {

// adjoints of the per-body and per-dof quantities of a substep
template <class S>
struct AdjWork {
  std::vector<mat33<S>> R;                   // (body_count)
  std::vector<vec3<S>> p;                    // (body_count)
  std::vector<svec<S>> v, a, F;              // velocity, acceleration, accumulated joint force, (body_count)
  std::vector<svec<S>> fext;                 // (body_count)
  std::vector<sinertia<S>> I, Ic;            // (body_count)
  std::vector<svec<S>> S_;                   // motion subspace columns, (dof_count)
  std::vector<S> lambda, qd_new, adj_v_new;  // (dof_count)
  void reset(int nb, int nv) {
    R.assign(nb, mat33<S>());
    p.assign(nb, vec3<S>());
    v.assign(nb, svec<S>{});
    a.assign(nb, svec<S>{});
    F.assign(nb, svec<S>{});
    fext.assign(nb, svec<S>{});
    I.assign(nb, sinertia<S>());
    Ic.assign(nb, sinertia<S>());
    S_.assign(nv, svec<S>{});
    lambda.assign(nv, S(0));
    qd_new.assign(nv, S(0));
    adj_v_new.assign(nv, S(0));
  }
};

// AdjWork's fields as spans carved from an arena (one environment's slice on a device)
template <class S>
struct AdjWorkView {
  Span<mat33<S>> R;
  Span<vec3<S>> p;
  Span<svec<S>> v, a, F;
  Span<svec<S>> fext;
  Span<sinertia<S>> I, Ic;
  Span<svec<S>> S_;
  Span<S> lambda, qd_new, adj_v_new;
  ADJ_HD void carve(ArenaCursor& arena, int nb, int nv) {
    R = arena.take<mat33<S>>(nb);
    p = arena.take<vec3<S>>(nb);
    v = arena.take<svec<S>>(nb);
    a = arena.take<svec<S>>(nb);
    F = arena.take<svec<S>>(nb);
    fext = arena.take<svec<S>>(nb);
    I = arena.take<sinertia<S>>(nb);
    Ic = arena.take<sinertia<S>>(nb);
    S_ = arena.take<svec<S>>(nv);
    lambda = arena.take<S>(nv);
    qd_new = arena.take<S>(nv);
    adj_v_new = arena.take<S>(nv);
  }
  ADJ_HD void reset(int nb, int nv) {
    for (int i = 0; i < nb; ++i) {
      R[i] = mat33<S>();
      p[i] = vec3<S>();
      v[i] = a[i] = F[i] = fext[i] = svec<S>{};
      I[i] = Ic[i] = sinertia<S>();
    }
    for (int d = 0; d < nv; ++d) {
      S_[d] = svec<S>{};
      lambda[d] = qd_new[d] = adj_v_new[d] = S(0);
    }
  }
};

template <class S>
ADJ_HD inline void add_outer(mat33<S>& M, const vec3<S>& a, const vec3<S>& b, S s = S(1)) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) M.m[i][j] += s * a[i] * b[j];
}

// adjoint of F = I s: adds to adj_I and adj_s
template <class S>
ADJ_HD inline void inertia_apply_adjoint(const sinertia<S>& I, const svec<S>& s, const svec<S>& adj_F,
                                         sinertia<S>& adj_I, svec<S>& adj_s) {
  add_outer(adj_I.A, adj_F.w, s.w);
  add_outer(adj_I.B, adj_F.w, s.v);
  add_outer(adj_I.B, s.w, adj_F.v);
  adj_I.m += dot(adj_F.v, s.v);
  adj_s.w += transpose(I.A) * adj_F.w + I.B * adj_F.v;
  adj_s.v += transpose(I.B) * adj_F.w + adj_F.v * I.m;
}

// adjoint of c = crm(x, y)
template <class S>
ADJ_HD inline void crm_adjoint(const svec<S>& x, const svec<S>& y, const svec<S>& adj_c, svec<S>& adj_x,
                               svec<S>& adj_y) {
  adj_x.w += cross(y.w, adj_c.w) + cross(y.v, adj_c.v);
  adj_x.v += cross(y.w, adj_c.v);
  adj_y.w += cross(adj_c.w, x.w) + cross(adj_c.v, x.v);
  adj_y.v += cross(adj_c.v, x.w);
}

// d ramp'/d d (the C1 ramp's second derivative)
template <class S>
ADJ_HD inline S ramp_curvature(S d, S eps) {
  return d > 0 && d < eps ? S(1) / eps : S(0);
}

// dL/d K_dd and dL/d D_dd of dof d's implicit terms, from the system matrix (h^2 K + h D on the
// diagonal, adjoint -lambda qdd^T) and the right-hand side's -h K qd (adjoint lambda)
template <class S, class W>
ADJ_HD inline S implicit_adj_k(S h, const S* qd, const W& w, const S* lambda, int d) {
  return -h * h * lambda[d] * w.qdd[d] - h * qd[d] * lambda[d];
}
template <class S, class W>
ADJ_HD inline S implicit_adj_d(S h, const W& w, const S* lambda, int d) {
  return -h * lambda[d] * w.qdd[d];
}

// adjoint of the implicit system (rigid_dynamics.h's implicit_system and implicit_terms): given
// lambda = dL/d rhs, and so dL/d (M + h D + h^2 K) = -lambda qdd^T, adds to adj_q (the limits'
// slopes), adj_qd (the -h K qd term) and the parameters (armature, damping, PD gains); the
// mass matrix's share goes through CRBA's adjoint, which reads the same -lambda qdd^T
template <class S, class M, class W, class PA>
ADJ_HD void implicit_system_adjoint(const M& m, const S* q, const S* qd, S h, const W& w, const S* lambda, S* adj_q,
                                    S* adj_qd, PA& adj_par) {
  for (int d = 0; d < m.dof_count(); ++d) {
    const S gM = -lambda[d] * w.qdd[d];
    adj_qd[d] -= h * w.stiff[d] * lambda[d];
    adj_par.dof_armature[d] += gM;
    adj_par.dof_damping[d] += h * gM;
  }
  for (int j = 0; j < m.body_count(); ++j) {
    const int t = m.joint_type[j];
    if (t != RIGID_JOINT_REVOLUTE && t != RIGID_JOINT_PRISMATIC) continue;
    if (m.joint_limit_ke[j] == 0 && m.joint_limit_kd[j] == 0) continue;
    const int d = m.joint_dof_start[j], qi = m.joint_q_start[j];
    const S x = q[qi], eps = m.joint_limit_eps;
    const S ds_dx = -ramp_curvature(m.joint_lower[j] - x, eps) + ramp_curvature(x - m.joint_upper[j], eps);
    adj_q[qi] += (m.joint_limit_ke[j] * implicit_adj_k(h, qd, w, lambda, d) +
                  m.joint_limit_kd[j] * implicit_adj_d(h, w, lambda, d)) *
                 ds_dx;
  }
  for (int k = 0; k < m.actuator_count(); ++k) {
    const int d = m.actuator_dof[k];
    if (m.actuator_type[k] == RIGID_ACTUATOR_PD) {
      adj_par.actuator_kp[k] += implicit_adj_k(h, qd, w, lambda, d);
      adj_par.actuator_kd[k] += implicit_adj_d(h, w, lambda, d);
    } else if (m.actuator_type[k] == RIGID_ACTUATOR_VELOCITY) {
      adj_par.actuator_kd[k] += implicit_adj_d(h, w, lambda, d);
    }
  }
  // couplings: rhs_a -= f, rhs_b += r f, f = h ke (qd_a - r qd_b)
  for (int c = 0; c < m.coupling_count(); ++c) {
    const int da = m.joint_dof_start[m.coupling_joint[c]], db = m.joint_dof_start[m.coupling_leader[c]];
    const S r = m.coupling_ratio[c];
    const S adj_f = (-lambda[da] + r * lambda[db]) * h * m.coupling_ke[c];
    adj_qd[da] += adj_f;
    adj_qd[db] -= r * adj_f;
  }
}

// adjoint of f = I a + v x* (I v): adds to adj_I, adj_a, adj_v
template <class S>
ADJ_HD inline void body_force_adjoint(const sinertia<S>& I, const svec<S>& a, const svec<S>& v, const svec<S>& adj_f,
                                      sinertia<S>& adj_I, svec<S>& adj_a, svec<S>& adj_v) {
  inertia_apply_adjoint(I, a, adj_f, adj_I, adj_a);
  svec<S> h = I * v, adj_h{};
  adj_v.w += cross(h.w, adj_f.w) + cross(h.v, adj_f.v);
  adj_v.v += cross(h.v, adj_f.w);
  adj_h.w += cross(adj_f.w, v.w);
  adj_h.v += cross(adj_f.w, v.v) + cross(adj_f.v, v.w);
  inertia_apply_adjoint(I, v, adj_h, adj_I, adj_v);
}

// <a, b> of two matrices (sum of the elementwise products)
template <class S>
ADJ_HD inline S mat_inner(const mat33<S>& a, const mat33<S>& b) {
  S r = S(0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r += a.m[i][j] * b.m[i][j];
  return r;
}

template <class S>
ADJ_HD inline void mat_add(mat33<S>& a, const mat33<S>& b) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) a.m[i][j] += b.m[i][j];
}

// adjoint of the rotation X = qmat(q) of a (not necessarily unit) quaternion: adds
// <adj_X, dX/dq> to adj_q (4), by dual numbers through qmat itself
template <class S>
ADJ_HD inline void qmat_adjoint(const S* q, const mat33<S>& adj_X, S* adj_q) {
  using D = Dual<S, 4>;
  mat33<D> X = qmat(quat<D>(D::var(q[0], 0), D::var(q[1], 1), D::var(q[2], 2), D::var(q[3], 3)));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) adj_q[k] += adj_X.m[i][j] * X.m[i][j].d[k];
}

// adjoint of y = a x b: adds to adj_a and adj_b
template <class S>
ADJ_HD inline void cross_adjoint(const vec3<S>& a, const vec3<S>& b, const vec3<S>& adj_y, vec3<S>& adj_a,
                                 vec3<S>& adj_b) {
  adj_a += cross(b, adj_y);
  adj_b += cross(adj_y, a);
}

// the reverse of body_kinematics (rigid_dynamics.h), written by hand: given the adjoints of
// body i's pose, motion subspace columns, inertia and velocity (g.R[i], g.p[i], g.S_, g.I[i],
// g.v[i]), adds the adjoints of the parent's pose and velocity, the joint's coordinates and
// velocities and the mass. only the normalized quaternion's rotation matrix (4 inputs) goes
// through dual numbers. body_kinematics_adjoint_dual below is the reference it is tested against.
template <class S, class M, class P, class W, class PA, class G>
ADJ_HD void body_kinematics_adjoint(const M& m, const P& par, const S* q, const S* qd, const W& w, int i, S* adj_q,
                                    S* adj_qd, PA& adj_par, G& g) {
  const int pi = m.joint_parent[i], qs = m.joint_q_start[i], ds = m.joint_dof_start[i];
  const int type = m.joint_type[i], ndj = rigid_joint_dof_count(type);
  const mat33<S> Rp = pi < 0 ? mat33<S>::identity() : w.R[pi];
  const vec3<S> pp = pi < 0 ? vec3<S>() : w.p[pi];
  const mat33<S> Jr = lift<S>(m.joint_rot[i]);
  const vec3<S> jp = lift<S>(m.joint_pos[i]), ax = lift<S>(m.joint_axis[i]), com = lift<S>(m.body_com[i]);
  const mat33<S>& R = w.R[i];
  const vec3<S>& p = w.p[i];
  const mat33<S> RJ = Rp * Jr;
  const vec3<S> pJ = pp + Rp * jp;
  mat33<S> gR = g.R[i];
  vec3<S> gp = g.p[i];
  svec<S> gS[6];
  for (int k = 0; k < ndj; ++k) gS[k] = g.S_[ds + k];
  const svec<S> gv = g.v[i];
  // v = vp + sum_k S_k qd_k
  if (pi >= 0) g.v[pi] += gv;
  for (int k = 0; k < ndj; ++k) {
    gS[k] += gv * qd[ds + k];
    adj_qd[ds + k] += sdot(w.S[ds + k], gv);
  }
  // I = make_inertia(mass, c, Iw): A = Iw - mass [c]x^2, B = mass [c]x
  const sinertia<S>& gI = g.I[i];
  const S mass = par.body_mass[i], m0 = m.body_mass[i];
  const S scale = m0 > S(0) ? mass / m0 : S(0);
  const vec3<S> c = p + R * com;
  const mat33<S> cx = skew(c), cxx = cx * cx;
  S gmass = gI.m + mat_inner(gI.B, cx) - mat_inner(gI.A, cxx);
  mat33<S> gcx, gcxx;
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) {
      gcx.m[r][k] = mass * gI.B.m[r][k];
      gcxx.m[r][k] = -mass * gI.A.m[r][k];
    }
  mat_add(gcx, gcxx * transpose(cx));
  mat_add(gcx, transpose(cx) * gcxx);
  const vec3<S> gc(gcx.m[2][1] - gcx.m[1][2], gcx.m[0][2] - gcx.m[2][0], gcx.m[1][0] - gcx.m[0][1]);
  // c = p + R com
  gp += gc;
  add_outer(gR, gc, com);
  // Iw = scale R Ib R^T
  const mat33<S> Ib = lift<S>(m.body_inertia[i]);
  const mat33<S> RIb = R * Ib;
  gmass += m0 > S(0) ? mat_inner(gI.A, RIb * transpose(R)) / m0 : S(0);
  mat33<S> gP = gI.A;
  for (auto& row : gP.m)
    for (S& x : row) x *= scale;
  mat_add(gR, gP * R * transpose(Ib));
  mat_add(gR, transpose(gP) * RIb);
  adj_par.body_mass[i] += gmass;
  // the joint: motion subspace, pose
  mat33<S> gRJ;
  vec3<S> gpJ;
  switch (type) {
    case RIGID_JOINT_REVOLUTE: {
      const vec3<S> a = RJ * ax;
      vec3<S> ga = gS[0].w;
      cross_adjoint(pJ, a, gS[0].v, gpJ, ga);
      add_outer(gRJ, ga, ax);
      // R = RJ X(q), X = axis_angle(ax, q): dX/dq = s a a^T - s 1 + c [a]x
      const S qa = q[qs], cs = rcos(qa), sn = rsin(qa);
      const mat33<S> X = axis_angle(ax, qa);
      mat_add(gRJ, gR * transpose(X));
      const mat33<S> gX = transpose(RJ) * gR;
      mat33<S> dX = skew(ax);
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) dX.m[r][k] = sn * ax[r] * ax[k] - (r == k ? sn : S(0)) + cs * dX.m[r][k];
      adj_q[qs] += mat_inner(gX, dX);
      gpJ += gp;
      break;
    }
    case RIGID_JOINT_PRISMATIC: {
      const vec3<S> a = RJ * ax;
      vec3<S> ga = gS[0].v;
      gpJ += gp;
      ga += gp * q[qs];
      adj_q[qs] += dot(gp, a);
      mat_add(gRJ, gR);
      add_outer(gRJ, ga, ax);
      break;
    }
    case RIGID_JOINT_BALL:
    case RIGID_JOINT_FREE: {
      const bool is_free = type == RIGID_JOINT_FREE;
      const int qr = is_free ? 3 : 0;  // first quaternion coordinate
      // S columns of the rotation (ball: through pJ; free: through p, after the translations
      // along RJ's columns)
      for (int k = 0; k < 3; ++k) {
        const vec3<S> col = R.col(k);
        const svec<S>& gA = is_free ? gS[3 + k] : gS[k];
        vec3<S> gcol = gA.w;
        cross_adjoint(is_free ? p : pJ, col, gA.v, is_free ? gp : gpJ, gcol);
        for (int r = 0; r < 3; ++r) {
          gR.m[r][k] += gcol[r];
          if (is_free) gRJ.m[r][k] += gS[k].v[r];
        }
      }
      // p = pJ (+ RJ t for the free joint)
      gpJ += gp;
      if (is_free) {
        const vec3<S> t(q[qs], q[qs + 1], q[qs + 2]);
        add_outer(gRJ, gp, t);
        const vec3<S> gt = transpose(RJ) * gp;
        for (int k = 0; k < 3; ++k) adj_q[qs + k] += gt[k];
      }
      // R = RJ qmat(quaternion)
      const mat33<S> X = qmat(q4(q + qs + qr));
      mat_add(gRJ, gR * transpose(X));
      qmat_adjoint(q + qs + qr, transpose(RJ) * gR, adj_q + qs + qr);
      break;
    }
    default:
      mat_add(gRJ, gR);
      gpJ += gp;
  }
  // RJ = Rp Jr, pJ = pp + Rp jp
  if (pi >= 0) {
    mat_add(g.R[pi], gRJ * transpose(Jr));
    add_outer(g.R[pi], gpJ, jp);
    g.p[pi] += gpJ;
  }
}

// the dual-number reference of body_kinematics_adjoint (the same sums, by dual numbers of
// width N through body_kinematics itself; N = its input count)
template <class S, int N, class M, class P, class W, class PA, class G>
ADJ_HD void body_kinematics_adjoint_dual(const M& m, const P& par, const S* q, const S* qd, const W& w, int i, S* adj_q,
                                         S* adj_qd, PA& adj_par, G& g) {
  using D = Dual<S, N>;
  const int pi = m.joint_parent[i], qs = m.joint_q_start[i], ds = m.joint_dof_start[i];
  const int nqj = rigid_joint_q_count(m.joint_type[i]), ndj = rigid_joint_dof_count(m.joint_type[i]);
  Seeder<S, N> seed;
  mat33<D> Rp = seed.mat(pi < 0 ? mat33<S>::identity() : w.R[pi]);
  vec3<D> pp = seed.vec(pi < 0 ? vec3<S>() : w.p[pi]);
  svec<D> vp = seed.sv(pi < 0 ? svec<S>{} : w.v[pi]);
  D qj[7], qdj[6];
  for (int k = 0; k < nqj; ++k) qj[k] = seed(q[qs + k]);
  for (int k = 0; k < ndj; ++k) qdj[k] = seed(qd[ds + k]);
  D mass = seed(par.body_mass[i]);
  mat33<D> R;
  vec3<D> p;
  svec<D> Sj[6], v;
  sinertia<D> I;
  body_kinematics(m, i, Rp, pp, vp, qj, qdj, mass, R, p, Sj, I, v);
  Contract<S, N> c;
  c.add(R, g.R[i]);
  c.add(p, g.p[i]);
  for (int k = 0; k < ndj; ++k) c.add(Sj[k], g.S_[ds + k]);
  c.add(I, g.I[i]);
  c.add(v, g.v[i]);
  mat33<S> aR;
  vec3<S> ap;
  svec<S> av{};
  c.take(aR);
  c.take(ap);
  c.take(av);
  if (pi >= 0) {
    for (int r = 0; r < 3; ++r)
      for (int cc = 0; cc < 3; ++cc) g.R[pi].m[r][cc] += aR.m[r][cc];
    g.p[pi] += ap;
    g.v[pi] += av;
  }
  for (int k = 0; k < nqj; ++k) adj_q[qs + k] += c.take();
  for (int k = 0; k < ndj; ++k) adj_qd[ds + k] += c.take();
  adj_par.body_mass[i] += c.take();
}

// the reverse of the kinematics (every body's pose, motion subspace, inertia and velocity from
// q, qd; forward scratch w), leaves to root: given their adjoints in g (R, p, S_, I, v; consumed),
// adds to adj_q, adj_qd and adj_par.body_mass. the step's own reverse ends with it; body-particle
// contact (engine/articulation/body_particle.h) runs it once more for the poses it read
template <class S, class M, class P, class W, class PA, class G>
ADJ_HD void kinematics_adjoint(const M& m, const P& par, const S* q, const S* qd, const W& w, S* adj_q, S* adj_qd,
                               PA& adj_par, G& g) {
  for (int i = m.body_count() - 1; i >= 0; --i) body_kinematics_adjoint(m, par, q, qd, w, i, adj_q, adj_qd, adj_par, g);
}

// the substep q, qd -> q_out, qd_out (forward scratch w, left by substep()) run backwards:
// given adj_q_out and adj_qd_out, writes adj_q, adj_qd and adds to adj_act and adj_par
template <class S, class M, class P, class W, class PA, class G>
ADJ_HD void substep_adjoint(const M& m, const P& par, const S* q, const S* qd, const S* act, S h, const W& w,
                            const S* adj_q_out, const S* adj_qd_out, S* adj_q, S* adj_qd, S* adj_act, PA& adj_par,
                            G& g) {
  const int nb = m.body_count(), nv = m.dof_count(), nq = m.q_count();
  g.reset(nb, nv);
  for (int i = 0; i < nq; ++i) adj_q[i] = S(0);
  for (int d = 0; d < nv; ++d) {
    adj_qd[d] = S(0);
    g.qd_new[d] = qd[d] + h * w.qdd[d];
    g.adj_v_new[d] = adj_qd_out[d];
  }
  // integration, per joint
  for (int j = 0; j < nb; ++j) {
    const int t = m.joint_type[j], qs = m.joint_q_start[j], ds = m.joint_dof_start[j];
    if (t == RIGID_JOINT_REVOLUTE || t == RIGID_JOINT_PRISMATIC) {
      adj_q[qs] += adj_q_out[qs];
      g.adj_v_new[ds] += h * adj_q_out[qs];
    } else if (t == RIGID_JOINT_BALL || t == RIGID_JOINT_FREE) {
      constexpr int N = 13;
      using D = Dual<S, N>;
      const int nqj = rigid_joint_q_count(t), ndj = rigid_joint_dof_count(t);
      Seeder<S, N> seed;
      D qj[7], vj[6], qo[7];
      for (int k = 0; k < nqj; ++k) qj[k] = seed(q[qs + k]);
      for (int k = 0; k < ndj; ++k) vj[k] = seed(g.qd_new[ds + k]);
      integrate_joint(t, qj, vj, D(h), qo);
      Contract<S, N> c;
      for (int k = 0; k < nqj; ++k) c.add(qo[k], adj_q_out[qs + k]);
      for (int k = 0; k < nqj; ++k) adj_q[qs + k] += c.take();
      for (int k = 0; k < ndj; ++k) g.adj_v_new[ds + k] += c.take();
    }
  }
  // qd_new = qd + h qdd, qdd = M^-1 (tau - bias): lambda = M^-1 adj_qdd
  for (int d = 0; d < nv; ++d) {
    adj_qd[d] += g.adj_v_new[d];
    g.lambda[d] = h * g.adj_v_new[d];
  }
  cholesky_solve(w.L, nv, g.lambda.data(), g.lambda.data());
  implicit_system_adjoint(m, q, qd, h, w, g.lambda.data(), adj_q, adj_qd, adj_par);
  // crba: adj_M = -lambda qdd^T, each symmetric pair attributed once
  for (int i = 0; i < nb; ++i)
    for (int d = m.joint_dof_start[i]; d < m.joint_dof_start[i + 1]; ++d) {
      svec<S> F = w.Ic[i] * w.S[d], adj_F{};
      for (int j = i; j >= 0; j = m.joint_parent[j])
        for (int e = m.joint_dof_start[j]; e < m.joint_dof_start[j + 1]; ++e) {
          if (j == i && e > d) continue;
          S gm = -g.lambda[e] * w.qdd[d] - (e != d ? g.lambda[d] * w.qdd[e] : S(0));
          g.S_[e] += F * gm;
          adj_F += w.S[e] * gm;
        }
      inertia_apply_adjoint(w.Ic[i], w.S[d], adj_F, g.Ic[i], g.S_[d]);
    }
  for (int i = 0; i < nb; ++i) {
    if (m.joint_parent[i] >= 0) g.Ic[i] += g.Ic[m.joint_parent[i]];
    g.I[i] += g.Ic[i];
  }
  // rnea (bias = tau_rnea): adj_bias = -lambda; backward sweep first (accumulated forces)
  for (int i = 0; i < nb; ++i) {
    svec<S> adjF = m.joint_parent[i] >= 0 ? g.F[m.joint_parent[i]] : svec<S>{};
    for (int d = m.joint_dof_start[i]; d < m.joint_dof_start[i + 1]; ++d) {
      adjF += w.S[d] * (-g.lambda[d]);
      g.S_[d] += w.f[i] * (-g.lambda[d]);
    }
    g.F[i] = adjF;
  }
  // then the forward sweep, leaves to root: f_i = I a + v x* I v - fext, a_i = a_p + v x vj,
  // a root's a_p the base acceleration (0, -gravity)
  for (int i = nb - 1; i >= 0; --i) {
    g.fext[i] -= g.F[i];
    body_force_adjoint(w.I[i], w.a[i], w.v[i], g.F[i], g.I[i], g.a[i], g.v[i]);
    // a_i += v_i x vj (+ v_parent x vt, the free joint's translations)
    const int pi = m.joint_parent[i], d0 = m.joint_dof_start[i], nt = rigid_joint_parent_dofs(m.joint_type[i]);
    svec<S> vt, vj, adj_vt{}, adj_vj{};
    joint_velocity_parts(m, w, qd, i, vt, vj);
    crm_adjoint(w.v[i], vj, g.a[i], g.v[i], adj_vj);
    if (nt > 0 && pi >= 0) crm_adjoint(w.v[pi], vt, g.a[i], g.v[pi], adj_vt);
    for (int d = d0; d < m.joint_dof_start[i + 1]; ++d) {
      const svec<S>& adj = d < d0 + nt ? adj_vt : adj_vj;
      g.S_[d] += adj * qd[d];
      adj_qd[d] += sdot(w.S[d], adj);
    }
    if (pi >= 0)
      g.a[pi] += g.a[i];
    else
      adj_par.gravity -= g.a[i].v;
  }
  // joint forces: adj_tau = lambda
  for (int d = 0; d < nv; ++d) {
    adj_qd[d] -= par.dof_damping[d] * g.lambda[d];
    adj_par.dof_damping[d] -= qd[d] * g.lambda[d];
  }
  for (int j = 0; j < nb; ++j) {
    int t = m.joint_type[j];
    if (t != RIGID_JOINT_REVOLUTE && t != RIGID_JOINT_PRISMATIC) continue;
    const int d = m.joint_dof_start[j], qi = m.joint_q_start[j];
    adj_q[qi] -= m.joint_stiffness[j] * g.lambda[d];
    if (m.joint_limit_ke[j] == 0 && m.joint_limit_kd[j] == 0) continue;
    const S x = q[qi], lo = m.joint_lower[j] - x, hi = x - m.joint_upper[j], eps = m.joint_limit_eps;
    const S ke = m.joint_limit_ke[j], kd = m.joint_limit_kd[j];
    S dtau_dx = ke * (-ramp_slope(lo, eps) - ramp_slope(hi, eps)) -
                kd * qd[d] * (-ramp_curvature(lo, eps) + ramp_curvature(hi, eps));
    S dtau_dqd = -kd * (ramp_slope(lo, eps) + ramp_slope(hi, eps));
    adj_q[qi] += dtau_dx * g.lambda[d];
    adj_qd[d] += dtau_dqd * g.lambda[d];
  }
  // couplings: tau_a = -f, tau_b = r f, f = ke e + kd de
  for (int c = 0; c < m.coupling_count(); ++c) {
    const int a = m.coupling_joint[c], b = m.coupling_leader[c];
    const int da = m.joint_dof_start[a], db = m.joint_dof_start[b];
    const S r = m.coupling_ratio[c];
    const S adj_f = -g.lambda[da] + r * g.lambda[db];
    const S adj_e = m.coupling_ke[c] * adj_f, adj_de = m.coupling_kd[c] * adj_f;
    adj_q[m.joint_q_start[a]] += adj_e;
    adj_q[m.joint_q_start[b]] -= r * adj_e;
    adj_qd[da] += adj_de;
    adj_qd[db] -= r * adj_de;
  }
  for (int k = 0; k < m.actuator_count(); ++k) {
    const int d = m.actuator_dof[k];
    if (m.actuator_type[k] == RIGID_ACTUATOR_THRUST) {
      // body force: d fext / d (R, p, act), by duals through thrust_force
      constexpr int N = 13;
      using D = Dual<S, N>;
      const int b = m.dof_joint[d];
      Seeder<S, N> seed;
      mat33<D> R = seed.mat(w.R[b]);
      vec3<D> p = seed.vec(w.p[b]);
      D a = seed(act[k]);
      Contract<S, N> c;
      c.add(thrust_force(m, k, R, p, a), g.fext[b]);
      c.take(g.R[b]);
      c.take(g.p[b]);
      adj_act[k] += c.take();
    } else if (m.actuator_type[k] == RIGID_ACTUATOR_TORQUE) {
      adj_act[k] += m.actuator_gear[k] * g.lambda[d];
    } else if (m.actuator_type[k] == RIGID_ACTUATOR_VELOCITY) {
      adj_act[k] += par.actuator_kd[k] * g.lambda[d];
      adj_qd[d] -= par.actuator_kd[k] * g.lambda[d];
      adj_par.actuator_kd[k] += (act[k] - qd[d]) * g.lambda[d];
    } else {
      const int qi = m.joint_q_start[m.dof_joint[d]];
      adj_act[k] += par.actuator_kp[k] * g.lambda[d];
      adj_q[qi] -= par.actuator_kp[k] * g.lambda[d];
      adj_qd[d] -= par.actuator_kd[k] * g.lambda[d];
      adj_par.actuator_kp[k] += (act[k] - q[qi]) * g.lambda[d];
      adj_par.actuator_kd[k] -= qd[d] * g.lambda[d];
    }
  }
  // contact: ground, static colliders and shape pairs
  contact_forces_adjoint(m, par.contact_ke, par.contact_kd, par.contact_mu, w.R.data(), w.p.data(), w.v.data(),
                         g.fext.data(), g.R.data(), g.p.data(), g.v.data(), adj_par.contact_ke, adj_par.contact_kd,
                         adj_par.contact_mu);
  kinematics_adjoint(m, par, q, qd, w, adj_q, adj_qd, adj_par, g);
}

// a step's substeps run forward with each one's input and scratch kept in `tape`, the record the
// reverse pass reads: tape.q(s), tape.qd(s) the input of substep s for s = 0 .. substeps
// (tape.q(0) holds the step's input on entry, tape.q(substeps) the step's output on return) and
// tape.work(s) its scratch. The same operations as step() (the same bits); false if a substep's
// system matrix is not positive definite. The one source of the recorded step: the host's
// StepTape (record_step below) and the batch functors' arena slices (rigid_batch.h) run it.
template <class T, class M, class P, class S, class Tape>
ADJ_HD bool record_substeps(const M& m, const P& par, const T* act, S h, int substeps, Tape& tape) {
  for (int s = 0; s < substeps; ++s) {
    auto&& w = tape.work(s);
    if (!substep(m, par, tape.q(s), tape.qd(s), act, h, tape.q(s + 1), tape.qd(s + 1), w,
                 static_cast<NoRecord*>(nullptr)))
      return false;
  }
  return true;
}

// the substeps that record_substeps kept in `tape` (from the same par and act) run backwards:
// given adj_q_out and adj_qd_out, writes adj_q and adj_qd and adds to adj_act and adj_par; buf:
// two adjoint states' scratch, 2 (q_count + dof_count); g: the reverse pass's scratch
template <class T, class M, class P, class H, class Tape, class PA, class G>
ADJ_HD void reverse_substeps(const M& m, const P& par, const T* act, H h, int substeps, const Tape& tape,
                             const T* adj_q_out, const T* adj_qd_out, T* adj_q, T* adj_qd, T* adj_act, PA& adj_par,
                             G& g, T* buf) {
  const int nq = m.q_count(), nv = m.dof_count();
  T *aq = buf, *aqd = buf + nq, *aq_prev = buf + nq + nv, *aqd_prev = buf + 2 * nq + nv;
  for (int i = 0; i < nq; ++i) aq[i] = adj_q_out[i];
  for (int i = 0; i < nv; ++i) aqd[i] = adj_qd_out[i];
  for (int s = substeps - 1; s >= 0; --s) {
    substep_adjoint(m, par, tape.q(s), tape.qd(s), act, h, tape.work(s), aq, aqd, aq_prev, aqd_prev, adj_act, adj_par,
                    g);
    T* t = aq;
    aq = aq_prev;
    aq_prev = t;
    t = aqd;
    aqd = aqd_prev;
    aqd_prev = t;
  }
  for (int i = 0; i < nq; ++i) adj_q[i] = aq[i];
  for (int i = 0; i < nv; ++i) adj_qd[i] = aqd[i];
}

// a step's record for its reverse pass on the host: each substep's input and forward scratch
// (record_step), and the reverse pass's scratch
template <class T>
struct StepTape {
  std::vector<Work<T>> work;          // (substeps)
  std::vector<std::vector<T>> q, qd;  // input of each substep, then the step's output, (substeps + 1)
  AdjWork<T> adj;
  std::vector<T> adj_buf;  // reverse_substeps' two adjoint states
  // bytes of the record (the substeps' inputs and scratch; not the reverse pass's scratch)
  std::size_t bytes() const {
    std::size_t b = 0;
    for (const auto& v : q) b += v.size() * sizeof(T);
    for (const auto& v : qd) b += v.size() * sizeof(T);
    for (const auto& w : work) b += w.bytes();
    return b;
  }
};

// a StepTape as record_substeps and reverse_substeps read it
template <class T, class Tape>
struct StepTapeAccess {
  Tape* t;
  auto q(int s) const { return t->q[std::size_t(s)].data(); }
  auto qd(int s) const { return t->qd[std::size_t(s)].data(); }
  auto& work(int s) const { return t->work[std::size_t(s)]; }
};

// the forward half of step_adjoint: the step's substeps run and recorded in `tape` (each
// substep's input and scratch; tape.q[substeps], tape.qd[substeps]: the step's output), the same
// operations as step() (the same bits); false if a substep's system matrix is not positive definite
template <class T, class M, class S>
bool record_step(const M& m, const Params<T>& par, const T* q, const T* qd, const T* act, S dt, int substeps,
                 StepTape<T>& tape) {
  const int nq = m.q_count(), nv = m.dof_count(), nb = m.body_count();
  tape.work.resize(std::size_t(substeps));
  tape.q.resize(std::size_t(substeps + 1));
  tape.qd.resize(std::size_t(substeps + 1));
  tape.q[0].assign(q, q + nq);
  tape.qd[0].assign(qd, qd + nv);
  for (int s = 0; s < substeps; ++s) {
    tape.q[s + 1].resize(std::size_t(nq));
    tape.qd[s + 1].resize(std::size_t(nv));
    tape.work[s].resize(nb, nq, nv);
  }
  StepTapeAccess<T, StepTape<T>> access{&tape};
  return record_substeps(m, par, act, dt / S(substeps), substeps, access);
}

// the backward half: the substeps of a tape that record_step filled (from the same par and act)
// run backwards. given adj_q_out and adj_qd_out, writes adj_q and adj_qd and adds to adj_act and
// adj_par; g: scratch (buf: reverse_substeps')
template <class T, class M, class S>
void reverse_step(const M& m, const Params<T>& par, const T* act, S dt, int substeps, const StepTape<T>& tape,
                  const T* adj_q_out, const T* adj_qd_out, T* adj_q, T* adj_qd, T* adj_act, Params<T>& adj_par,
                  AdjWork<T>& g, std::vector<T>& buf) {
  buf.resize(2 * std::size_t(m.q_count() + m.dof_count()));
  const StepTapeAccess<T, const StepTape<T>> access{&tape};
  reverse_substeps(m, par, act, T(dt / S(substeps)), substeps, access, adj_q_out, adj_qd_out, adj_q, adj_qd, adj_act,
                   adj_par, g, buf.data());
}

// a step of dt in `substeps` substeps, run forward (recorded in `tape`) and then backwards:
// given adj_q_out and adj_qd_out, writes adj_q and adj_qd and adds to adj_act and adj_par;
// false if a substep's system matrix is not positive definite. T: the model's scalar, or a dual
// number over it (forward-over-reverse: ArticulationStageT::tangent_step_adjoint), the model's
// constants plain
template <class T, class M, class S>
bool step_adjoint(const M& m, const Params<T>& par, const T* q, const T* qd, const T* act, S dt, int substeps,
                  const T* adj_q_out, const T* adj_qd_out, T* adj_q, T* adj_qd, T* adj_act, Params<T>& adj_par,
                  StepTape<T>& tape) {
  if (!record_step(m, par, q, qd, act, dt, substeps, tape)) return false;
  reverse_step(m, par, act, dt, substeps, tape, adj_q_out, adj_qd_out, adj_q, adj_qd, adj_act, adj_par, tape.adj,
               tape.adj_buf);
  return true;
}

}  // namespace adj::rigid
