// damped spring between two particles, with actuation (rest length scaled by 1 + act)
#pragma once

#include "engine/core/math.h"

namespace adj {

template <class T>
ADJ_HD inline void spring_force(const vec3<T>& xi, const vec3<T>& xj, const vec3<T>& vi, const vec3<T>& vj, T ke,
                                T kd, T rest, T act, vec3<T>& fi, vec3<T>& fj) {
  vec3<T> d = xi - xj;
  T l = length(d);
  if (value(l) < 1e-9) {
    fi = fj = vec3<T>();
    return;
  }
  vec3<T> dir = d / l;
  T c = l - rest * (T(1) + act);
  T dcdt = dot(dir, vi - vj);
  T fs = -(ke * c + kd * dcdt);
  fi = dir * fs;
  fj = -fi;
}

// packed form: in = xi, xj, vi, vj, ke, kd, rest, act; out = fi, fj
struct SpringEval {
  static constexpr int in_count = 16, out_count = 6;
  template <class T>
  ADJ_HD void eval(const T* in, T* out) const {
    vec3<T> fi, fj;
    spring_force(load3(in), load3(in + 3), load3(in + 6), load3(in + 9), in[12], in[13], in[14], in[15], fi, fj);
    store3(out, fi);
    store3(out + 3, fj);
  }
};

// adjoint (hand-written reverse of spring_force): adj_in = (d out / d in)^T adj_out
template <class S>
ADJ_HD inline void spring_adjoint(const S* in, const S* adj_out, S* adj_in) {
  for (int k = 0; k < 16; ++k) adj_in[k] = S(0);
  vec3<S> d = load3(in) - load3(in + 3), vrel = load3(in + 6) - load3(in + 9);
  S ke = in[12], kd = in[13], rest = in[14], act = in[15];
  S l = length(d);
  if (l < S(1e-9)) return;
  // recompute the forward intermediates
  vec3<S> dir = d / l;
  S c = l - rest * (S(1) + act);
  S dcdt = dot(dir, vrel);
  S fs = -(ke * c + kd * dcdt);
  // fi = dir fs, fj = -fi
  vec3<S> g = load3(adj_out) - load3(adj_out + 3);
  vec3<S> adj_dir = g * fs;
  S adj_fs = dot(g, dir);
  S adj_c = -adj_fs * ke, adj_dcdt = -adj_fs * kd;
  adj_in[12] = -adj_fs * c;
  adj_in[13] = -adj_fs * dcdt;
  adj_dir += vrel * adj_dcdt;
  vec3<S> adj_vrel = dir * adj_dcdt;
  adj_in[14] = -adj_c * (S(1) + act);
  adj_in[15] = -adj_c * rest;
  vec3<S> adj_d = (adj_dir - dir * dot(dir, adj_dir)) / l + dir * adj_c;
  store3(adj_in, adj_d);
  store3(adj_in + 3, -adj_d);
  store3(adj_in + 6, adj_vrel);
  store3(adj_in + 9, -adj_vrel);
}

}  // namespace adj
