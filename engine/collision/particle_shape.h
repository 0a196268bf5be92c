// particle-shape contact: a particle, a sphere of its radius, against a static collider
// through the pair table (engine/collision/pairs.h: contact_sphere_plane, contact_sphere_box, ...)
#pragma once

#include "engine/collision/pairs.h"

namespace adj {

// a plane's force on a particle (the ground of every cloth scene): the pair code's operations
// for this pair (contact_pair -> sphere_feature -> sphere_against, shape_distance's plane
// branch), in the same order, without building the two placed shapes and without the terms that
// add exact zeros: the particle's identity frame times its zero sample offset (kept as the
// + vec3<T>() below, which turns a -0 into +0 as that sum does) and its zero angular velocity
// crossed with the contact point (vrel = +0 + (v + 0 x xc) is +0 + v for a finite point); the
// pair code's test of the gap is contact_force's own. So for finite positions the force and,
// through vjp, its adjoint are the generic path's bit for bit, at a fraction of the dual-number
// operations. T: a scalar, a Dual, or a host SIMD pack (a particle a lane, each with its own
// radius: engine/solver/kernels_simd.h); in = x, v, ke, kd, mu; kf, eps plain
template <class T, class S, class M, class K>
ADJ_HD inline vec3<T> plane_contact_force(const ShapeRef<S, M>& plane, const T& radius, const T* in, K kf, K eps) {
  const vec3<T> x = load3(in) + vec3<T>();
  const vec3<T> n = lift<T>(plane.size);
  const T d = dot(x - lift<T>(plane.pos), n) - radius;
  return contact_force(d, n, vec3<T>() + load3(in + 3), in[6], in[7], kf, in[8], eps);
}

// whether a particle at x of this radius is within it of the plane through pos with this normal
template <class S>
ADJ_HD inline bool plane_touches(const vec3<S>& x, const vec3<S>& pos, const vec3<S>& normal, S radius) {
  return dot(x - pos, normal) < radius;
}

// packed form: in = x, v, ke, kd, mu; out = f on the particle
template <class S>
struct ShapeContactEval {
  static constexpr int in_count = 9, out_count = 3;
  // under a dual S (the tangent step, engine/solver/particle_tangent.cpp) the constants that the
  // pair code takes plain (mesh vertices, kf, eps) go to it plain: their tangents are zero
  ShapeRef<S, plain_scalar_t<S>> shape;
  S radius, kf, eps;
  // whether a particle at x is within its radius of the shape (else its force and adjoint are
  // zero); a plane's signed distance is shape_distance's plane branch, inline
  ADJ_HD bool touches(const vec3<S>& x) const {
    if (shape.type == GEOM_PLANE) return plane_touches(x, shape.pos, shape.size, radius);
    vec3<S> n, surface;
    return shape_distance(shape, x, n, surface) < radius;
  }
  template <class T>
  ADJ_HD void eval(const T* in, T* out) const {
    if (shape.type == GEOM_PLANE) return eval_plane(in, out);
    eval_pair(in, out);
  }
  // any collider: through the pair table
  template <class T>
  ADJ_HD void eval_pair(const T* in, T* out) const {
    const rigid::svec<T> v{vec3<T>(), load3(in + 3)};
    const PlacedShape<T> particle{
        {GEOM_SPHERE, load3(in), mat33<T>::identity(), vec3<T>(T(radius), T(0), T(0)), nullptr, nullptr, 0, 0}, &v};
    const PlacedShape<T> collider{{shape.type, lift<T>(shape.pos), lift<T>(shape.rot), lift<T>(shape.size),
                                   shape.mesh_vertices, shape.mesh_tris, shape.mesh_start, shape.mesh_count},
                                  nullptr};
    vec3<T> xc, n, f;
    if (!contact_pair(particle, collider, 0, in[6], in[7], in[8], value(kf), value(eps), xc, n, f)) f = vec3<T>();
    store3(out, f);
  }
  // a plane: plane_contact_force
  template <class T>
  ADJ_HD void eval_plane(const T* in, T* out) const {
    store3(out, plane_contact_force(shape, T(radius), in, value(kf), value(eps)));
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
