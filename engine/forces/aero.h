// aerodynamic lift and drag on a triangle (as Warp's cloth): drag along the mean velocity,
// lift along the normal, both scaled by the current area; split equally on the vertices
#pragma once

#include "engine/core/math.h"

namespace adj {

template <class T, class S>
ADJ_HD inline void aero_force(const vec3<T>& x0, const vec3<T>& x1, const vec3<T>& x2, const vec3<T>& v0,
                              const vec3<T>& v1, const vec3<T>& v2, S lift, S drag, vec3<T>& f0, vec3<T>& f1,
                              vec3<T>& f2) {
  vec3<T> n = cross(x1 - x0, x2 - x0);
  T n_len = length(n);
  // a collapsed triangle has no force
  const auto ok = !(value(n_len) < 1e-12);
  f0 = f1 = f2 = vec3<T>();
  if (!any(ok)) return;
  n = n / n_len;
  T area = T(0.5) * n_len;
  vec3<T> vmid = (v0 + v1 + v2) * T(1.0 / 3.0);
  // angle of attack: asin of the normal component of the flow direction, via a stable atan2
  T vn = dot(n, vmid);
  T vt = sqrt_(length_sq(cross(n, vmid)) + T(1e-12));
  T attack = atan2_(vn, vt);
  vec3<T> f_drag = vmid * (T(drag) * area * abs_(vn));
  vec3<T> f_lift = n * (T(lift) * area * attack * dot(vmid, vmid));
  f0 = select(ok, -(f_drag + f_lift), f0);
  f1 = f0;
  f2 = f0;
}

// packed form: in = x0, x1, x2, v0, v1, v2; out = f0, f1, f2
template <class S>
struct AeroEval {
  static constexpr int in_count = 18, out_count = 9;
  S lift, drag;
  template <class T>
  ADJ_HD void eval(const T* in, T* out) const {
    vec3<T> f0, f1, f2;
    aero_force(load3(in), load3(in + 3), load3(in + 6), load3(in + 9), load3(in + 12), load3(in + 15), lift, drag,
               f0, f1, f2);
    store3(out, f0);
    store3(out + 3, f1);
    store3(out + 6, f2);
  }
};

// the forward intermediates of aero_force that its adjoints read (x, v: the vertices' positions
// and velocities)
template <class S>
struct AeroTerms {
  vec3<S> e1, e2, n, vmid;
  S n_len, area, vn, vt, attack, vv, abs_vn, sign_vn;
  vec3<S> cr;  // n x vmid
  cond_t<S> degenerate;
  ADJ_HD AeroTerms(const vec3<S>* x, const vec3<S>* v) {
    e1 = x[1] - x[0], e2 = x[2] - x[0];
    vec3<S> nr = cross(e1, e2);
    n_len = length(nr);
    degenerate = n_len < S(1e-12);
    n = select(degenerate, vec3<S>(), nr / n_len);
    area = S(0.5) * n_len;
    vmid = (v[0] + v[1] + v[2]) * S(1.0 / 3.0);
    vn = dot(n, vmid);
    cr = cross(n, vmid);
    vt = sqrt_(length_sq(cr) + S(1e-12));
    attack = atan2_(vn, vt);
    vv = dot(vmid, vmid);
    abs_vn = abs_(vn);
    sign_vn = select(vn < S(0), S(-1), S(1));
  }
};

// dL/d(lift, drag) alone (the forces are linear in them: exact whatever their values); x, v:
// the vertices' positions and velocities, g: dL/d forces
template <class S>
ADJ_HD inline void aero_coef_adjoint(const vec3<S>* x, const vec3<S>* v, const vec3<S>* g, S* adj_coef) {
  AeroTerms<S> t(x, v);
  adj_coef[0] = adj_coef[1] = S(0);
  if (!any(!t.degenerate)) return;
  vec3<S> G = -(g[0] + g[1] + g[2]);
  adj_coef[0] = select(t.degenerate, S(0), dot(G, t.n) * t.area * t.attack * t.vv);
  adj_coef[1] = select(t.degenerate, S(0), dot(G, t.vmid) * t.area * t.abs_vn);
}

// adjoint (hand-written reverse of aero_force) on the vertices' positions x, velocities v and
// dL/d forces g: dL/dx into adj_x, dL/dv into adj_v; adj_coef (optional) gets dL/d(lift, drag)
template <class S>
ADJ_HD inline void aero_adjoint(const AeroEval<S>& e, const vec3<S>* x, const vec3<S>* v, const vec3<S>* g,
                                vec3<S>* adj_x, vec3<S>* adj_v, S* adj_coef = nullptr) {
  for (int k = 0; k < 3; ++k) adj_x[k] = adj_v[k] = vec3<S>();
  if (adj_coef) adj_coef[0] = adj_coef[1] = S(0);
  AeroTerms<S> t(x, v);
  if (!any(!t.degenerate)) return;
  const vec3<S>&e1 = t.e1, &e2 = t.e2, &n = t.n, &vmid = t.vmid, &cr = t.cr;
  const S n_len = t.n_len, area = t.area, vn = t.vn, vt = t.vt, attack = t.attack, vv = t.vv;
  S drag_mag = e.drag * area * t.abs_vn;
  S lift_mag = e.lift * area * attack * vv;
  // every vertex gets -(f_drag + f_lift)
  vec3<S> G = -(g[0] + g[1] + g[2]);
  vec3<S> adj_vmid = G * drag_mag;
  S adj_drag_mag = dot(G, vmid);
  vec3<S> adj_n = G * lift_mag;
  S adj_lift_mag = dot(G, n);
  if (adj_coef) {
    adj_coef[0] = adj_lift_mag * area * attack * vv;
    adj_coef[1] = adj_drag_mag * area * t.abs_vn;
  }
  S adj_area = adj_lift_mag * e.lift * attack * vv + adj_drag_mag * e.drag * t.abs_vn;
  S adj_attack = adj_lift_mag * e.lift * area * vv;
  adj_vmid += vmid * (S(2) * adj_lift_mag * e.lift * area * attack);
  S adj_vn = adj_drag_mag * e.drag * area * t.sign_vn;
  // attack = atan2(vn, vt), vt = sqrt(|n x vmid|^2 + eps)
  S r2 = vn * vn + vt * vt;
  adj_vn += adj_attack * vt / r2;
  S adj_vt = -adj_attack * vn / r2;
  vec3<S> adj_cr = cr * (adj_vt / vt);
  adj_n += cross(vmid, adj_cr);
  adj_vmid += cross(adj_cr, n);
  adj_n += vmid * adj_vn;
  adj_vmid += n * adj_vn;
  // n = nr / |nr|, area = |nr| / 2
  vec3<S> adj_nr = (adj_n - n * dot(n, adj_n)) / n_len + n * (S(0.5) * adj_area);
  vec3<S> adj_e1 = cross(e2, adj_nr), adj_e2 = cross(adj_nr, e1);
  const vec3<S> zero = vec3<S>(), adj_v3 = select(t.degenerate, zero, adj_vmid * S(1.0 / 3.0));
  adj_x[0] = select(t.degenerate, zero, -(adj_e1 + adj_e2));
  adj_x[1] = select(t.degenerate, zero, adj_e1);
  adj_x[2] = select(t.degenerate, zero, adj_e2);
  for (int k = 0; k < 3; ++k) adj_v[k] = adj_v3;
  if (adj_coef)
    for (int k = 0; k < 2; ++k) adj_coef[k] = select(t.degenerate, S(0), adj_coef[k]);
}

// packed forms: in = x0, x1, x2, v0, v1, v2; adj_out = dL/d(f0, f1, f2); adj_in = dL/d in
template <class S>
ADJ_HD inline void aero_coef_adjoint(const S* in, const S* adj_out, S* adj_coef) {
  vec3<S> x[3], v[3], g[3];
  unpack_vertices<3>(in, adj_out, x, v, g);
  aero_coef_adjoint(x, v, g, adj_coef);
}
template <class S>
ADJ_HD inline void aero_adjoint(const AeroEval<S>& e, const S* in, const S* adj_out, S* adj_in, S* adj_coef = nullptr) {
  packed_vertex_adjoint<3>(in, adj_out, adj_in,
                           [&](const vec3<S>* x, const vec3<S>* v, const vec3<S>* g, vec3<S>* adj_x, vec3<S>* adj_v) {
                             aero_adjoint(e, x, v, g, adj_x, adj_v, adj_coef);
                           });
}

}  // namespace adj
