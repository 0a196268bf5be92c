// particle-shape contact: a particle, a sphere of its radius, against a static collider
// through the pair table (engine/collision/pairs.h: contact_sphere_plane, contact_sphere_box, ...)
#pragma once

#include "engine/collision/pairs.h"

namespace adj {

// packed form: in = x, v, ke, kd, mu; out = f on the particle
template <class S>
struct ShapeContactEval {
  static constexpr int in_count = 9, out_count = 3;
  ShapeRef<S> shape;
  S radius, kf, eps;
  template <class T>
  ADJ_HD void eval(const T* in, T* out) const {
    const rigid::svec<T> v{vec3<T>(), load3(in + 3)};
    const PlacedShape<T> particle{
        {GEOM_SPHERE, load3(in), mat33<T>::identity(), vec3<T>(T(radius), T(0), T(0)), nullptr, nullptr, 0, 0}, &v};
    const PlacedShape<T> collider{{shape.type, lift<T>(shape.pos), lift<T>(shape.rot), lift<T>(shape.size),
                                   shape.mesh_vertices, shape.mesh_tris, shape.mesh_start, shape.mesh_count},
                                  nullptr};
    vec3<T> xc, n, f;
    if (!contact_pair(particle, collider, 0, in[6], in[7], in[8], kf, eps, xc, n, f)) f = vec3<T>();
    store3(out, f);
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
