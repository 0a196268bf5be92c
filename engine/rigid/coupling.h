// two-way coupling of rigid bodies and particles (cloth, soft bodies, free particles): every
// body shape (sphere, box, capsule, mesh) against every particle, the particle taken as a
// sphere of its radius (a mesh: the particle's centre against the signed distance of the
// mesh's convex hull, engine/rigid/rigid_mesh.h; concave parts are not seen). each touching pair is rigid_contact.h's shape_contact between that sphere and
// the placed body shape (the shape's signed distance, the penalty normal force and smoothed
// friction of engine/forces/contact.h); the particle gets f, the body -f at the contact point
// (midway between the surfaces), as a spatial force that reaches the joints through RNEA like
// the bodies' other contacts (rigid::Work::fext_extra).
//
// the contact parameters are the particle model's (ke, kd, kf, mu, eps: a body shape is a
// moving collider for the particles, so the particle engine's stability bounds apply);
// gradients with respect to ke, kd, mu go to ModelGrad::contact_*.
//
// deterministic: a serial loop in a fixed order (shapes, then particles); each particle and
// each body accumulates in that order. the reverse pass takes each touching pair's
// vector-Jacobian product from dual numbers through the same kernel (27 inputs: body pose R,
// p, velocity v, particle position and velocity, ke, kd, mu), as rigid_contact.h does.
#pragma once

#include <vector>

#include "engine/model/model.h"
#include "engine/rigid/rigid_dynamics.h"

namespace adj::rigid {

template <class S>
struct CouplingParams {
  S ke, kd, kf, mu, eps;
};

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
  if (m.shape_type[s] == RIGID_SHAPE_MESH) {  // the particle's centre against the mesh's convex hull
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
      {RIGID_SHAPE_SPHERE + 1, x, mat33<T>::identity(), vec3<T>(T(r), T(0), T(0)), nullptr, nullptr, 0, 0}, &pv};
  return shape_contact(particle, body_shape(m, s, R, p, v), 0, ke, kd, mu, kf, eps, xc, n, f);
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

// vector-Jacobian product of the kinematics (body poses R, p and spatial velocities v from
// q, qd; Work w holds them): adds dL/dq and dL/dqd given the pose and velocity adjoints.
// adj_R/p/v are consumed (children pass theirs to the parent); bodies with none are skipped.
template <class S, int N>
void body_motion_vjp(const RigidModelT<S>& m, const Params<S>& par, const S* q, const S* qd, const Work<S>& w, int i,
                     std::vector<mat33<S>>& adj_R, std::vector<vec3<S>>& adj_p, std::vector<svec<S>>& adj_v, S* adj_q,
                     S* adj_qd) {
  using D = Dual<S, N>;
  const int pi = m.joint_parent[i], qs = m.joint_q_start[i], ds = m.joint_dof_start[i];
  const int nqj = rigid_joint_q_count(m.joint_type[i]), ndj = rigid_joint_dof_count(m.joint_type[i]);
  Seeder<S, N> seed;
  mat33<D> Rp = seed.mat(pi < 0 ? mat33<S>::identity() : w.R[pi]);
  vec3<D> pp = seed.vec(pi < 0 ? vec3<S>() : w.p[pi]);
  svec<D> vp = seed.sv(pi < 0 ? svec<S>{} : w.v[pi]);
  D qj[7], qdj[6];
  for (int k = 0; k < nqj; ++k) qj[k] = seed(q[qs + k]);
  for (int k = 0; k < ndj; ++k) qdj[k] = seed(qd[ds + k]);
  mat33<D> R;
  vec3<D> p;
  svec<D> Sj[6], v;
  sinertia<D> I;
  body_kinematics(m, i, Rp, pp, vp, qj, qdj, D(par.body_mass[i]), R, p, Sj, I, v);
  Contract<S, N> c;
  c.add(R, adj_R[i]);
  c.add(p, adj_p[i]);
  c.add(v, adj_v[i]);
  mat33<S> aR;
  vec3<S> ap;
  svec<S> av{};
  c.take(aR);
  c.take(ap);
  c.take(av);
  if (pi >= 0) {
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) adj_R[pi].m[r][k] += aR.m[r][k];
    adj_p[pi] += ap;
    adj_v[pi] += av;
  }
  for (int k = 0; k < nqj; ++k) adj_q[qs + k] += c.take();
  for (int k = 0; k < ndj; ++k) adj_qd[ds + k] += c.take();
}

template <class S>
void motion_vjp(const RigidModelT<S>& m, const Params<S>& par, const S* q, const S* qd, const Work<S>& w,
                std::vector<mat33<S>>& adj_R, std::vector<vec3<S>>& adj_p, std::vector<svec<S>>& adj_v, S* adj_q,
                S* adj_qd) {
  auto zero = [](const mat33<S>& R, const vec3<S>& p, const svec<S>& v) {
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k)
        if (R.m[r][k] != S(0)) return false;
    return p == vec3<S>() && v.w == vec3<S>() && v.v == vec3<S>();
  };
  for (int i = m.body_count() - 1; i >= 0; --i) {
    if (zero(adj_R[i], adj_p[i], adj_v[i])) continue;
    // dual width: the parent's pose and velocity (18) and the joint's coordinates and
    // velocities, plus one spare tangent (the widths rigid_adjoint.h uses)
    switch (m.joint_type[i]) {
      case RIGID_JOINT_FREE:
        body_motion_vjp<S, 32>(m, par, q, qd, w, i, adj_R, adj_p, adj_v, adj_q, adj_qd);
        break;
      case RIGID_JOINT_BALL:
        body_motion_vjp<S, 26>(m, par, q, qd, w, i, adj_R, adj_p, adj_v, adj_q, adj_qd);
        break;
      case RIGID_JOINT_FIXED:
        body_motion_vjp<S, 19>(m, par, q, qd, w, i, adj_R, adj_p, adj_v, adj_q, adj_qd);
        break;
      default:
        body_motion_vjp<S, 21>(m, par, q, qd, w, i, adj_R, adj_p, adj_v, adj_q, adj_qd);
    }
  }
}

}  // namespace adj::rigid
