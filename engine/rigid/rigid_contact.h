// rigid contact: body shapes against the ground plane, static colliders and the shapes of
// other bodies. every contact is the particle engine's smooth penalty force with smoothed
// friction (engine/forces/contact.h, the same ke, kd, kf, mu, eps) between a sphere on one
// side (a shape's sample point with a radius) and the signed distance of the other side
// (engine/forces/contact.h's shape_distance), applied at one point as equal and opposite
// spatial forces; J^T f reaches the joints through RNEA's backward sweep.
//
// shape samples: a sphere is its centre (radius r); a box its 8 corners (radius 0); a
// capsule its two end centres against the ground and planes, and 2..9 centres spaced at
// most ~r apart along its axis against everything else (radius r).
// features of a shape A (a body's) against a shape B (another body's or a static collider),
// in a fixed order, so results are deterministic:
//   B a plane           A's samples (capsule ends) against it, as the ground
//   A or B a sphere     the sphere's centre against the other shape (1)
//   capsule - capsule   the point of A's axis closest to B's axis against B (1)
//   box/capsule - box/capsule (not both capsules)
//                       A's samples against B, then B's samples against A (box-box: 8 + 8
//                       corners; capsule-box: axis samples + box corners)
//   box - box           then the 12 x 12 edge pairs (A's edge i, B's edge j: feature
//                       16 + 12 i + j, edges numbered by box_edge): the closest points pa, pb
//                       of the two edges' lines, when pa is inside B and pb inside A (the edges
//                       cross inside both boxes: contact with no corner inside). normal: the
//                       edges' cross product, pointing from B's centre to A's; depth: the
//                       least of (pb - pa).n and the two points' depths in the other box, so
//                       it goes to 0 where a point leaves the other box (and a face-face
//                       overlap's edge crossings, on the other box's surface, add nothing);
//                       the force fades to 0 over the last 5% of either edge (C1), where the
//                       corners take over, so nothing jumps
// mesh shapes: their convex hull's vertices and signed distance (engine/rigid/rigid_mesh.h).
// a pair touches when the bodies differ, the shape filter lets it (shape_group/shape_mask),
// and, for bodies of one tree, self_collision is on and neither is the other's parent.
//
// every kernel is generic over the scalar (float, double, Dual): the reverse pass takes each
// touching feature's vector-Jacobian product from dual numbers run through the kernel
// itself (contact_forces_adjoint below), as engine/forces does.
#pragma once

#include <cmath>
#include <type_traits>
#include <vector>

#include "engine/rigid/rigid_dual.h"
#include "engine/rigid/rigid_mesh.h"
#include "engine/rigid/rigid_model.h"
#include "engine/rigid/rigid_view.h"

namespace adj::rigid {

// sample points of a shape in its own frame, with their radius (dense: capsules sampled
// along the axis instead of at the two ends); returns the count (at most 9)
template <class S>
ADJ_HD inline int shape_sample_count(int type, const vec3<S>& size, bool dense) {
  if (type == RIGID_SHAPE_SPHERE) return 1;
  if (type == RIGID_SHAPE_BOX) return 8;
  if (!dense || !(size.x > S(0))) return 2;
  int n = 1 + int(::ceil(double(2 * size.y / size.x) - 1e-6));
  return n < 2 ? 2 : (n > 9 ? 9 : n);
}

template <class S>
ADJ_HD inline vec3<S> shape_sample(int type, const vec3<S>& size, bool dense, int k, S& radius) {
  if (type == RIGID_SHAPE_SPHERE) {
    radius = size.x;
    return vec3<S>();
  }
  if (type == RIGID_SHAPE_BOX) {
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
  if (type == RIGID_SHAPE_SPHERE) return size.x;
  if (type == RIGID_SHAPE_CAPSULE) return size.x + size.y;
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
  p0 = shape_sample(int(RIGID_SHAPE_BOX), h, true, c, r);
  p1 = shape_sample(int(RIGID_SHAPE_BOX), h, true, c | (1 << axis), r);
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

// spatial force of the ground on a body (pose R, p; velocity v) at shape point pt of radius r
// (shape frame of shape s), at the deepest point xc; false when the point does not touch
template <class T, class S, class M>
ADJ_HD bool point_contact(const M& m, int s, const vec3<S>& pt, S r, const mat33<T>& R, const vec3<T>& p,
                          const svec<T>& v, const T& ke, const T& kd, const T& mu, svec<T>& fs, vec3<T>& xc,
                          vec3<T>& f) {
  const vec3<T> n(T(0), T(1), T(0));
  vec3<T> x = p + R * (lift<T>(m.shape_pos[s]) + lift<T>(m.shape_rot[s]) * lift<T>(pt));
  if (!(value(x.y) < value(r))) return false;
  xc = x - n * T(r);
  vec3<T> vel = v.v + cross(v.w, xc);
  f = contact_force(x.y - T(r), n, vel, ke, kd, m.contact_kf, mu, m.contact_eps);
  fs = svec<T>{cross(xc, f), f};
  return true;
}

// the reverse of contact_force (engine/forces/contact.h) by hand: given adj_f, adds to the
// adjoints of c, vrel, ke, kd and mu (nothing where the force is zero: apart, or pulling)
template <class S>
ADJ_HD inline void contact_force_adjoint(S c, const vec3<S>& n, const vec3<S>& vrel, S ke, S kd, S kf, S mu, S eps,
                                         const vec3<S>& adj_f, S& adj_c, vec3<S>& adj_vrel, S& adj_ke, S& adj_kd,
                                         S& adj_mu) {
  if (!(c < 0)) return;
  const S vn = dot(n, vrel), lambda = -ke * c - kd * vn;
  if (!(lambda > 0)) return;
  S adj_lambda = dot(n, adj_f), adj_vn = S(0);
  if (kf > S(0) && mu > S(0)) {
    // f -= vt k, k = kf mul / denom, denom = sqrt(kf^2 (vt.vt + eps^2) + mul^2), mul = mu lambda
    const vec3<S> vt = vrel - n * vn;
    const S mul = mu * lambda;
    const S denom = sqrt_(kf * kf * (dot(vt, vt) + eps * eps) + mul * mul);
    const S k = kf * mul / denom;
    vec3<S> adj_vt = adj_f * (-k);
    const S adj_k = -dot(vt, adj_f);
    S adj_mul = adj_k * kf / denom;
    const S adj_denom = -adj_k * k / denom;
    const S adj_Q = adj_denom / (S(2) * denom);
    adj_vt += vt * (S(2) * kf * kf * adj_Q);
    adj_mul += S(2) * mul * adj_Q;
    adj_mu += adj_mul * lambda;
    adj_lambda += adj_mul * mu;
    adj_vrel += adj_vt;
    adj_vn -= dot(n, adj_vt);
  }
  adj_ke -= c * adj_lambda;
  adj_kd -= vn * adj_lambda;
  adj_c -= ke * adj_lambda;
  adj_vn -= kd * adj_lambda;
  adj_vrel += n * adj_vn;
}

// the reverse of point_contact by hand (a point that touches): given the adjoint of the
// spatial force on the body, adds to the adjoints of the body pose and velocity and of ke, kd, mu
template <class S, class M>
ADJ_HD void point_contact_adjoint(const M& m, int s, const vec3<S>& pt, S r, const mat33<S>& R, const vec3<S>& p,
                                  const svec<S>& v, S ke, S kd, S mu, const svec<S>& adj_fs, mat33<S>& adj_R,
                                  vec3<S>& adj_p, svec<S>& adj_v, S& adj_ke, S& adj_kd, S& adj_mu) {
  const vec3<S> n(S(0), S(1), S(0));
  const vec3<S> xl = m.shape_pos[s] + m.shape_rot[s] * pt;
  const vec3<S> x = p + R * xl, xc = x - n * r;
  const vec3<S> vel = v.v + cross(v.w, xc);
  const S c = x.y - r;
  const vec3<S> f = contact_force(c, n, vel, ke, kd, m.contact_kf, mu, m.contact_eps);
  // fs = (xc x f, f)
  const vec3<S> adj_f = adj_fs.v + cross(adj_fs.w, xc);
  vec3<S> adj_xc = cross(f, adj_fs.w), adj_vel;
  S adj_c = S(0);
  contact_force_adjoint(c, n, vel, ke, kd, m.contact_kf, mu, m.contact_eps, adj_f, adj_c, adj_vel, adj_ke, adj_kd,
                        adj_mu);
  // vel = v.v + v.w x xc; c = x.y - r; xc = x - n r; x = p + R xl
  adj_v.v += adj_vel;
  adj_v.w += cross(xc, adj_vel);
  adj_xc += cross(adj_vel, v.w);
  adj_xc.y += adj_c;
  adj_p += adj_xc;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) adj_R.m[i][j] += adj_xc[i] * xl[j];
}

// a shape placed in the world, as engine/forces/contact.h's ShapeRef: code 0 plane (size:
// unit normal), 1 sphere, 2 box, 3 capsule; v: its body's spatial velocity (null: static)
template <class T>
struct PlacedShape {
  ShapeRef<T> ref;
  const svec<T>* v;
};

template <class T, class M>
ADJ_HD inline PlacedShape<T> body_shape(const M& m, int s, const mat33<T>& R, const vec3<T>& p, const svec<T>& v) {
  PlacedShape<T> r{{m.shape_type[s] + 1, p + R * lift<T>(m.shape_pos[s]), R * lift<T>(m.shape_rot[s]),
                    lift<T>(m.shape_size[s]), nullptr, nullptr, 0, 0},
                   &v};
  return r;
}

template <class T, class M>
ADJ_HD inline PlacedShape<T> collider_shape(const M& m, int c) {
  PlacedShape<T> r{{m.collider_type[c], lift<T>(m.collider_pos[c]), lift<T>(m.collider_rot[c]),
                    lift<T>(m.collider_size[c]), nullptr, nullptr, 0, 0},
                   nullptr};
  return r;
}

// samples of a shape code (1 sphere, 2 box, 3 capsule), dense: capsules along the axis
template <class S>
ADJ_HD inline int code_samples(int code, const vec3<S>& size, bool dense) {
  return shape_sample_count(code - 1, size, dense);
}

// feature count of body shape code a against shape code b (see the top of this file)
template <class S>
ADJ_HD inline int feature_count(int a, const vec3<S>& size_a, int b, const vec3<S>& size_b) {
  if (b == 0) return code_samples(a, size_a, false);
  if (a == 1 || b == 1) return 1;
  if (a == 3 && b == 3) return 1;
  if (a == 2 && b == 2) return 8 + 8 + 12 * 12;  // corners, then edge pairs
  return code_samples(a, size_a, true) + code_samples(b, size_b, true);
}

// edge pair e = 12 i + j of box A (edge i) and box B (edge j): the force on A, the normal into
// A and the contact point (see the top of this file); false when they do not touch
template <class T, class S>
ADJ_HD bool box_edge_contact(const PlacedShape<T>& A, const PlacedShape<T>& B, int e, const T& ke, const T& kd,
                             const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  const vec3<S> za(value(A.ref.size.x), value(A.ref.size.y), value(A.ref.size.z));
  const vec3<S> zb(value(B.ref.size.x), value(B.ref.size.y), value(B.ref.size.z));
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

// feature k of shape A (a body's) against shape B: the force on A, the normal into A and the
// point midway between the surfaces; false when it does not touch
template <class T, class S>
ADJ_HD bool shape_contact(const PlacedShape<T>& A, const PlacedShape<T>& B, int k, const T& ke, const T& kd,
                          const T& mu, S kf, S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  const int a = A.ref.type, b = B.ref.type;
  const vec3<S> za(value(A.ref.size.x), value(A.ref.size.y), value(A.ref.size.z));
  const vec3<S> zb(value(B.ref.size.x), value(B.ref.size.y), value(B.ref.size.z));
  // the sphere side: A (side 0) or B (side 1), its centre x and radius r
  int side = 0;
  vec3<T> x;
  S r;
  if (b == 0) {
    x = A.ref.pos + A.ref.rot * lift<T>(shape_sample(a - 1, za, false, k, r));
  } else if (a == 1 || b == 1) {
    side = a == 1 ? 0 : 1;
    x = side == 0 ? A.ref.pos : B.ref.pos;
    r = side == 0 ? za.x : zb.x;
  } else if (a == 3 && b == 3) {
    vec3<T> ha = A.ref.rot.col(1) * T(za.y), hb = B.ref.rot.col(1) * T(zb.y);
    x = segment_closest(A.ref.pos - ha, A.ref.pos + ha, B.ref.pos - hb, B.ref.pos + hb);
    r = za.x;
  } else if (a == 2 && b == 2 && k >= 16) {
    return box_edge_contact(A, B, k - 16, ke, kd, mu, kf, eps, xc, n, f);
  } else {
    int na = code_samples(a, za, true);
    side = k < na ? 0 : 1;
    if (side == 0)
      x = A.ref.pos + A.ref.rot * lift<T>(shape_sample(a - 1, za, true, k, r));
    else
      x = B.ref.pos + B.ref.rot * lift<T>(shape_sample(b - 1, zb, true, k - na, r));
  }
  const PlacedShape<T>& P = side == 0 ? A : B;
  const PlacedShape<T>& Q = side == 0 ? B : A;
  vec3<T> surface;
  T d = shape_distance(Q.ref, x, n, surface) - T(r);
  if (!(value(d) < 0)) return false;
  xc = x - n * (T(r) + d * T(0.5));
  vec3<T> vrel;
  if (P.v) vrel += P.v->v + cross(P.v->w, xc);
  if (Q.v) vrel -= Q.v->v + cross(Q.v->w, xc);
  f = contact_force(d, n, vrel, ke, kd, kf, mu, eps);
  if (side == 1) {
    f = -f;
    n = -n;
  }
  return true;
}

// feature k of body shape s (body at R, p, velocity v) against static collider c: the spatial
// force on the body
template <class T, class M>
ADJ_HD bool collider_contact(const M& m, int s, int c, int k, const mat33<T>& R, const vec3<T>& p, const svec<T>& v,
                             const T& ke, const T& kd, const T& mu, svec<T>& fs, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  if (m.shape_type[s] == RIGID_SHAPE_MESH) return mesh_collider_contact(m, s, c, k, R, p, v, ke, kd, mu, fs, xc, n, f);
  if (!shape_contact(body_shape(m, s, R, p, v), collider_shape<T>(m, c), k, ke, kd, mu, m.contact_kf, m.contact_eps, xc,
                     n, f))
    return false;
  fs = svec<T>{cross(xc, f), f};
  return true;
}

template <class M>
ADJ_HD inline int collider_feature_count(const M& m, int s, int c) {
  if (m.shape_type[s] == RIGID_SHAPE_MESH) return mesh_collider_feature_count(m, s, c);
  return feature_count(m.shape_type[s] + 1, m.shape_size[s], m.collider_type[c], m.collider_size[c]);
}

// root body of b's tree
template <class M>
ADJ_HD inline int body_root(const M& m, int b) {
  while (m.joint_parent[b] >= 0) b = m.joint_parent[b];
  return b;
}

// whether shapes sa and sb may touch (filters only; the broad phase is separate)
template <class M>
ADJ_HD inline bool pair_enabled(const M& m, int sa, int sb) {
  const int a = m.shape_body[sa], b = m.shape_body[sb];
  if (a == b) return false;
  int ga = sa < int(m.shape_group.size()) ? m.shape_group[sa] : 1;
  int gb = sb < int(m.shape_group.size()) ? m.shape_group[sb] : 1;
  int ma = sa < int(m.shape_mask.size()) ? m.shape_mask[sa] : -1;
  int mb = sb < int(m.shape_mask.size()) ? m.shape_mask[sb] : -1;
  if (!(ga & mb) || !(gb & ma)) return false;
  if (body_root(m, a) != body_root(m, b)) return true;
  return m.self_collision && m.joint_parent[a] != b && m.joint_parent[b] != a;
}

// feature count of a shape pair (see the top of this file)
template <class M>
ADJ_HD inline int pair_feature_count(const M& m, int sa, int sb) {
  if (m.shape_type[sa] == RIGID_SHAPE_MESH || m.shape_type[sb] == RIGID_SHAPE_MESH)
    return mesh_pair_feature_count(m, sa, sb);
  return feature_count(m.shape_type[sa] + 1, m.shape_size[sa], m.shape_type[sb] + 1, m.shape_size[sb]);
}

// broad phase: the shapes' bounding spheres overlap (plain values)
template <class S, class M>
ADJ_HD inline bool pair_near(const M& m, int sa, int sb, const vec3<S>& pa, const vec3<S>& pb) {
  S reach = shape_bound(m.shape_type[sa], m.shape_size[sa]) + shape_bound(m.shape_type[sb], m.shape_size[sb]);
  return length_sq(pa - pb) < reach * reach;
}

// feature k of the pair (sa on body a at Ra, pa, velocity va; sb likewise): the spatial force
// on body a (body b feels -fs), the contact point, the normal into a and the force on a
template <class T, class M>
ADJ_HD bool pair_contact(const M& m, int sa, int sb, int k, const mat33<T>& Ra, const vec3<T>& pa, const svec<T>& va,
                         const mat33<T>& Rb, const vec3<T>& pb, const svec<T>& vb, const T& ke, const T& kd,
                         const T& mu, svec<T>& fs, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  if (m.shape_type[sa] == RIGID_SHAPE_MESH || m.shape_type[sb] == RIGID_SHAPE_MESH)
    return mesh_pair_contact(m, sa, sb, k, Ra, pa, va, Rb, pb, vb, ke, kd, mu, fs, xc, n, f);
  if (!shape_contact(body_shape(m, sa, Ra, pa, va), body_shape(m, sb, Rb, pb, vb), k, ke, kd, mu, m.contact_kf,
                     m.contact_eps, xc, n, f))
    return false;
  fs = svec<T>{cross(xc, f), f};
  return true;
}

// every contact force of a state into fext (cleared first), in a fixed order: ground, static
// colliders, shape pairs (sa < sb); optionally recorded for drawing
template <class T, class M, class Rec>
ADJ_HD void contact_forces(const M& m, const T& ke, const T& kd, const T& mu, const mat33<T>* R, const vec3<T>* p,
                           const svec<T>* v, svec<T>* fext, Rec* record) {
  using S = model_scalar_t<M>;
  for (int b = 0; b < m.body_count(); ++b) fext[b] = svec<T>{};
  auto keep = [&](int b, int s, int ob, int os, int c, const vec3<T>& xc, const vec3<T>& n, const vec3<T>& f) {
    if constexpr (std::is_same_v<T, S> && !std::is_same_v<Rec, NoRecord>) {
      if (!record) return;
      record->point.push_back(xc);
      record->normal.push_back(n);
      record->force.push_back(f);
      record->body.push_back(b);
      record->shape.push_back(s);
      record->other_body.push_back(ob);
      record->other_shape.push_back(os);
      record->collider.push_back(c);
    }
  };
  svec<T> fs;
  vec3<T> xc, n, f;
  if (m.ground) {
    for (int s = 0; s < m.shape_count(); ++s) {
      int b = m.shape_body[s];
      if (m.shape_type[s] == RIGID_SHAPE_MESH) {  // hull vertices (rigid_mesh_contact.h)
        mesh_ground_forces(m, s, R[b], p[b], v[b], ke, kd, mu, fext[b], keep);
        continue;
      }
      vec3<S> pts[8];
      S r;
      int count = shape_points(m.shape_type[s], m.shape_size[s], pts, r);
      for (int k = 0; k < count; ++k) {
        if (!point_contact(m, s, pts[k], r, R[b], p[b], v[b], ke, kd, mu, fs, xc, f)) continue;
        fext[b] += fs;
        keep(b, s, -1, -1, -1, xc, vec3<T>(T(0), T(1), T(0)), f);
      }
    }
  }
  for (int s = 0; s < m.shape_count(); ++s) {
    int b = m.shape_body[s];
    for (int c = 0; c < m.collider_count(); ++c)
      for (int k = 0; k < collider_feature_count(m, s, c); ++k) {
        if (!collider_contact(m, s, c, k, R[b], p[b], v[b], ke, kd, mu, fs, xc, n, f)) continue;
        fext[b] += fs;
        keep(b, s, -1, -1, c, xc, n, f);
      }
  }
  if (!m.body_contact) return;
  for (int sa = 0; sa < m.shape_count(); ++sa)
    for (int sb = sa + 1; sb < m.shape_count(); ++sb) {
      if (!pair_enabled(m, sa, sb)) continue;
      const int a = m.shape_body[sa], b = m.shape_body[sb];
      vec3<S> ca = vec3<S>(value(p[a].x), value(p[a].y), value(p[a].z));
      vec3<S> cb = vec3<S>(value(p[b].x), value(p[b].y), value(p[b].z));
      mat33<S> Ra, Rb;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) Ra.m[i][j] = value(R[a].m[i][j]), Rb.m[i][j] = value(R[b].m[i][j]);
      if (!pair_near(m, sa, sb, ca + Ra * m.shape_pos[sa], cb + Rb * m.shape_pos[sb])) continue;
      for (int k = 0; k < pair_feature_count(m, sa, sb); ++k) {
        if (!pair_contact(m, sa, sb, k, R[a], p[a], v[a], R[b], p[b], v[b], ke, kd, mu, fs, xc, n, f)) continue;
        fext[a] += fs;
        fext[b] -= fs;
        keep(a, sa, b, sb, -1, xc, n, f);
      }
    }
}

// the reverse of contact_forces: given adj_fext, adds to the adjoints of the body poses and
// velocities and of ke, kd, mu. each touching feature is found on plain values first; ground
// points (the common case: feet) are reversed by hand (point_contact_adjoint), colliders and
// shape pairs take their vector-Jacobian product from dual numbers through the same kernel
template <class S, class M>
ADJ_HD void contact_forces_adjoint(const M& m, S ke, S kd, S mu, const mat33<S>* R, const vec3<S>* p, const svec<S>* v,
                                   const svec<S>* adj_fext, mat33<S>* adj_R, vec3<S>* adj_p, svec<S>* adj_v, S& adj_ke,
                                   S& adj_kd, S& adj_mu) {
  svec<S> fs;
  vec3<S> xc, n, f;
  // one body's contacts: inputs R (9), p (3), v (6), ke, kd, mu
  constexpr int N1 = 21;
  using D1 = Dual<S, N1>;
  auto one_body = [&](int b, auto&& kernel) {
    Seeder<S, N1> seed;
    mat33<D1> Rd = seed.mat(R[b]);
    vec3<D1> pd = seed.vec(p[b]);
    svec<D1> vd = seed.sv(v[b]);
    D1 ked = seed(ke), kdd = seed(kd), mud = seed(mu);
    svec<D1> fsd;
    kernel(Rd, pd, vd, ked, kdd, mud, fsd);
    Contract<S, N1> c;
    c.add(fsd, adj_fext[b]);
    c.take(adj_R[b]);
    c.take(adj_p[b]);
    c.take(adj_v[b]);
    adj_ke += c.take();
    adj_kd += c.take();
    adj_mu += c.take();
  };
  if (m.ground) {
    for (int s = 0; s < m.shape_count(); ++s) {
      const int b = m.shape_body[s];
      if (m.shape_type[s] == RIGID_SHAPE_MESH) {
        mesh_ground_adjoint(m, s, R[b], p[b], v[b], ke, kd, mu, adj_fext[b], adj_R[b], adj_p[b], adj_v[b], adj_ke,
                            adj_kd, adj_mu);
        continue;
      }
      vec3<S> pts[8];
      S r;
      int count = shape_points(m.shape_type[s], m.shape_size[s], pts, r);
      for (int k = 0; k < count; ++k) {
        if (!point_contact(m, s, pts[k], r, R[b], p[b], v[b], ke, kd, mu, fs, xc, f)) continue;
        point_contact_adjoint(m, s, pts[k], r, R[b], p[b], v[b], ke, kd, mu, adj_fext[b], adj_R[b], adj_p[b], adj_v[b],
                              adj_ke, adj_kd, adj_mu);
      }
    }
  }
  for (int s = 0; s < m.shape_count(); ++s) {
    const int b = m.shape_body[s];
    for (int c = 0; c < m.collider_count(); ++c)
      for (int k = 0; k < collider_feature_count(m, s, c); ++k) {
        if (!collider_contact(m, s, c, k, R[b], p[b], v[b], ke, kd, mu, fs, xc, n, f)) continue;
        one_body(b, [&](const auto& Rd, const auto& pd, const auto& vd, const auto& ked, const auto& kdd,
                        const auto& mud, auto& fsd) {
          vec3<D1> xcd, nd, fd;
          collider_contact(m, s, c, k, Rd, pd, vd, ked, kdd, mud, fsd, xcd, nd, fd);
        });
      }
  }
  if (!m.body_contact) return;
  // a pair's contacts: inputs Ra, pa, va, Rb, pb, vb (2 x 18), ke, kd, mu
  constexpr int N2 = 39;
  using D2 = Dual<S, N2>;
  for (int sa = 0; sa < m.shape_count(); ++sa)
    for (int sb = sa + 1; sb < m.shape_count(); ++sb) {
      if (!pair_enabled(m, sa, sb)) continue;
      const int a = m.shape_body[sa], b = m.shape_body[sb];
      if (!pair_near(m, sa, sb, p[a] + R[a] * m.shape_pos[sa], p[b] + R[b] * m.shape_pos[sb])) continue;
      for (int k = 0; k < pair_feature_count(m, sa, sb); ++k) {
        if (!pair_contact(m, sa, sb, k, R[a], p[a], v[a], R[b], p[b], v[b], ke, kd, mu, fs, xc, n, f)) continue;
        Seeder<S, N2> seed;
        mat33<D2> Rad = seed.mat(R[a]);
        vec3<D2> pad = seed.vec(p[a]);
        svec<D2> vad = seed.sv(v[a]);
        mat33<D2> Rbd = seed.mat(R[b]);
        vec3<D2> pbd = seed.vec(p[b]);
        svec<D2> vbd = seed.sv(v[b]);
        D2 ked = seed(ke), kdd = seed(kd), mud = seed(mu);
        svec<D2> fsd;
        vec3<D2> xcd, nd, fd;
        pair_contact(m, sa, sb, k, Rad, pad, vad, Rbd, pbd, vbd, ked, kdd, mud, fsd, xcd, nd, fd);
        Contract<S, N2> c;
        c.add(fsd, adj_fext[a] - adj_fext[b]);
        c.take(adj_R[a]);
        c.take(adj_p[a]);
        c.take(adj_v[a]);
        c.take(adj_R[b]);
        c.take(adj_p[b]);
        c.take(adj_v[b]);
        adj_ke += c.take();
        adj_kd += c.take();
        adj_mu += c.take();
      }
    }
}

}  // namespace adj::rigid

// the mesh-shape features the dispatch lines above call
#include "engine/rigid/rigid_mesh_contact.h"
