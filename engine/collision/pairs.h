// the pair functions: one named function per pair of shape types (as MuJoCo's
// mjCOLLISIONFUNC[type1][type2]), each with its adjoint right below it, and the table that
// picks one (pair_kind). every pair is the contact law (engine/collision/contact_law.h)
// between a sphere on one side (a shape's sample point with a radius) and the signed distance
// of the other side (engine/collision/geometry.h's shape_distance), at the point midway
// between the two surfaces.
//
// a pair function takes shape A (the side the force is reported on) and shape B, and feature
// k < contact_feature_count(A, B); it returns false when that feature does not touch, else
// the force on A (B feels -f), the normal pointing from B into A and the contact point.
// features, in a fixed order (results are deterministic):
//   X - plane           A's samples against the plane (sphere: its centre; box: 8 corners;
//                       capsule: its 2 end centres)
//   sphere - X, X - sphere
//                       the sphere's centre against the other shape (1)
//   capsule - capsule   the point of A's axis closest to B's axis against B (1)
//   box - capsule, capsule - box
//                       A's dense samples against B, then B's against A (capsules: 2..9 centres
//                       at most ~r apart along the axis)
//   box - box           the 8 + 8 corners as above, then the 12 x 12 edge pairs (A's edge i,
//                       B's edge j: feature 16 + 12 i + j, edges numbered by box_edge): the
//                       closest points pa, pb of the two edges' lines, when pa is inside B and
//                       pb inside A (the edges cross inside both boxes: contact with no corner
//                       inside). normal: the edges' cross product, pointing from B's centre to
//                       A's; depth: the least of (pb - pa).n and the two points' depths in the
//                       other box, so it goes to 0 where a point leaves the other box (and a
//                       face-face overlap's edge crossings, on the other box's surface, add
//                       nothing); the force fades to 0 over the last 5% of either edge (C1),
//                       where the corners take over, so nothing jumps
//   sphere - mesh       the sphere's centre against a static triangle mesh (colliders: a
//                       particle or a body's sphere against it) (1)
//   capsule - mesh      the capsule's 2 end centres (with its radius) against the static mesh,
//                       as against a plane: a mesh floor holds it as a plane does (denser
//                       samples would add their explicit friction up past its stable step), and
//                       a bump under its middle alone is missed
//   box - mesh          the box's 8 corners (no radius) against the mesh as a solid behind its
//                       faces (geometry.h's mesh_solid_distance; spheres meet a two-sided shell);
//                       a peak of the mesh under a face of the box is missed (the mesh's
//                       vertices against the box would add a contact per vertex of a finely cut
//                       floor under it, and their explicit stiffness with it)
// planes are only ever the static side B. a body's mesh shape touches as its convex hull: its
// pairs need the model's hull arrays and live in engine/articulation/mesh_pairs.h.
//
// the adjoints are the vector-Jacobian products of the pair functions themselves, by dual
// numbers (pair_vjp): given dL/df and dL/dxc, the adjoints of both shapes' pose (rot, pos) and
// velocity and of ke, kd, mu. every kernel is generic over the scalar (float, double, Dual)
// and runs on the host and the device.
#pragma once

#include "engine/collision/contact_law.h"
#include "engine/collision/geometry.h"
#include "engine/core/rigid_dual.h"
#include "engine/core/spatial.h"

namespace adj {

// the pairs, one per named function below (the table: pair_kind)
enum PairKind : int {
  PAIR_NONE,
  PAIR_SPHERE_PLANE,
  PAIR_BOX_PLANE,
  PAIR_CAPSULE_PLANE,
  PAIR_SPHERE_SPHERE,
  PAIR_SPHERE_BOX,
  PAIR_SPHERE_CAPSULE,
  PAIR_SPHERE_MESH,
  PAIR_BOX_SPHERE,
  PAIR_CAPSULE_SPHERE,
  PAIR_CAPSULE_CAPSULE,
  PAIR_BOX_CAPSULE,
  PAIR_CAPSULE_BOX,
  PAIR_BOX_BOX,
  PAIR_CAPSULE_MESH,
  PAIR_BOX_MESH,
  PAIR_KIND_COUNT
};

// a shape placed in the world, as the pair functions see it: v is its spatial velocity
// (angular, linear at the world origin), null for a static shape
template <class T>
struct PlacedShape {
  ShapeRef<T, plain_scalar_t<T>> ref;
  const rigid::svec<T>* v;
};

// the adjoints of a pair's inputs (the pair_vjp below adds to them)
template <class S>
struct PairGrad {
  mat33<S> rot_a;
  vec3<S> pos_a;
  rigid::svec<S> v_a{};
  mat33<S> rot_b;
  vec3<S> pos_b;
  rigid::svec<S> v_b{};
  S ke = S(0), kd = S(0), mu = S(0);
};

// vector-Jacobian product of pair function fn (feature k of A against B) at the shapes' pose
// and velocity and ke, kd, mu: adds to g given dL/df and dL/dxc; false when it does not touch
template <class S, class Fn>
ADJ_HD bool pair_vjp(Fn fn, const PlacedShape<S>& A, const PlacedShape<S>& B, int k, S ke, S kd, S mu, S kf, S eps,
                     const vec3<S>& adj_f, const vec3<S>& adj_xc, PairGrad<S>& g) {
  constexpr int N = 39;  // A: rot, pos, v (18); B likewise; ke, kd, mu
  using D = Dual<S, N>;
  rigid::Seeder<S, N> seed;
  const rigid::svec<S> zero{};
  PlacedShape<D> a{{A.ref.type, vec3<D>(), mat33<D>(), lift<D>(A.ref.size), A.ref.mesh_vertices, A.ref.mesh_tris,
                    A.ref.mesh_start, A.ref.mesh_count},
                   nullptr};
  PlacedShape<D> b{{B.ref.type, vec3<D>(), mat33<D>(), lift<D>(B.ref.size), B.ref.mesh_vertices, B.ref.mesh_tris,
                    B.ref.mesh_start, B.ref.mesh_count},
                   nullptr};
  a.ref.rot = seed.mat(A.ref.rot);
  a.ref.pos = seed.vec(A.ref.pos);
  const rigid::svec<D> va = seed.sv(A.v ? *A.v : zero);
  b.ref.rot = seed.mat(B.ref.rot);
  b.ref.pos = seed.vec(B.ref.pos);
  const rigid::svec<D> vb = seed.sv(B.v ? *B.v : zero);
  if (A.v) a.v = &va;
  if (B.v) b.v = &vb;
  const D ked = seed(ke), kdd = seed(kd), mud = seed(mu);
  vec3<D> xc, n, f;
  if (!fn(a, b, k, ked, kdd, mud, kf, eps, xc, n, f)) return false;
  rigid::Contract<S, N> c;
  c.add(f, adj_f);
  c.add(xc, adj_xc);
  c.take(g.rot_a);
  c.take(g.pos_a);
  c.take(g.v_a);
  c.take(g.rot_b);
  c.take(g.pos_b);
  c.take(g.v_b);
  g.ke += c.take();
  g.kd += c.take();
  g.mu += c.take();
  return true;
}

// the adjoint of a named pair function, right below it: pair_vjp through that function
#define ADJ_PAIR_ADJOINT(name)                                                                                       \
  template <class S>                                                                                                 \
  ADJ_HD inline bool name##_adjoint(const PlacedShape<S>& A, const PlacedShape<S>& B, int k, S ke, S kd, S mu, S kf, \
                                    S eps, const vec3<S>& adj_f, const vec3<S>& adj_xc, PairGrad<S>& g) {            \
    return pair_vjp([](auto&&... x) { return name(x...); }, A, B, k, ke, kd, mu, kf, eps, adj_f, adj_xc, g);         \
  }

// the core of every pair: a sphere of radius r centred at x, carried by P, against Q's
// surface: the force on P, the normal out of Q and the point midway between the surfaces
template <class T, class S>
ADJ_HD inline bool sphere_against(const PlacedShape<T>& P, const PlacedShape<T>& Q, const vec3<T>& x, S r, const T& ke,
                                  const T& kd, const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  vec3<T> surface;
  // a point of no radius meets a mesh collider's solid, a sphere its two-sided shell
  const bool solid = Q.ref.type == GEOM_MESH && !(r > S(0));
  T d = (solid ? mesh_solid_distance(Q.ref, x, n, surface) : shape_distance(Q.ref, x, n, surface)) - T(r);
  if (!(value(d) < 0)) return false;
  xc = x - n * (T(r) + d * T(0.5));
  vec3<T> vrel;
  if (P.v) vrel += P.v->v + cross(P.v->w, xc);
  if (Q.v) vrel -= Q.v->v + cross(Q.v->w, xc);
  f = contact_force(d, n, vrel, ke, kd, kf, mu, eps);
  return true;
}

template <class T>
ADJ_HD inline vec3<plain_scalar_t<T>> plain_size(const PlacedShape<T>& P) {
  return {value(P.ref.size.x), value(P.ref.size.y), value(P.ref.size.z)};
}

// sample k of shape P (dense or not), placed in the world, and its radius
template <class T, class S>
ADJ_HD inline vec3<T> placed_sample(const PlacedShape<T>& P, bool dense, int k, S& r) {
  return P.ref.pos + P.ref.rot * lift<T>(shape_sample(P.ref.type, plain_size(P), dense, k, r));
}

// the sphere of feature k of a pair of kind `kind` (see the top of this file): its centre x and
// radius r, and whether B carries it (flip); false for PAIR_NONE
template <class T, class S>
ADJ_HD inline bool pair_sphere(int kind, const PlacedShape<T>& A, const PlacedShape<T>& B, int k, vec3<T>& x, S& r,
                               bool& flip) {
  flip = false;
  switch (kind) {
    case PAIR_SPHERE_PLANE:  // A's samples against the plane
    case PAIR_BOX_PLANE:
    case PAIR_CAPSULE_PLANE:
    case PAIR_CAPSULE_MESH:
    case PAIR_BOX_MESH:
      x = placed_sample(A, false, k, r);
      return true;
    case PAIR_SPHERE_SPHERE:  // A's centre
    case PAIR_SPHERE_BOX:
    case PAIR_SPHERE_CAPSULE:
    case PAIR_SPHERE_MESH:
      x = A.ref.pos;
      r = S(value(A.ref.size.x));
      return true;
    case PAIR_BOX_SPHERE:  // B's centre
    case PAIR_CAPSULE_SPHERE:
      x = B.ref.pos;
      r = S(value(B.ref.size.x));
      flip = true;
      return true;
    case PAIR_CAPSULE_CAPSULE: {  // the point of A's axis closest to B's axis
      const vec3<T> ha = A.ref.rot.col(1) * T(value(A.ref.size.y)), hb = B.ref.rot.col(1) * T(value(B.ref.size.y));
      x = segment_closest(A.ref.pos - ha, A.ref.pos + ha, B.ref.pos - hb, B.ref.pos + hb);
      r = S(value(A.ref.size.x));
      return true;
    }
    case PAIR_BOX_CAPSULE:  // A's dense samples, then B's (box-box: the 8 + 8 corners)
    case PAIR_CAPSULE_BOX:
    case PAIR_BOX_BOX: {
      const int na = shape_sample_count(A.ref.type, plain_size(A), true);
      if (k < na) {
        x = placed_sample(A, true, k, r);
        return true;
      }
      x = placed_sample(B, true, k - na, r);
      flip = true;
      return true;
    }
    default:
      return false;
  }
}

// feature k of a pair of kind `kind` (all but box-box edges): its sphere against the other
// side; the force on A and the normal into A. one place for every pair, so that a dispatch
// over the table compiles one signed distance (the device kernels stay small)
template <class T, class S>
ADJ_HD inline bool sphere_feature(int kind, const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke,
                                  const T& kd, const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  vec3<T> x;
  S r = S(0);
  bool flip = false;
  if (!pair_sphere(kind, A, B, k, x, r, flip)) return false;
  const PlacedShape<T>& P = flip ? B : A;
  const PlacedShape<T>& Q = flip ? A : B;
  if (!sphere_against(P, Q, x, r, ke, kd, mu, kf, eps, xc, n, f)) return false;
  if (flip) {
    f = -f;
    n = -n;
  }
  return true;
}

// ---------------------------------------------------------------- against a plane

template <class T, class S>
ADJ_HD inline bool contact_sphere_plane(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke,
                                        const T& kd, const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_SPHERE_PLANE, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_sphere_plane)

template <class T, class S>
ADJ_HD inline bool contact_box_plane(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke, const T& kd,
                                     const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_BOX_PLANE, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_box_plane)

template <class T, class S>
ADJ_HD inline bool contact_capsule_plane(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke,
                                         const T& kd, const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_CAPSULE_PLANE, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_capsule_plane)

// ---------------------------------------------------------------- a sphere on one side

template <class T, class S>
ADJ_HD inline bool contact_sphere_sphere(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke,
                                         const T& kd, const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_SPHERE_SPHERE, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_sphere_sphere)

template <class T, class S>
ADJ_HD inline bool contact_sphere_box(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke, const T& kd,
                                      const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_SPHERE_BOX, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_sphere_box)

template <class T, class S>
ADJ_HD inline bool contact_sphere_capsule(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke,
                                          const T& kd, const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_SPHERE_CAPSULE, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_sphere_capsule)

// a sphere (a particle) against a static triangle mesh
template <class T, class S>
ADJ_HD inline bool contact_sphere_mesh(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke,
                                       const T& kd, const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_SPHERE_MESH, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_sphere_mesh)

// a capsule (a body's) against a static triangle mesh
template <class T, class S>
ADJ_HD inline bool contact_capsule_mesh(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke,
                                        const T& kd, const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_CAPSULE_MESH, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_capsule_mesh)

// a box (a body's) against a static triangle mesh, solid behind its faces
template <class T, class S>
ADJ_HD inline bool contact_box_mesh(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke, const T& kd,
                                    const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_BOX_MESH, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_box_mesh)

template <class T, class S>
ADJ_HD inline bool contact_box_sphere(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke, const T& kd,
                                      const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_BOX_SPHERE, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_box_sphere)

template <class T, class S>
ADJ_HD inline bool contact_capsule_sphere(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke,
                                          const T& kd, const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_CAPSULE_SPHERE, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_capsule_sphere)

// ---------------------------------------------------------------- boxes and capsules

template <class T, class S>
ADJ_HD inline bool contact_capsule_capsule(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke,
                                           const T& kd, const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_CAPSULE_CAPSULE, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_capsule_capsule)

template <class T, class S>
ADJ_HD inline bool contact_box_capsule(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke,
                                       const T& kd, const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_BOX_CAPSULE, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_box_capsule)

template <class T, class S>
ADJ_HD inline bool contact_capsule_box(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke,
                                       const T& kd, const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  return sphere_feature(PAIR_CAPSULE_BOX, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_capsule_box)

// edge pair e = 12 i + j of box A (edge i) and box B (edge j) (see the top of this file)
template <class T, class S>
ADJ_HD bool box_edge_contact(const PlacedShape<T>& A, const PlacedShape<T>& B, int e, const T& ke, const T& kd,
                             const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  const vec3<S> za = plain_size(A), zb = plain_size(B);
  vec3<S> a0, a1, b0, b1;
  box_edge(za, e / 12, a0, a1);
  box_edge(zb, e % 12, b0, b1);
  const vec3<T> pa0 = A.ref.pos + A.ref.rot * lift<T>(a0), pa1 = A.ref.pos + A.ref.rot * lift<T>(a1);
  const vec3<T> pb0 = B.ref.pos + B.ref.rot * lift<T>(b0), pb1 = B.ref.pos + B.ref.rot * lift<T>(b1);
  T s, t;
  if (!line_pair_params(pa0, pa1, pb0, pb1, s, t)) return false;
  const T w = edge_weight(s) * edge_weight(t);
  if (!(value(w) > 0)) return false;
  const vec3<T> pa = pa0 + (pa1 - pa0) * s, pb = pb0 + (pb1 - pb0) * t;
  vec3<T> nq, surface;
  const T da = shape_distance(B.ref, pa, nq, surface);  // pa's depth in B
  if (!(value(da) < 0)) return false;
  const T db = shape_distance(A.ref, pb, nq, surface);  // pb's depth in A
  if (!(value(db) < 0)) return false;
  n = cross(pa1 - pa0, pb1 - pb0);
  n = n / length(n);
  if (value(dot(n, A.ref.pos - B.ref.pos)) < 0) n = -n;
  T d = dot(pa - pb, n);
  if (value(da) > value(d)) d = da;
  if (value(db) > value(d)) d = db;
  if (!(value(d) < 0)) return false;
  xc = (pa + pb) * T(0.5);
  vec3<T> vrel;
  if (A.v) vrel += A.v->v + cross(A.v->w, xc);
  if (B.v) vrel -= B.v->v + cross(B.v->w, xc);
  f = contact_force(d, n, vrel, ke, kd, kf, mu, eps) * w;
  return true;
}

template <class T, class S>
ADJ_HD inline bool contact_box_box(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke, const T& kd,
                                   const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  if (k >= 16) return box_edge_contact(A, B, k - 16, ke, kd, mu, kf, eps, xc, n, f);
  return sphere_feature(PAIR_BOX_BOX, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}
ADJ_PAIR_ADJOINT(contact_box_box)

#undef ADJ_PAIR_ADJOINT

// ---------------------------------------------------------------- the table

// the pair function of a shape of type a (the side the force is reported on) against one of
// type b; PAIR_NONE: they do not touch (planes are only ever the static side B; a body's mesh
// shape: engine/articulation/mesh_pairs.h)
ADJ_HD inline int pair_kind(int a, int b) {
  constexpr int table[GEOM_TYPE_COUNT][GEOM_TYPE_COUNT] = {
      // columns: B a plane, sphere, box, capsule, mesh
      {PAIR_NONE, PAIR_NONE, PAIR_NONE, PAIR_NONE, PAIR_NONE},                                               // A: plane
      {PAIR_SPHERE_PLANE, PAIR_SPHERE_SPHERE, PAIR_SPHERE_BOX, PAIR_SPHERE_CAPSULE, PAIR_SPHERE_MESH},       // sphere
      {PAIR_BOX_PLANE, PAIR_BOX_SPHERE, PAIR_BOX_BOX, PAIR_BOX_CAPSULE, PAIR_BOX_MESH},                      // box
      {PAIR_CAPSULE_PLANE, PAIR_CAPSULE_SPHERE, PAIR_CAPSULE_BOX, PAIR_CAPSULE_CAPSULE, PAIR_CAPSULE_MESH},  // capsule
      {PAIR_NONE, PAIR_NONE, PAIR_NONE, PAIR_NONE, PAIR_NONE},                                               // mesh
  };
  if (a < 0 || a >= GEOM_TYPE_COUNT || b < 0 || b >= GEOM_TYPE_COUNT) return PAIR_NONE;
  return table[a][b];
}

// the feature count of a shape of type a (size za) against one of type b (see the top of this file)
template <class S>
ADJ_HD inline int contact_feature_count(int a, const vec3<S>& za, int b, const vec3<S>& zb) {
  switch (pair_kind(a, b)) {
    case PAIR_SPHERE_PLANE:
    case PAIR_BOX_PLANE:
    case PAIR_CAPSULE_PLANE:
    case PAIR_CAPSULE_MESH:
    case PAIR_BOX_MESH:
      return shape_sample_count(a, za, false);
    case PAIR_BOX_CAPSULE:
    case PAIR_CAPSULE_BOX:
      return shape_sample_count(a, za, true) + shape_sample_count(b, zb, true);
    case PAIR_BOX_BOX:
      return 8 + 8 + 12 * 12;  // corners, then edge pairs
    case PAIR_NONE:
      return 0;
    default:
      return 1;
  }
}

// feature k of A against B through the table: the force on A, the normal into A and the
// contact point; false when it does not touch
template <class T, class S>
ADJ_HD bool contact_pair(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke, const T& kd, const T& mu,
                         S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  // what the named function of the pair's kind does: box-box edges, else its sphere_feature
  const int kind = pair_kind(A.ref.type, B.ref.type);
  if (kind == PAIR_BOX_BOX && k >= 16) return box_edge_contact(A, B, k - 16, ke, kd, mu, kf, eps, xc, n, f);
  return sphere_feature(kind, A, B, k, ke, kd, mu, kf, eps, xc, n, f);
}

// adjoint: the table's pair function's adjoint
template <class S>
ADJ_HD inline bool contact_pair_adjoint(const PlacedShape<S>& A, const PlacedShape<S>& B, int k, S ke, S kd, S mu, S kf,
                                        S eps, const vec3<S>& adj_f, const vec3<S>& adj_xc, PairGrad<S>& g) {
  return pair_vjp([](auto&&... x) { return contact_pair(x...); }, A, B, k, ke, kd, mu, kf, eps, adj_f, adj_xc, g);
}

}  // namespace adj
