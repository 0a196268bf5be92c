// the pair functions of a body's mesh shape, which touches as its convex hull (the method and
// what it misses: engine/model/rigid_mesh.h): mesh against a plane, a sphere, a box, a capsule,
// another mesh or a static mesh collider (the hull vertices against its solid). included at the
// end of body_contact.h, whose dispatch lines call these for any pair with a mesh (they read the
// model's hull arrays, so they are not in the model-free table of pairs.h); every kernel is
// generic over the scalar, so the adjoint takes dual numbers through it as for the other pairs
// (contact_forces_adjoint), except the ground, reversed by hand. M: RigidModelT or its view
// RigidViewT (host or device), which both hold the hull arrays
#pragma once

#include "engine/articulation/body_contact.h"
#include "engine/model/rigid_mesh.h"

namespace adj::rigid {

namespace mesh_detail {

template <class T>
ADJ_HD inline bool is_mesh(const PlacedShape<T>& P) {
  return P.ref.type == GEOM_MESH;
}

// a static mesh collider (shape -1), against which A's hull vertices are points of no radius
// meeting its solid (geometry.h's mesh_solid_distance)
template <class T>
ADJ_HD inline bool is_solid_collider(const PlacedShape<T>& P, int shape) {
  return shape < 0 && P.ref.type == GEOM_MESH;
}

// samples of one side (shape: body shape index, -1 for a static collider): a mesh's hull
// vertices (radius 0), a primitive's dense samples, none for a plane
template <class T, class M>
ADJ_HD inline int sample_count(const M& m, const PlacedShape<T>& P, int shape) {
  using S = model_scalar_t<M>;
  if (is_mesh(P)) {
    int b, e;
    mesh_hull_vertices(m, shape, b, e);
    return e - b;
  }
  if (P.ref.type == GEOM_PLANE) return 0;
  const vec3<S> z(value(P.ref.size.x), value(P.ref.size.y), value(P.ref.size.z));
  return shape_sample_count(P.ref.type, z, true);
}

template <class T, class M, class S>
ADJ_HD inline vec3<T> sample(const M& m, const PlacedShape<T>& P, int shape, int k, S& r) {
  if (is_mesh(P)) {
    r = S(0);
    return P.ref.pos + P.ref.rot * lift<T>(m.hull_vertex[m.shape_hull_vertex_start[shape] + k]);
  }
  const vec3<S> z(value(P.ref.size.x), value(P.ref.size.y), value(P.ref.size.z));
  return P.ref.pos + P.ref.rot * lift<T>(shape_sample(P.ref.type, z, true, k, r));
}

// signed distance to one side's surface (meshes: their hull); points beyond `reach` may
// return a lower bound and no normal
template <class T, class M, class S>
ADJ_HD inline T distance(const M& m, const PlacedShape<T>& P, int shape, const vec3<T>& x, S reach, vec3<T>& n) {
  vec3<T> surface;
  if (is_solid_collider(P, shape)) return mesh_solid_distance(P.ref, x, n, surface);
  if (is_mesh(P)) return mesh_hull_distance(m, shape, P.ref.rot, P.ref.pos, x, reach, n);
  return shape_distance(P.ref, x, n, surface);
}

// feature count of side A against side B, at least one a mesh (see rigid_mesh.h)
template <class T, class M>
ADJ_HD inline int feature_count(const M& m, const PlacedShape<T>& A, int sa, const PlacedShape<T>& B, int sb) {
  if (B.ref.type == GEOM_PLANE || is_solid_collider(B, sb)) return sample_count(m, A, sa);
  if (A.ref.type == GEOM_SPHERE || B.ref.type == GEOM_SPHERE) return 1;
  return sample_count(m, A, sa) + sample_count(m, B, sb);
}

// feature k: the force on A, the normal into A and the point midway between the surfaces
template <class T, class M>
ADJ_HD bool feature(const M& m, const PlacedShape<T>& A, int sa, const PlacedShape<T>& B, int sb, int k, const T& ke,
                    const T& kd, const T& mu, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  using S = model_scalar_t<M>;
  int side = 0;
  vec3<T> x;
  S r = S(0);
  if (B.ref.type == GEOM_PLANE || is_solid_collider(B, sb)) {  // A is the mesh shape
    x = sample(m, A, sa, k, r);
  } else if (A.ref.type == GEOM_SPHERE || B.ref.type == GEOM_SPHERE) {
    side = A.ref.type == GEOM_SPHERE ? 0 : 1;
    x = side == 0 ? A.ref.pos : B.ref.pos;
    r = side == 0 ? S(value(A.ref.size.x)) : S(value(B.ref.size.x));
  } else {
    const int na = sample_count(m, A, sa);
    side = k < na ? 0 : 1;
    x = side == 0 ? sample(m, A, sa, k, r) : sample(m, B, sb, k - na, r);
  }
  const PlacedShape<T>& P = side == 0 ? A : B;
  const PlacedShape<T>& Q = side == 0 ? B : A;
  const int q = side == 0 ? sb : sa;
  T d = distance(m, Q, q, x, r, n) - T(r);
  if (!(value(d) < 0)) return false;
  xc = x - n * (T(r) + d * T(0.5));
  vec3<T> vrel;
  if (P.v) vrel += P.v->v + cross(P.v->w, xc);
  if (Q.v) vrel -= Q.v->v + cross(Q.v->w, xc);
  f = contact_force(d, n, vrel, ke, kd, m.contact_kf, mu, m.contact_eps);
  if (side == 1) {
    f = -f;
    n = -n;
  }
  return true;
}

}  // namespace mesh_detail

template <class M>
ADJ_HD int mesh_collider_feature_count(const M& m, int s, int c) {
  using S = model_scalar_t<M>;
  const svec<S> v{};
  return mesh_detail::feature_count(m, body_shape(m, s, mat33<S>::identity(), vec3<S>(), v), s, collider_shape<S>(m, c),
                                    -1);
}

template <class M>
ADJ_HD int mesh_pair_feature_count(const M& m, int sa, int sb) {
  using S = model_scalar_t<M>;
  const svec<S> v{};
  const mat33<S> I = mat33<S>::identity();
  return mesh_detail::feature_count(m, body_shape(m, sa, I, vec3<S>(), v), sa, body_shape(m, sb, I, vec3<S>(), v), sb);
}

template <class T, class M>
ADJ_HD bool mesh_collider_contact(const M& m, int s, int c, int k, const mat33<T>& R, const vec3<T>& p,
                                  const svec<T>& v, const T& ke, const T& kd, const T& mu, svec<T>& fs, vec3<T>& xc,
                                  vec3<T>& n, vec3<T>& f) {
  if (!mesh_detail::feature(m, body_shape(m, s, R, p, v), s, collider_shape<T>(m, c), -1, k, ke, kd, mu, xc, n, f))
    return false;
  fs = svec<T>{cross(xc, f), f};
  return true;
}

template <class T, class M>
ADJ_HD bool mesh_pair_contact(const M& m, int sa, int sb, int k, const mat33<T>& Ra, const vec3<T>& pa,
                              const svec<T>& va, const mat33<T>& Rb, const vec3<T>& pb, const svec<T>& vb, const T& ke,
                              const T& kd, const T& mu, svec<T>& fs, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  if (!mesh_detail::feature(m, body_shape(m, sa, Ra, pa, va), sa, body_shape(m, sb, Rb, pb, vb), sb, k, ke, kd, mu, xc,
                            n, f))
    return false;
  fs = svec<T>{cross(xc, f), f};
  return true;
}

// the ground against mesh shape s: its hull vertices as points of radius 0
template <class T, class M, class Keep>
ADJ_HD void mesh_ground_forces(const M& m, int s, const mat33<T>& R, const vec3<T>& p, const svec<T>& v, const T& ke,
                               const T& kd, const T& mu, svec<T>& fext, Keep&& keep) {
  using S = model_scalar_t<M>;
  int h0, h1;
  mesh_hull_vertices(m, s, h0, h1);
  svec<T> fs;
  vec3<T> xc, f;
  for (int h = h0; h < h1; ++h) {
    if (!point_contact(m, s, m.hull_vertex[h], S(0), R, p, v, ke, kd, mu, fs, xc, f)) continue;
    fext += fs;
    keep(m.shape_body[s], s, -1, -1, -1, xc, vec3<T>(T(0), T(1), T(0)), f);
  }
}

template <class S, class M>
ADJ_HD void mesh_ground_adjoint(const M& m, int s, const mat33<S>& R, const vec3<S>& p, const svec<S>& v, S ke, S kd,
                                S mu, const svec<S>& adj_fext, mat33<S>& adj_R, vec3<S>& adj_p, svec<S>& adj_v,
                                S& adj_ke, S& adj_kd, S& adj_mu) {
  using P = model_scalar_t<M>;
  int h0, h1;
  mesh_hull_vertices(m, s, h0, h1);
  svec<S> fs;
  vec3<S> xc, f;
  for (int h = h0; h < h1; ++h) {
    if (!point_contact(m, s, m.hull_vertex[h], P(0), R, p, v, ke, kd, mu, fs, xc, f)) continue;
    point_contact_adjoint(m, s, m.hull_vertex[h], P(0), R, p, v, ke, kd, mu, adj_fext, adj_R, adj_p, adj_v, adj_ke,
                          adj_kd, adj_mu);
  }
}

}  // namespace adj::rigid
