// geometry of contact: the one enum of shape types (static colliders and body shapes alike),
// a placed shape as the kernels see it, its signed distance, and the sample points, edges and
// bounds that the pair functions (engine/collision/pairs.h) test against the other side
#pragma once

#include <cmath>

#include "engine/core/math.h"

namespace adj {

// shape types, shared by static colliders (ModelT::shape_type, RigidModelT::collider_type) and
// body shapes (RigidModelT::shape_type); size is per type:
enum GeomType : int {
  GEOM_PLANE = 0,    // half space below a plane: pos = a point on it, size = unit normal (static only)
  GEOM_SPHERE = 1,   // size.x = radius
  GEOM_BOX = 2,      // size = half extents, oriented by rot
  GEOM_CAPSULE = 3,  // size.x = radius, size.y = half height along local y
  GEOM_MESH = 4,     // colliders: a static triangle mesh (a two-sided shell to spheres: particles,
                     // bodies' spheres and capsules; solid behind its faces to points of no
                     // radius: boxes' corners and mesh shapes' hull vertices, mesh_solid_distance);
                     // body shapes: a mesh that touches as its convex hull (engine/model/rigid_mesh.h;
                     // size.x = bounding radius)
  GEOM_TYPE_COUNT = 5,
};

// the plain scalar under a dual number (constants a dual kernel reads: mesh vertices)
template <class T>
struct plain_scalar {
  using type = T;
};
template <class S, int N>
struct plain_scalar<Dual<S, N>> {
  using type = typename plain_scalar<S>::type;  // duals of duals (forward-over-reverse): the innermost
};
template <class T>
using plain_scalar_t = typename plain_scalar<T>::type;

// closest point to p on triangle abc (Ericson, Real-Time Collision Detection 5.1.5); *on_face
// (when given) says whether it is inside the face (p projects onto the triangle) rather than on
// an edge or a corner
template <class T>
ADJ_HD inline vec3<T> closest_on_triangle(const vec3<T>& p, const vec3<T>& a, const vec3<T>& b, const vec3<T>& c,
                                          bool* on_face = nullptr) {
  if (on_face) *on_face = false;
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
  if (on_face) *on_face = true;
  T denom = T(1) / (va + vb + vc);
  return a + ab * (vb * denom) + ac * (vc * denom);
}

// one static collider, as the kernels see it
// (T: the scalar of its pose and size; M: the plain scalar of a static mesh's vertices)
template <class T, class M = T>
struct ShapeRef {
  int type;                      // GeomType
  vec3<T> pos;                   // centre (plane: a point on it), world [m]
  mat33<T> rot;                  // axes, world
  vec3<T> size;                  // per type, see GeomType (plane: the unit normal)
  const vec3<M>* mesh_vertices;  // GEOM_MESH colliders: world-space vertices [m]
  const Idx3* mesh_tris;
  int mesh_start, mesh_count;  // the collider's triangles in mesh_tris
};

// signed distance from x, a point of no radius, to static mesh collider s, solid behind its
// faces (their winding: counter-clockwise seen from outside, as OBJ files have it), and the
// outward normal there. The nearest triangle decides (of triangles at the same distance, where
// x is nearest an edge or a corner they share, the one whose plane is farthest from x): x is
// inside when it lies behind that triangle's face within 60 degrees of the face's inward normal
// (so a point below an open mesh's rim, beside it, is outside, not pulled back under the rim);
// inside, a point that projects onto the face has its plane distance and the face normal (a
// flat mesh floor acts as a plane), else minus its distance to the nearest edge or corner and
// the direction from it. Outside: the (positive) distance.
template <class T, class S, class M>
ADJ_HD inline T mesh_solid_distance(const ShapeRef<S, M>& s, const vec3<T>& x, vec3<T>& n, vec3<T>& surface) {
  using P = plain_scalar_t<T>;
  const vec3<P> xv(value(x.x), value(x.y), value(x.z));
  vec3<T> best;
  vec3<M> best_normal;
  bool best_face = false;
  P best_d2 = P(1e30), best_plane = P(-1);
  const P tie = sizeof(P) < 8 ? P(1e-5) : P(1e-9);  // relative: a shared edge's two closest points differ by rounding
  for (int t = s.mesh_start; t < s.mesh_start + s.mesh_count; ++t) {
    const Idx3 tri = s.mesh_tris[t];
    const vec3<M>&a = s.mesh_vertices[tri.i], &b = s.mesh_vertices[tri.j], &c = s.mesh_vertices[tri.k];
    vec3<M> nt = cross(b - a, c - a);
    const M area2 = length(nt);
    if (!(area2 > M(0))) continue;  // a degenerate triangle has no side
    nt = nt / area2;
    bool face = false;
    const vec3<T> q = closest_on_triangle(x, lift<T>(a), lift<T>(b), lift<T>(c), &face);
    const vec3<P> off = xv - vec3<P>(value(q.x), value(q.y), value(q.z));
    const P d2 = dot(off, off);
    const P plane = P(abs_(dot(off, vec3<P>(P(nt.x), P(nt.y), P(nt.z)))));
    const bool nearer = d2 < best_d2 * (P(1) - tie);
    if (nearer || (d2 <= best_d2 * (P(1) + tie) && plane > best_plane)) {
      best_d2 = d2, best_plane = plane, best = q, best_normal = nt, best_face = face;
    }
  }
  const vec3<T> nf = lift<T>(best_normal), off = x - best;
  const T along = dot(off, nf);
  const T dist = sqrt_(dot(off, off) + T(1e-20));
  surface = best;
  if (!(value(along) < -0.5 * value(dist))) {  // outside (or beside the rim)
    n = off / dist;
    return dist;
  }
  if (best_face) {
    n = nf;
    return along;
  }
  n = -off / dist;
  return -dist;
}

// signed distance from x to the collider surface and the outward normal there
template <class T, class S, class M>
ADJ_HD inline T shape_distance(const ShapeRef<S, M>& s, const vec3<T>& x, vec3<T>& n, vec3<T>& surface) {
  if (s.type == GEOM_PLANE) {  // before the shape frame, which a plane does not use
    n = lift<T>(s.size);
    T d = dot(x - lift<T>(s.pos), n);
    surface = x - n * d;
    return d;
  }
  mat33<T> rot = lift<T>(s.rot);
  vec3<T> local = transpose(rot) * (x - lift<T>(s.pos));
  T d = T(1e30);
  vec3<T> nl;
  switch (s.type) {
    case GEOM_SPHERE: {
      T r = length(local);
      nl = value(r) > 1e-12 ? local / r : vec3<T>(T(0), T(1), T(0));
      d = r - T(s.size.x);
      break;
    }
    case GEOM_BOX: {
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
    case GEOM_CAPSULE: {  // along local y
      T h = T(s.size.y);
      T y = max_(min_(local.y, h), -h);
      vec3<T> r = local - vec3<T>(T(0), y, T(0));
      T rl = length(r);
      nl = value(rl) > 1e-12 ? r / rl : vec3<T>(T(1), T(0), T(0));
      d = rl - T(s.size.x);
      break;
    }
    default: {  // GEOM_MESH: a static triangle mesh, a two-sided shell (world space)
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

// sample points of a shape in its own frame, with their radius (dense: capsules sampled
// along the axis instead of at the two ends); returns the count (at most 9)
template <class S>
ADJ_HD inline int shape_sample_count(int type, const vec3<S>& size, bool dense) {
  if (type == GEOM_SPHERE) return 1;
  if (type == GEOM_BOX) return 8;
  if (!dense || !(size.x > S(0))) return 2;
  int n = 1 + int(::ceil(double(2 * size.y / size.x) - 1e-6));
  return n < 2 ? 2 : (n > 9 ? 9 : n);
}

template <class S>
ADJ_HD inline vec3<S> shape_sample(int type, const vec3<S>& size, bool dense, int k, S& radius) {
  if (type == GEOM_SPHERE) {
    radius = size.x;
    return vec3<S>();
  }
  if (type == GEOM_BOX) {
    radius = S(0);
    return vec3<S>(k & 1 ? size.x : -size.x, k & 2 ? size.y : -size.y, k & 4 ? size.z : -size.z);
  }
  radius = size.x;
  int n = shape_sample_count(type, size, dense);
  return vec3<S>(S(0), size.y * (S(-1) + S(2) * S(k) / S(n - 1)), S(0));
}

// contact points of a shape against the ground, in its own frame, with their radius
template <class S>
ADJ_HD inline int shape_points(int type, const vec3<S>& size, vec3<S> pts[8], S& radius) {
  int n = shape_sample_count(type, size, false);
  for (int k = 0; k < n; ++k) pts[k] = shape_sample(type, size, false, k, radius);
  return n;
}

// radius of a sphere about the shape's centre that holds it (broad phase)
template <class S>
ADJ_HD inline S shape_bound(int type, const vec3<S>& size) {
  if (type == GEOM_SPHERE) return size.x;
  if (type == GEOM_CAPSULE) return size.x + size.y;
  return sqrt_(size.x * size.x + size.y * size.y + size.z * size.z);
}

// the point of segment p1-q1 closest to segment p2-q2 (Ericson, Real-Time Collision
// Detection 5.1.9); parallel segments: the middle of their overlap
template <class T>
ADJ_HD inline vec3<T> segment_closest(const vec3<T>& p1, const vec3<T>& q1, const vec3<T>& p2, const vec3<T>& q2) {
  vec3<T> d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  T a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
  if (!(value(a) > 1e-20)) return p1;
  auto clamp01 = [](T x) { return value(x) < 0 ? T(0) : (value(x) > 1 ? T(1) : x); };
  T c = dot(d1, r);
  if (!(value(e) > 1e-20)) return p1 + d1 * clamp01(-c / a);
  T b = dot(d1, d2), denom = a * e - b * b;
  T s;
  if (value(denom) > 1e-9 * value(a) * value(e)) {
    s = clamp01((b * f - c * e) / denom);
  } else {
    // parallel: the middle of the overlap of [0, 1] and b's ends projected on a's parameter
    T s0 = -c / a, s1 = (b - c) / a;
    T lo = value(s0) < value(s1) ? s0 : s1, hi = value(s0) < value(s1) ? s1 : s0;
    if (value(hi) < 0)
      s = T(0);
    else if (value(lo) > 1)
      s = T(1);
    else
      s = ((value(lo) < 0 ? T(0) : lo) + (value(hi) > 1 ? T(1) : hi)) * T(0.5);
  }
  T t = (b * s + f) / e;
  if (value(t) < 0) {
    s = clamp01(-c / a);
  } else if (value(t) > 1) {
    s = clamp01((b - c) / a);
  }
  return p1 + d1 * s;
}

// edge e (0..11) of a box of half extents h, in its frame: from corner c to corner c | (1 << axis)
// of shape_sample's numbering, axis = e / 4, c's other two bits = e % 4
template <class S>
ADJ_HD inline void box_edge(const vec3<S>& h, int e, vec3<S>& p0, vec3<S>& p1) {
  const int axis = e / 4, j = e % 4, below = (1 << axis) - 1;
  const int c = (j & below) | ((j & ~below) << 1);  // a 0 inserted at bit `axis`
  S r;
  p0 = shape_sample(int(GEOM_BOX), h, true, c, r);
  p1 = shape_sample(int(GEOM_BOX), h, true, c | (1 << axis), r);
}

// parameters s, t of the closest points p1 + s (q1 - p1), p2 + t (q2 - p2) of the two lines
// through the segments (not clamped); false when they are nearly parallel (sin^2 < 1e-6)
template <class T>
ADJ_HD inline bool line_pair_params(const vec3<T>& p1, const vec3<T>& q1, const vec3<T>& p2, const vec3<T>& q2, T& s,
                                    T& t) {
  const vec3<T> d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const T a = dot(d1, d1), e = dot(d2, d2), b = dot(d1, d2), c = dot(d1, r), f = dot(d2, r);
  const T denom = a * e - b * b;
  if (!(value(denom) > 1e-6 * value(a) * value(e))) return false;
  s = (b * f - c * e) / denom;
  t = (b * s + f) / e;
  return true;
}

// weight of an edge feature at edge parameter s: 0 outside (0, 1), rising C1 (smoothstep)
// over the first and last 5% of the edge, 1 between
template <class T>
ADJ_HD inline T edge_weight(const T& s) {
  const T u = (value(s) < 0.5 ? s : T(1) - s) * T(20);
  if (!(value(u) > 0)) return T(0);
  if (!(value(u) < 1)) return T(1);
  return u * u * (T(3) - T(2) * u);
}

}  // namespace adj
