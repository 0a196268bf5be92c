// particle contact with static colliders: penalty normal force (ke, kd) and smoothed
// Coulomb friction: |f_t| = smooth-min(kf |v_t|, mu f_n) with |v_t| smoothed by eps
#pragma once

#include "engine/core/math.h"

namespace adj {

// contact parameters (scene-wide)
template <class S>
struct ContactParams {
  S ke, kd, kf, mu, eps;
};

// force on a particle with signed gap c (< 0 = penetrating), collider normal n and
// velocity relative to the collider vrel
template <class T, class S>
ADJ_HD inline vec3<T> contact_force(T c, const vec3<T>& n, const vec3<T>& vrel, T ke, T kd, S kf, T mu, S eps) {
  if (!(value(c) < 0)) return vec3<T>();
  T vn = dot(n, vrel);
  T lambda = -ke * c - kd * vn;
  if (!(value(lambda) > 0)) return vec3<T>();
  vec3<T> f = n * lambda;
  if (kf > S(0) && value(mu) > 0) {
    vec3<T> vt = vrel - n * vn;
    T mul = mu * lambda;
    T denom = sqrt_(T(kf * kf) * (dot(vt, vt) + T(eps * eps)) + mul * mul);
    f -= vt * (T(kf) * mul / denom);
  }
  return f;
}

// closest point to p on triangle abc (Ericson, Real-Time Collision Detection 5.1.5)
template <class T>
ADJ_HD inline vec3<T> closest_on_triangle(const vec3<T>& p, const vec3<T>& a, const vec3<T>& b, const vec3<T>& c) {
  vec3<T> ab = b - a, ac = c - a, ap = p - a;
  T d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (value(d1) <= 0 && value(d2) <= 0) return a;
  vec3<T> bp = p - b;
  T d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (value(d3) >= 0 && value(d4) <= value(d3)) return b;
  T vc = d1 * d4 - d3 * d2;
  if (value(vc) <= 0 && value(d1) >= 0 && value(d3) <= 0) return a + ab * (d1 / (d1 - d3));
  vec3<T> cp = p - c;
  T d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (value(d6) >= 0 && value(d5) <= value(d6)) return c;
  T vb = d5 * d2 - d1 * d6;
  if (value(vb) <= 0 && value(d2) >= 0 && value(d6) <= 0) return a + ac * (d2 / (d2 - d6));
  T va = d3 * d6 - d5 * d4;
  if (value(va) <= 0 && value(d4 - d3) >= 0 && value(d5 - d6) >= 0)
    return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
  T denom = T(1) / (va + vb + vc);
  return a + ab * (vb * denom) + ac * (vc * denom);
}

// one static collider, as the kernels see it
template <class S>
struct ShapeRef {
  int type;
  vec3<S> pos;
  mat33<S> rot;
  vec3<S> size;
  const vec3<S>* mesh_vertices;  // for SHAPE_MESH
  const Idx3* mesh_tris;
  int mesh_start, mesh_count;
};

// signed distance from x to the collider surface and the outward normal there
template <class T, class S>
ADJ_HD inline T shape_distance(const ShapeRef<S>& s, const vec3<T>& x, vec3<T>& n, vec3<T>& surface) {
  mat33<T> rot = lift<T>(s.rot);
  vec3<T> local = transpose(rot) * (x - lift<T>(s.pos));
  T d = T(1e30);
  vec3<T> nl;
  switch (s.type) {
    case 0: {  // plane
      n = lift<T>(s.size);
      d = dot(x - lift<T>(s.pos), n);
      surface = x - n * d;
      return d;
    }
    case 1: {  // sphere
      T r = length(local);
      nl = value(r) > 1e-12 ? local / r : vec3<T>(T(0), T(1), T(0));
      d = r - T(s.size.x);
      break;
    }
    case 2: {  // box
      vec3<T> q(abs_(local.x) - T(s.size.x), abs_(local.y) - T(s.size.y), abs_(local.z) - T(s.size.z));
      vec3<T> sg(local.x < T(0) ? T(-1) : T(1), local.y < T(0) ? T(-1) : T(1), local.z < T(0) ? T(-1) : T(1));
      if (value(q.x) > 0 || value(q.y) > 0 || value(q.z) > 0) {
        vec3<T> qp(max_(q.x, T(0)) * sg.x, max_(q.y, T(0)) * sg.y, max_(q.z, T(0)) * sg.z);
        d = length(qp);
        nl = qp / d;
      } else {
        int axis = (value(q.x) > value(q.y)) ? (value(q.x) > value(q.z) ? 0 : 2) : (value(q.y) > value(q.z) ? 1 : 2);
        d = q[axis];
        nl = vec3<T>();
        nl[axis] = sg[axis];
      }
      break;
    }
    case 3: {  // capsule along local y
      T h = T(s.size.y);
      T y = max_(min_(local.y, h), -h);
      vec3<T> r = local - vec3<T>(T(0), y, T(0));
      T rl = length(r);
      nl = value(rl) > 1e-12 ? r / rl : vec3<T>(T(1), T(0), T(0));
      d = rl - T(s.size.x);
      break;
    }
    default: {  // triangle mesh, a two-sided shell (world space)
      vec3<T> best;
      T best_d2 = T(1e30);
      for (int t = s.mesh_start; t < s.mesh_start + s.mesh_count; ++t) {
        Idx3 tri = s.mesh_tris[t];
        vec3<T> c = closest_on_triangle(x, lift<T>(s.mesh_vertices[tri.i]), lift<T>(s.mesh_vertices[tri.j]),
                                        lift<T>(s.mesh_vertices[tri.k]));
        T d2 = length_sq(x - c);
        if (value(d2) < value(best_d2)) {
          best_d2 = d2;
          best = c;
        }
      }
      d = sqrt_(best_d2 + T(1e-20));
      n = (x - best) / d;
      surface = best;
      return d;
    }
  }
  n = rot * nl;
  surface = x - n * d;
  return d;
}

// packed form: in = x, v, ke, kd, mu; out = f
template <class S>
struct ShapeContactEval {
  static constexpr int in_count = 9, out_count = 3;
  ShapeRef<S> shape;
  S radius, kf, eps;
  template <class T>
  ADJ_HD void eval(const T* in, T* out) const {
    vec3<T> n, surface;
    vec3<T> x = load3(in);
    T d = shape_distance(shape, x, n, surface);
    store3(out, contact_force(d - T(radius), n, load3(in + 3), in[6], in[7], kf, in[8], eps));
  }
};

// adjoint: the dual-number vector-Jacobian product of ShapeContactEval itself (9 tangents).
// The signed-distance branches (box faces, capsule caps, closest mesh feature) make a
// hand-written reverse long and fragile; the kernels call this only for particles in
// contact, so it costs little. Tested against central differences like the others.
template <class S>
ADJ_HD inline void shape_contact_adjoint(const ShapeContactEval<S>& e, const S* in, const S* adj_out, S* adj_in) {
  vjp(e, in, adj_out, adj_in);
}

}  // namespace adj
