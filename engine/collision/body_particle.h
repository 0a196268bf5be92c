// body-particle contact: two-way coupling of rigid bodies and particles (cloth, soft bodies,
// free particles). every body shape (sphere, box, capsule, mesh) against every particle, the
// particle taken as a sphere of its radius: the pair table's contact_sphere_sphere,
// contact_sphere_box, contact_sphere_capsule (engine/collision/pairs.h) with the particle as
// A; a mesh shape: the particle's centre against the signed distance of the mesh's convex
// hull (engine/rigid/rigid_mesh.h; concave parts are not seen). the particle gets f, the body
// -f at the contact point (midway between the surfaces), as a spatial force that reaches the
// joints through RNEA like the bodies' other contacts (rigid::Work::fext_extra).
//
// the contact parameters are the particle model's (ke, kd, kf, mu, eps: a body shape is a
// moving collider for the particles, so the particle engine's stability bounds apply);
// gradients with respect to ke, kd, mu go to ModelGrad::contact_*.
//
// deterministic: a serial loop in a fixed order (shapes, then particles); each particle and
// each body accumulates in that order. the reverse pass takes each touching pair's
// vector-Jacobian product from dual numbers through the same kernel (27 inputs: body pose R,
// p, velocity v, particle position and velocity, ke, kd, mu), as body_contact.h does; the
// body poses' adjoints go back to the joints through the kinematics adjoint of
// engine/rigid/rigid_adjoint.h (kinematics_adjoint).
#pragma once

#include <vector>

#include "engine/collision/body_contact.h"
#include "engine/model/model.h"
#include "engine/rigid/rigid_dynamics.h"

namespace adj::rigid {

template <class S>
using CouplingParams = ContactParams<S>;

template <class S>
inline CouplingParams<S> coupling_params(const ModelT<S>& pm) {
  return {pm.contact_ke, pm.contact_kd, pm.contact_kf, pm.contact_mu, pm.contact_eps};
}

// body shape s (its body at R, p with spatial velocity v) against a particle at x with
// velocity xv and radius r: the force on the particle, the contact point and the normal out
// of the shape; false when they do not touch
template <class T, class S>
bool particle_body_contact(const RigidModelT<S>& m, int s, const mat33<T>& R, const vec3<T>& p, const svec<T>& v,
                           const vec3<T>& x, const vec3<T>& xv, S r, const T& ke, const T& kd, const T& mu, S kf, S eps,
                           vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  if (m.shape_type[s] == GEOM_MESH) {  // the particle's centre against the mesh's convex hull
    const PlacedShape<T> B = body_shape(m, s, R, p, v);
    const T d = mesh_hull_distance(m, s, B.ref.rot, B.ref.pos, x, r, n) - T(r);
    if (!(value(d) < 0)) return false;
    xc = x - n * (T(r) + d * T(0.5));
    const vec3<T> vrel = xv - (v.v + cross(v.w, xc));
    f = contact_force(d, n, vrel, ke, kd, kf, mu, eps);
    return true;
  }
  const svec<T> pv{vec3<T>(), xv};
  const PlacedShape<T> particle{
      {GEOM_SPHERE, x, mat33<T>::identity(), vec3<T>(T(r), T(0), T(0)), nullptr, nullptr, 0, 0}, &pv};
  return contact_pair(particle, body_shape(m, s, R, p, v), 0, ke, kd, mu, kf, eps, xc, n, f);
}

// broad phase (plain values): the particle is within the shape's bounding sphere
template <class S>
inline bool particle_body_near(const RigidModelT<S>& m, int s, const mat33<S>& R, const vec3<S>& p, const vec3<S>& x,
                               S r) {
  S reach = shape_bound(m.shape_type[s], m.shape_size[s]) + r;
  return length_sq(x - (p + R * m.shape_pos[s])) < reach * reach;
}

// every body-particle force of a state: f_particle (particle_count) and fext_body (body_count)
// are overwritten; optionally recorded
template <class S>
void coupling_forces(const RigidModelT<S>& m, const CouplingParams<S>& c, const std::vector<mat33<S>>& R,
                     const std::vector<vec3<S>>& p, const std::vector<svec<S>>& v, const ModelT<S>& pm,
                     const StateT<S>& ps, std::vector<vec3<S>>& f_particle, std::vector<svec<S>>& fext_body,
                     CouplingContactsT<S>* record = nullptr) {
  const int np = pm.particle_count();
  f_particle.assign(std::size_t(np), vec3<S>());
  fext_body.assign(std::size_t(m.body_count()), svec<S>{});
  vec3<S> xc, n, f;
  for (int s = 0; s < m.shape_count(); ++s) {
    const int b = m.shape_body[s];
    for (int i = 0; i < np; ++i) {
      const S r = pm.particle_radius[i];
      if (!particle_body_near(m, s, R[b], p[b], ps.particle_q[i], r)) continue;
      if (!particle_body_contact(m, s, R[b], p[b], v[b], ps.particle_q[i], ps.particle_qd[i], r, c.ke, c.kd, c.mu, c.kf,
                                 c.eps, xc, n, f))
        continue;
      f_particle[std::size_t(i)] += f;
      fext_body[std::size_t(b)] -= svec<S>{cross(xc, f), f};
      if (record) {
        record->point.push_back(xc);
        record->normal.push_back(n);
        record->force.push_back(f);
        record->particle.push_back(i);
        record->body.push_back(b);
        record->shape.push_back(s);
      }
    }
  }
}

// the reverse of coupling_forces: given dL/d f_particle and dL/d fext_body, adds to the
// adjoints of the body poses and velocities (adj_R, adj_p, adj_v), of the particle positions
// and velocities (adj_x, adj_xv) and of ke, kd, mu (adj_c's fields; kf and eps are constants)
template <class S>
void coupling_forces_adjoint(const RigidModelT<S>& m, const CouplingParams<S>& c, const std::vector<mat33<S>>& R,
                             const std::vector<vec3<S>>& p, const std::vector<svec<S>>& v, const ModelT<S>& pm,
                             const StateT<S>& ps, const std::vector<vec3<S>>& adj_f_particle,
                             const std::vector<svec<S>>& adj_fext_body, std::vector<mat33<S>>& adj_R,
                             std::vector<vec3<S>>& adj_p, std::vector<svec<S>>& adj_v, vec3<S>* adj_x, vec3<S>* adj_xv,
                             CouplingParams<S>& adj_c) {
  constexpr int N = 27;
  using D = Dual<S, N>;
  vec3<S> xc, n, f;
  for (int s = 0; s < m.shape_count(); ++s) {
    const int b = m.shape_body[s];
    for (int i = 0; i < pm.particle_count(); ++i) {
      const S r = pm.particle_radius[i];
      if (!particle_body_near(m, s, R[b], p[b], ps.particle_q[i], r)) continue;
      if (!particle_body_contact(m, s, R[b], p[b], v[b], ps.particle_q[i], ps.particle_qd[i], r, c.ke, c.kd, c.mu, c.kf,
                                 c.eps, xc, n, f))
        continue;
      Seeder<S, N> seed;
      mat33<D> Rd = seed.mat(R[b]);
      vec3<D> pd = seed.vec(p[b]);
      svec<D> vd = seed.sv(v[b]);
      vec3<D> xd = seed.vec(ps.particle_q[i]), xvd = seed.vec(ps.particle_qd[i]);
      D ked = seed(c.ke), kdd = seed(c.kd), mud = seed(c.mu);
      vec3<D> xcd, nd, fd;
      particle_body_contact(m, s, Rd, pd, vd, xd, xvd, r, ked, kdd, mud, c.kf, c.eps, xcd, nd, fd);
      Contract<S, N> k;
      k.add(fd, adj_f_particle[std::size_t(i)]);
      // the body's spatial force is -(xc x f, f)
      const svec<S>& ab = adj_fext_body[std::size_t(b)];
      k.add(cross(xcd, fd), -ab.w);
      k.add(fd, -ab.v);
      k.take(adj_R[std::size_t(b)]);
      k.take(adj_p[std::size_t(b)]);
      k.take(adj_v[std::size_t(b)]);
      k.take(adj_x[i]);
      k.take(adj_xv[i]);
      adj_c.ke += k.take();
      adj_c.kd += k.take();
      adj_c.mu += k.take();
    }
  }
}

}  // namespace adj::rigid
