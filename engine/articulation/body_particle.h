// body-particle contact: two-way coupling of rigid bodies and particles (cloth, soft bodies,
// free particles). every body shape (sphere, box, capsule, mesh) against every particle, the
// particle taken as a sphere of its radius: the pair table's contact_sphere_sphere,
// contact_sphere_box, contact_sphere_capsule (engine/collision/pairs.h) with the particle as
// A; a mesh shape: the particle's centre against the signed distance of the mesh's convex
// hull (engine/model/rigid_mesh.h; concave parts are not seen). the particle gets f, the body -f at
// the contact point (midway between the surfaces), as a spatial force that reaches the
// joints through RNEA like the bodies' other contacts (rigid::Work::fext_extra).
//
// the contact parameters are the particle model's (ke, kd, kf, mu, eps: a body shape is a
// moving collider for the particles, so the particle engine's stability bounds apply);
// gradients with respect to ke, kd, mu go to ModelGrad::contact_*.
//
// deterministic, one source for the CPU and the CUDA backend: per particle (one thread each
// on a device) every shape in shape order writes its pair into a (shape, particle) slot and
// sums the particle's force; per body the slots of its shapes are gathered in (shape,
// particle) order (the coupled substep's functors, engine/solver/coupled_kernels.h, launch
// these on the host and the device), so each particle and each body accumulates in one order
// everywhere. the reverse pass takes
// each touching pair's vector-Jacobian product from dual numbers through the same kernel (27
// inputs: body pose R, p, velocity v, particle position and velocity, ke, kd, mu), as
// body_contact.h does; the body poses' adjoints go back to the joints through the kinematics
// adjoint of engine/articulation/rigid_adjoint.h (kinematics_adjoint).
#pragma once

#include <vector>

#include "engine/articulation/body_contact.h"
#include "engine/articulation/rigid_dynamics.h"
#include "engine/model/model.h"

namespace adj::rigid {

template <class S>
using CouplingParams = ContactParams<S>;

template <class S>
inline CouplingParams<S> coupling_params(const ModelT<S>& pm) {
  return {pm.contact_ke, pm.contact_kd, pm.contact_kf, pm.contact_mu, pm.contact_eps};
}

// the particle's centre against mesh shape s's convex hull (M: RigidModelT or RigidViewT)
template <class T, class M, class S>
ADJ_HD bool mesh_particle_contact(const M& m, int s, const mat33<T>& R, const vec3<T>& p, const svec<T>& v,
                                  const vec3<T>& x, const vec3<T>& xv, S r, const T& ke, const T& kd, const T& mu, S kf,
                                  S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  const PlacedShape<T> B = body_shape(m, s, R, p, v);
  const T d = mesh_hull_distance(m, s, B.ref.rot, B.ref.pos, x, r, n) - T(r);
  if (!(value(d) < 0)) return false;
  xc = x - n * (T(r) + d * T(0.5));
  const vec3<T> vrel = xv - (v.v + cross(v.w, xc));
  f = contact_force(d, n, vrel, ke, kd, kf, mu, eps);
  return true;
}

// body shape s (its body at R, p with spatial velocity v) against a particle at x with
// velocity xv and radius r: the force on the particle, the contact point and the normal out
// of the shape; false when they do not touch. M: RigidModelT or RigidViewT
template <class T, class M, class S>
ADJ_HD bool particle_body_contact(const M& m, int s, const mat33<T>& R, const vec3<T>& p, const svec<T>& v,
                                  const vec3<T>& x, const vec3<T>& xv, S r, const T& ke, const T& kd, const T& mu, S kf,
                                  S eps, vec3<T>& xc, vec3<T>& n, vec3<T>& f) {
  if (m.shape_type[s] == GEOM_MESH)
    return mesh_particle_contact(m, s, R, p, v, x, xv, r, ke, kd, mu, kf, eps, xc, n, f);
  const svec<T> pv{vec3<T>(), xv};
  const PlacedShape<T> particle{
      {GEOM_SPHERE, x, mat33<T>::identity(), vec3<T>(T(r), T(0), T(0)), nullptr, nullptr, 0, 0}, &pv};
  return contact_pair(particle, body_shape(m, s, R, p, v), 0, ke, kd, mu, kf, eps, xc, n, f);
}

// broad phase (plain values): the particle is within the shape's bounding sphere
template <class M, class S>
ADJ_HD inline bool particle_body_near(const M& m, int s, const mat33<S>& R, const vec3<S>& p, const vec3<S>& x, S r) {
  S reach = shape_bound(m.shape_type[s], m.shape_size[s]) + r;
  return length_sq(x - (p + R * m.shape_pos[s])) < reach * reach;
}

// one (shape, particle) pair of a state: whether it touches, the contact point, the normal
// out of the shape and the force on the particle (slot s * particle_count + i)
template <class S>
struct CouplingPair {
  int touch = 0;
  vec3<S> xc, n, f;
};

// the reverse of one pair: the adjoints of its body's pose and velocity and of ke, kd, mu
template <class S>
struct CouplingPairGrad {
  int touch = 0;
  mat33<S> R;
  vec3<S> p;
  svec<S> v;
  S ke = S(0), kd = S(0), mu = S(0);
};

// what the pair kernels read: the body poses and velocities (kinematics), the particles
template <class S>
struct CouplingInputs {
  CouplingParams<S> c;
  const mat33<S>* R;  // body axes, (body_count)
  const vec3<S>* p;   // body origins, (body_count)
  const svec<S>* v;   // body spatial velocities, (body_count)
  const vec3<S>* x;   // particle positions, (particle_count)
  const vec3<S>* xv;  // particle velocities, (particle_count)
  const S* radius;    // particle radii, (particle_count)
  int particle_count = 0;
};

// particle i against every body shape, in shape order: fills the pair slots (shape_count x
// particle_count) of particle i and returns the sum of its forces
template <class M, class S>
ADJ_HD vec3<S> coupling_particle(const M& m, const CouplingInputs<S>& in, int i, CouplingPair<S>* pairs) {
  const CouplingParams<S>& c = in.c;
  vec3<S> sum;
  for (int s = 0; s < m.shape_count(); ++s) {
    CouplingPair<S>& pr = pairs[std::size_t(s) * in.particle_count + i];
    const int b = m.shape_body[s];
    const S r = in.radius[i];
    pr.touch = particle_body_near(m, s, in.R[b], in.p[b], in.x[i], r) &&
               particle_body_contact(m, s, in.R[b], in.p[b], in.v[b], in.x[i], in.xv[i], r, c.ke, c.kd, c.mu, c.kf,
                                     c.eps, pr.xc, pr.n, pr.f);
    if (pr.touch) sum += pr.f;
  }
  return sum;
}

// the force on body b: minus its shapes' pair forces at their contact points, gathered in
// (shape, particle) order
template <class M, class S>
ADJ_HD svec<S> coupling_body(const M& m, int particle_count, int b, const CouplingPair<S>* pairs) {
  svec<S> F{};
  for (int s = 0; s < m.shape_count(); ++s) {
    if (m.shape_body[s] != b) continue;
    const CouplingPair<S>* row = pairs + std::size_t(s) * particle_count;
    for (int i = 0; i < particle_count; ++i)
      if (row[i].touch) F -= svec<S>{cross(row[i].xc, row[i].f), row[i].f};
  }
  return F;
}

// the reverse of coupling_particle for particle i: given dL/d its force (adj_f) and dL/d each
// body's force (adj_fext, (body_count)), adds to dL/d its position and velocity (adj_x,
// adj_xv) in shape order and writes each pair's body and parameter adjoints into its slot
template <class M, class S>
ADJ_HD void coupling_particle_adjoint(const M& m, const CouplingInputs<S>& in, int i, const vec3<S>& adj_f,
                                      const svec<S>* adj_fext, CouplingPairGrad<S>* grads, vec3<S>& adj_x,
                                      vec3<S>& adj_xv) {
  constexpr int N = 27;
  using D = Dual<S, N>;
  const CouplingParams<S>& c = in.c;
  vec3<S> xc, n, f;
  for (int s = 0; s < m.shape_count(); ++s) {
    CouplingPairGrad<S>& g = grads[std::size_t(s) * in.particle_count + i];
    const int b = m.shape_body[s];
    const S r = in.radius[i];
    g.touch = particle_body_near(m, s, in.R[b], in.p[b], in.x[i], r) &&
              particle_body_contact(m, s, in.R[b], in.p[b], in.v[b], in.x[i], in.xv[i], r, c.ke, c.kd, c.mu, c.kf,
                                    c.eps, xc, n, f);
    if (!g.touch) continue;
    Seeder<S, N> seed;
    mat33<D> Rd = seed.mat(in.R[b]);
    vec3<D> pd = seed.vec(in.p[b]);
    svec<D> vd = seed.sv(in.v[b]);
    vec3<D> xd = seed.vec(in.x[i]), xvd = seed.vec(in.xv[i]);
    D ked = seed(c.ke), kdd = seed(c.kd), mud = seed(c.mu);
    vec3<D> xcd, nd, fd;
    particle_body_contact(m, s, Rd, pd, vd, xd, xvd, r, ked, kdd, mud, c.kf, c.eps, xcd, nd, fd);
    Contract<S, N> k;
    k.add(fd, adj_f);
    // the body's spatial force is -(xc x f, f)
    const svec<S>& ab = adj_fext[b];
    k.add(cross(xcd, fd), -ab.w);
    k.add(fd, -ab.v);
    g.R = mat33<S>();
    g.p = vec3<S>();
    g.v = svec<S>{};
    k.take(g.R);
    k.take(g.p);
    k.take(g.v);
    k.take(adj_x);
    k.take(adj_xv);
    g.ke = k.take();
    g.kd = k.take();
    g.mu = k.take();
  }
}

// the reverse of coupling_body: adds body b's pairs' pose and velocity adjoints, in (shape,
// particle) order
template <class M, class S>
ADJ_HD void coupling_body_adjoint(const M& m, int particle_count, int b, const CouplingPairGrad<S>* grads,
                                  mat33<S>& adj_R, vec3<S>& adj_p, svec<S>& adj_v) {
  for (int s = 0; s < m.shape_count(); ++s) {
    if (m.shape_body[s] != b) continue;
    const CouplingPairGrad<S>* row = grads + std::size_t(s) * particle_count;
    for (int i = 0; i < particle_count; ++i) {
      if (!row[i].touch) continue;
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) adj_R.m[r][k] += row[i].R.m[r][k];
      adj_p += row[i].p;
      adj_v.w += row[i].v.w;
      adj_v.v += row[i].v.v;
    }
  }
}

// adds every pair's ke, kd, mu adjoints, in (shape, particle) order
template <class M, class S>
ADJ_HD void coupling_params_adjoint(const M& m, int particle_count, const CouplingPairGrad<S>* grads,
                                    CouplingParams<S>& adj_c) {
  for (int s = 0; s < m.shape_count(); ++s) {
    const CouplingPairGrad<S>* row = grads + std::size_t(s) * particle_count;
    for (int i = 0; i < particle_count; ++i) {
      if (!row[i].touch) continue;
      adj_c.ke += row[i].ke;
      adj_c.kd += row[i].kd;
      adj_c.mu += row[i].mu;
    }
  }
}

// the touching pairs of a state's pair slots (coupling_particle's), appended to a record for
// drawing in (shape, particle) order
template <class M, class S>
void coupling_record(const M& m, int particle_count, const CouplingPair<S>* pairs, CouplingContactsT<S>* record) {
  for (int s = 0; s < m.shape_count(); ++s)
    for (int i = 0; i < particle_count; ++i) {
      const CouplingPair<S>& q = pairs[std::size_t(s) * particle_count + i];
      if (!q.touch) continue;
      record->point.push_back(q.xc);
      record->normal.push_back(q.n);
      record->force.push_back(q.f);
      record->particle.push_back(i);
      record->body.push_back(m.shape_body[s]);
      record->shape.push_back(s);
    }
}

// every body-particle force of a state on the host (the kernels above in serial loops):
// f_particle (particle_count) and fext_body (body_count) are overwritten; pairs is scratch;
// optionally recorded, in (shape, particle) order
template <class S>
void coupling_forces(const RigidModelT<S>& m, const CouplingParams<S>& c, const std::vector<mat33<S>>& R,
                     const std::vector<vec3<S>>& p, const std::vector<svec<S>>& v, const ModelT<S>& pm,
                     const StateT<S>& ps, std::vector<vec3<S>>& f_particle, std::vector<svec<S>>& fext_body,
                     CouplingContactsT<S>* record = nullptr, std::vector<CouplingPair<S>>* pairs = nullptr) {
  const int np = pm.particle_count();
  std::vector<CouplingPair<S>> own;
  std::vector<CouplingPair<S>>& pr = pairs ? *pairs : own;
  pr.resize(std::size_t(m.shape_count()) * np);
  const CouplingInputs<S> in{
      c, R.data(), p.data(), v.data(), ps.particle_q.data(), ps.particle_qd.data(), pm.particle_radius.data(), np};
  f_particle.resize(std::size_t(np));
  for (int i = 0; i < np; ++i) f_particle[std::size_t(i)] = coupling_particle(m, in, i, pr.data());
  fext_body.resize(std::size_t(m.body_count()));
  for (int b = 0; b < m.body_count(); ++b) fext_body[std::size_t(b)] = coupling_body(m, np, b, pr.data());
  if (record) coupling_record(m, np, pr.data(), record);
}

}  // namespace adj::rigid
