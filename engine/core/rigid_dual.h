// dual-number helpers of the reverse pass: seed the packed inputs of one small element
// (a body's kinematics, a contact, a joint update) and contract its outputs with their
// adjoints, so each element's vector-Jacobian product comes from the forward code itself
#pragma once

#include "engine/core/spatial.h"

namespace adj::rigid {

// dual-number seeding of packed element inputs, and contraction of their outputs
template <class S, int N>
struct Seeder {
  using D = Dual<S, N>;
  int k = 0;
  ADJ_HD D operator()(S x) { return D::var(x, k++); }
  ADJ_HD vec3<D> vec(const vec3<S>& a) { return {(*this)(a.x), (*this)(a.y), (*this)(a.z)}; }
  ADJ_HD mat33<D> mat(const mat33<S>& a) {
    mat33<D> r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = (*this)(a.m[i][j]);
    return r;
  }
  ADJ_HD svec<D> sv(const svec<S>& a) { return {vec(a.w), vec(a.v)}; }
  ADJ_HD sinertia<D> in(const sinertia<S>& a) {
    sinertia<D> r;
    r.A = mat(a.A);
    r.B = mat(a.B);
    r.m = (*this)(a.m);
    return r;
  }
};
template <class S, int N>
struct Contract {
  S g[N] = {};
  ADJ_HD void add(const Dual<S, N>& y, S adj) {
    for (int k = 0; k < N; ++k) g[k] += adj * y.d[k];
  }
  ADJ_HD void add(const vec3<Dual<S, N>>& y, const vec3<S>& adj) {
    for (int i = 0; i < 3; ++i) add(y[i], adj[i]);
  }
  ADJ_HD void add(const mat33<Dual<S, N>>& y, const mat33<S>& adj) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) add(y.m[i][j], adj.m[i][j]);
  }
  ADJ_HD void add(const svec<Dual<S, N>>& y, const svec<S>& adj) {
    add(y.w, adj.w);
    add(y.v, adj.v);
  }
  ADJ_HD void add(const sinertia<Dual<S, N>>& y, const sinertia<S>& adj) {
    add(y.A, adj.A);
    add(y.B, adj.B);
    add(y.m, adj.m);
  }
  // reads the gradient back in seeding order
  int k = 0;
  ADJ_HD S take() { return g[k++]; }
  ADJ_HD void take(vec3<S>& a) {
    for (int i = 0; i < 3; ++i) a[i] += take();
  }
  ADJ_HD void take(mat33<S>& a) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) a.m[i][j] += take();
  }
  ADJ_HD void take(svec<S>& a) {
    take(a.w);
    take(a.v);
  }
  ADJ_HD void take(sinertia<S>& a) {
    take(a.A);
    take(a.B);
    a.m += take();
  }
};

}  // namespace adj::rigid
