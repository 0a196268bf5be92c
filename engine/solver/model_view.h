// a ModelView over host arrays: the model's own (T = S), or its parameters lifted to another
// scalar T (tangent numbers over a plain model, engine/solver/particle_tangent.cpp: constants
// with zero tangents, held by a LiftedArrays)
#pragma once

#include <deque>
#include <type_traits>

#include "engine/model/model.h"
#include "engine/solver/kernels.h"

namespace adj {

// the lifted copies of a model's arrays that a ModelView<T> points into
template <class T>
struct LiftedArrays {
  std::deque<Array<T>> scalars;
  std::deque<Array<vec3<T>>> vecs;
  std::deque<Array<mat22<T>>> mat22s;
  std::deque<Array<mat33<T>>> mat33s;

  template <class S>
  const T* lift(const Array<S>& a) {
    Array<T>& r = scalars.emplace_back();
    for (const S& x : a) r.push_back(T(x));
    return data_or_null(r);
  }
  template <class S>
  const vec3<T>* lift(const Array<vec3<S>>& a) {
    Array<vec3<T>>& r = vecs.emplace_back();
    for (const vec3<S>& x : a) r.push_back(adj::lift<T>(x));
    return data_or_null(r);
  }
  template <class S>
  const mat22<T>* lift(const Array<mat22<S>>& a) {
    Array<mat22<T>>& r = mat22s.emplace_back();
    for (const mat22<S>& x : a) r.push_back({T(x.a), T(x.b), T(x.c), T(x.d)});
    return data_or_null(r);
  }
  template <class S>
  const mat33<T>* lift(const Array<mat33<S>>& a) {
    Array<mat33<T>>& r = mat33s.emplace_back();
    for (const mat33<S>& x : a) r.push_back(adj::lift<T>(x));
    return data_or_null(r);
  }
};

// T = S: the model's arrays; another T: lifted into `store` (which must outlive the view).
// mesh vertices stay plain (constants of the dual kernels: ModelView's mesh_vertices)
template <class T = void, class S>
inline auto make_view(const ModelT<S>& m, LiftedArrays<std::conditional_t<std::is_void_v<T>, S, T>>* store = nullptr) {
  using V = std::conditional_t<std::is_void_v<T>, S, T>;
  auto data = [&](const auto& a) {
    if constexpr (std::is_same_v<V, S>)
      return data_or_null(a);
    else
      return store->lift(a);
  };
  ModelView<V> v{};
  v.particle_count = m.particle_count();
  v.spring_count = m.spring_count();
  v.tri_count = m.tri_count();
  v.edge_count = m.edge_count();
  v.tet_count = m.tet_count();
  v.shape_count = m.shape_count();
  v.tri_slot = m.tri_slot();
  v.edge_slot = m.edge_slot();
  v.tet_slot = m.tet_slot();
  v.particle_q = data(m.particle_q);
  v.particle_mass = data(m.particle_mass);
  v.particle_radius = data(m.particle_radius);
  v.gravity = lift<V>(m.gravity);
  v.particle_damping = V(m.particle_damping);
  v.spring_indices = data_or_null(m.spring_indices);
  v.spring_ke = data(m.spring_ke);
  v.spring_kd = data(m.spring_kd);
  v.spring_rest = data(m.spring_rest);
  v.tri_indices = data_or_null(m.tri_indices);
  v.tri_pose = data(m.tri_pose);
  v.tri_area = data(m.tri_area);
  v.tri_ke = data(m.tri_ke);
  v.tri_ka = data(m.tri_ka);
  v.tri_kd = data(m.tri_kd);
  v.tri_lift = V(m.tri_lift);
  v.tri_drag = V(m.tri_drag);
  v.edge_indices = data_or_null(m.edge_indices);
  v.edge_rest_angle = data(m.edge_rest_angle);
  v.edge_ke = data(m.edge_ke);
  v.edge_kd = data(m.edge_kd);
  v.tet_indices = data_or_null(m.tet_indices);
  v.tet_pose = data(m.tet_pose);
  v.tet_volume = data(m.tet_volume);
  v.tet_mu = data(m.tet_mu);
  v.tet_lambda = data(m.tet_lambda);
  v.tet_kd = data(m.tet_kd);
  v.shape_type = data_or_null(m.shape_type);
  v.shape_pos = data(m.shape_pos);
  v.shape_rot = data(m.shape_rot);
  v.shape_size = data(m.shape_size);
  v.shape_mesh_start = data_or_null(m.shape_mesh_start);
  v.shape_mesh_count = data_or_null(m.shape_mesh_count);
  v.mesh_vertices = data_or_null(m.mesh_vertices);
  v.mesh_tris = data_or_null(m.mesh_tris);
  v.contact_ke = V(m.contact_ke);
  v.contact_kd = V(m.contact_kd);
  v.contact_kf = V(m.contact_kf);
  v.contact_mu = V(m.contact_mu);
  v.contact_eps = V(m.contact_eps);
  v.particle_contact = m.particle_contact ? 1 : 0;
  v.incidence_start = data_or_null(m.incidence_start);
  v.incidence_slot = data_or_null(m.incidence_slot);
  v.exclude_start = data_or_null(m.exclude_start);
  v.exclude_list = data_or_null(m.exclude_list);
  return v;
}

// a particle substep adjoint's outputs in `a`: the scratch's adj_f and slot adjoints (any scratch
// with dummy_q, dummy_qd, adj_f, adj_q_slot and adj_qd_slot: the solver's and the tangent
// solver's), the control gradients, the model gradients' view
template <class T, class Scratch>
void point_adjoint_outputs(KernelArgs<T>& a, Scratch& s, ControlT<T>& adj_control, const ModelGradView<T>& g) {
  a.q_out = s.dummy_q.data();
  a.qd_out = s.dummy_qd.data();
  a.adj_f = s.adj_f.data();
  a.adj_q_slot = s.adj_q_slot.data();
  a.adj_qd_slot = s.adj_qd_slot.data();
  a.adj_control_f = adj_control.particle_f.data();
  a.adj_spring_act = data_or_null(adj_control.spring_act);
  a.adj_tet_act = data_or_null(adj_control.tet_act);
  a.g = g;
}

}  // namespace adj
