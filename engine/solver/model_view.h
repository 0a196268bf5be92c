// a ModelView over host arrays
#pragma once

#include "engine/model/model.h"
#include "engine/solver/kernels.h"

namespace adj {

template <class S>
inline ModelView<S> make_view(const ModelT<S>& m) {
  ModelView<S> v{};
  v.particle_count = m.particle_count();
  v.spring_count = m.spring_count();
  v.tri_count = m.tri_count();
  v.edge_count = m.edge_count();
  v.tet_count = m.tet_count();
  v.shape_count = m.shape_count();
  v.tri_slot = m.tri_slot();
  v.edge_slot = m.edge_slot();
  v.tet_slot = m.tet_slot();
  v.particle_q = data_or_null(m.particle_q);
  v.particle_mass = data_or_null(m.particle_mass);
  v.particle_radius = data_or_null(m.particle_radius);
  v.gravity = m.gravity;
  v.particle_damping = m.particle_damping;
  v.spring_indices = data_or_null(m.spring_indices);
  v.spring_ke = data_or_null(m.spring_ke);
  v.spring_kd = data_or_null(m.spring_kd);
  v.spring_rest = data_or_null(m.spring_rest);
  v.tri_indices = data_or_null(m.tri_indices);
  v.tri_pose = data_or_null(m.tri_pose);
  v.tri_area = data_or_null(m.tri_area);
  v.tri_ke = data_or_null(m.tri_ke);
  v.tri_ka = data_or_null(m.tri_ka);
  v.tri_kd = data_or_null(m.tri_kd);
  v.tri_lift = m.tri_lift;
  v.tri_drag = m.tri_drag;
  v.edge_indices = data_or_null(m.edge_indices);
  v.edge_rest_angle = data_or_null(m.edge_rest_angle);
  v.edge_ke = data_or_null(m.edge_ke);
  v.edge_kd = data_or_null(m.edge_kd);
  v.tet_indices = data_or_null(m.tet_indices);
  v.tet_pose = data_or_null(m.tet_pose);
  v.tet_volume = data_or_null(m.tet_volume);
  v.tet_mu = data_or_null(m.tet_mu);
  v.tet_lambda = data_or_null(m.tet_lambda);
  v.tet_kd = data_or_null(m.tet_kd);
  v.shape_type = data_or_null(m.shape_type);
  v.shape_pos = data_or_null(m.shape_pos);
  v.shape_rot = data_or_null(m.shape_rot);
  v.shape_size = data_or_null(m.shape_size);
  v.shape_mesh_start = data_or_null(m.shape_mesh_start);
  v.shape_mesh_count = data_or_null(m.shape_mesh_count);
  v.mesh_vertices = data_or_null(m.mesh_vertices);
  v.mesh_tris = data_or_null(m.mesh_tris);
  v.contact_ke = m.contact_ke;
  v.contact_kd = m.contact_kd;
  v.contact_kf = m.contact_kf;
  v.contact_mu = m.contact_mu;
  v.contact_eps = m.contact_eps;
  v.particle_contact = m.particle_contact ? 1 : 0;
  v.incidence_start = data_or_null(m.incidence_start);
  v.incidence_slot = data_or_null(m.incidence_slot);
  v.exclude_start = data_or_null(m.exclude_start);
  v.exclude_list = data_or_null(m.exclude_list);
  return v;
}

}  // namespace adj
