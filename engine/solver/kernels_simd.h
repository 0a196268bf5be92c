// the cloth's element kernels of engine/solver/kernels.h (triangle with its aerodynamics,
// bending), k_lanes<S> elements at a time on the host's SIMD packs (engine/core/simd.h): the
// same force functions and the same packing helpers, with each element's inputs gathered into
// its lane and its outputs scattered back to its slots. Each lane equals the scalar functor
// bit for bit, so which elements run in lanes changes nothing (tests/engine/core/simd_test.cpp).
// The CPU solver's executors run a launch of n elements as n / k_lanes groups and a scalar
// remainder (run_item); functors without a lane form run one element per item. Host only.
#pragma once

#include <type_traits>

#include "engine/core/simd.h"
#include "engine/solver/kernels.h"

namespace adj {

// lane l of x[k] = element (e0 + l)'s k-th packed scalar, from the scalar packing function
template <int N, class S, class Pack>
inline void gather_lanes(int e0, const Pack& pack, Lanes<S>* x) {
  for (int l = 0; l < k_lanes<S>; ++l) {
    S one[N];
    pack(e0 + l, one);
    for (int k = 0; k < N; ++k) x[k].set(l, one[k]);
  }
}

// element (e0 + l)'s k-th scalar of x[k]
template <int N, class S>
inline void lane_of(const Lanes<S>* x, int l, S* one) {
  for (int k = 0; k < N; ++k) one[k] = x[k][l];
}

template <class S>
inline TriangleEval<Lanes<S>> tri_eval_lanes(const ModelView<S>& m, int e0) {
  TriangleEval<Lanes<S>> r;
  for (int l = 0; l < k_lanes<S>; ++l) {
    TriangleEval<S> t = tri_eval(m, e0 + l);
    r.pose.a.set(l, t.pose.a);
    r.pose.b.set(l, t.pose.b);
    r.pose.c.set(l, t.pose.c);
    r.pose.d.set(l, t.pose.d);
    r.area.set(l, t.area);
    r.ke.set(l, t.ke);
    r.ka.set(l, t.ka);
    r.kd.set(l, t.kd);
  }
  return r;
}

template <class S>
inline BendingEval<Lanes<S>> bending_eval_lanes(const ModelView<S>& m, int e0) {
  BendingEval<Lanes<S>> r;
  for (int l = 0; l < k_lanes<S>; ++l) {
    r.ke.set(l, m.edge_ke[e0 + l]);
    r.kd.set(l, m.edge_kd[e0 + l]);
    r.rest.set(l, m.edge_rest_angle[e0 + l]);
  }
  return r;
}

// ---- forward ----

template <class S>
inline void run_lanes(const TriangleForward<S>& f, int e0) {
  using L = Lanes<S>;
  const KernelArgs<S>& a = f.a;
  L in[18], out[9], aero[9];
  gather_lanes<18>(
      e0, [&](int e, S* x) { pack_tri(a, e, x); }, in);
  tri_eval_lanes(a.m, e0).eval(in, out);
  AeroEval<L>{L(a.m.tri_lift), L(a.m.tri_drag)}.eval(in, aero);
  L sum[9];
  for (int k = 0; k < 9; ++k) sum[k] = out[k] + aero[k];
  for (int l = 0; l < L::W; ++l) {
    S one[9];
    lane_of<9>(sum, l, one);
    for (int k = 0; k < 3; ++k) a.f_slot[a.m.tri_slot + 3 * (e0 + l) + k] = load3(one + 3 * k);
  }
}

template <class S>
inline void run_lanes(const BendingForward<S>& f, int e0) {
  using L = Lanes<S>;
  const KernelArgs<S>& a = f.a;
  L in[24], out[12];
  gather_lanes<24>(
      e0, [&](int e, S* x) { pack_quad(a, a.m.edge_indices[e], x); }, in);
  bending_eval_lanes(a.m, e0).eval(in, out);
  for (int l = 0; l < L::W; ++l) {
    S one[12];
    lane_of<12>(out, l, one);
    for (int k = 0; k < 4; ++k) a.f_slot[a.m.edge_slot + 4 * (e0 + l) + k] = load3(one + 3 * k);
  }
}

// ---- adjoint ----

// dL/d forces of an element's vertices (the adjoint's upstream)
template <int V, class S>
inline void pack_adj_f(const KernelArgs<S>& a, const int* v, S* ao) {
  for (int k = 0; k < V; ++k) store3(ao + 3 * k, a.adj_f[v[k]]);
}

template <class S>
inline void run_lanes(const TriangleAdjoint<S>& f, int e0) {
  using L = Lanes<S>;
  const KernelArgs<S>& a = f.a;
  L in[18], ao[9], ai[18], ai2[18], mat[3], coef[2];
  gather_lanes<18>(
      e0, [&](int e, S* x) { pack_tri(a, e, x); }, in);
  gather_lanes<9>(
      e0,
      [&](int e, S* x) {
        Idx3 id = a.m.tri_indices[e];
        int v[3] = {id.i, id.j, id.k};
        pack_adj_f<3>(a, v, x);
      },
      ao);
  triangle_adjoint(tri_eval_lanes(a.m, e0), in, ao, ai, mat);
  if (a.m.tri_lift != S(0) || a.m.tri_drag != S(0)) {
    aero_adjoint(AeroEval<L>{L(a.m.tri_lift), L(a.m.tri_drag)}, in, ao, ai2, coef);
    for (int k = 0; k < 18; ++k) ai[k] += ai2[k];
  } else {
    aero_coef_adjoint(in, ao, coef);
  }
  for (int l = 0; l < L::W; ++l) {
    const int e = e0 + l;
    S one[18];
    a.g.tri_ke[e] += mat[0][l];
    a.g.tri_ka[e] += mat[1][l];
    a.g.tri_kd[e] += mat[2][l];
    a.g.lift[e] += coef[0][l];
    a.g.drag[e] += coef[1][l];
    lane_of<18>(ai, l, one);
    for (int k = 0; k < 3; ++k) {
      a.adj_q_slot[a.m.tri_slot + 3 * e + k] = load3(one + 3 * k);
      a.adj_qd_slot[a.m.tri_slot + 3 * e + k] = load3(one + 9 + 3 * k);
    }
  }
}

template <class S>
inline void run_lanes(const BendingAdjoint<S>& f, int e0) {
  using L = Lanes<S>;
  const KernelArgs<S>& a = f.a;
  L in[24], ao[12], ai[24], coef[2];
  gather_lanes<24>(
      e0, [&](int e, S* x) { pack_quad(a, a.m.edge_indices[e], x); }, in);
  gather_lanes<12>(
      e0,
      [&](int e, S* x) {
        Idx4 id = a.m.edge_indices[e];
        int v[4] = {id.i, id.j, id.k, id.l};
        pack_adj_f<4>(a, v, x);
      },
      ao);
  bending_adjoint(bending_eval_lanes(a.m, e0), in, ao, ai, coef);
  for (int l = 0; l < L::W; ++l) {
    const int e = e0 + l;
    S one[24];
    a.g.edge_ke[e] += coef[0][l];
    lane_of<24>(ai, l, one);
    for (int k = 0; k < 4; ++k) {
      a.adj_q_slot[a.m.edge_slot + 4 * e + k] = load3(one + 3 * k);
      a.adj_qd_slot[a.m.edge_slot + 4 * e + k] = load3(one + 12 + 3 * k);
    }
  }
}

// ---- the items of a launch ----

// a functor with a lane form: k_lanes elements per call of run_lanes(f, first)
template <class F>
concept LaneKernel = requires(const F& f) {
  run_lanes(f, 0);
};

template <class F>
inline constexpr int item_width() {
  if constexpr (LaneKernel<F>)
    return k_lanes<std::remove_cvref_t<decltype(std::declval<F>().a.dt)>>;
  else
    return 1;
}

// items of a launch of n elements: the lane groups, then the remainder one element each
template <class F>
inline int item_count(int n) {
  constexpr int w = item_width<F>();
  return n / w + n % w;
}

template <class F>
inline void run_item(const F& f, int n, int item) {
  constexpr int w = item_width<F>();
  if constexpr (w > 1) {
    const int groups = n / w;
    if (item < groups) return run_lanes(f, item * w);
    return f(groups * w + (item - groups));
  } else {
    f(item);
  }
}

}  // namespace adj
