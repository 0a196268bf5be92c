// body contact: the shapes of articulated bodies against the ground, static colliders and
// the shapes of other bodies, as spatial forces on the bodies (equal and opposite at one
// point; J^T f reaches the joints through RNEA's backward sweep). the ground (a plane through
// the origin, normal +y) takes each shape's samples with a hand-written reverse; colliders
// and shape pairs go through the pair table (engine/collision/pairs.h, where the features of
// each pair are listed); mesh shapes touch as their convex hull (engine/articulation/mesh_pairs.h).
// a pair touches when the bodies differ, the shape filter lets it (shape_group/shape_mask),
// and, for bodies of one tree, self_collision is on and neither is the other's parent.
//
// every kernel is generic over the scalar (float, double, Dual): the reverse pass takes each
// touching feature's vector-Jacobian product from dual numbers run through the same pair
// function with the body-shape placement (contact_forces_adjoint below).
#pragma once

#include <cmath>
#include <type_traits>
#include <vector>

#include "engine/collision/pairs.h"
#include "engine/core/rigid_dual.h"
#include "engine/model/rigid_mesh.h"
#include "engine/model/rigid_model.h"
#include "engine/model/rigid_view.h"

namespace adj::rigid {

// mesh contact features (defined in mesh_pairs.h, included at the end of this file; declared
// here so the dispatch lines below can call them; the method in engine/model/rigid_mesh.h).
// M: RigidModelT or RigidViewT, which both hold the hulls
template <class M>
ADJ_HD int mesh_collider_feature_count(const M& m, int s, int c);
template <class M>
ADJ_HD int mesh_pair_feature_count(const M& m, int sa, int sb);
template <class T, class M>
ADJ_HD bool mesh_collider_contact(const M& m, int s, int c, int k, const mat33<T>& R, const vec3<T>& p,
                                  const svec<T>& v, const T& ke, const T& kd, const T& mu, svec<T>& fs, vec3<T>& xc,
                                  vec3<T>& n, vec3<T>& f);
template <class T, class M>
ADJ_HD bool mesh_pair_contact(const M& m, int sa, int sb, int k, const mat33<T>& Ra, const vec3<T>& pa,
                              const svec<T>& va, const mat33<T>& Rb, const vec3<T>& pb, const svec<T>& vb, const T& ke,
                              const T& kd, const T& mu, svec<T>& fs, vec3<T>& xc, vec3<T>& n, vec3<T>& f);
// the ground against mesh shape s (hull vertices, radius 0): adds to its body's fext, calls
// keep(body, shape, -1, -1, -1, point, normal, force) per touching vertex; and the reverse
template <class T, class M, class Keep>
ADJ_HD void mesh_ground_forces(const M& m, int s, const mat33<T>& R, const vec3<T>& p, const svec<T>& v, const T& ke,
                               const T& kd, const T& mu, svec<T>& fext, Keep&& keep);
// (S: the adjoints' scalar, the model's or a dual over it)
template <class S, class M>
ADJ_HD void mesh_ground_adjoint(const M& m, int s, const mat33<S>& R, const vec3<S>& p, const svec<S>& v, S ke, S kd,
                                S mu, const svec<S>& adj_fext, mat33<S>& adj_R, vec3<S>& adj_p, svec<S>& adj_v,
                                S& adj_ke, S& adj_kd, S& adj_mu);

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
  f = law_contact_force(m.contact_law, x.y - T(r), n, vel, ke, kd, m.contact_kf, mu, m.contact_eps);
  fs = svec<T>{cross(xc, f), f};
  return true;
}

// the reverse of point_contact by hand (a point that touches): given the adjoint of the
// spatial force on the body, adds to the adjoints of the body pose and velocity and of ke, kd, mu
// (S: the adjoints' scalar, plain or a dual for forward-over-reverse; P: the model's)
template <class S, class P, class M>
ADJ_HD void point_contact_adjoint(const M& m, int s, const vec3<P>& pt, P r, const mat33<S>& R, const vec3<S>& p,
                                  const svec<S>& v, S ke, S kd, S mu, const svec<S>& adj_fs, mat33<S>& adj_R,
                                  vec3<S>& adj_p, svec<S>& adj_v, S& adj_ke, S& adj_kd, S& adj_mu) {
  const vec3<S> n(S(0), S(1), S(0));
  const vec3<S> xl = lift<S>(m.shape_pos[s] + m.shape_rot[s] * pt);
  const vec3<S> x = p + R * xl, xc = x - n * S(r);
  const vec3<S> vel = v.v + cross(v.w, xc);
  const S c = x.y - S(r);
  const vec3<S> f = law_contact_force(m.contact_law, c, n, vel, ke, kd, m.contact_kf, mu, m.contact_eps);
  // fs = (xc x f, f)
  const vec3<S> adj_f = adj_fs.v + cross(adj_fs.w, xc);
  vec3<S> adj_xc = cross(f, adj_fs.w), adj_vel;
  S adj_c = S(0);
  law_contact_force_adjoint(m.contact_law, c, n, vel, ke, kd, S(m.contact_kf), mu, S(m.contact_eps), adj_f, adj_c,
                            adj_vel, adj_ke, adj_kd, adj_mu);
  // vel = v.v + v.w x xc; c = x.y - r; xc = x - n r; x = p + R xl
  adj_v.v += adj_vel;
  adj_v.w += cross(xc, adj_vel);
  adj_xc += cross(adj_vel, v.w);
  adj_xc.y += adj_c;
  adj_p += adj_xc;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) adj_R.m[i][j] += adj_xc[i] * xl[j];
}

// body shape s of a body at pose R, p with spatial velocity v, placed in the world
template <class T, class M>
ADJ_HD inline PlacedShape<T> body_shape(const M& m, int s, const mat33<T>& R, const vec3<T>& p, const svec<T>& v) {
  PlacedShape<T> r{{m.shape_type[s], p + R * lift<T>(m.shape_pos[s]), R * lift<T>(m.shape_rot[s]),
                    lift<T>(m.shape_size[s]), nullptr, nullptr, 0, 0},
                   &v};
  return r;
}

// static collider c, placed in the world
template <class T, class M>
ADJ_HD inline PlacedShape<T> collider_shape(const M& m, int c) {
  PlacedShape<T> r{{m.collider_type[c], lift<T>(m.collider_pos[c]), lift<T>(m.collider_rot[c]),
                    lift<T>(m.collider_size[c]), m.collider_mesh_vertices.data(), m.collider_mesh_tris.data(),
                    m.collider_mesh_start[c], m.collider_mesh_count[c]},
                   nullptr};
  return r;
}

// feature k of body shape s (body at R, p, velocity v) against static collider c: the spatial
// force on the body
template <class T, class M>
ADJ_HD bool collider_contact(const M& m, int s, int c, int k, const mat33<T>& R, const vec3<T>& p, const svec<T>& v,
                             const T& ke, const T& kd, const T& mu, svec<T>& fs, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  if (m.shape_type[s] == GEOM_MESH) return mesh_collider_contact(m, s, c, k, R, p, v, ke, kd, mu, fs, xc, n, f);
  if (!contact_pair(body_shape(m, s, R, p, v), collider_shape<T>(m, c), k, ke, kd, mu, m.contact_kf, m.contact_eps, xc,
                    n, f))
    return false;
  fs = svec<T>{cross(xc, f), f};
  return true;
}

template <class M>
ADJ_HD inline int collider_feature_count(const M& m, int s, int c) {
  if (m.shape_type[s] == GEOM_MESH) return mesh_collider_feature_count(m, s, c);
  return contact_feature_count(m.shape_type[s], m.shape_size[s], m.collider_type[c], m.collider_size[c]);
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
  if (m.shape_type[sa] == GEOM_MESH || m.shape_type[sb] == GEOM_MESH) return mesh_pair_feature_count(m, sa, sb);
  return contact_feature_count(m.shape_type[sa], m.shape_size[sa], m.shape_type[sb], m.shape_size[sb]);
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
  if (m.shape_type[sa] == GEOM_MESH || m.shape_type[sb] == GEOM_MESH)
    return mesh_pair_contact(m, sa, sb, k, Ra, pa, va, Rb, pb, vb, ke, kd, mu, fs, xc, n, f);
  if (!contact_pair(body_shape(m, sa, Ra, pa, va), body_shape(m, sb, Rb, pb, vb), k, ke, kd, mu, m.contact_kf,
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
      if (m.shape_type[s] == GEOM_MESH) {  // hull vertices (mesh_pairs.h)
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
// shape pairs take their vector-Jacobian product from dual numbers through the same kernel.
// S: the adjoints' scalar (plain, or a dual for forward-over-reverse); the model's constants stay plain
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
      if (m.shape_type[s] == GEOM_MESH) {
        mesh_ground_adjoint(m, s, R[b], p[b], v[b], ke, kd, mu, adj_fext[b], adj_R[b], adj_p[b], adj_v[b], adj_ke,
                            adj_kd, adj_mu);
        continue;
      }
      vec3<model_scalar_t<M>> pts[8];
      model_scalar_t<M> r;
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
      if (!pair_near(m, sa, sb, p[a] + R[a] * lift<S>(m.shape_pos[sa]), p[b] + R[b] * lift<S>(m.shape_pos[sb])))
        continue;
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
#include "engine/articulation/mesh_pairs.h"
